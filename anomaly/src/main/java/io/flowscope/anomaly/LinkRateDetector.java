package io.flowscope.anomaly;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;

/**
 * SLOW_LINK by the period rule: a link (sender rank → receiver rank of a communicator) whose service rate (bytes
 * per ns of network time, 9 → stop, over the window) falls below its own baseline by more than its communicator's
 * links do (median ratio less {@code slowLinkFraction}, and {@code madK} robust deviations). The link pass of a
 * host's period end ({@link #endPeriod}) pushes each touched link's period into its window, warms up or moves its
 * baseline, marks it degraded and tells the {@link CongestionDetector} how many of the host's ranks have degraded
 * (and softly slowed) links; {@link #judgeLinks} then tracks the degraded ones as slow links unless congestion
 * explains them. Not while an end of the link straggles by the wait states, a NIC stalls or a hang is near.
 */
final class LinkRateDetector {
    private final AnomalyConfig config;
    private final AnomalyLifecycle lifecycle;
    private final Evidence evidence;
    private final WaitStateDetector waitStates;
    private final CommStatistics stats;
    private int degradedRanks;
    private int softRanks;
    private int judged;
    private LinkState worstLink;

    LinkRateDetector(
            final AnomalyConfig config,
            final AnomalyLifecycle lifecycle,
            final WaitStateDetector waitStates,
            final CommStatistics stats) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.evidence = lifecycle.evidence();
        this.waitStates = waitStates;
        this.stats = stats;
    }

    /**
     * The link pass of host {@code h}'s period end: each link the period touched pushed into its window, its
     * baseline warmed up or moved, its degradation decided. Leaves what the congestion rule reads in
     * {@link #degradedRanks()}, {@link #softRanks()}, {@link #judged()} and {@link #worstLink()}.
     */
    void endPeriod(final HostState h, final long now) {
        // The links by their rows in their communicators' dense tables (a host's links side by side): a link
        // object only to judge one bad or tracked.
        final int[] ids = h.touchedLinks;
        final CommState[] comms = h.touchedLinkComms;
        final int n = h.touchedLinkCount;
        for (int i = 0; i < n; i++) {
            final CommState c = comms[i];
            final int id = ids[i];
            push(c, id);
            c.lLastActiveNs[id] = now;
            publishRatio(c, id);
            c.updates++;
        }
        // Links: degraded ones of this host, then slow link (one sender rank) or congestion (several).
        int degradedRanks = 0;
        int softRanks = 0;
        int judged = 0;
        CommState worstComm = null;
        int worst = -1;
        for (int i = 0; i < n; i++) {
            final CommState c = comms[i];
            final int id = ids[i];
            stats.refresh(c);
            final boolean was = c.lDegraded[id];
            // Whether the link is degraded now: its service rate relative to its own baseline (the ratio) is
            // below the communicator's median ratio by the slow-link fraction and by madK robust deviations. A
            // link still warming up feeds its baseline only. The baseline follows the link while it is healthy
            // and freezes while it is degraded or part of an anomaly. Written here, not in a method of its own:
            // C2 compiled that one apart (it runs hot while the period end is recompiled after a deoptimisation)
            // and then found it too big to inline, a call per link and period.
            boolean degraded = false;
            if (hasRate(c, id)) {
                final double[] jd = c.lJudge;
                final int b = id * CommState.LJ;
                final double rate = jd[b + CommState.LJ_RATE];
                if (c.lWarm[id] < config.warmupPeriods) {
                    warmUp(c, id, rate);
                } else {
                    final double ratio = rate / jd[b + CommState.LJ_BASELINE];
                    jd[b + CommState.LJ_FRACTION] = ratio;
                    // A send that waited for its receiver's credit and then went out in a burst queues on the
                    // wire: when the receiver is late (slow node), it is to blame, not the link. The link's own
                    // wait first; the receiving rank's tracked flag (bad evaluations or open) from its row.
                    final boolean creditBound = c.lPeerWaitMax[id] > config.slowNodeMinNs && c.rTracked[c.lPeer[id]];
                    final HostState host = c.lHost[id];
                    final boolean suppressed = host.nicQuiet || peerHostNicQuiet(c, id) || creditBound;
                    degraded = !suppressed
                            && c.linkCount >= config.minLinks
                            && ratio < c.rateMedian * (1 - config.slowLinkFraction)
                            && c.rateMedian - ratio > config.madK * c.rateSigma;
                    if (!degraded && !suppressed && !c.lTracked[id] && host.congestion.open == null) {
                        jd[b + CommState.LJ_BASELINE] +=
                                (rate - jd[b + CommState.LJ_BASELINE]) / config.baselinePeriods;
                        jd[b + CommState.LJ_BASELINE_OUT] +=
                                (outstandingMean(c, id) - jd[b + CommState.LJ_BASELINE_OUT]) / config.baselinePeriods;
                    }
                }
            }
            // The baseline and warm-up may have moved.
            publishRatio(c, id);
            c.lDegraded[id] = degraded;
            if (c.lWarm[id] >= config.warmupPeriods && hasRate(c, id)) {
                judged++;
            }
            if (was != degraded) {
                c.troubledLinks += was ? -1 : 1;
            }
            if (degraded) {
                if (!sameRankSeen(h, c.lRankNo[id], i)) {
                    degradedRanks++;
                }
                if (worst < 0 || c.fraction(id) < worstComm.fraction(worst)) {
                    worstComm = c;
                    worst = id;
                }
            }
        }
        if (degradedRanks >= 1) {
            // Other ranks of the host whose links slowed too (half the slow-link fraction): a shared NIC.
            for (int i = 0; i < n; i++) {
                final CommState c = comms[i];
                final int id = ids[i];
                if (soft(c, id) && !degradedRank(h, c.lRankNo[id]) && !softSeen(h, c.lRankNo[id], i)) {
                    softRanks++;
                }
            }
        }
        this.degradedRanks = degradedRanks;
        this.softRanks = softRanks;
        this.judged = judged;
        this.worstLink = worst < 0 ? null : worstComm.linkById[worst];
    }

    /** The host's ranks with a degraded link, at the last {@link #endPeriod}. */
    int degradedRanks() {
        return degradedRanks;
    }

    /** The host's other ranks whose links slowed by half the slow-link fraction (only counted with a degraded one). */
    int softRanks() {
        return softRanks;
    }

    /** The host's links with a judged window (warm, enough steps). */
    int judged() {
        return judged;
    }

    /** The host's degraded link furthest below its baseline, or null. */
    LinkState worstLink() {
        return worstLink;
    }

    /**
     * Tracks the host's degraded links (not when congestion explains them) and those tracked already: opens,
     * updates or resolves their SLOW_LINK anomalies.
     */
    void judgeLinks(final HostState h, final long periodStart, final long now, final boolean congestion) {
        final int[] ids = h.touchedLinks;
        final CommState[] comms = h.touchedLinkComms;
        final int n = h.touchedLinkCount;
        for (int i = 0; i < n; i++) {
            final CommState c = comms[i];
            final int id = ids[i];
            // judgeLink's own early return, checked here: most links are healthy and have nothing tracked.
            if ((c.lDegraded[id] && !congestion) || c.lTracked[id]) {
                judgeLink(c.linkById[id], periodStart, now, congestion);
            }
        }
    }

    /** What the communicator statistics read of a link's ratio: whether it is judged, and its rate / baseline. */
    private void publishRatio(final CommState c, final int id) {
        // hasRate less its staleness, which moves with the host's time and is checked when read.
        final boolean judged =
                c.lWarm[id] >= config.warmupPeriods && c.lNetCount[id] >= config.minWindowSteps && c.lNetNs[id] > 0;
        c.lJudged[id] = judged;
        final int b = id * CommState.LJ;
        c.lRatio[id] = judged ? c.lJudge[b + CommState.LJ_RATE] / c.lJudge[b + CommState.LJ_BASELINE] : 0;
    }

    /** Whether a link's window has a rate to judge: enough steps, network time, and not stale. */
    private boolean hasRate(final CommState c, final int id) {
        return c.lNetCount[id] >= config.minWindowSteps
                && c.lNetNs[id] > 0
                && c.lHost[id].nowNs - c.lLastActiveNs[id] <= config.staleNs;
    }

    /**
     * The period's accumulators of link {@code id} into its window, then cleared; the window's rate, network
     * sums and longest credit wait into the link's rows.
     */
    private static void push(final CommState c, final int id) {
        final long[] cur = c.lCur;
        final int b = id * CommState.LINK_CUR + 1;
        final RingTable win = c.lWin;
        final int slot = win.slot(id);
        // The summed series (all before PEER_WAIT_MAX) in one go, their accumulators cleared.
        win.setAll(id, slot, cur, b, LinkState.PEER_WAIT_MAX);
        final long now = cur[b + LinkState.PEER_WAIT_MAX];
        cur[b + LinkState.PEER_WAIT_MAX] = 0;
        final long left = win.replace(slot, LinkState.PEER_WAIT_MAX, now);
        win.advance(id);
        // The window maximum without a rescan, unless the value leaving was the maximum and nothing as large
        // came in.
        final long max = c.lPeerWaitMax[id];
        if (now >= max) {
            c.lPeerWaitMax[id] = now;
        } else if (left == max) {
            c.lPeerWaitMax[id] = win.max(id, LinkState.PEER_WAIT_MAX);
        }
        final long net = win.sum(id, LinkState.NET_NS);
        c.lNetNs[id] = net;
        c.lNetCount[id] = win.sum(id, LinkState.NET_COUNT);
        c.lJudge[id * CommState.LJ + CommState.LJ_RATE] =
                net == 0 ? Double.NaN : win.sum(id, LinkState.BYTES) * 1e9 / net;
    }

    /**
     * A link's baselines while it warms up (apart to keep the period end small): the harmonic mean of its first
     * windows' rates, i.e. their time per byte averaged. An arithmetic mean was carried by a few windows of a job's
     * start with next to no network time (52 GB/s on links that never carried 5.6 GB/s in any period: the link then
     * read as slow at 10 % of that baseline for good, MultiHostHarnessIT).
     */
    private static void warmUp(final CommState c, final int id, final double rate) {
        final int warm = c.lWarm[id];
        final double[] j = c.lJudge;
        final int b = id * CommState.LJ;
        j[b + CommState.LJ_BASELINE] = warm == 0 ? rate : (warm + 1) / (warm / j[b + CommState.LJ_BASELINE] + 1 / rate);
        j[b + CommState.LJ_BASELINE_OUT] = warm == 0
                ? outstandingMean(c, id)
                : j[b + CommState.LJ_BASELINE_OUT]
                        + (outstandingMean(c, id) - j[b + CommState.LJ_BASELINE_OUT]) / (warm + 1);
        c.lWarm[id] = warm + 1;
    }

    /** Mean outstanding bytes at the ends of the link's window's periods. */
    static double outstandingMean(final CommState c, final int id) {
        final int n = c.lWin.filled(id);
        return n == 0 ? 0 : (double) c.lWin.sum(id, LinkState.OUTSTANDING) / n;
    }

    /** Whether the receiving rank's host has a NIC stalling (through the dense mirrors: no rank object). */
    private static boolean peerHostNicQuiet(final CommState c, final int id) {
        final HostState h = c.rHost[c.lPeer[id]];
        return h != null && h.nicQuiet;
    }

    private void judgeLink(final LinkState l, final long periodStart, final long now, final boolean congestion) {
        final CommState c = l.comm;
        if (c.lWarm[l.id] < config.warmupPeriods || !hasRate(c, l.id)) {
            return;
        }
        // Not while an end of the link straggles by the wait states (its sends burst and queue) nor around a hang
        // (traffic resuming): the service opens this rule's anomalies late enough for those to have been seen.
        final boolean bad = c.lDegraded[l.id]
                && !congestion
                && !waitStates.straggling(c.commHash, l.rank)
                && !waitStates.straggling(c.commHash, l.peer)
                && !c.hangNear(periodStart, now, config.windowPeriods);
        final boolean good = !c.lDegraded[l.id] && c.fraction(l.id) >= c.rateMedian * (1 - config.slowLinkFraction / 2);
        if (!bad && l.slow().open == null && l.slow().bad == 0) {
            return;
        }
        final double rate = l.rate();
        evidence.clear();
        evidence.put("bandwidthBytesPerSecond", rate);
        evidence.put("baselineBytesPerSecond", c.baseline(l.id));
        evidence.put("fractionOfBaseline", c.fraction(l.id));
        evidence.put("medianFractionOfBaseline", c.rateMedian);
        evidence.put("robustSigma", c.rateSigma);
        evidence.put("outstandingBytes", l.latestOutstanding());
        evidence.put("peerWaitNsPerStep", l.peerWaitPerStep());
        evidence.put("links", c.linkCount);
        final double rel = c.rateMedian > 0 ? c.fraction(l.id) / c.rateMedian : 0;
        final Severity sev = rel < 0.5 ? Severity.CRITICAL : Severity.WARNING;
        final String summary = !lifecycle.willPublish(l.slow(), bad, sev)
                ? null
                : String.format(
                        "rank %d → %d of comm 0x%x moves "
                                + "data at %.0f%% of its baseline while its communicator's links keep %.0f%%: slow link (the sender's "
                                + "steps wait on the network, not on credit)",
                        l.rank, l.peer, c.commHash, 100 * c.fraction(l.id), 100 * c.rateMedian);
        final boolean wasOpen = l.slow().open != null;
        lifecycle.track(
                l.slow(),
                bad,
                good,
                AnomalyKind.SLOW_LINK,
                Culprit.link(l.host.hostId, c.commHash, l.rank, l.peer),
                sev,
                periodStart,
                now,
                now - (long) config.windowPeriods * (now - periodStart),
                summary);
        if (wasOpen != (l.slow().open != null)) {
            c.openSlowLinks += wasOpen ? -1 : 1;
        }
        c.lTracked[l.id] = l.slow().bad != 0 || l.slow().open != null;
    }

    /** A judged link not degraded but below its communicator's median by half the slow-link fraction. */
    private boolean soft(final CommState c, final int id) {
        return !c.lDegraded[id]
                && c.lWarm[id] >= config.warmupPeriods
                && hasRate(c, id)
                && c.fraction(id) < c.rateMedian * (1 - config.slowLinkFraction / 2);
    }

    private boolean softSeen(final HostState h, final int rank, final int upTo) {
        for (int j = 0; j < upTo; j++) {
            final CommState c = h.touchedLinkComms[j];
            final int o = h.touchedLinks[j];
            if (c.lRankNo[o] == rank && soft(c, o)) {
                return true;
            }
        }
        return false;
    }

    private static boolean sameRankSeen(final HostState h, final int rank, final int upTo) {
        for (int j = 0; j < upTo; j++) {
            final CommState c = h.touchedLinkComms[j];
            final int o = h.touchedLinks[j];
            if (c.lDegraded[o] && c.lRankNo[o] == rank) {
                return true;
            }
        }
        return false;
    }

    private static boolean degradedRank(final HostState h, final int rank) {
        for (int j = 0; j < h.touchedLinkCount; j++) {
            final CommState c = h.touchedLinkComms[j];
            final int o = h.touchedLinks[j];
            if (c.lDegraded[o] && c.lRankNo[o] == rank) {
                return true;
            }
        }
        return false;
    }
}
