package io.flowscope.window;

/**
 * One flow's summary for one period (schema v3, documented in {@code window-engine/README.md}). A mutable
 * record the engine fills and hands to a {@link FlowSummarySink}; the sink copies what it keeps.
 */
public final class FlowSummary
{
    /** Schema version of the fields below. */
    public static final int SCHEMA_VERSION = 4;

    /** {@link #kind()}: a step flow (commHash, rank, peer, channel, direction) from ProxyOp / ProxyStep. */
    public static final int KIND_STEP = 0;
    /** {@link #kind()}: a QP flow (host, NIC device, qpNum) from NetPlugin IB QP work requests. */
    public static final int KIND_QP = 1;
    /** {@link #kind()}: a rank's step flows of one direction (commHash, rank, isSend); peer, channel = -1. */
    public static final int KIND_RANK = 2;
    /** {@link #kind()}: a link's step flows of one direction (commHash, rank, peer, isSend); channel = -1. */
    public static final int KIND_LINK = 3;
    /** {@link #kind()}: a communicator's step flows of one direction (commHash, isSend); rank, peer, channel = -1. */
    public static final int KIND_COMM = 4;

    long periodStartNs;
    long periodEndNs;
    long hostId;
    int kind;
    int device;
    long qpNum;
    long flowKey;
    long commHash;
    int rank;
    int peer;
    int channel;
    boolean isSend;
    int flows;
    double periodBandwidthBytesPerSecond;
    long posts;
    long completions;
    long bytes;
    int windowCompletions;
    long windowBytes;
    long windowSpanNs;
    double windowBandwidthBytesPerSecond;
    long outstandingSteps;
    long outstandingBytes;
    long firstSteps;
    long firstStepWaitSumNs;
    final long[] phaseCount = new long[Phase.COUNT];
    final long[] phaseSumNs = new long[Phase.COUNT];
    final long[] phaseMaxNs = new long[Phase.COUNT];
    final long[] phaseP50Ns = new long[Phase.COUNT];
    final long[] phaseP90Ns = new long[Phase.COUNT];
    final long[] phaseP99Ns = new long[Phase.COUNT];

    public long periodStartNs()
    {
        return periodStartNs;
    }

    public long periodEndNs()
    {
        return periodEndNs;
    }

    /** The host (clock domain) of the flow; the period times are of that host's clock. */
    public long hostId()
    {
        return hostId;
    }

    /** What the record summarises: {@link #KIND_STEP}, {@link #KIND_QP}, or an aggregate kind. */
    public int kind()
    {
        return kind;
    }

    /** QP flows: the NIC device index; -1 otherwise. */
    public int device()
    {
        return device;
    }

    /** QP flows: the queue pair number; -1 otherwise. */
    public long qpNum()
    {
        return qpNum;
    }

    public long flowKey()
    {
        return flowKey;
    }

    public long commHash()
    {
        return commHash;
    }

    public int rank()
    {
        return rank;
    }

    public int peer()
    {
        return peer;
    }

    public int channel()
    {
        return channel;
    }

    public boolean isSend()
    {
        return isSend;
    }

    /** Flows summed in this record: 1 for a flow, the step flows of the aggregate for an aggregate kind. */
    public int flows()
    {
        return flows;
    }

    /** bytes / period length, bytes per second. */
    public double periodBandwidthBytesPerSecond()
    {
        return periodBandwidthBytesPerSecond;
    }

    /** Steps posted to the network (state 9 / 10) during the period. */
    public long posts()
    {
        return posts;
    }

    /** Steps completed during the period (each step once, duplicates and late repeats excluded). */
    public long completions()
    {
        return completions;
    }

    /** Bytes of the steps completed during the period. */
    public long bytes()
    {
        return bytes;
    }

    /** Entries in the completion window at the period's end (≤ N). */
    public int windowCompletions()
    {
        return windowCompletions;
    }

    public long windowBytes()
    {
        return windowBytes;
    }

    /** last completion − first post of the window at the period's end. */
    public long windowSpanNs()
    {
        return windowSpanNs;
    }

    /** windowBytes / windowSpan, bytes per second (0 when the span is not positive). */
    public double windowBandwidthBytesPerSecond()
    {
        return windowBandwidthBytesPerSecond;
    }

