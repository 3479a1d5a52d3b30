package io.flowscope.window;

/**
 * Test fixture: fills the engine's summary records directly (their fields are package-private), so sink
 * and dashboard tests can feed realistic streams without running the engine.
 */
public final class Summaries
{
    private Summaries()
    {
    }

    /** A step flow (kind 0) or an aggregate (kinds 2..4: pass -1 for what it does not group by). */
    public static FlowSummary flow(final int kind, final long hostId, final long commHash, final int rank,
        final int peer, final int channel, final boolean isSend, final long periodStartNs, final long periodEndNs,
        final long completions, final long bytes, final long outstandingSteps, final long outstandingBytes)
    {
        final FlowSummary s = new FlowSummary();
        s.kind = kind;
        s.hostId = hostId;
        s.commHash = commHash;
        s.rank = rank;
        s.peer = peer;
        s.channel = channel;
        s.isSend = isSend;
        s.device = -1;
        s.qpNum = -1;
        s.flowKey = commHash * 31 + rank * 17L + peer * 7L + channel + (isSend ? 1 : 0);
        s.flows = 1;
        s.periodStartNs = periodStartNs;
        s.periodEndNs = periodEndNs;
        s.posts = completions;
        s.completions = completions;
        s.bytes = bytes;
        final double seconds = (periodEndNs - periodStartNs) / 1e9;
        s.periodBandwidthBytesPerSecond = bytes / seconds;
        s.windowCompletions = (int)Math.min(8, completions);
        s.windowBytes = completions == 0 ? 0 : bytes / completions * s.windowCompletions;
        s.windowSpanNs = (periodEndNs - periodStartNs) / 2;
        s.windowBandwidthBytesPerSecond = s.windowSpanNs <= 0 ? 0 : s.windowBytes * 1e9 / s.windowSpanNs;
        s.outstandingSteps = outstandingSteps;
        s.outstandingBytes = outstandingBytes;
        return s;
    }

    /** A QP flow (kind 1) of a NIC device. */
    public static FlowSummary qp(final long hostId, final int device, final long qpNum, final long periodStartNs,
        final long periodEndNs, final long completions, final long bytes, final long outstandingWrs)
    {
        final FlowSummary s = flow(FlowSummary.KIND_QP, hostId, 0, -1, -1, -1, true, periodStartNs, periodEndNs,
            completions, bytes, outstandingWrs, outstandingWrs * 65_536);
        s.device = device;
        s.qpNum = qpNum;
        return s;
    }

    /** Sets one phase's count, sum and max. */
    public static FlowSummary phase(final FlowSummary s, final int phase, final long count, final long sumNs,
        final long maxNs)
    {
        s.phaseCount[phase] = count;
        s.phaseSumNs[phase] = sumNs;
        s.phaseMaxNs[phase] = maxNs;
        return s;
    }

    public static CollectiveSummary collective(final long hostId, final long commHash, final int rank,
        final int nranks, final long seq, final int func, final int algo, final int proto, final long count,
        final int datatypeSize, final long hostStartNs, final long durationNs)
    {
        final CollectiveSummary c = new CollectiveSummary();
        c.hostId = hostId;
        c.collKey = commHash ^ (seq * 1_000_003L) ^ rank;
        c.commHash = commHash;
        c.rank = rank;
        c.nranks = nranks;
        c.seqNumber = seq;
        c.func = func;
        c.algo = algo;
        c.proto = proto;
        c.count = count;
        c.datatypeSize = datatypeSize;
        c.bytes = Collectives.algorithmBytes(func, count, datatypeSize, nranks);
        c.nChannels = 4;
        c.kernelChannels = 4;
        c.complete = true;
        c.gpuTimed = true;
        c.hostStartNs = hostStartNs;
        c.hostStopNs = hostStartNs + durationNs;
        c.gpuStartNs = hostStartNs;
        c.gpuEndNs = hostStartNs + durationNs;
        c.gpuStartHostNs = hostStartNs;
        c.gpuStartHostKnown = true;
        c.durationNs = durationNs;
        c.algBandwidthBytesPerSecond = c.bytes * 1e9 / durationNs;
        c.busBandwidthBytesPerSecond = c.algBandwidthBytesPerSecond * Collectives.busFactor(func, nranks);
        return c;
    }
}
