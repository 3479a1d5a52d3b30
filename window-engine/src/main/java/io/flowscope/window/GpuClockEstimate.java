package io.flowscope.window;

/**
 * A host's passive GPU clock calibration (NCCL profiler ABI notes §6): every KernelCh start gives a sample
 * {@code host time − pTimer} = offset + poll lag, with poll lag ≥ 0 (the host sees the GPU's start only when
 * its poller reads the slot). The lowest sample is the estimate: it over-estimates the true offset
 * (host = GPU + offset) by the least poll lag among the samples, so the true offset lies in
 * {@code [offsetNs − errorBoundNs, offsetNs]} provided one sample was polled within the configured poll-lag
 * bound ({@link WindowConfig#gpuPollLagBoundNs}). {@link #spreadNs()} (next-lowest − lowest) shows how well the
 * floor is sampled: near 0 when several samples touch it.
 */
public final class GpuClockEstimate
{
    long hostId;
    long samples;
    long offsetNs;
    long errorBoundNs;
    long spreadNs;

    public long hostId()
    {
        return hostId;
    }

    /** KernelCh starts seen on this host. */
    public long samples()
    {
        return samples;
    }

    /** min over samples of (host time − pTimer): host time ≈ GPU time + offsetNs; an upper bound of the offset. */
    public long offsetNs()
    {
        return offsetNs;
    }

    /** The true offset is at least offsetNs − errorBoundNs (the configured poll-lag bound). */
    public long errorBoundNs()
    {
        return errorBoundNs;
    }

    /** Next-lowest sample − lowest; -1 with fewer than two samples. */
    public long spreadNs()
    {
        return spreadNs;
    }

    /** A GPU time ({@code %globaltimer} ns) on this host's clock. */
    public long toHostNs(final long gpuNs)
    {
        return gpuNs + offsetNs;
    }

    @Override
    public String toString()
    {
        return "GpuClockEstimate{host=" + Long.toHexString(hostId) + " samples=" + samples + " offset=" + offsetNs +
            "ns bound=" + errorBoundNs + "ns spread=" + spreadNs + "ns}";
    }
}
