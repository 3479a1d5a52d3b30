package io.flowscope.anomaly;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import java.util.ArrayList;
import java.util.List;

/**
 * NIC_STALL: a NIC that stops completing work requests while some are outstanding, and its failover. Per host
 * period it also keeps each NIC's work-request latency against its baseline (the {@link CongestionDetector} reads
 * the ratio) and sets {@link HostState#nicQuiet} while a NIC of the host stalls and for a window after (the host's
 * links and ranks then wait for the failover and are not judged). Both ends of a broken connection stall: the NIC
 * to blame is chosen among the candidates of every host ({@link #judgeNicStall}).
 */
final class NicStallDetector {
    private final AnomalyConfig config;
    private final AnomalyLifecycle lifecycle;
    private final Evidence evidence;
    private final List<NicState> nicCandidates = new ArrayList<>();
    private final List<NicState> nicDevicesOpen = new ArrayList<>();
    private final List<NicState> nicEpisode = new ArrayList<>();
    private long nicEpisodeEndNs = Long.MIN_VALUE;

    NicStallDetector(final AnomalyConfig config, final AnomalyLifecycle lifecycle) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.evidence = lifecycle.evidence();
    }

    /**
     * NIC devices of one host: latency baselines (for congestion attribution) and stall candidates: work
     * requests outstanding, some QP stuck and no completion on the device for half of {@code nicStallNs}. Both
     * ends of a broken connection stall; the NIC to blame is chosen among all candidates (see
     * {@link #judgeNicStall}). While a device of a host is a candidate, and for a window after, the host's links
     * and ranks are not judged (their steps wait for the failover).
     */
    void judgeDevices(final HostState h, final long periodStart, final long now) {
        // Over the host's dense device tables (the period's accumulators, then the judged state: two short runs
        // of sequential rows); a device object only where its candidacy changes.
        final long[] cur = h.devCur;
        final long[] st = h.devState;
        final int n = h.deviceCount;
        boolean anyStalled = false;
        for (int i = 0; i < n; i++) {
            final int c = i * HostState.DEV_CUR;
            final int b = i * HostState.DEV_STATE;
            final boolean reported = cur[c + HostState.DEV_PERIOD] == periodStart;
            final long outstanding = reported ? cur[c + HostState.DEV_OUTSTANDING] : 0;
            st[b + HostState.S_OUTSTANDING] = outstanding;
            long lastProgressNs = st[b + HostState.S_LAST_PROGRESS];
            if (reported && st[b + HostState.S_REPORTED_END] != periodStart) {
                // Not reported in the period before: nothing was outstanding then.
                lastProgressNs = Math.max(lastProgressNs, periodStart);
            }
            if (!reported || cur[c + HostState.DEV_COMPLETIONS] > 0 || outstanding == 0) {
                lastProgressNs = now;
            }
            st[b + HostState.S_LAST_PROGRESS] = lastProgressNs;
            if (reported) {
                st[b + HostState.S_REPORTED_END] = now;
            }
            if (reported && cur[c + HostState.DEV_NET_COUNT] > 0) {
                // Over the window, like the links: one period's few work requests are too noisy.
                final RingTable win = h.devWin;
                final int slot = win.slot(i);
                win.set(i, slot, 0, cur[c + HostState.DEV_NET_NS]);
                win.set(i, slot, 1, cur[c + HostState.DEV_NET_COUNT]);
                win.advance(i);
                final double lat = (double) win.sum(i, 0) / win.sum(i, 1);
                final long warm = st[b + HostState.S_WARM];
                double baseline = Double.longBitsToDouble(st[b + HostState.S_BASELINE]);
                final double ratio;
                if (warm < config.warmupPeriods) {
                    baseline = warm == 0 ? lat : baseline + (lat - baseline) / (warm + 1);
                    st[b + HostState.S_WARM] = warm + 1;
                    ratio = 0;
                } else {
                    ratio = lat / baseline;
                    if (ratio < 1.5 && h.congestion.open == null) {
                        baseline += (lat - baseline) / config.baselinePeriods;
                    }
                }
                st[b + HostState.S_BASELINE] = Double.doubleToRawLongBits(baseline);
                st[b + HostState.S_RATIO] = Double.doubleToRawLongBits(ratio);
            } else if (!reported) {
                st[b + HostState.S_RATIO] = Double.doubleToRawLongBits(0);
            }
            final long stalled = reported ? cur[c + HostState.DEV_STALLED] : 0;
            st[b + HostState.S_STALLED] = stalled;
            final long stalledNs = now - lastProgressNs;
            st[b + HostState.S_STALLED_NS] = stalledNs;
            // Some QP stuck either way (the two packed counts: nonzero when their sum is).
            final boolean candidate = outstanding > 0 && stalled != 0 && stalledNs >= config.nicStallNs / 2;
            if (candidate != (st[b + HostState.S_CANDIDATE] != 0)) {
                st[b + HostState.S_CANDIDATE] = candidate ? 1 : 0;
                final NicState d = h.deviceList.get(i);
                if (candidate) {
                    nicCandidates.add(d);
                } else {
                    nicCandidates.remove(d);
                }
            }
            anyStalled |= candidate;
        }
        // A device whose NIC stall is open counts as stalled (the count stands for its tracker's open anomaly).
        anyStalled |= h.nicStallsOpen > 0;
        if (anyStalled) {
            h.nicQuietUntilNs = now + (long) (config.windowPeriods + config.openAfter + 2) * (now - periodStart);
        }
        h.nicQuiet = anyStalled || now - h.nicQuietUntilNs < 0;
        if (!nicCandidates.isEmpty() || !nicDevicesOpen.isEmpty()) {
            // Nothing to choose or settle otherwise (judgeNicStall returns without a candidate).
            judgeNicStall();
        }
    }

    /**
     * The NIC to blame among the stalled candidates of every host: the one stuck both ways (what it sends and
     * what it receives), else one whose receives are stuck (the far end of its connections sees stuck sends),
     * then the most stuck QPs, then the lowest host and device. Opens once the chosen one has stalled
     * {@code nicStallNs} and some posted send is stuck (receives alone are a hang's or an idle peer's).
     */
    private void judgeNicStall() {
        NicState best = null;
        boolean sendStuck = false;
        for (int i = 0; i < nicCandidates.size(); i++) {
            final NicState d = nicCandidates.get(i);
            sendStuck |= d.stalledSend() > 0;
            if (best == null
                    || nicScore(d) > nicScore(best)
                    || (nicScore(d) == nicScore(best)
                            && (d.host.hostId < best.host.hostId
                                    || (d.host.hostId == best.host.hostId && d.device < best.device)))) {
                best = d;
            }
        }
        for (int i = 0; i < nicCandidates.size(); i++) {
            final NicState d = nicCandidates.get(i);
            if (!nicDevicesOpen.isEmpty() && !nicEpisode.contains(d)) {
                d.episodeStartNs = d.lastProgressNs();
                nicEpisode.add(d);
            }
        }
        for (int i = 0; i < nicDevicesOpen.size(); i++) {
            final NicState d = nicDevicesOpen.get(i);
            if (d.candidate()) {
                nicEpisodeEndNs = Long.MIN_VALUE;
                continue;
            }
            if (nicEpisodeEndNs == Long.MIN_VALUE) {
                nicEpisodeEndNs = d.host.nowNs;
            }
            if (d.host.nowNs - nicEpisodeEndNs >= config.nicStallNs) {
                // Settled: the stalled device whose traffic moved to a new QP of another device of its host,
                // and which stayed silent since, is the one that went down (the far ends resumed in place).
                final NicState dead = failedOver();
                if (dead != null && dead != d) {
                    evidence.clear();
                    evidence.putAll(d.stall().open.evidence());
                    evidence.put("failoverToDevice", dead.host.newQpDevice);
                    lifecycle.update(
                            d.stall(),
                            Culprit.nic(dead.host.hostId, dead.device),
                            Severity.CRITICAL,
                            d.host.nowNs,
                            d.stall().open.windowStartNs(),
                            String.format(
                                    "NIC %d of host 0x%x went down: its QPs "
                                            + "stalled, then its traffic failed over to NIC %d",
                                    dead.device, dead.host.hostId, dead.host.newQpDevice));
                }
                lifecycle.resolve(d.stall(), d.host.nowNs);
                d.host.nicStallsOpen--;
                nicDevicesOpen.remove(i--);
                nicEpisode.clear();
                nicEpisodeEndNs = Long.MIN_VALUE;
            }
        }
        if (best == null
                || !sendStuck
                || best.stall().open != null
                || best.stalledNs() < config.nicStallNs
                || !nicDevicesOpen.isEmpty()) {
            return;
        }
        evidence.clear();
        evidence.put("outstandingWorkRequests", best.outstanding());
        evidence.put("stalledSendQps", best.stalledSend());
        evidence.put("stalledRecvQps", best.stalledRecv());
        evidence.put("noCompletionNs", best.stalledNs());
        evidence.put("thresholdNs", config.nicStallNs);
        evidence.put("stalledDevices", nicCandidates.size());
        final String summary = String.format(
                "NIC %d of host 0x%x stopped completing work (%d work requests "
                        + "outstanding, none completed for %.1f ms; %d devices stalled with it): its QPs must fail over",
                best.device, best.host.hostId, best.outstanding(), best.stalledNs() / 1e6, nicCandidates.size());
        final long start = best.lastProgressNs();
        best.stall().firstBadStartNs = start;
        lifecycle.open(
                best.stall(),
                AnomalyKind.NIC_STALL,
                Culprit.nic(best.host.hostId, best.device),
                Severity.CRITICAL,
                start,
                best.host.nowNs,
                start,
                best.host.nowNs,
                summary);
        best.host.nicStallsOpen++;
        nicDevicesOpen.add(best);
        nicEpisode.clear();
        for (int i = 0; i < nicCandidates.size(); i++) {
            final NicState d = nicCandidates.get(i);
            d.episodeStartNs = d.lastProgressNs();
            nicEpisode.add(d);
        }
    }

    /** The candidates, the NICs whose stall is open and the stall episode's NICs, in order. */
    void writeTo(final CheckpointOut out) {
        for (final List<NicState> list : List.of(nicCandidates, nicDevicesOpen, nicEpisode)) {
            out.writeInt(list.size());
            for (final NicState d : list) {
                out.writeNic(d);
            }
        }
        out.writeLong(nicEpisodeEndNs);
    }

    /** Into a fresh detector. */
    void readFrom(final CheckpointIn in) {
        for (final List<NicState> list : List.of(nicCandidates, nicDevicesOpen, nicEpisode)) {
            final int n = in.readCount();
            for (int i = 0; i < n; i++) {
                list.add(in.readNic());
            }
        }
        nicEpisodeEndNs = in.readLong();
    }

    private NicState failedOver() {
        NicState found = null;
        for (int i = 0; i < nicEpisode.size(); i++) {
            final NicState d = nicEpisode.get(i);
            final HostState h = d.host;
            if (h.newQpDevice >= 0
                    && h.newQpDevice != d.device
                    && h.newQpAtNs - d.episodeStartNs >= 0
                    && d.reportedEndNs() - h.newQpAtNs <= 0
                    && !d.candidate()) {
                found = d;
            }
        }
        return found;
    }

    private static long nicScore(final NicState d) {
        final long kind = d.stalledSend() > 0 && d.stalledRecv() > 0 ? 2 : d.stalledRecv() > 0 ? 1 : 0;
        return kind * 1_000_000L + d.stalledSend() + d.stalledRecv();
    }
}
