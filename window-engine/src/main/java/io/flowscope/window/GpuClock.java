package io.flowscope.window;

/**
 * The passive clock estimate of one GPU, keyed by (host, commHash, rank): samples {@code host time − pTimer} of
 * its KernelCh starts (= offset + poll lag, lag ≥ 0), kept as a <b>windowed minimum</b> so that drift and steps
 * do not leave a stale lifetime minimum.
 * <p>
 * Host time (relative to half a bucket before the first sample, so a wrapping clock works) is cut into buckets of
 * {@code gpuClockBucketNs}; the last {@code gpuClockBuckets} buckets keep their lowest sample and its host time.
 * The estimate is a least-squares line through the retained bucket minima: offset at a host time and drift
 * (slope, in ppm). A bucket whose minimum is more than {@code gpuClockStepNs} off the line of the buckets
 * before it is a <b>step</b> (NTP step, clock reset): the buckets before it are dropped ({@link #steps}), as when
 * it is below the line by more than the line's error bound (a step inside the bucket before it, a drift change); the
 * newest bucket, still filling, is left out of the fit unless it is the only one or its minimum is already below
 * the line by more than the line's error bound (see {@link #estimate}).
 * <p>
 * Error bound: every bucket minimum is the true offset plus a lag in {@code [0, gpuPollLagBoundNs]} (assumed: one
 * sample per bucket polled while the poller idles), so over the span of the buckets the line is within
 * {@code gpuPollLagBoundNs + max |residual|} of the true offset (for a clock of constant drift over the window),
 * plus, at a host time beyond that span, the distance × 2 (bound + residual) / span (the slope's error);
 * with one bucket the estimate is the bucket minimum, the drift is unknown (0) and the bound adds 200 ppm
 * ({@link #MAX_UNFITTED_DRIFT_PPM}) of the distance from that minimum's host time. The assumption needs time: a
 * run's first samples can all be late (its proxy thread busy with the first operations), so an estimate is
 * {@linkplain GpuClockEstimate#settled() settled} only once the samples span {@code gpuClockSettleNs} of host time.
 */
final class GpuClock extends Pooled {
    long key;
    HostState host;
    long commHash;
    int rank;
    long samples;
    long steps;
    long originNs;
    long firstHostNs;
    long lastHostNs;
    /** Bucket index (relative to the origin) of the newest bucket; the ring holds newest − K + 1 .. newest. */
    long newest;
    /** The oldest bucket index still valid (after a step, older ones are dropped). */
    long validFrom;

    private final long[] bucketId;
    private final long[] minSample;
    private final long[] minHostNs;

    GpuClock(final int buckets) {
        bucketId = new long[buckets];
        minSample = new long[buckets];
        minHostNs = new long[buckets];
    }

    void reset(final long key, final HostState host, final long commHash, final int rank) {
        this.key = key;
        this.host = host;
        this.commHash = commHash;
        this.rank = rank;
        samples = 0;
        steps = 0;
        for (int i = 0; i < bucketId.length; i++) {
            bucketId[i] = Long.MIN_VALUE;
        }
    }

    boolean is(final long hostId, final long commHash, final int rank) {
        return host.hostId == hostId && this.commHash == commHash && this.rank == rank;
    }

    static long key(final long hostId, final long commHash, final int rank, final int attempt) {
        long h = FlowState.mix(hostId ^ 0x6C6F636BL) ^ commHash * 0x9E3779B97F4A7C15L;
        h = FlowState.mix(h ^ rank);
        return FlowState.mix(h + attempt);
    }

