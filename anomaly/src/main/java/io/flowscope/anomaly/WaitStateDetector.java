package io.flowscope.anomaly;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Stragglers (SLOW_NODE) and slow links (SLOW_LINK) from NCCL's proxy wait states, per communicator and
 * evaluation window ({@link CommWaits}); grounded in real traces (anomaly/README.md, "Wait states").
 * <ul>
 * <li><b>Straggler.</b> The ranks of an operation meet at its first step. A rank that arrives late, because its CPU
 * calls late or its GPU is busy, makes the receivers of its data wait at their first step (10 → 11) while its own
 * first receives find their data already there. Rank r is late when the entry wait of its receivers exceeds its own
 * by {@code slowNodeEntryNs} and by the factor {@code slowNodeEntryRatio}: no cross-rank statistics, so a 2-rank
 * communicator is judged like a 4,096-rank one.</li>
 * <li><b>Slow link.</b> The sender's network time per byte (9 → stop) of one direction rises over its own
 * healthy baseline and over the other links of the communicator (a host-wide slowdown moves them all), while
 * neither end straggles (a late rank bursts its sends, which queue on the connection and look slow).</li>
 * <li><b>Congestion.</b> Links of two or more sender ranks of one host slow together in the same window: what they
 * share is the host's network, not a link each. CONGESTION on that host's NIC whose work-request latency rose most
 * ({@link NicView}; at least {@link #NIC_SLOWED} its baseline and {@link #NIC_SLOWED_RELATIVE} the other hosts'),
 * or on the host's network (device -1) where no QP events tell the NICs apart; none of those links is then named
 * a slow link. With QP events and no NIC slowed, the links are judged one by one.</li>
 * </ul>
 * Per summary: its link's row found by position ({@link FlowRows}) and four additions into it; per window and
 * communicator: one pass over its flow rows, one over its links and one over its ranks. Allocation only when a
 * flow, link, host or communicator first appears, and when publishing.
 */
final class WaitStateDetector {
    /**
     * A link's window under this multiple of its baseline network time per byte is healthy: it moves the baseline
     * and counts towards resolving the link's anomaly. Between it and {@code slowLinkRatio} a window is neither
     * (real socket links slowed by a fault read 1.3-1.4x in many windows; fault-free ones rarely above 1.2x for
     * long).
     */
    static final double LINK_HEALTHY_RATIO = 1.2;

    /** Healthy windows a rank's usual entry wait averages before a stall of its communicator is told apart. */
    static final int OWN_WAIT_WARMUP_WINDOWS = 8;

    /** Periods of each other host after which a silent anchor host's communicators are taken over. */
    static final int REANCHOR_PERIODS = 64;

    private final AnomalyConfig config;
    private final Episode.Publisher publisher;
    private final Long2ObjectHashMap<CommWaits> comms = new Long2ObjectHashMap<>();
    private final List<CommWaits> commByIndex = new ArrayList<>();
    /** Per host: its summary positions and its latest time (anomaly times are on the culprit's host clock). */
    private final Long2ObjectHashMap<FlowRows.Cursor> cursors = new Long2ObjectHashMap<>();

    private final FlowRows flows = new FlowRows();
    /** Flow key → row, for a summary its position does not find. */
    private final Long2LongHashMap rowByKey = new Long2LongHashMap(-1);

    private double[] ratios = new double[16];
    private double[] scratch = new double[16];
    /** Up to this many links the others' median leaves the judged link out exactly (sorted). */
    static final int EXACT_MEDIAN_LINKS = 64;

    /** A NIC counts as slowed from this latency over its baseline ... */
    static final double NIC_SLOWED = 1.25;
    /** ... and this over the other hosts' NICs' median (a workload change lengthens every NIC's requests). */
    static final double NIC_SLOWED_RELATIVE = 1.5;

    private final NicView nics;
    /** Per sender host, this window: the slow links' distinct sender ranks (two are congestion), scratch. */
    private final Long2LongHashMap slowSenders = new Long2LongHashMap(-1);
    /**
     * Those hosts in the order their first slow link came (scratch): the order their congestion is judged in,
     * which must not depend on the map's capacity (it grows with the most hosts ever slow at once, and a restored
     * engine's starts small).
     */
    private final org.agrona.collections.LongArrayList slowHosts = new org.agrona.collections.LongArrayList();

    WaitStateDetector(final AnomalyConfig config, final Episode.Publisher publisher) {
        this(config, publisher, NicView.NONE);
    }

    WaitStateDetector(final AnomalyConfig config, final Episode.Publisher publisher, final NicView nics) {
        this.config = config;
        this.publisher = publisher;
        this.nics = nics;
    }

    /**
     * One link's summary (the window engine's LINK aggregate: a rank's step flows to or from one peer, all channels
     * summed; one per link and period, however many channels). The usual cost is a comparison of the flow key with the row its position had last
     * period and four additions into that row (half a cache line); a host's new period first closes the windows of the
     * communicators anchored there. A receive row sums its network figures too (no branch): the fold reads a send
     * row's only.
     */
    void onLink(final FlowRows.Cursor h, final FlowSummary s) {
        if (s.periodEndNs() != h.periodEndNs) {
            newPeriod(h, s.periodStartNs(), s.periodEndNs());
        }
        int row = h.row();
        if (row < 0 || !FlowRows.keyMatches(flows.t[FlowRows.base(row) + FlowRows.KEY_STEPS], s.flowKey())) {
            row = learn(h, s);
        }
        h.position++;
        if (row >= 0) {
            final long[] r = flows.t;
            final int b = FlowRows.base(row);
            // Steps and first steps are counts of one period of one link: far below their fields' 32 and 16 bits.
            r[b + FlowRows.KEY_STEPS] += s.phaseCount(Phase.NETWORK);
            r[b + FlowRows.NETWORK_NS] += s.phaseSumNs(Phase.NETWORK);
            r[b + FlowRows.BYTES] += s.bytes();
            r[b + FlowRows.FIRST] += s.firstSteps() * FlowRows.FIRST_ONE + s.firstStepWaitSumNs();
        }
    }

    /** A host's cursor, made on its first summary (the engine keeps it with its host). */
    FlowRows.Cursor cursorOf(final long hostId) {
        FlowRows.Cursor h = cursors.get(hostId);
        if (h == null) {
            h = new FlowRows.Cursor(hostId);
            cursors.put(hostId, h);
        }
        return h;
    }

    /** A host's latest time, {@link Long#MIN_VALUE} before any. */
    private long hostNow(final long hostId) {
        final FlowRows.Cursor h = cursors.get(hostId);
        return h == null ? Long.MIN_VALUE : h.latestNs;
    }

    /** A host's next period: its time moves on, windows anchored there close, positions start again. */
    private void newPeriod(final FlowRows.Cursor h, final long periodStartNs, final long periodEndNs) {
        h.periodEndNs = periodEndNs;
        h.position = 0;
        h.advance(periodEndNs);
        closeWindows(h, periodStartNs, true);
    }

    /** The row of a summary its position did not find: by key, else a new one; -1 for ranks out of range. */
    private int learn(final FlowRows.Cursor h, final FlowSummary s) {
        int row = (int) rowByKey.get(s.flowKey());
        if (row < 0) {
            if (!CommWaits.validRanks(s)) {
                return -1;
            }
            final CommWaits c = comm(s);
            final CommWaits.Link l = s.isSend() ? c.link(s.rank(), s.peer()) : c.link(s.peer(), s.rank());
            c.rank(s.rank(), s.hostId());
            c.host(s.hostId());
            if (s.isSend()) {
                l.senderHostId = s.hostId();
            }
            row = flows.add(s.flowKey(), FlowRows.meta(c.index, l.index, s.isSend()), s.rank());
            c.addRow(row);
            h.reports(c.index);
            rowByKey.put(s.flowKey(), row);
        }
        h.learn(row);
        return row;
    }

    private CommWaits comm(final FlowSummary s) {
        CommWaits c = comms.get(s.commHash());
        if (c == null) {
            c = new CommWaits(commByIndex.size(), s.commHash(), s.hostId(), s.periodStartNs(), config);
            comms.put(s.commHash(), c);
            commByIndex.add(c);
        }
        return c;
    }

    /**
     * Of the communicators a host reports, the windows anchored on it that end by {@code timeNs} are judged; one
     * whose anchor host fell silent while this one goes on (64 periods of each other host) is taken over by this
     * host. Only a period of the host counts towards that ({@code period}), not {@code advanceTo}: the drain loop
     * tells every host's time after every batch, many times a period (counting those took a live anchor's windows
     * away after ~64 batches). Only the host's own communicators: a host period costs what it reports, not the
     * cluster's communicator count.
     */
    private void closeWindows(final FlowRows.Cursor h, final long timeNs, final boolean period) {
        final long hostId = h.hostId;
        for (int i = 0; i < h.comms.size(); i++) {
            final CommWaits c = commByIndex.get(h.comms.getInt(i));
            if (c.anchorHostId == hostId) {
                if (c.window.isOver(timeNs)) {
                    evaluate(c, timeNs);
                }
            } else if (period) {
                c.otherPeriods++;
                if (c.staleFor(REANCHOR_PERIODS)) {
                    c.reanchor(flows, hostId, timeNs);
                }
            }
        }
    }

    /**
     * Whether the wait-state rule holds {@code rank} of a communicator late now (its latest window bad, or its
     * straggler anomaly open): its sends burst and queue, which the period rules must not read as a slow link.
     */
    boolean straggling(final long commHash, final int rank) {
        final CommWaits c = comms.get(commHash);
        return c != null && rank >= 0 && rank < c.rankRows && c.present[rank] && c.straggling[rank].isBadOrOpen();
    }

    /** The host whose clock closes a communicator's windows now (tests), or {@link Long#MIN_VALUE}. */
    long anchorHostOf(final long commHash) {
        final CommWaits c = comms.get(commHash);
        return c == null ? Long.MIN_VALUE : c.anchorHostId;
    }

    /** A host's time moved on with no summary: windows anchored there close (empty ones help resolve). */
    void advanceTo(final long hostId, final long timeNs) {
        final FlowRows.Cursor h = cursorOf(hostId);
        h.advance(timeNs);
        closeWindows(h, timeNs, false);
    }

    private void evaluate(final CommWaits c, final long nowNs) {
        final long anchorEnd = c.window.endNs;
        c.fold(flows);
        c.sumPerRank();
        for (int r = 0; r < c.rankRows; r++) {
            if (c.present[r]) {
                judgeRank(c, r, anchorEnd);
            }
        }
        judgeLinks(c, anchorEnd);
        c.nextWindow(nowNs);
    }

    /** Whether rank r's receivers waited on it at entry this window, by enough and with enough operations. */
    private boolean straggles(final CommWaits c, final int rank) {
        if (c.onCount[rank] < config.minEntrySteps || c.ofCount[rank] < config.minEntrySteps) {
            return false;
        }
        final double on = c.waitsOnNs(rank);
        final double of = c.waitsOfNs(rank);
        return on - of >= config.slowNodeEntryNs && on >= config.slowNodeEntryRatio * Math.max(of, 1.0);
    }

    private void judgeRank(final CommWaits c, final int rank, final long anchorEnd) {
        final Episode episode = c.straggling[rank];
        final long now = hostNow(c.hostOf[rank]);
        final boolean some = c.onCount[rank] > 0 || c.ofCount[rank] > 0;
        if (some && (c.onCount[rank] < config.minEntrySteps || c.ofCount[rank] < config.minEntrySteps)) {
            // Operations longer than a window: too few to judge, neither good nor bad; carried to the next.
            return;
        }
        if (!straggles(c, rank)) {
            if (episode.isOpen()) {
                if (c.stalledAlike(rank, config.slowNodeEntryNs, OWN_WAIT_WARMUP_WINDOWS)) {
                    // A stall of the whole communicator hides who is late: neither a sign of recovery nor of more
                    // (a real 9 s straggler was resolved and named again across a 100 ms one).
                    episode.hold();
                    return;
                }
            } else if (!episode.isBadOrOpen()) {
                c.learnOwnWait(rank, config.baselinePeriods);
            }
            episode.good(publisher, now);
            return;
        }
        if (!episode.bad(c.window.startNs)) {
            return;
        }
        final double on = c.waitsOnNs(rank);
        final double of = c.waitsOfNs(rank);
        final double late = on - of;
        final double ownGpu = c.gpuFirstWaitNs(rank);
        final boolean gpu = ownGpu >= late / 2;
        final SortedMap<String, Double> ev = new TreeMap<>();
        ev.put("latenessNsPerOp", late);
        ev.put("peersEntryWaitNs", on);
        ev.put("ownEntryWaitNs", of);
        ev.put("ownGpuFirstSlotWaitNs", ownGpu);
        ev.put("operations", (double) c.onCount[rank]);
        final String summary = String.format(
                "rank %d delays comm 0x%x by %.2f ms per operation: at each "
                        + "operation's start its peers wait %.2f ms for its first data, it waits %.2f ms for theirs (%d first "
                        + "steps; %s)",
                rank,
                c.commHash,
                late / 1e6,
                on / 1e6,
                of / 1e6,
                c.onCount[rank],
                gpu
                        ? String.format("its own GPU takes %.2f ms to its first data", ownGpu / 1e6)
                        : "it arrives late: its CPU calls late, its GPU is not the cause");
        final Severity sev = late >= config.slowNodeCriticalNs ? Severity.CRITICAL : Severity.WARNING;
        // The onset on the culprit's clock: the first bad window's start, translated by its age.
        episode.publish(
                publisher,
                AnomalyKind.SLOW_NODE,
                Culprit.rank(c.hostOf[rank], c.commHash, rank),
                sev,
                now - (anchorEnd - episode.firstBadStartNs()),
                now,
                ev,
                summary);
    }

    private void judgeLinks(final CommWaits c, final long anchorEnd) {
        // This window's ratio to baseline of every judged link with a baseline, sorted, for the others' median.
        int n = 0;
        for (int i = 0; i < c.links.size(); i++) {
            final CommWaits.Link l = c.links.get(i);
            l.ratio = Double.NaN;
            if (l.sendSteps >= config.minLinkSteps
                    && l.sendBytes > 0
                    && l.baselineWindows >= config.linkWarmupWindows) {
                l.ratio = l.nsPerByte() / l.baselineNsPerByte;
                if (n == ratios.length) {
                    ratios = Arrays.copyOf(ratios, n * 2);
                }
                ratios[n++] = l.ratio;
            }
        }
        // The others' median: exact (one value left out) for a small communicator; for a large one the median of
        // all, by selection (one value moves it by at most one position among thousands).
        double allMedian = Double.NaN;
        if (n <= EXACT_MEDIAN_LINKS) {
            Arrays.sort(ratios, 0, n);
        } else {
            if (scratch.length < n) {
                scratch = new double[ratios.length];
            }
            System.arraycopy(ratios, 0, scratch, 0, n);
            allMedian = n % 2 == 1
                    ? Robust.select(scratch, n, n / 2)
                    : (Robust.select(scratch, n, n / 2 - 1) + Robust.select(scratch, n, n / 2)) / 2;
        }
        // Which links are slow this window, and which hosts' senders slowed together (congestion).
        slowSenders.clear();
        slowHosts.clear();
        for (int i = 0; i < c.links.size(); i++) {
            final CommWaits.Link l = c.links.get(i);
            l.slowNow = slowNow(c, l, n, allMedian);
            if (l.slowNow) {
                final long first = slowSenders.get(l.senderHostId);
                if (first == -1) {
                    slowHosts.addLong(l.senderHostId);
                }
                // -1: none yet; a rank: one sender so far; -2: two or more distinct senders.
                slowSenders.put(l.senderHostId, first == -1 || first == l.sender ? l.sender : -2);
            }
        }
        judgeCongestion(c, anchorEnd);
        for (int i = 0; i < c.links.size(); i++) {
            judgeLink(c, c.links.get(i), n, allMedian, anchorEnd);
        }
    }

    /** Whether the link reads as slow this window (before congestion takes its share): see {@link #judgeLink}. */
    private boolean slowNow(final CommWaits c, final CommWaits.Link l, final int n, final double allMedian) {
        if (l.sendSteps < config.minLinkSteps
                || l.sendBytes == 0
                || l.baselineWindows < config.linkWarmupWindows
                || straggles(c, l.sender)
                || straggles(c, l.receiver)) {
            return false;
        }
        final double others = Double.isNaN(allMedian) ? medianWithout(ratios, n, l.ratio) : allMedian;
        final double relative = Double.isNaN(others) ? l.ratio : l.ratio / others;
        return l.ratio >= config.slowLinkRatio && relative >= config.slowLinkRelative;
    }

    /** The device a congested host's links share: its most slowed NIC, -1 for its network (no NIC known). */
    private int congestedNic(final long hostId) {
        final int dev = nics.worstNic(hostId);
        if (dev < 0) {
            return -1;
        }
        final double ratio = nics.latencyRatio(hostId, dev);
        final double others = nics.othersMedianRatio(hostId);
        return ratio >= NIC_SLOWED && (Double.isNaN(others) || ratio >= NIC_SLOWED_RELATIVE * others) ? dev : -2;
    }

    /**
     * Hosts whose links of two or more sender ranks are slow together this window: a congestion episode each (per
     * communicator and host; the lifecycle keeps one anomaly per NIC), and their slow links are explained by it.
     * A host with NICs known and none slowed is not congested: its links are judged one by one.
     */
    private void judgeCongestion(final CommWaits c, final long anchorEnd) {
        for (int i = 0; i < c.links.size(); i++) {
            final CommWaits.Link l = c.links.get(i);
            l.explained = false;
        }
        for (int h = 0; h < slowHosts.size(); h++) {
            final long hostId = slowHosts.getLong(h);
            final int device = slowSenders.get(hostId) == -2 ? congestedNic(hostId) : -2;
            if (device == -2) {
                // One sender's links slow alone, or no NIC slowed: judged one by one, unless the host's congestion
                // (either rule's) is open; then they are its share, and the window is no good one for its episode
                // (a congested NIC's links need not all slow in every window).
                if (publisher.congestionOpen(hostId)) {
                    explainSlowLinks(c, hostId);
                    c.congestion(hostId, config);
                }
                continue;
            }
            int slowLinks = 0;
            double worst = Double.NaN;
            for (int i = 0; i < c.links.size(); i++) {
                final CommWaits.Link l = c.links.get(i);
                if (l.slowNow && l.senderHostId == hostId) {
                    l.explained = true;
                    slowLinks++;
                    worst = Double.isNaN(worst) ? l.ratio : Math.max(worst, l.ratio);
                }
            }
            final Episode e = c.congestion(hostId, config);
            if (!e.bad(c.window.startNs)) {
                continue;
            }
            final long now = hostNow(hostId);
            final SortedMap<String, Double> ev = new TreeMap<>();
            ev.put("slowLinks", (double) slowLinks);
            ev.put("worstLinkFractionOfBaseline", 1 / worst);
            if (device >= 0) {
                ev.put("deviceLatencyRatio", nics.latencyRatio(hostId, device));
                ev.put("otherNicsLatencyRatio", nics.othersMedianRatio(hostId));
            }
            final String where = device >= 0
                    ? String.format("NIC %d of host 0x%x", device, hostId)
                    : String.format("the network of host 0x%x (no QP events tell its NICs apart)", hostId);
            final String summary = String.format(
                    "%s congested: %d links of several of its ranks slowed together "
                            + "(the worst at %.0f%% of its baseline)%s",
                    where,
                    slowLinks,
                    100 / worst,
                    device >= 0
                            ? String.format(
                                    ", its work requests take %.1f× their usual time",
                                    nics.latencyRatio(hostId, device))
                            : "");
            final Severity sev = worst >= 2 ? Severity.CRITICAL : Severity.WARNING;
            e.publish(
                    publisher,
                    AnomalyKind.CONGESTION,
                    Culprit.nic(hostId, device),
                    sev,
                    now - (anchorEnd - e.firstBadStartNs()),
                    now,
                    ev,
                    summary);
        }
        c.settleCongestion(publisher, this::hostNow);
    }

    /** Marks host {@code hostId}'s slow links of this window as congestion's, not slow links. */
    private static void explainSlowLinks(final CommWaits c, final long hostId) {
        for (int i = 0; i < c.links.size(); i++) {
            final CommWaits.Link l = c.links.get(i);
            if (l.slowNow && l.senderHostId == hostId) {
                l.explained = true;
            }
        }
    }

    private void judgeLink(
            final CommWaits c, final CommWaits.Link l, final int n, final double allMedian, final long anchorEnd) {
        final long now = hostNow(l.senderHostId);
        if (l.sendSteps < config.minLinkSteps || l.sendBytes == 0) {
            l.slow.good(publisher, now);
            return;
        }
        final boolean endsStraggle = straggles(c, l.sender) || straggles(c, l.receiver);
        final double x = l.nsPerByte();
        if (l.baselineWindows < config.linkWarmupWindows) {
            if (!endsStraggle) {
                l.baselineNsPerByte = (l.baselineNsPerByte * l.baselineWindows + x) / (l.baselineWindows + 1);
                l.baselineWindows++;
            }
            return;
        }
        final double ratio = l.ratio;
        if (l.explained) {
            // Congestion of its host's network: not a slow link, and not a healthy window for its baseline.
            l.slow.good(publisher, now);
            return;
        }
        if (!l.slowNow) {
            final boolean healthy = !endsStraggle && ratio < LINK_HEALTHY_RATIO;
            if (healthy) {
                // A healthy window moves the baseline slowly (drift of the host, other jobs). Only a clearly
                // healthy one: a slowed link reads 1.3-1.4x in many windows, and a baseline that learnt those
                // took the fault for the link's normal within a second (a real 7.5 s slow link went unnamed).
                l.baselineNsPerByte += (x - l.baselineNsPerByte) / config.baselinePeriods;
            } else if (!endsStraggle && l.slow.isOpen()) {
                // Open and still slower than healthy: neither slow enough to count nor a sign of recovery.
                l.slow.hold();
                return;
            }
            l.slow.good(publisher, now);
            return;
        }
        if (!l.slow.bad(c.window.startNs)) {
            return;
        }
        final double others = Double.isNaN(allMedian) ? medianWithout(ratios, n, ratio) : allMedian;
        final double othersOrOne = Double.isNaN(others) ? 1.0 : others;
        final SortedMap<String, Double> ev = new TreeMap<>();
        ev.put("networkNsPerMiB", x * (1 << 20));
        ev.put("baselineNetworkNsPerMiB", l.baselineNsPerByte * (1 << 20));
        ev.put("fractionOfBaseline", 1 / ratio);
        ev.put("othersFractionOfBaseline", 1 / othersOrOne);
        ev.put("bandwidthBytesPerSecond", 1e9 / x);
        ev.put("baselineBytesPerSecond", 1e9 / l.baselineNsPerByte);
        ev.put("steps", (double) l.sendSteps);
        final String summary = String.format(
                "link rank %d → %d of comm 0x%x moves data at %.0f%% of its "
                        + "baseline (%.2f GB/s against %.2f GB/s; the communicator's other links at %.0f%%), both ends on "
                        + "time",
                l.sender, l.receiver, c.commHash, 100 / ratio, 1 / x, 1 / l.baselineNsPerByte, 100 / othersOrOne);
        final Severity sev = ratio >= 2 ? Severity.CRITICAL : Severity.WARNING;
        l.slow.publish(
                publisher,
                AnomalyKind.SLOW_LINK,
                Culprit.link(l.senderHostId, c.commHash, l.sender, l.receiver),
                sev,
                now - (anchorEnd - l.slow.firstBadStartNs()),
                now,
                ev,
                summary);
    }

    /*
     * Checkpoint: the flow rows with their full keys, the communicators by index, the hosts' cursors (by host id:
     * the same state, the same bytes). The link ratios, the selection scratch and the slow senders are scratch of
     * one judgement.
     */

    void writeTo(final CheckpointOut out) {
        final long[] keys = new long[flows.rows];
        rowByKey.forEachLong((key, row) -> keys[(int) row] = key);
        flows.writeTo(out, keys);
        out.writeInt(commByIndex.size());
        for (final CommWaits c : commByIndex) {
            c.writeTo(out);
        }
        final long[] hostIds = new long[cursors.size()];
        int n = 0;
        for (final FlowRows.Cursor h : cursors.values()) {
            hostIds[n++] = h.hostId;
        }
        Arrays.sort(hostIds);
        out.writeInt(n);
        for (final long hostId : hostIds) {
            cursors.get(hostId).writeTo(out);
        }
        // appended after format version 1's content: a checkpoint without them reads with them unknown
        for (final CommWaits c : commByIndex) {
            c.writeOwnWaits(out);
        }
    }

    /** Into a fresh detector. */
    void readFrom(final CheckpointIn in) {
        final long[] keys = flows.readFrom(in);
        for (int r = 0; r < keys.length; r++) {
            CheckpointIn.check(rowByKey.put(keys[r], r) == -1, "a flow key in two rows");
        }
        final int n = in.readCount();
        for (int i = 0; i < n; i++) {
            final CommWaits c = CommWaits.readFrom(in, i, config, flows);
            CheckpointIn.check(comms.put(c.commHash, c) == null, "a communicator's wait states twice");
            commByIndex.add(c);
        }
        final int cursorCount = in.readCount();
        for (int i = 0; i < cursorCount; i++) {
            final FlowRows.Cursor h = FlowRows.Cursor.readFrom(in, flows.rows, n);
            CheckpointIn.check(cursors.put(h.hostId, h) == null, "a host's cursor twice");
        }
        if (in.remaining() > 0) {
            for (final CommWaits c : commByIndex) {
                c.readOwnWaits(in);
            }
        }
    }

    /** The median of sorted[0..n) with one instance of {@code own} left out; NaN when nothing is left. */
    static double medianWithout(final double[] sorted, final int n, final double own) {
        final int k = Arrays.binarySearch(sorted, 0, n, own);
        final int m = k >= 0 ? n - 1 : n;
        if (m <= 0) {
            return Double.NaN;
        }
        final double lo = at(sorted, k, (m - 1) / 2);
        final double hi = at(sorted, k, m / 2);
        return (lo + hi) / 2;
    }

    /** Element j of sorted with index k removed (k < 0: nothing removed). */
    private static double at(final double[] sorted, final int k, final int j) {
        return k >= 0 && j >= k ? sorted[j + 1] : sorted[j];
    }
}
