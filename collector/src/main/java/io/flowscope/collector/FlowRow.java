package io.flowscope.collector;

import io.flowscope.window.FlowSummary;

/** An immutable copy of one {@link FlowSummary} for the HTTP side (JSON as is). */
public record FlowRow(String kind, String host, String comm, int rank, int peer, int channel, String direction,
    int device, long qpNum, long periodStartNs, long periodEndNs, int flows, long posts, long completions,
    long bytes, double periodBandwidthBytesPerSecond, double windowBandwidthBytesPerSecond, long outstandingSteps,
    long outstandingBytes)
{
    static final String[] KINDS = {"step", "qp", "rank", "link", "comm"};

    static FlowRow of(final FlowSummary s)
    {
        return new FlowRow(KINDS[s.kind()], hex(s.hostId()), hex(s.commHash()), s.rank(), s.peer(), s.channel(),
            s.isSend() ? "send" : "recv", s.device(), s.qpNum(), s.periodStartNs(), s.periodEndNs(), s.flows(),
            s.posts(), s.completions(), s.bytes(), finite(s.periodBandwidthBytesPerSecond()),
            finite(s.windowBandwidthBytesPerSecond()), s.outstandingSteps(), s.outstandingBytes());
    }

    static double finite(final double v)
    {
        return Double.isFinite(v) ? v : 0.0;
    }

    public static String hex(final long v)
    {
        return "0x" + Long.toHexString(v);
    }
}