    void sample(final long hostNs, final long sampleNs, final WindowConfig config) {
        final int k = bucketId.length;
        if (samples == 0) {
            // Half a bucket before the first sample: records a little out of order (other ring lanes) share its
            // bucket.
            originNs = hostNs - config.gpuClockBucketNs / 2;
            firstHostNs = hostNs;
            lastHostNs = hostNs;
            newest = 0;
            validFrom = 1 - k;
        }
        samples++;
        lastHostNs = WindowEngine.latestOf(lastHostNs, hostNs);
        final long b = Math.floorDiv(hostNs - originNs, config.gpuClockBucketNs);
        if (b > newest) {
            // The newest bucket is complete: a step against the buckets before it drops those.
            final int verdict = closed(newest, config);
            if (verdict != KEEP) {
                steps += verdict == STEP ? 1 : 0;
                validFrom = newest;
            }
            newest = b;
            validFrom = Math.max(validFrom, b - k + 1);
        }
        if (b < validFrom) {
            return;
        }
        final int slot = (int) Math.floorMod(b, (long) k);
        if (bucketId[slot] != b) {
            bucketId[slot] = b;
            minSample[slot] = sampleNs;
            minHostNs[slot] = hostNs;
        } else if (sampleNs < minSample[slot]) {
            minSample[slot] = sampleNs;
            minHostNs[slot] = hostNs;
        }
    }

    private boolean has(final long b) {
        return b >= validFrom && b <= newest && bucketId[(int) Math.floorMod(b, (long) bucketId.length)] == b;
    }

    /** The drift allowed for in the error bound while only one bucket is known (GPU vs host oscillators). */
    static final double MAX_UNFITTED_DRIFT_PPM = 200;

    private static final int KEEP = 0;
    private static final int CONTRADICTED = 1;
    private static final int STEP = 2;

    /**
     * The verdict on bucket {@code b} when it completes, against the line of the valid buckets before it: STEP when
     * its minimum is off by more than the step threshold; CONTRADICTED when it is below the line by more than the
     * line's error bound (no lag explains that: a step inside the bucket before, or a change of drift); either
     * way the buckets before it are dropped.
     */
    private int closed(final long b, final WindowConfig config) {
        if (!has(b) || !fit(validFrom, b - 1)) {
            return KEEP;
        }
        final int slot = (int) Math.floorMod(b, (long) bucketId.length);
        final double x = minHostNs[slot] - originNs;
        final double dev = (double) (minSample[slot] - queryRef) - (query[0] + query[1] * x);
        if (Math.abs(dev) > config.gpuClockStepNs) {
            return STEP;
        }
        return -dev > config.gpuPollLagBoundNs + query[2] + extrapolation(x, config) ? CONTRADICTED : KEEP;
    }

    /**
     * The last {@link #fit}: {intercept, slope, max |residual|, (unused), buckets, first x, last x}; y relative to
     * {@link #queryRef}, x = host time − origin.
     */
    private final double[] query = new double[7];
    /**
     * The reference sample of the {@link #query} fit, kept as a long: samples are near −1.8e18 (%globaltimer counts
     * Unix-epoch ns), where a double's step is 256 ns.
     */
    private long queryRef;

    /** Least squares over the valid buckets in [from, to] into {@link #query}; false when none. */
    private boolean fit(final long from, final long to) {
        final int k = bucketId.length;
        int n = 0;
        long ref = 0;
        double sx = 0;
        double sy = 0;
        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        for (long b = Math.max(from, validFrom); b <= to; b++) {
            if (!has(b)) {
                continue;
            }
            final int slot = (int) Math.floorMod(b, (long) k);
            if (n == 0) {
                ref = minSample[slot];
            }
            n++;
            minX = Math.min(minX, minHostNs[slot] - originNs);
            maxX = Math.max(maxX, minHostNs[slot] - originNs);
            sx += minHostNs[slot] - originNs;
            sy += minSample[slot] - ref;
        }
        if (n == 0) {
            return false;
        }
        final double mx = sx / n;
        final double my = sy / n;
        double sxx = 0;
        double sxy = 0;
        for (long b = Math.max(from, validFrom); b <= to; b++) {
            if (has(b)) {
                final int slot = (int) Math.floorMod(b, (long) k);
                final double dx = minHostNs[slot] - originNs - mx;
                sxx += dx * dx;
                sxy += dx * (minSample[slot] - ref - my);
            }
        }
        final double slope = n >= 2 && sxx > 0 ? sxy / sxx : 0;
        final double intercept = my - slope * mx;
        double maxResidual = 0;
        for (long b = Math.max(from, validFrom); b <= to; b++) {
            if (has(b)) {
                final int slot = (int) Math.floorMod(b, (long) k);
                final double r = minSample[slot] - ref - (intercept + slope * (minHostNs[slot] - originNs));
                maxResidual = Math.max(maxResidual, Math.abs(r));
            }
        }
        // The intercept relative to the reference sample: y = ref + intercept + slope · x.
        query[0] = intercept;
        query[1] = slope;
        query[2] = maxResidual;
        queryRef = ref;
        query[4] = n;
        query[5] = minX;
        query[6] = maxX;
        return true;
    }

