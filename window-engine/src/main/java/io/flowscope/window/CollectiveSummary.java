package io.flowscope.window;

/**
 * One finished collective (or P2p operation) of one rank: identity, size, GPU-timed duration and nccl-tests'
 * algorithm and bus bandwidth. A mutable record the engine fills and hands to a {@link CollectiveSink}.
 * <p>
 * GPU times are the KernelCh {@code pTimer}s ({@code %globaltimer} ns): start = the earliest channel start,
 * end = the latest channel stop (state 22). Without GPU times (no KernelCh children: sampling, mask) the
 * duration is the host span start → stop, and {@link #gpuTimed()} is false.
 */
public final class CollectiveSummary
{
    long hostId;
    long collKey;
    long commHash;
    int rank;
    int nranks;
    long seqNumber;
    int func;
    int algo;
    int proto;
    long count;
    int datatypeSize;
    long bytes;
    int nChannels;
    int kernelChannels;
    boolean complete;
    boolean gpuTimed;
    long hostStartNs;
    long hostStopNs;
    long gpuStartNs;
    long gpuEndNs;
    long gpuStartHostNs;
    boolean gpuStartHostKnown;
    long durationNs;
    double algBandwidthBytesPerSecond;
    double busBandwidthBytesPerSecond;

    public long hostId()
    {
        return hostId;
    }

    /** The producer's key of the Coll / P2p event. */
    public long collKey()
    {
        return collKey;
    }

    public long commHash()
    {
        return commHash;
    }

    public int rank()
    {
        return rank;
    }

    public int nranks()
    {
        return nranks;
    }

    public long seqNumber()
    {
        return seqNumber;
    }

    /** {@link Collectives} function code. */
    public int func()
    {
        return func;
    }

    public int algo()
    {
        return algo;
    }

    public int proto()
    {
        return proto;
    }

    public long count()
    {
        return count;
    }

    public int datatypeSize()
    {
        return datatypeSize;
    }

    /** {@link Collectives#algorithmBytes}: what the algorithm bandwidth divides. */
    public long bytes()
    {
        return bytes;
    }

    /** Channels the Coll event announced. */
    public int nChannels()
    {
        return nChannels;
    }

    /** KernelCh children that started and stopped. */
    public int kernelChannels()
    {
        return kernelChannels;
    }

    /** True when the Coll stopped and all its announced channels reported; false when emitted at the timeout. */
    public boolean complete()
    {
        return complete;
    }

    /** True when the duration is GPU time (KernelCh pTimers), false when it is the host span. */
    public boolean gpuTimed()
    {
        return gpuTimed;
    }

    public long hostStartNs()
    {
        return hostStartNs;
    }

    public long hostStopNs()
    {
        return hostStopNs;
    }

    /** Earliest KernelCh start pTimer (GPU clock); meaningful when {@link #gpuTimed()}. */
    public long gpuStartNs()
    {
        return gpuStartNs;
    }

    /** Latest KernelCh stop pTimer (GPU clock); meaningful when {@link #gpuTimed()}. */
    public long gpuEndNs()
    {
        return gpuEndNs;
    }

    /** {@link #gpuStartNs()} on the host clock (+ the host's GPU clock offset), when {@link #gpuStartHostKnown()}. */
    public long gpuStartHostNs()
    {
        return gpuStartHostNs;
    }

    public boolean gpuStartHostKnown()
    {
        return gpuStartHostKnown;
    }

    public long durationNs()
    {
        return durationNs;
    }

    /** bytes / duration (0 when the duration is not positive). */
    public double algBandwidthBytesPerSecond()
    {
        return algBandwidthBytesPerSecond;
    }

    /** algorithm bandwidth × {@link Collectives#busFactor}. */
    public double busBandwidthBytesPerSecond()
    {
        return busBandwidthBytesPerSecond;
    }

    public void copyFrom(final CollectiveSummary o)
    {
        hostId = o.hostId;
        collKey = o.collKey;
        commHash = o.commHash;
        rank = o.rank;
        nranks = o.nranks;
        seqNumber = o.seqNumber;
        func = o.func;
        algo = o.algo;
        proto = o.proto;
        count = o.count;
        datatypeSize = o.datatypeSize;
        bytes = o.bytes;
        nChannels = o.nChannels;
        kernelChannels = o.kernelChannels;
        complete = o.complete;
        gpuTimed = o.gpuTimed;
        hostStartNs = o.hostStartNs;
        hostStopNs = o.hostStopNs;
        gpuStartNs = o.gpuStartNs;
        gpuEndNs = o.gpuEndNs;
        gpuStartHostNs = o.gpuStartHostNs;
        gpuStartHostKnown = o.gpuStartHostKnown;
        durationNs = o.durationNs;
        algBandwidthBytesPerSecond = o.algBandwidthBytesPerSecond;
        busBandwidthBytesPerSecond = o.busBandwidthBytesPerSecond;
    }

    @Override
    public String toString()
    {
        return "CollectiveSummary{host=" + Long.toHexString(hostId) + " comm=" + Long.toHexString(commHash) +
            " rank=" + rank + "/" + nranks + " seq=" + seqNumber + " func=" + func + " algo=" + algo + " proto=" +
            proto + " bytes=" + bytes + " ch=" + kernelChannels + "/" + nChannels + (complete ? "" : " incomplete") +
            (gpuTimed ? " gpu" : " host") + " duration=" + durationNs + "ns algBw=" + algBandwidthBytesPerSecond +
            " busBw=" + busBandwidthBytesPerSecond + '}';
    }
}
