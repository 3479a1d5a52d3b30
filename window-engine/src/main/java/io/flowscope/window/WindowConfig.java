package io.flowscope.window;

/** The engine's sizes and times, fixed at construction. All times are event-time ns. */
public final class WindowConfig {
    int windowSize = CompletionWindow.DEFAULT_SIZE;
    long periodNs = 1_000_000L;
    long idleTimeoutNs = 10_000_000_000L;
    long stepTimeoutNs = 10_000_000_000L;
    /** Default tombstone lifetime (5 ms), see {@link #tombstoneTimeoutNs(long)}. */
    public static final long DEFAULT_TOMBSTONE_TIMEOUT_NS = 5_000_000L;

    long tombstoneTimeoutNs = -1;
    int maxFlows = 4096;
    int maxOps = 16384;
    int maxSteps = 65536;
    int maxHosts = 256;
    int maxAggregates = -1;
    int maxCollectives = 4096;
    int maxKernelChannels = 65536;
    long collectiveTimeoutNs = 1_000_000_000L;
    long gpuPollLagBoundNs = 20_000L;
    long gpuClockBucketNs = 1_000_000_000L;
    int gpuClockBuckets = 8;
    long gpuClockStepNs = 1_000_000L;
    long gpuClockSettleNs = 50_000_000L;
    int maxGpuClocks = 1024;
    int maxPendingKernelChannels = 256;
    long pendingKernelChNs = 5_000_000L;
    boolean series;

    /** Completions per window (N, default 8). */
    public WindowConfig windowSize(final int n) {
        if (n < 1) {
            throw new IllegalArgumentException("windowSize must be >= 1, was " + n);
        }
        windowSize = n;
        return this;
    }

