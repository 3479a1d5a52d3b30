package io.flowscope.anomaly;

/** The anomaly engine's thresholds, fixed at construction. Times are event-time ns. Defaults in the README. */
public final class AnomalyConfig {
    int windowPeriods = 8;
    int minLinks = 4;
    int minWindowSteps = 4;
    double slowLinkFraction = 0.2;
    double madK = 4.0;
    int openAfter = 4;
    int resolveAfter = 10;
    double slowNodeMinNs = 50_000;
    double slowNodeRatio = 3.0;
    long hangThresholdNs = 20_000_000L;
    long hangCriticalNs = 20_000_000L;
    long nicStallNs = 2_000_000L;
    double congestionOutstandingRatio = 1.5;
    long staleNs = 100_000_000L;
    int warmupPeriods = 20;
    int baselinePeriods = 32;
    long waitWindowNs = 25_000_000L;
    int waitOpenAfter = 2;
    int waitResolveAfter = 4;
    int linkOpenAfter = 7;
    int minEntrySteps = 4;
    double slowNodeEntryNs = 450_000;
    double slowNodeEntryRatio = 2.0;
    double slowNodeCriticalNs = 1_000_000;
    int minLinkSteps = 8;
    int linkWarmupWindows = 8;
    double slowLinkRatio = 1.4;
    double slowLinkRelative = 1.3;
    double kernelLatenessNs = 50_000;
    double kernelLatenessRatio = 2.0;

