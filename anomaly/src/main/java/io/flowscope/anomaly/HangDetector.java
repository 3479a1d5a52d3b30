package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import java.util.List;

/**
 * HANG: a communicator whose receives have work outstanding and no completion for {@code hangThresholdNs}: a
 * WARNING (a stall: the job waits on one rank), CRITICAL once that has lasted {@code hangCriticalNs}.
 * Receivers point at the senders they wait on; the culprit is the root of that wait-for graph (a sender not itself
 * waiting for data; most waiters first, then lowest rank), in a cycle the sender of the receive that stalled first.
 * Each host's receives are checked against that host's own time ({@link HostState#nowNs}); the stall's start is
 * carried to the culprit's clock as an age, never as an instant. Inputs: the receive rows the engine keeps per host
 * ({@link HostState#recvRows}); output: one HANG per communicator through the {@link AnomalyLifecycle}.
 */
final class HangDetector {
    private final AnomalyConfig config;
    private final AnomalyLifecycle lifecycle;
    private final Evidence evidence;

    HangDetector(final AnomalyConfig config, final AnomalyLifecycle lifecycle) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.evidence = lifecycle.evidence();
    }

    void checkStalls(final HostState h) {
        final boolean[] flags = h.recvStalled;
        final long threshold = config.hangThresholdNs;
        // Over the host's receive table (sequential rows): a flow object only where its state changes. Not at all
        // when no receive is flagged and none can be stalled now: a stalled one has work outstanding in the
        // period reported, so it progressed last at waitingSinceNs or later (the usual case: every receive
        // progressed this period, its rows are not read).
        final boolean scan = h.recvStalledCount > 0 || h.recvScanAll || h.nowNs - h.waitingSinceNs >= threshold;
        for (int i = 0; scan && i < h.recvFlowCount; i++) {
            final boolean stalled = h.recvWaiting(i, threshold);
            if (stalled != flags[i]) {
                flags[i] = stalled;
                h.recvStalledCount += stalled ? 1 : -1;
                final RecvFlow f = h.recvFlows[i];
                if (stalled) {
                    f.comm.stalled.add(f);
                } else {
                    f.comm.stalled.remove(f);
                }
                f.comm.stallChanged = true;
            }
        }
        // Once per communicator, in the order of its first receive here (again for its other receives was a
        // no-op: the first call leaves nothing changed and an open hang's culprit as it computes it).
        for (int i = 0; i < h.recvComms.size(); i++) {
            final CommState c = h.recvComms.get(i);
            if (c.stallChanged || (c.hang.open != null)) {
                c.stallChanged = false;
                judgeHang(c);
            }
        }
    }

    /**
     * Receivers point at the senders they wait on; the culprit is a sender that is not itself waiting for data
     * (the root of the wait-for graph; most waiters first, then lowest rank); in a cycle, the sender of the
     * receive that stalled first.
     */
    private void judgeHang(final CommState c) {
        final List<RecvFlow> stalled = c.stalled;
        if (stalled.isEmpty()) {
            if (c.hang.open != null) {
                c.hangResolvedNs = latestNow(c);
                lifecycle.resolve(c.hang, c.hangResolvedNs);
            }
            return;
        }
        // The wait-for graph over every waiting receive (half the threshold), so that ranks whose hosts reported
        // a period later are in it.
        final List<RecvFlow> waiting = c.waiting;
        waiting.clear();
        for (int i = 0; i < c.rankTotal; i++) {
            final RankState r = c.rankById[i];
            for (int j = 0; j < r.recvFlows.size(); j++) {
                final RecvFlow f = r.recvFlows.get(j);
                if (isWaitingFlow(f)) {
                    waiting.add(f);
                }
            }
        }
        RecvFlow best = null;
        int bestWaiters = -1;
        for (int i = 0; i < waiting.size(); i++) {
            final RecvFlow f = waiting.get(i);
            if (isWaiting(c, f.peer)) {
                continue;
            }
            final int waiters = waitersOn(waiting, f.peer);
            if (waiters > bestWaiters || (waiters == bestWaiters && better(f, best))) {
                best = f;
                bestWaiters = waiters;
            }
        }
        // With no waiting receive left in the graph (the stalled ones are on hosts whose time ran ahead of the
        // others'), the stalled receives themselves are the graph: never a null culprit.
        final List<RecvFlow> graph = waiting.isEmpty() ? stalled : waiting;
        if (best == null) {
            // A cycle: the sender of the receive that stalled first.
            for (int i = 0; i < graph.size(); i++) {
                final RecvFlow f = graph.get(i);
                if (best == null
                        || f.lastProgressNs() < best.lastProgressNs()
                        || (f.lastProgressNs() == best.lastProgressNs() && better(f, best))) {
                    best = f;
                }
            }
            bestWaiters = waitersOn(graph, best.peer);
        }
        final RankState culpritRank = c.ranks.get(best.peer);
        final HostState culpritHost = culpritRank != null && culpritRank.host != null ? culpritRank.host : best.host;
        long since = Long.MAX_VALUE;
        for (int i = 0; i < stalled.size(); i++) {
            since = Math.min(since, stalled.get(i).lastProgressNs());
        }
        final long now = culpritHost.nowNs;
        // Ages, not instants, cross hosts: the stall's start on the culprit's clock.
        final long start = now - (best.host.nowNs - best.lastProgressNs());
        since = now - (best.host.nowNs - since);
        evidence.clear();
        evidence.put("stalledReceives", stalled.size());
        evidence.put("waitingReceives", waiting.size());
        evidence.put("waitersOnCulprit", bestWaiters);
        evidence.put("noProgressNs", best.host.nowNs - best.lastProgressNs());
        evidence.put("thresholdNs", config.hangThresholdNs);
        evidence.put("criticalAfterNs", config.hangCriticalNs);
        // A stall (the job waits on one rank) is a WARNING until it has lasted hangCriticalNs: then a hang.
        final long stalledForNs = best.host.nowNs - best.lastProgressNs();
        final Severity severity =
                stalledForNs >= config.hangCriticalNs || config.hangCriticalNs <= config.hangThresholdNs
                        ? Severity.CRITICAL
                        : Severity.WARNING;
        final Culprit culprit = new Culprit(culpritHost.hostId, c.commHash, best.peer, best.rank, best.channel, -1, -1);
        final Anomaly open = c.hang.open;
        if (open == null) {
            c.hang.firstBadStartNs = start;
            lifecycle.open(
                    c.hang,
                    AnomalyKind.HANG,
                    culprit,
                    severity,
                    start,
                    now,
                    start,
                    now,
                    summary(c, culprit, severity, stalledForNs, stalled.size()));
            return;
        }
        final boolean moves = !open.culprit().equals(culprit) && revisable(c, culprit, now);
        if (moves || severity != open.severity() && severity == Severity.CRITICAL) {
            final Culprit named = moves ? culprit : open.culprit();
            final Severity raised = severity == Severity.CRITICAL ? severity : open.severity();
            lifecycle.update(
                    c.hang, named, raised, now, since, summary(c, named, raised, stalledForNs, stalled.size()));
        }
    }

    private String summary(
            final CommState c,
            final Culprit culprit,
            final Severity severity,
            final long stalledForNs,
            final int stalledReceives) {
        if (severity == Severity.CRITICAL) {
            return String.format(
                    "comm 0x%x hung: rank %d does not progress; rank %d waits for its data on channel %d "
                            + "(%d stalled receives)",
                    c.commHash, culprit.rank(), culprit.peer(), culprit.channel(), stalledReceives);
        }
        return String.format(
                "comm 0x%x stalled: rank %d has not progressed for %.0f ms; rank %d waits for its data "
                        + "on channel %d (%d stalled receives); a hang at %.0f s",
                c.commHash,
                culprit.rank(),
                stalledForNs / 1e6,
                culprit.peer(),
                culprit.channel(),
                stalledReceives,
                config.hangCriticalNs / 1e9);
    }

    /**
     * Whether an open hang's culprit may move to {@code culprit}: to another receive of the same hung rank always;
     * to another rank only within the threshold after the hang opened (a host that reported a period later can put
     * the real root in the wait-for graph) and only while the rank named so far waits for data itself (it was
     * blocked, not the root). Otherwise the graph changes because the stall is clearing: the hung rank's receivers
     * progress first and the ranks behind them a little after, and the graph points at those; and a hung rank
     * that resumes reports receives whose last progress is from before the hang, so it reads as waiting itself
     * (MultiHostHarnessIT: opened on rank 3, resolved on rank 1; HangDetectorTest: a 30 ms stall moved to the
     * rank behind the stopped one as it came back).
     */
    private boolean revisable(final CommState c, final Culprit culprit, final long now) {
        final Anomaly open = c.hang.open;
        return open.culprit().rank() == culprit.rank()
                || now - open.detectedNs() < config.hangThresholdNs
                        && isWaiting(c, open.culprit().rank());
    }

    private static boolean better(final RecvFlow f, final RecvFlow best) {
        if (best == null) {
            return true;
        }
        if (f.peer != best.peer) {
            return f.peer < best.peer;
        }
        if (f.rank != best.rank) {
            return f.rank < best.rank;
        }
        return f.channel < best.channel;
    }

    private static int waitersOn(final List<RecvFlow> waiting, final int sender) {
        int n = 0;
        for (int j = 0; j < waiting.size(); j++) {
            if (waiting.get(j).peer == sender) {
                n++;
            }
        }
        return n;
    }

    private boolean isWaitingFlow(final RecvFlow f) {
        return f.host.recvWaiting(f.idx, config.hangThresholdNs / 2);
    }

    /**
     * Whether a rank waits for data itself: one of its receives has work outstanding and no completion for half
     * the threshold (the ranks behind a hung one stall within a few steps of each other, so half the threshold
     * keeps a blocked rank from being named because its host reported a period later).
     */
    private boolean isWaiting(final CommState c, final int rank) {
        final RankState r = c.ranks.get(rank);
        if (r == null) {
            return false;
        }
        for (int i = 0; i < r.recvFlows.size(); i++) {
            if (isWaitingFlow(r.recvFlows.get(i))) {
                return true;
            }
        }
        return false;
    }

    private static long latestNow(final CommState c) {
        long now = Long.MIN_VALUE;
        for (int i = 0; i < c.rankTotal; i++) {
            final RankState r = c.rankById[i];
            if (r.host != null) {
                now = Math.max(now, r.host.nowNs);
            }
        }
        return now;
    }
}
