package io.flowscope.anomaly;

/**
 * A communicator's robust statistics across its links and ranks, what the period rules judge one link or rank
 * against: the median and robust sigma of the judged links' rate ratios, the two largest credit waits into a rank,
 * the median and sigma of the ranks' excess waits. Recomputed about once per round of all its links (every link's
 * judgement asks; {@link #refresh} recomputes only when due), over the communicator's dense mirrors.
 */
final class CommStatistics {
    private final AnomalyConfig config;
    private final Robust robust = new Robust();

    CommStatistics(final AnomalyConfig config) {
        this.config = config;
    }

    /**
     * Recomputes a communicator's link and rank statistics about once per round of all its links. Called for every
     * link and rank judged: the check is kept apart from the pass so that it inlines (a call per judgement costs
     * more than the check).
     */
    void refresh(final CommState c) {
        if (!c.statsValid || c.updates >= c.linkTotal) {
            recompute(c);
        }
    }

    private void recompute(final CommState c) {
        c.updates = 0;
        c.statsValid = true;
        // Over the dense mirrors (sequential arrays), not the link objects (a cache miss each). One pass over the
        // links: the judged fresh ones' ratios, and each fresh one's credit wait gathered into its receiving
        // rank's row (the rank table's scratch).
        final int links = c.linkTotal;
        final int ranks = c.rankTotal;
        final long staleNs = config.staleNs;
        final long[] waitMax = c.rWaitMax;
        final long[] waitCount = c.rWaitCount;
        java.util.Arrays.fill(waitMax, 0, ranks, 0L);
        java.util.Arrays.fill(waitCount, 0, ranks, 0L);
        final HostState[] lHost = c.lHost;
        final long[] lLastActiveNs = c.lLastActiveNs;
        final boolean[] lJudged = c.lJudged;
        final double[] lRatio = c.lRatio;
        final int[] lPeer = c.lPeer;
        final long[] lPeerWaitMax = c.lPeerWaitMax;
        final long[] lNetCount = c.lNetCount;
        robust.clear();
        for (int i = 0; i < links; i++) {
            if (lHost[i].nowNs - lLastActiveNs[i] > staleNs) {
                continue;
            }
            if (lJudged[i]) {
                robust.add(lRatio[i]);
            }
            final int p = lPeer[i];
            waitMax[p] = Math.max(waitMax[p], lPeerWaitMax[i]);
            waitCount[p] += lNetCount[i];
        }
        c.linkCount = robust.count();
        // Last time's median and MAD as guesses (same results, fewer steps: see Robust).
        robust.compute(c.rateMedian, c.rateMad);
        c.rateMedian = robust.median;
        c.rateMad = robust.mad;
        c.rateSigma = robust.sigma();
        robust.clear();
        c.creditTop = 0;
        c.creditSecond = 0;
        final double[] excess = c.rExcess;
        final long minSteps = config.minWindowSteps;
        for (int i = 0; i < ranks; i++) {
            // Only the two largest waits are judged (a rank waited on alone): no median of them is needed.
            if (waitCount[i] >= minSteps) {
                final double w = (double) waitMax[i];
                if (w > c.creditTop) {
                    c.creditSecond = c.creditTop;
                    c.creditTop = w;
                } else if (w > c.creditSecond) {
                    c.creditSecond = w;
                }
            }
            if (!Double.isNaN(excess[i])) {
                robust.add(excess[i]);
            }
        }
        c.excessCount = robust.count();
        robust.compute(c.excessMedian, c.excessMad);
        c.excessMedian = robust.median;
        c.excessMad = robust.mad;
        c.excessSigma = robust.sigma();
    }
}
