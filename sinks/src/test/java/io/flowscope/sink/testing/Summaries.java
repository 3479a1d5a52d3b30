package io.flowscope.sink.testing;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;

/**
 * Test fixture: realistic summary records built with the summary types' public builders, so sink and dashboard
 * tests can feed streams without running the engine.
 */
public final class Summaries {
    private Summaries() {}

    /** A step flow (kind 0) or an aggregate (kinds 2..4: pass -1 for what it does not group by). */
    public static FlowSummary flow(
            final int kind,
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long periodStartNs,
            final long periodEndNs,
            final long completions,
            final long bytes,
            final long outstandingSteps,
            final long outstandingBytes) {
        return flowBuilder(
                        kind,
                        hostId,
                        commHash,
                        rank,
                        peer,
                        channel,
                        isSend,
                        periodStartNs,
                        periodEndNs,
                        completions,
                        bytes,
                        outstandingSteps,
                        outstandingBytes)
                .build();
    }

    /** A QP flow (kind 1) of a NIC device. */
    public static FlowSummary qp(
            final long hostId,
            final int device,
            final long qpNum,
            final long periodStartNs,
            final long periodEndNs,
            final long completions,
            final long bytes,
            final long outstandingWrs) {
        return flowBuilder(
                        FlowSummary.KIND_QP,
                        hostId,
                        0,
                        -1,
                        -1,
                        -1,
                        true,
                        periodStartNs,
                        periodEndNs,
                        completions,
                        bytes,
                        outstandingWrs,
                        outstandingWrs * 65_536)
                .device(device)
                .qpNum(qpNum)
                .build();
    }

    /** Sets one phase's count, sum and max. */
    public static FlowSummary phase(
            final FlowSummary s, final int phase, final long count, final long sumNs, final long maxNs) {
        return FlowSummary.into(s).phase(phase, count, sumNs, maxNs).build();
    }

    public static CollectiveSummary collective(
            final long hostId,
            final long commHash,
            final int rank,
            final int nranks,
            final long seq,
            final int func,
            final int algo,
            final int proto,
            final long count,
            final int datatypeSize,
            final long hostStartNs,
            final long durationNs) {
        final long bytes = Collectives.algorithmBytes(func, count, datatypeSize, nranks);
        final double algBandwidth = bytes * 1e9 / durationNs;
        return CollectiveSummary.builder()
                .hostId(hostId)
                .collKey(commHash ^ (seq * 1_000_003L) ^ rank)
                .commHash(commHash)
                .rank(rank)
                .nranks(nranks)
                .seqNumber(seq)
                .func(func)
                .algo(algo)
                .proto(proto)
                .count(count)
                .datatypeSize(datatypeSize)
                .bytes(bytes)
                .nChannels(4)
                .kernelChannels(4)
                .complete(true)
                .gpuTimed(true)
                .hostStartNs(hostStartNs)
                .hostStopNs(hostStartNs + durationNs)
                .gpuStartNs(hostStartNs)
                .gpuEndNs(hostStartNs + durationNs)
                .gpuStartHostNs(hostStartNs)
                .gpuStartHostKnown(true)
                .durationNs(durationNs)
                .algBandwidthBytesPerSecond(algBandwidth)
                .busBandwidthBytesPerSecond(algBandwidth * Collectives.busFactor(func, nranks))
                .build();
    }

    private static FlowSummary.Builder flowBuilder(
            final int kind,
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long periodStartNs,
            final long periodEndNs,
            final long completions,
            final long bytes,
            final long outstandingSteps,
            final long outstandingBytes) {
        final double seconds = (periodEndNs - periodStartNs) / 1e9;
        final int windowCompletions = (int) Math.min(8, completions);
        final long windowBytes = completions == 0 ? 0 : bytes / completions * windowCompletions;
        final long windowSpanNs = (periodEndNs - periodStartNs) / 2;
        return FlowSummary.builder()
                .kind(kind)
                .hostId(hostId)
                .commHash(commHash)
                .rank(rank)
                .peer(peer)
                .channel(channel)
                .isSend(isSend)
                .device(-1)
                .qpNum(-1)
                .flowKey(commHash * 31 + rank * 17L + peer * 7L + channel + (isSend ? 1 : 0))
                .flows(1)
                .periodStartNs(periodStartNs)
                .periodEndNs(periodEndNs)
                .posts(completions)
                .completions(completions)
                .bytes(bytes)
                .periodBandwidthBytesPerSecond(bytes / seconds)
                .windowCompletions(windowCompletions)
                .windowBytes(windowBytes)
                .windowSpanNs(windowSpanNs)
                .windowBandwidthBytesPerSecond(windowSpanNs <= 0 ? 0 : windowBytes * 1e9 / windowSpanNs)
                .outstandingSteps(outstandingSteps)
                .outstandingBytes(outstandingBytes);
    }
}