    /** The wait-state detectors' evaluation window (default 25 ms of the communicator's anchor host). */
    public AnomalyConfig waitWindowNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("waitWindowNs must be > 0, was " + ns);
        }
        waitWindowNs = ns;
        return this;
    }

    /**
     * A rank straggles when its receivers' op entry wait exceeds its own by this much (default 100 µs) and by
     * {@link #slowNodeEntryRatio} (default 2).
     */
    public AnomalyConfig slowNodeEntryNs(final double ns) {
        slowNodeEntryNs = ns;
        return this;
    }

    public AnomalyConfig slowNodeEntryRatio(final double r) {
        slowNodeEntryRatio = r;
        return this;
    }

    /** A link is slow at this multiple of its baseline network time per byte (default 1.4)... */
    public AnomalyConfig slowLinkRatio(final double r) {
        slowLinkRatio = r;
        return this;
    }

    /** ... and this multiple of its communicator's other links' (default 1.3). */
    public AnomalyConfig slowLinkRelative(final double r) {
        slowLinkRelative = r;
        return this;
    }

    /** Active periods a link or NIC averages into its baseline before it is judged (default 20). */
    public AnomalyConfig warmupPeriods(final int n) {
        warmupPeriods = Math.max(1, n);
        return this;
    }

    /** Time constant, in active periods, of a healthy link's or NIC's baseline (default 32). */
    public AnomalyConfig baselinePeriods(final int n) {
        baselinePeriods = Math.max(1, n);
        return this;
    }

    /** Periods in each link's and rank's sliding window (default 8: 8 ms at 1 ms periods). */
    public AnomalyConfig windowPeriods(final int n) {
        if (n < 1 || n > 64) {
            throw new IllegalArgumentException("windowPeriods must be 1..64, was " + n);
        }
        windowPeriods = n;
        return this;
    }

    /** Links (or ranks) with data a communicator needs before its median means anything (default 4). */
    public AnomalyConfig minLinks(final int n) {
        minLinks = Math.max(3, n);
        return this;
    }

    /** Completed steps a link's window needs before it is judged (default 4). */
    public AnomalyConfig minWindowSteps(final int n) {
        minWindowSteps = Math.max(1, n);
        return this;
    }

    /**
     * A link is slow when its transfer rate is below the communicator median by more than this fraction and by
     * more than {@link #madK} robust deviations (default 0.2).
     */
    public AnomalyConfig slowLinkFraction(final double f) {
        if (f <= 0 || f >= 1) {
            throw new IllegalArgumentException("slowLinkFraction must be in (0, 1), was " + f);
        }
        slowLinkFraction = f;
        return this;
    }

    /** Robust deviations (1.4826 × MAD) an outlier must be away from the median (default 4). */
    public AnomalyConfig madK(final double k) {
        madK = k;
        return this;
    }

    /** Consecutive bad evaluations (host periods) before an anomaly opens (default 4). */
    public AnomalyConfig openAfter(final int n) {
        openAfter = Math.max(1, n);
        return this;
    }

    /** Consecutive good evaluations before an open anomaly resolves (default 10). */
    public AnomalyConfig resolveAfter(final int n) {
        resolveAfter = Math.max(1, n);
        return this;
    }

    /** A rank is slow when the wait it causes per step exceeds the median by this much (default 50 µs)... */
    public AnomalyConfig slowNodeMinNs(final double ns) {
        slowNodeMinNs = ns;
        return this;
    }

    /** ... and by this factor of the median (default 3). */
    public AnomalyConfig slowNodeRatio(final double r) {
        slowNodeRatio = r;
        return this;
    }

    /** A receive with work outstanding and no completion this long is stalled; a stalled comm is a hang (20 ms). */
    public AnomalyConfig hangThresholdNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("hangThresholdNs must be > 0, was " + ns);
        }
        hangThresholdNs = ns;
        return this;
    }

    /**
     * A hang is CRITICAL once its culprit has not progressed this long; from {@link #hangThresholdNs} until then it
     * is a WARNING (a stall: the job waits on one rank, e.g. for its checkpoint, not yet a hang to page for).
     * Default 20 ms, the default threshold: critical at once.
     */
    public AnomalyConfig hangCriticalNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("hangCriticalNs must be > 0, was " + ns);
        }
        hangCriticalNs = ns;
        return this;
    }

    /** A NIC device whose QPs have work outstanding and no completion this long is stalled (default 2 ms). */
    public AnomalyConfig nicStallNs(final long ns) {
        nicStallNs = ns;
        return this;
    }

    /** Congestion needs outstanding bytes this many times the pre-onset level (default 1.5). */
    public AnomalyConfig congestionOutstandingRatio(final double r) {
        congestionOutstandingRatio = r;
        return this;
    }

    /** A link or rank with no data for this long is left out of its communicator's statistics (100 ms). */
    public AnomalyConfig staleNs(final long ns) {
        staleNs = ns;
        return this;
    }

    public long hangThresholdNs() {
        return hangThresholdNs;
    }

    public long hangCriticalNs() {
        return hangCriticalNs;
    }

    /**
     * A hash of every threshold, which a checkpoint records so that it is never restored under other ones (its
     * baselines, counters and open anomalies were judged under these). By reflection over the fields, so that a
     * threshold added later is covered without a list to keep in step.
     */
    long fingerprint() {
        final java.lang.reflect.Field[] fields = AnomalyConfig.class.getDeclaredFields();
        java.util.Arrays.sort(fields, java.util.Comparator.comparing(java.lang.reflect.Field::getName));
        long h = 0x6a09_e667_f3bc_c908L;
        for (final java.lang.reflect.Field f : fields) {
            if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            final Object v;
            try {
                v = f.get(this);
            } catch (final IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            final long bits = v instanceof Double d
                    ? Double.doubleToLongBits(d)
                    : v instanceof Boolean b ? (b ? 1 : 0) : ((Number) v).longValue();
            h = AnomalyLifecycle.mix(h ^ f.getName().hashCode());
            h = AnomalyLifecycle.mix(h ^ bits);
        }
        return h;
    }

    @Override
    public String toString() {
        return "AnomalyConfig{windowPeriods=" + windowPeriods + ", minLinks=" + minLinks + ", minWindowSteps="
                + minWindowSteps + ", slowLinkFraction=" + slowLinkFraction + ", madK=" + madK + ", openAfter="
                + openAfter + ", resolveAfter=" + resolveAfter + ", slowNodeMinNs=" + slowNodeMinNs
                + ", slowNodeRatio=" + slowNodeRatio + ", hangThresholdNs=" + hangThresholdNs + ", hangCriticalNs="
                + hangCriticalNs + ", nicStallNs="
                + nicStallNs + ", congestionOutstandingRatio=" + congestionOutstandingRatio + ", staleNs=" + staleNs
                + ", warmupPeriods=" + warmupPeriods + ", baselinePeriods=" + baselinePeriods + '}';
    }
}
