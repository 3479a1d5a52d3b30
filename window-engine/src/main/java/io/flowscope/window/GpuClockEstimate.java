package io.flowscope.window;

/**
 * A passive GPU clock estimate: per GPU ((host, commHash, rank), windowed minimum with drift and steps, see
 * {@code GpuClock}) or, coarser, per host (the lifetime minimum over all its GPUs, as below).
 * <p>
 * A host's passive GPU clock calibration (NCCL profiler ABI notes §6): every KernelCh start gives a sample
 * {@code host time − pTimer} = offset + poll lag, with poll lag ≥ 0 (the host sees the GPU's start only when
 * its poller reads the slot). The lowest sample is the estimate: it over-estimates the true offset
 * (host = GPU + offset) by the least poll lag among the samples, so the true offset lies in
 * {@code [offsetNs − errorBoundNs, offsetNs]} provided one sample was polled within the configured poll-lag
 * bound ({@link WindowConfig#gpuPollLagBoundNs}). {@link #spreadNs()} (next-lowest − lowest) shows how well the
 * floor is sampled: near 0 when several samples touch it.
 */
public final class GpuClockEstimate {
    long hostId;
    long commHash;
    int rank = -1;
    int buckets;
    long steps;
    long atHostNs;
    boolean driftKnown;
    double driftPpm;
    long samples;
    long offsetNs;
    long errorBoundNs;
    boolean settled;
    long spreadNs;

    public long hostId() {
        return hostId;
    }

    /** Per-GPU estimates ({@code WindowEngine.gpuClock(host, commHash, rank, ...)}): the communicator; 0 per host. */
    public long commHash() {
        return commHash;
    }

    /** Per-GPU estimates: the rank (one GPU of the communicator); -1 for a per-host estimate. */
    public int rank() {
        return rank;
    }

    /** Per-GPU estimates: the time buckets whose minima the estimate fits (1 = no drift known yet). */
    public int buckets() {
        return buckets;
    }

    /** Per-GPU estimates: steps detected (a bucket minimum off the fitted line by more than the step threshold). */
    public long steps() {
        return steps;
    }

    /** The host time the offset is given at. */
    public long atHostNs() {
        return atHostNs;
    }

    /** Whether {@link #driftPpm()} was fitted (at least two buckets since the last step). */
    public boolean driftKnown() {
        return driftKnown;
    }

    /** d(offset)/d(host time) in parts per million (GPU clock slower than the host: positive); 0 if unknown. */
    public double driftPpm() {
        return driftPpm;
    }

    /** KernelCh starts seen on this host (per-GPU estimates: of that GPU). */
    public long samples() {
        return samples;
    }

    /** min over samples of (host time − pTimer): host time ≈ GPU time + offsetNs; an upper bound of the offset. */
    public long offsetNs() {
        return offsetNs;
    }

    /** The true offset is at least offsetNs − errorBoundNs (the configured poll-lag bound). */
    public long errorBoundNs() {
        return errorBoundNs;
    }

    /**
     * Whether {@link #errorBoundNs()} holds: per-GPU estimates, once their samples span the configured settle time
     * ({@code WindowConfig.gpuClockSettleNs}, 50 ms); before, the lowest sample may still carry a run's first,
     * late polls. Per-host estimates: false (a lifetime minimum, no settle time kept).
     */
    public boolean settled() {
        return settled;
    }

    /** Next-lowest sample − lowest; -1 with fewer than two samples. */
    public long spreadNs() {
        return spreadNs;
    }

    /** A GPU time ({@code %globaltimer} ns) on this host's clock (with the drift from {@link #atHostNs()} on). */
    public long toHostNs(final long gpuNs) {
        final long host = gpuNs + offsetNs;
        return host + Math.round(driftPpm * 1e-6 * (host - atHostNs));
    }

    @Override
    public String toString() {
        return "GpuClockEstimate{host=" + Long.toHexString(hostId)
                + (rank >= 0
                        ? " comm=" + Long.toHexString(commHash) + " rank=" + rank + " buckets=" + buckets + " steps="
                                + steps + " drift=" + driftPpm + "ppm"
                        : "")
                + " samples="
                + samples + " offset=" + offsetNs + "ns at=" + atHostNs + " bound=" + errorBoundNs + "ns"
                + (settled ? "" : " (unsettled)") + " spread=" + spreadNs + "ns}";
    }
}