    /**
     * The estimate at host time {@code atHostNs} into {@code target}; false before the first sample. The fit is of
     * the complete buckets (the newest one, still filling, may not yet hold a sample polled within the bound);
     * the newest alone when it is the only one, or when its minimum is already below the line by more than the
     * line's error bound (no lag explains a sample below the true offset: a downward step, counted as a step
     * beyond the step threshold, or a step inside the last complete bucket). An upward step shows when the first
     * bucket wholly after it completes: until then (up to two buckets) the estimate is the old offset.
     */
    boolean estimate(final long atHostNs, final WindowConfig config, final GpuClockEstimate target) {
        if (samples == 0) {
            return false;
        }
        boolean stepNow = false;
        if (newest - 1 < validFrom || !fit(validFrom, newest - 1)) {
            if (!fit(newest, newest)) {
                return false;
            }
        } else if (has(newest)) {
            final int slot = (int) Math.floorMod(newest, (long) bucketId.length);
            final double predicted = query[0] + query[1] * (minHostNs[slot] - originNs);
            final double below = predicted - (double) (minSample[slot] - queryRef);
            // No lag puts a sample below the true offset: a newest minimum below the line by more than the line's
            // own error contradicts it (a step inside the last complete bucket, or a drift change): newest alone.
            if (below > config.gpuPollLagBoundNs + query[2] + extrapolation(minHostNs[slot] - originNs, config)) {
                final boolean step = below > config.gpuClockStepNs;
                if (fit(newest, newest)) {
                    stepNow = step;
                }
            }
        }
        final int n = (int) query[4];
        final double x = atHostNs - originNs;
        final double r = query[2];
        final double extrapolation = extrapolation(x, config);
        target.hostId = host.hostId;
        target.commHash = commHash;
        target.rank = rank;
        target.samples = samples;
        target.buckets = n;
        target.steps = steps + (stepNow ? 1 : 0);
        target.atHostNs = atHostNs;
        target.driftKnown = n >= 2;
        target.driftPpm = query[1] * 1e6;
        target.offsetNs = queryRef + Math.round(query[0] + query[1] * x);
        target.errorBoundNs = config.gpuPollLagBoundNs + (long) Math.ceil(r + extrapolation);
        target.settled = lastHostNs - firstHostNs >= config.gpuClockSettleNs;
        target.spreadNs = -1;
        return true;
    }

    /** Beyond the span of the {@link #query} fit, the slope's error (two minima each off by up to bound + r). */
    private double extrapolation(final double x, final WindowConfig config) {
        if (query[4] < 2 || query[6] <= query[5]) {
            // One bucket: no drift fitted; allow the largest drift assumed between a GPU and its host.
            return MAX_UNFITTED_DRIFT_PPM * 1e-6 * Math.abs(x - query[5]);
        }
        final double dist = Math.max(0, Math.max(x - query[6], query[5] - x));
        return dist * 2 * (config.gpuPollLagBoundNs + query[2]) / (query[6] - query[5]);
    }

    /** A GPU time on the host clock, by the estimate at host time {@code atHostNs}; for collectives. */
    long toHostNs(final long gpuNs, final long atHostNs, final WindowConfig config, final GpuClockEstimate scratch) {
        return estimate(atHostNs, config, scratch) ? gpuNs + scratch.offsetNs : gpuNs;
    }
}
