package io.flowscope.anomaly;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * CONGESTION on one host's NIC: links of two or more of its sender ranks degraded together (or one degraded and
 * another softly slowed while the NIC's work-request latency rose), with work queued on them, and the NIC's latency
 * up against its baseline more than the other NICs' (a workload change lengthens them everywhere). The culprit is
 * the host's NIC whose latency rose most. Inputs: the {@link LinkRateDetector}'s pass over the host's links and the
 * NIC rows the {@link NicStallDetector} judged.
 */
final class CongestionDetector {
    private final AnomalyConfig config;
    private final AnomalyLifecycle lifecycle;
    private final Evidence evidence;
    private final Robust robust = new Robust();
    private final Long2ObjectHashMap<HostState> hosts;

    CongestionDetector(
            final AnomalyConfig config, final AnomalyLifecycle lifecycle, final Long2ObjectHashMap<HostState> hosts) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.evidence = lifecycle.evidence();
        this.hosts = hosts;
    }

    /**
     * Whether host {@code h}'s degraded links (the link pass just done) read as congestion rather than slow links:
     * two or more of its ranks degraded; or one, with another slowed softly while the worst NIC's latency rose by a
     * quarter; or any while a congestion of the host is open, this rule's or the wait-state rule's. A congested
     * NIC's links do not all slow in every period: one alone below its baseline is still the congestion's share
     * (a lone SLOW_LINK on such a link was MultiHostCongestionIT's false alarm, 0.8 s into a named congestion).
     */
    boolean congested(final HostState h, final LinkRateDetector links, final NicState dev) {
        final int degradedRanks = links.degradedRanks();
        final boolean nicSlowed = dev != null && dev.latencyRatio() >= 1.25;
        return degradedRanks >= 2
                || (degradedRanks == 1 && links.softRanks() >= 1 && nicSlowed)
                || (degradedRanks >= 1 && (h.congestion.open != null || lifecycle.congestionOpen(h.hostId)));
    }

    /** Host {@code h}'s period end, after the link pass and the slow-link judgement. */
    void endPeriod(
            final HostState h,
            final LinkRateDetector links,
            final NicState dev,
            final boolean congestion,
            final long periodStart,
            final long now) {
        // A period in which none of the host's links completed a window's worth says nothing either way; without
        // congestion now or tracked, judgeCongestion would return having changed nothing.
        if (links.judged() > 0 && (congestion || h.congestion.open != null || h.congestion.bad != 0)) {
            judgeCongestion(h, dev, congestion, links.worstLink(), periodStart, now);
        }
    }

    /**
     * Congestion on one host's NIC: links of two or more of its sender ranks degraded together, with work
     * queued (outstanding bytes above their baseline; nothing queued would be starvation). The device is the
     * host's NIC whose work-request latency rose most against its baseline ({@code dev}, found once per period
     * end by {@link #worstDevice}).
     */
    private void judgeCongestion(
            final HostState h,
            final NicState dev,
            final boolean congestion,
            final LinkState worst,
            final long periodStart,
            final long now) {
        // Work queued on the slowed links grows (mean outstanding bytes over the window above
        // congestionOutstandingRatio × their baseline); slower with nothing queued would be starvation.
        final boolean queued = worst != null
                && LinkRateDetector.outstandingMean(worst.comm, worst.id)
                        > config.congestionOutstandingRatio * Math.max(worst.comm.baselineOut(worst.id), 1);
        // ... and the NIC's work requests take longer than usual (its queue builds), more so than the other NICs'
        // (a workload change, e.g. bigger messages, lengthens them everywhere).
        // A link already kept full by its credits cannot queue more steps: there the NIC's latency, at least
        // twice the other NICs', is the queue.
        final double medianLatency = dev == null || !congestion ? 0 : medianDeviceLatencyRatio();
        final boolean bad = congestion
                && dev != null
                && dev.latencyRatio() >= 1.25
                && ((queued && dev.latencyRatio() >= 1.5 * medianLatency) || dev.latencyRatio() >= 2 * medianLatency);
        if (!bad && h.congestion.open == null && h.congestion.bad == 0) {
            return;
        }
        boolean good = true;
        for (int i = 0; i < h.links.size(); i++) {
            final LinkState l = h.links.get(i);
            if (l.comm.lDegraded[l.id] && l.comm.lLastActiveNs[l.id] == now) {
                good = false;
            }
        }
        final int device = dev != null
                ? dev.device
                : h.congestion.open != null ? h.congestion.open.culprit().device() : -1;
        evidence.clear();
        if (worst != null) {
            evidence.put("worstLinkFractionOfBaseline", worst.comm.fraction(worst.id));
            evidence.put("medianFractionOfBaseline", worst.comm.rateMedian);
            evidence.put("outstandingBytes", LinkRateDetector.outstandingMean(worst.comm, worst.id));
            evidence.put("baselineOutstandingBytes", worst.comm.baselineOut(worst.id));
        }
        if (dev != null) {
            evidence.put("deviceLatencyRatio", dev.latencyRatio());
            evidence.put("deviceOutstandingWorkRequests", dev.outstanding());
        }
        final Severity sev = worst != null && worst.comm.fraction(worst.id) < 0.5 * worst.comm.rateMedian
                ? Severity.CRITICAL
                : Severity.WARNING;
        final String summary = !lifecycle.willPublish(h.congestion, bad, sev)
                ? null
                : String.format(
                        "NIC %d of host 0x%x "
                                + "congested: several of its ranks' links slowed together while work queued on them",
                        device, h.hostId);
        lifecycle.track(
                h.congestion,
                bad,
                good,
                AnomalyKind.CONGESTION,
                Culprit.nic(h.hostId, device),
                sev,
                periodStart,
                now,
                now - (long) config.windowPeriods * (now - periodStart),
                summary);
    }

    /** The median latency ratio (to baseline) of every NIC with a current one, all hosts. */
    private double medianDeviceLatencyRatio() {
        robust.clear();
        for (final HostState h : hosts.values()) {
            for (int i = 0; i < h.deviceList.size(); i++) {
                final NicState d = h.deviceList.get(i);
                if (d.latencyRatio() > 0) {
                    robust.add(d.latencyRatio());
                }
            }
        }
        robust.compute();
        return robust.median;
    }

    static NicState worstDevice(final HostState h) {
        // Over the host's device state rows (just written by judgeDevices), not the device objects.
        final long[] st = h.devState;
        int best = -1;
        double bestRatio = 0;
        for (int i = 0; i < h.deviceCount; i++) {
            final double ratio = Double.longBitsToDouble(st[i * HostState.DEV_STATE + HostState.S_RATIO]);
            if (ratio > 0 && (best < 0 || ratio > bestRatio)) {
                best = i;
                bestRatio = ratio;
            }
        }
        return best < 0 ? null : h.deviceList.get(best);
    }
}
