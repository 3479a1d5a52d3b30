package io.flowscope.anomaly;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.CollectiveSummary;

/**
 * SLOW_NODE by the period rule: a rank that makes the others wait beyond its own baseline and beyond its
 * communicator's median, judged per period of its host. Two signals: the longest credit wait of a send into the
 * rank (20 → 9: its receivers' credit comes late) when it alone is waited on, and how late it arrives at its
 * collectives (the median GPU duration of a collective's ranks minus its own: a late rank finishes with the others,
 * so its duration is the shortest). Neither while a NIC of its host stalls or a hang of its communicator is near, and
 * lateness not while a link explains it. Needs several ranks (robust statistics across the communicator): on real
 * NCCL the {@link WaitStateDetector} names stragglers of two-rank communicators too.
 */
final class CreditWaitDetector {
    private final AnomalyConfig config;
    private final AnomalyLifecycle lifecycle;
    private final Evidence evidence;
    private final Robust robust = new Robust();
    private final WaitStateDetector waitStates;
    private final CommStatistics stats;

    CreditWaitDetector(
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

    /** The ranks host {@code h}'s period touched, each judged. */
    void judgeRanks(final HostState h, final long periodStart, final long now) {
        for (int i = 0; i < h.touchedRankCount; i++) {
            final CommState c = h.touchedRankComms[i];
            stats.refresh(c);
            judgeRank(c, h.touchedRanks[i], periodStart, now);
        }
    }

    /**
     * One rank's GPU duration of a complete collective (communicator, sequence number): once every rank of the
     * round reported, each rank's lateness = the round's median duration − its own (durations, not instants, so
     * host clocks do not matter).
     */
    void onCollective(final CommState c, final CollectiveSummary cs) {
        final long key = cs.seqNumber();
        CollectiveRound round = c.rounds.get(key);
        if (round == null) {
            round = c.freeRounds.isEmpty() ? new CollectiveRound() : c.freeRounds.remove(c.freeRounds.size() - 1);
            round.reset(key, cs.nranks());
            c.rounds.put(key, round);
        }
        if (!round.seen[cs.rank()]) {
            round.seen[cs.rank()] = true;
            round.durationNs[cs.rank()] = cs.durationNs();
            round.count++;
        }
        if (round.count == round.nranks) {
            c.rounds.remove(key);
            robust.clear();
            for (int r = 0; r < round.nranks; r++) {
                robust.add(round.durationNs[r]);
            }
            robust.compute();
            for (int r = 0; r < round.nranks; r++) {
                c.rank(r).pushLateness((long) robust.median - round.durationNs[r]);
            }
            c.freeRounds.add(round);
        }
        if (c.rounds.size() > 64) {
            // Rounds some rank never reported (a hang, a lost record): drop the oldest.
            long oldest = Long.MAX_VALUE;
            for (final CollectiveRound r : c.rounds.values()) {
                oldest = Math.min(oldest, r.seq);
            }
            c.freeRounds.add(c.rounds.remove(oldest));
        }
    }

    /**
     * Slow node: how long a rank makes others wait, beyond its own baseline: the longer of the credit its
     * senders wait for (20 → 9 of sends into it) and the data its receivers wait for (10 → 11 of receives from
     * it, less what it waited for data itself, so ranks merely blocked behind a late one are not named).
     */
    private void judgeRank(final CommState c, final int rank, final long periodStart, final long now) {
        // Over the communicator's dense rank tables (a host's ranks side by side); the rank object only for its
        // collective lateness (while no link of the communicator is troubled) and when it is tracked.
        final HostState host = c.rHost[rank];
        if (host == null) {
            return;
        }
        final double creditRaw = Math.max(0, incomingWaitPerStep(c, rank));
        final double credit = creditSignal(c, creditRaw);
        final double late = lateNs(c, rank);
        final double v = Math.max(credit, late);
        final double[] baselines = c.rBaseline;
        if (c.rWarm[rank] < config.warmupPeriods) {
            warmUpRank(c, rank, v);
            return;
        }
        final double excess = v - baselines[rank];
        c.rExcess[rank] = excess;
        if (c.excessCount < config.minLinks) {
            return;
        }
        final double median = c.excessMedian;
        final double limit = Math.max(median * config.slowNodeRatio, median + config.slowNodeMinNs);
        final boolean bad = excess > limit
                && excess - median > config.madK * c.excessSigma
                && !host.nicQuiet
                && !c.hangNear(periodStart, now, config.windowPeriods);
        if (!bad && !c.rTracked[rank]) {
            baselines[rank] += (v - baselines[rank]) / config.baselinePeriods;
            return;
        }
        final RankState r = c.rankById[rank];
        trackRank(r, bad, creditRaw, credit, late, periodStart, now);
        c.rTracked[rank] = r.slow().bad != 0 || r.slow().open != null;
    }

    /**
     * {@link #judgeRank}'s rare part (a rank bad now or tracked): kept apart so that the per-period part is small
     * enough to inline into the period end (a call per rank and period spills every live register).
     */
    private void trackRank(
            final RankState r,
            final boolean bad,
            final double creditRaw,
            final double credit,
            final double late,
            final long periodStart,
            final long now) {
        final CommState c = r.comm;
        final double median = c.excessMedian;
        // Read only here: not computed for the ranks with nothing tracked.
        final double excess = c.rExcess[r.idx];
        final boolean good = excess <= Math.max(median * config.slowNodeRatio / 2, median + config.slowNodeMinNs / 2);
        evidence.clear();
        evidence.put("creditWaitIntoRankMaxNs", creditRaw);
        evidence.put("collectiveLatenessNs", late);
        evidence.put("dataWaitMaxNs", r.dataWaitMaxNs());
        evidence.put("baselineNs", c.rBaseline[r.idx]);
        evidence.put("excessNs", excess);
        evidence.put("medianExcessNs", median);
        evidence.put("robustSigmaNs", c.excessSigma);
        evidence.put("gpuConsumeNsPerStep", r.consumePerStep());
        evidence.put("ranks", c.excessCount);
        final Severity sev =
                excess > 10 * Math.max(median, config.slowNodeMinNs) ? Severity.CRITICAL : Severity.WARNING;
        final String summary = !lifecycle.willPublish(r.slow(), bad, sev)
                ? null
                : String.format(
                        "rank %d of comm 0x%x is late: "
                                + "its peers wait up to %.0f µs more than usual for its credit (%.0f µs) or it arrives late at its "
                                + "collectives (%.0f µs); the others are merely blocked",
                        r.rank, c.commHash, excess / 1e3, credit / 1e3, late / 1e3);
        lifecycle.track(
                r.slow(),
                bad,
                good,
                AnomalyKind.SLOW_NODE,
                Culprit.rank(r.host.hostId, c.commHash, r.rank),
                sev,
                periodStart,
                now,
                now - (long) config.windowPeriods * (now - periodStart),
                summary);
    }

    /**
     * Credit waits into a rank count when it alone makes its senders wait (twice the runner-up): several ranks
     * waited on alike are a pattern's back-pressure (tree parents of big operations), not a straggler.
     */
    private static double creditSignal(final CommState c, final double creditRaw) {
        return creditRaw >= c.creditTop && creditRaw >= 2 * c.creditSecond ? creditRaw : 0;
    }

    /**
     * How late the rank arrives at its collectives, or 0 where that says nothing: a degraded link anywhere in the
     * communicator reshapes every rank's collective timing, and then only the credit signal counts. That holds
     * while a slow link stays open too, also in periods where it does not read as degraded (a long-lived slow
     * link's transients otherwise named the ranks before it as slow).
     */
    private static double lateNs(final CommState c, final int rank) {
        if (c.troubledLinks > 0 || c.openSlowLinks > 0) {
            return 0;
        }
        // The rank object only here (no link of the communicator troubled: rare at scale).
        final RankState r = c.rankById[rank];
        return linkExplainsLateness(r) ? 0 : r.collectiveLatenessNs();
    }

    /** A rank's baseline while it warms up: the mean of its first periods' signal (apart to keep judgeRank small). */
    private static void warmUpRank(final CommState c, final int rank, final double v) {
        final double[] baselines = c.rBaseline;
        final int warm = c.rWarm[rank];
        baselines[rank] = warm == 0 ? v : baselines[rank] + (v - baselines[rank]) / (warm + 1);
        c.rWarm[rank] = warm + 1;
    }

    /** Whether one of the rank's own sending links is degraded (then its receivers' wait is the link's doing). */
    private static boolean linkExplainsLateness(final RankState r) {
        if (r.host == null) {
            return false;
        }
        if (r.host.congestion.bad > 0 || r.host.congestion.open != null) {
            return true;
        }
        for (int i = 0; i < r.host.links.size(); i++) {
            final LinkState l = r.host.links.get(i);
            if (l.rank == r.rank
                    && l.comm == r.comm
                    && (l.comm.lDegraded[l.id] || l.slow().bad > 0 || l.slow().open != null)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The longest credit wait (20 → 9) of a send into this rank over the window (a late receiver holds the
     * first steps of every operation), or -1 without enough data; from the communicator's link mirrors.
     */
    private double incomingWaitPerStep(final CommState c, final int rank) {
        long wait = 0;
        long n = 0;
        // The first two links into the rank from the communicator's dense table, more from the rank object (a
        // maximum and a sum: the order does not matter).
        final int count = c.rInCount[rank];
        final int[] in = count <= 2 ? c.rIn : c.rankById[rank].in;
        final int from = count <= 2 ? 2 * rank : 0;
        for (int k = from; k < from + count; k++) {
            final int i = in[k];
            if (c.lHost[i].nowNs - c.lLastActiveNs[i] > config.staleNs) {
                continue;
            }
            wait = Math.max(wait, c.lPeerWaitMax[i]);
            n += c.lNetCount[i];
        }
        return n < config.minWindowSteps ? -1 : (double) wait;
    }
}