    /** Summary period (default 1 ms). */
    public WindowConfig periodNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("periodNs must be > 0, was " + ns);
        }
        periodNs = ns;
        return this;
    }

    /** A flow with no event for this long is evicted (default 10 s). */
    public WindowConfig idleTimeoutNs(final long ns) {
        idleTimeoutNs = ns;
        return this;
    }

    /**
     * An op or live step with no record for this long is dropped (a missing stop; default 10 s). Stopped steps
     * live {@link #tombstoneTimeoutNs(long)}.
     */
    public WindowConfig stepTimeoutNs(final long ns) {
        stepTimeoutNs = ns;
        return this;
    }

    /**
     * How long a stopped step or work request stays as a tombstone that recognises duplicate and late records
     * (default: {@link #DEFAULT_TOMBSTONE_TIMEOUT_NS} = 5 ms, or the step timeout when shorter). Rationale: such
     * records come from the same rings, drained within µs to a few ms of each other, whereas tombstones are most
     * of the step table: at a busy node's ~4.6 M steps + work requests/s, a 5 ms tombstone keeps ~23 k entries,
     * a third of the default {@code maxSteps} (65,536), where the 10 s step timeout kept them all (the table
     * filled in ~14 ms and further steps were dropped). Live steps, bounded by NCCL's steps in flight, keep the
     * step timeout. A step that finds the table full is dropped and counted ({@code droppedStepTableFull}).
     */
    public WindowConfig tombstoneTimeoutNs(final long ns) {
        tombstoneTimeoutNs = ns;
        return this;
    }

    /** The tombstone lifetime in effect. */
    public long effectiveTombstoneTimeoutNs() {
        return tombstoneTimeoutNs >= 0 ? tombstoneTimeoutNs : Math.min(stepTimeoutNs, DEFAULT_TOMBSTONE_TIMEOUT_NS);
    }

    public WindowConfig maxFlows(final int n) {
        maxFlows = n;
        return this;
    }

    public WindowConfig maxOps(final int n) {
        maxOps = n;
        return this;
    }

    /** Hosts (clock domains) one engine can hold (default 256); events of further hosts are dropped. */
    public WindowConfig maxHosts(final int n) {
        maxHosts = n;
        return this;
    }

    /**
     * Aggregates (rank, link, communicator) one host's period can hold (default maxFlows: links are usually
     * fewer than flows, one per channel group, and ranks and communicators far fewer); beyond it they are
     * counted in {@code droppedAggregateTableFull}.
     */
    public WindowConfig maxAggregates(final int n) {
        maxAggregates = n;
        return this;
    }

    /** Live collectives (and P2p operations) one engine can hold (default 4096). */
    public WindowConfig maxCollectives(final int n) {
        maxCollectives = n;
        return this;
    }

    /** Live KernelCh events one engine can hold (default 65536). */
    public WindowConfig maxKernelChannels(final int n) {
        maxKernelChannels = n;
        return this;
    }

    /**
     * A collective that stopped on the host but whose KernelCh channels have not all reported after this long is
     * emitted as it is, {@code complete = false} (default 1 s). One that never stopped is dropped after the step
     * timeout.
     */
    public WindowConfig collectiveTimeoutNs(final long ns) {
        collectiveTimeoutNs = ns;
        return this;
    }

    /**
     * The poll lag that at least one KernelCh start of a host is assumed to stay within (default 20 µs): the
     * GPU clock estimate's error bound. NCCL 2.31's profiler thread, when idle, sleeps 1, 2, 4, 8, 16 µs then
     * 10 µs between polls, so a start made while it waits is seen within ~16 µs plus the callback's cost; ≤ 2.30
     * the proxy thread polls in its progress loop. Under sustained load every lag may exceed it.
     */
    public WindowConfig gpuPollLagBoundNs(final long ns) {
        gpuPollLagBoundNs = ns;
        return this;
    }

    /**
     * Per-GPU clock estimates: the host-time bucket of the windowed minimum (default 1 s) and how many buckets
     * are kept (default 8): the offset and drift are fitted over the last {@code buckets × bucketNs} of samples.
     */
    public WindowConfig gpuClockWindow(final long bucketNs, final int buckets) {
        if (bucketNs <= 0 || buckets < 1) {
            throw new IllegalArgumentException(
                    "gpuClockWindow needs bucketNs > 0 and buckets >= 1, was " + bucketNs + ", " + buckets);
        }
        gpuClockBucketNs = bucketNs;
        gpuClockBuckets = buckets;
        return this;
    }

    /**
     * A bucket minimum this far off the line fitted through the buckets before it is a clock step (default
     * 1 ms): the older buckets are dropped. Keep it well above the drift over one bucket (1 ms = 1000 ppm at 1 s).
     */
    public WindowConfig gpuClockStepNs(final long ns) {
        gpuClockStepNs = ns;
        return this;
    }

    /**
     * A GPU's clock estimate is settled once its KernelCh starts span this much host time (default 50 ms): before,
     * every sample may carry the lag of a proxy thread busy with a run's first operations (a real run's second GPU:
     * 3.0 ms above its final offset after 174 samples, within 20 µs only after 17 ms), so the poll-lag bound does not
     * yet hold.
     */
    public WindowConfig gpuClockSettleNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("gpuClockSettleNs must be >= 0, was " + ns);
        }
        gpuClockSettleNs = ns;
        return this;
    }

    /** GPUs ((host, commHash, rank)) with a clock estimate (default 1024); one idle for the idle timeout is evicted. */
    public WindowConfig maxGpuClocks(final int n) {
        maxGpuClocks = n;
        return this;
    }

    /**
     * KernelCh starts that arrived before their Coll START (another ring lane) are held this long of their host's
     * event time (default 5 ms, checked at period ends) in a table of {@code n} entries (default 256), then
     * counted as unknown.
     */
    public WindowConfig pendingKernelChannels(final int n, final long ns) {
        maxPendingKernelChannels = n;
        pendingKernelChNs = ns;
        return this;
    }

    /**
     * Keep a {@link Series} per flow (10 µs / 1 ms / 100 ms / 1 s buckets; 270 longs, ~2.2 KB a flow, allocated
     * with the pool at construction). Off by default.
     */
    public WindowConfig series(final boolean on) {
        series = on;
        return this;
    }

    public WindowConfig maxSteps(final int n) {
        maxSteps = n;
        return this;
    }

    @Override
    public String toString() {
        return "WindowConfig{windowSize=" + windowSize + ", periodNs=" + periodNs + ", idleTimeoutNs=" + idleTimeoutNs
                + ", stepTimeoutNs="
                + stepTimeoutNs + ", tombstoneTimeoutNs=" + effectiveTombstoneTimeoutNs() + ", maxFlows=" + maxFlows
                + ", maxOps=" + maxOps + ", maxSteps=" + maxSteps + '}';
    }
}