    /** Steps posted and not yet completed at the period's end. */
    public long outstandingSteps()
    {
        return outstandingSteps;
    }

    /** Bytes of the outstanding send steps (recv steps learn their size only on arrival). */
    public long outstandingBytes()
    {
        return outstandingBytes;
    }

    /**
     * Ops' first steps (step index 0) that stopped in the period (schema v4). The first step is where the ranks of
     * an operation meet: on a receive flow its wait is 10 → 11, how long the peer's first data took after the
     * receive was posted; on a send flow 8 → 20 (or 9), how long the own GPU took to fill the first slot.
     */
    public long firstSteps()
    {
        return firstSteps;
    }

    /** The sum of the waits of {@link #firstSteps()}, ns. */
    public long firstStepWaitSumNs()
    {
        return firstStepWaitSumNs;
    }

    public long phaseCount(final int phase)
    {
        return phaseCount[phase];
    }

    public long phaseSumNs(final int phase)
    {
        return phaseSumNs[phase];
    }

    public long phaseMaxNs(final int phase)
    {
        return phaseMaxNs[phase];
    }

    /**
     * The period's median duration of a phase (schema v3): from the flow's fixed log-linear buckets, within
     * 11.1 % (+1 ns) of the exact percentile, at most {@link #phaseMaxNs}; {@link Phase#ABSENT} (-1) when the
     * phase has no record in the period, and for aggregates.
     */
    public long phaseP50Ns(final int phase)
    {
        return phaseP50Ns[phase];
    }

    /** The period's 90th percentile of a phase (schema v3); see {@link #phaseP50Ns}. */
    public long phaseP90Ns(final int phase)
    {
        return phaseP90Ns[phase];
    }

    /** The period's 99th percentile of a phase (schema v3); see {@link #phaseP50Ns}. */
    public long phaseP99Ns(final int phase)
    {
        return phaseP99Ns[phase];
    }

    public void copyFrom(final FlowSummary o)
    {
        periodStartNs = o.periodStartNs;
        periodEndNs = o.periodEndNs;
        hostId = o.hostId;
        kind = o.kind;
        device = o.device;
        qpNum = o.qpNum;
        flowKey = o.flowKey;
        commHash = o.commHash;
        rank = o.rank;
        peer = o.peer;
        channel = o.channel;
        isSend = o.isSend;
        flows = o.flows;
        periodBandwidthBytesPerSecond = o.periodBandwidthBytesPerSecond;
        posts = o.posts;
        completions = o.completions;
        bytes = o.bytes;
        windowCompletions = o.windowCompletions;
        windowBytes = o.windowBytes;
        windowSpanNs = o.windowSpanNs;
        windowBandwidthBytesPerSecond = o.windowBandwidthBytesPerSecond;
        outstandingSteps = o.outstandingSteps;
        outstandingBytes = o.outstandingBytes;
        firstSteps = o.firstSteps;
        firstStepWaitSumNs = o.firstStepWaitSumNs;
        System.arraycopy(o.phaseCount, 0, phaseCount, 0, Phase.COUNT);
        System.arraycopy(o.phaseSumNs, 0, phaseSumNs, 0, Phase.COUNT);
        System.arraycopy(o.phaseMaxNs, 0, phaseMaxNs, 0, Phase.COUNT);
        System.arraycopy(o.phaseP50Ns, 0, phaseP50Ns, 0, Phase.COUNT);
        System.arraycopy(o.phaseP90Ns, 0, phaseP90Ns, 0, Phase.COUNT);
        System.arraycopy(o.phaseP99Ns, 0, phaseP99Ns, 0, Phase.COUNT);
    }

    @Override
    public String toString()
    {
        return "FlowSummary{period=[" + periodStartNs + "," + periodEndNs + ") host=" + Long.toHexString(hostId)  + " kind=" + kind + (kind == KIND_QP ? " dev=" + device + " qp=" + qpNum : "") + " comm=" + Long.toHexString(commHash) +
            " rank=" + rank + " peer=" + peer + " ch=" + channel + (isSend ? " send" : " recv") + " posts=" + posts +
            " completions=" + completions + " bytes=" + bytes + " window=" + windowCompletions + "/" + windowBytes +
            "B/" + windowSpanNs + "ns outstanding=" + outstandingSteps + "/" + outstandingBytes + "B}";
    }
}
