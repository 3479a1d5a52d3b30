package io.flowscope.api.summary;

/**
 * One flow's summary for one period (schema v4, documented in {@code window-engine/README.md}). A mutable
 * record the engine fills through a {@link Builder} and hands to a {@link FlowSummarySink}; the sink copies what it
 * keeps.
 */
public final class FlowSummary {
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

    private long periodStartNs;
    private long periodEndNs;
    private long hostId;
    private int kind;
    private int device;
    private long qpNum;
    private long flowKey;
    private long commHash;
    private int rank;
    private int peer;
    private int channel;
    private boolean isSend;
    private int flows;
    private double periodBandwidthBytesPerSecond;
    private long posts;
    private long completions;
    private long bytes;
    private int windowCompletions;
    private long windowBytes;
    private long windowSpanNs;
    private double windowBandwidthBytesPerSecond;
    private long outstandingSteps;
    private long outstandingBytes;
    private long firstSteps;
    private long firstStepWaitSumNs;
    private final long[] phaseCount = new long[Phase.COUNT];
    private final long[] phaseSumNs = new long[Phase.COUNT];
    private final long[] phaseMaxNs = new long[Phase.COUNT];
    private final long[] phaseP50Ns = new long[Phase.COUNT];
    private final long[] phaseP90Ns = new long[Phase.COUNT];
    private final long[] phaseP99Ns = new long[Phase.COUNT];

    /** A builder of a new summary (fields zero until set): for producers other than the engine, and for tests. */
    public static Builder builder() {
        return new Builder(new FlowSummary());
    }

    /**
     * A builder that fills {@code reused} in place and {@link Builder#build() builds} that same record: a producer
     * that hands one record on per flow and period (the window engine) sets every field each time and allocates
     * nothing.
     */
    public static Builder into(final FlowSummary reused) {
        return new Builder(reused);
    }

    /** Sets a summary's fields by name (see the getters above for what each means); {@link #build} hands it out. */
    public static final class Builder {
        private final FlowSummary summary;

        private Builder(final FlowSummary summary) {
            this.summary = summary;
        }

        public Builder periodStartNs(final long value) {
            summary.periodStartNs = value;
            return this;
        }

        public Builder periodEndNs(final long value) {
            summary.periodEndNs = value;
            return this;
        }

        public Builder hostId(final long value) {
            summary.hostId = value;
            return this;
        }

        public Builder kind(final int value) {
            summary.kind = value;
            return this;
        }

        public Builder device(final int value) {
            summary.device = value;
            return this;
        }

        public Builder qpNum(final long value) {
            summary.qpNum = value;
            return this;
        }

        public Builder flowKey(final long value) {
            summary.flowKey = value;
            return this;
        }

        public Builder commHash(final long value) {
            summary.commHash = value;
            return this;
        }

        public Builder rank(final int value) {
            summary.rank = value;
            return this;
        }

        public Builder peer(final int value) {
            summary.peer = value;
            return this;
        }

        public Builder channel(final int value) {
            summary.channel = value;
            return this;
        }

        public Builder isSend(final boolean value) {
            summary.isSend = value;
            return this;
        }

        public Builder flows(final int value) {
            summary.flows = value;
            return this;
        }

        public Builder periodBandwidthBytesPerSecond(final double value) {
            summary.periodBandwidthBytesPerSecond = value;
            return this;
        }

        public Builder posts(final long value) {
            summary.posts = value;
            return this;
        }

        public Builder completions(final long value) {
            summary.completions = value;
            return this;
        }

        public Builder bytes(final long value) {
            summary.bytes = value;
            return this;
        }

        public Builder windowCompletions(final int value) {
            summary.windowCompletions = value;
            return this;
        }

        public Builder windowBytes(final long value) {
            summary.windowBytes = value;
            return this;
        }

        public Builder windowSpanNs(final long value) {
            summary.windowSpanNs = value;
            return this;
        }

        public Builder windowBandwidthBytesPerSecond(final double value) {
            summary.windowBandwidthBytesPerSecond = value;
            return this;
        }

        public Builder outstandingSteps(final long value) {
            summary.outstandingSteps = value;
            return this;
        }

        public Builder outstandingBytes(final long value) {
            summary.outstandingBytes = value;
            return this;
        }

        public Builder firstSteps(final long value) {
            summary.firstSteps = value;
            return this;
        }

        public Builder firstStepWaitSumNs(final long value) {
            summary.firstStepWaitSumNs = value;
            return this;
        }

        /** One phase's count, sum and max (ns). */
        public Builder phase(final int phase, final long count, final long sumNs, final long maxNs) {
            summary.phaseCount[phase] = count;
            summary.phaseSumNs[phase] = sumNs;
            summary.phaseMaxNs[phase] = maxNs;
            return this;
        }

        /** One phase's period percentiles (ns; {@link Phase#ABSENT} when the phase has no record). */
        public Builder phasePercentiles(final int phase, final long p50Ns, final long p90Ns, final long p99Ns) {
            summary.phaseP50Ns[phase] = p50Ns;
            summary.phaseP90Ns[phase] = p90Ns;
            summary.phaseP99Ns[phase] = p99Ns;
            return this;
        }

        /** Every phase empty: counts, sums and maxima 0, percentiles {@link Phase#ABSENT}. */
        public Builder clearPhases() {
            java.util.Arrays.fill(summary.phaseCount, 0);
            java.util.Arrays.fill(summary.phaseSumNs, 0);
            java.util.Arrays.fill(summary.phaseMaxNs, 0);
            java.util.Arrays.fill(summary.phaseP50Ns, Phase.ABSENT);
            java.util.Arrays.fill(summary.phaseP90Ns, Phase.ABSENT);
            java.util.Arrays.fill(summary.phaseP99Ns, Phase.ABSENT);
            return this;
        }

        /** The summary (for {@link #into}, the reused record: valid until the builder sets it again). */
        public FlowSummary build() {
            return summary;
        }
    }

    public long periodStartNs() {
        return periodStartNs;
    }

    public long periodEndNs() {
        return periodEndNs;
    }

    /** The host (clock domain) of the flow; the period times are of that host's clock. */
    public long hostId() {
        return hostId;
    }

    /** What the record summarises: {@link #KIND_STEP}, {@link #KIND_QP}, or an aggregate kind. */
    public int kind() {
        return kind;
    }

    /** QP flows: the NIC device index; -1 otherwise. */
    public int device() {
        return device;
    }

    /** QP flows: the queue pair number; -1 otherwise. */
    public long qpNum() {
        return qpNum;
    }

    public long flowKey() {
        return flowKey;
    }

    public long commHash() {
        return commHash;
    }

    public int rank() {
        return rank;
    }

    public int peer() {
        return peer;
    }

    public int channel() {
        return channel;
    }

    public boolean isSend() {
        return isSend;
    }

    /** Flows summed in this record: 1 for a flow, the step flows of the aggregate for an aggregate kind. */
    public int flows() {
        return flows;
    }

    /** bytes / period length, bytes per second. */
    public double periodBandwidthBytesPerSecond() {
        return periodBandwidthBytesPerSecond;
    }

    /** Steps posted to the network (state 9 / 10) during the period. */
    public long posts() {
        return posts;
    }

    /** Steps completed during the period (each step once, duplicates and late repeats excluded). */
    public long completions() {
        return completions;
    }

    /** Bytes of the steps completed during the period. */
    public long bytes() {
        return bytes;
    }

    /** Entries in the completion window at the period's end (≤ N). */
    public int windowCompletions() {
        return windowCompletions;
    }

    public long windowBytes() {
        return windowBytes;
    }

    /** last completion − first post of the window at the period's end. */
    public long windowSpanNs() {
        return windowSpanNs;
    }

    /** windowBytes / windowSpan, bytes per second (0 when the span is not positive). */
    public double windowBandwidthBytesPerSecond() {
        return windowBandwidthBytesPerSecond;
    }

    /** Steps posted and not yet completed at the period's end. */
    public long outstandingSteps() {
        return outstandingSteps;
    }

    /** Bytes of the outstanding send steps (recv steps learn their size only on arrival). */
    public long outstandingBytes() {
        return outstandingBytes;
    }

    /**
     * Ops' first steps (step index 0) that stopped in the period (schema v4). The first step is where the ranks of
     * an operation meet: on a receive flow its wait is 10 → 11, how long the peer's first data took after the
     * receive was posted; on a send flow 8 → 20 (or 9), how long the own GPU took to fill the first slot.
     */
    public long firstSteps() {
        return firstSteps;
    }

    /** The sum of the waits of {@link #firstSteps()}, ns. */
    public long firstStepWaitSumNs() {
        return firstStepWaitSumNs;
    }

    public long phaseCount(final int phase) {
        return phaseCount[phase];
    }

    public long phaseSumNs(final int phase) {
        return phaseSumNs[phase];
    }

    public long phaseMaxNs(final int phase) {
        return phaseMaxNs[phase];
    }

    /**
     * The period's median duration of a phase (schema v3): from the flow's fixed log-linear buckets, within
     * 11.1 % (+1 ns) of the exact percentile, at most {@link #phaseMaxNs}; {@link Phase#ABSENT} (-1) when the
     * phase has no record in the period, and for aggregates.
     */
    public long phaseP50Ns(final int phase) {
        return phaseP50Ns[phase];
    }

    /** The period's 90th percentile of a phase (schema v3); see {@link #phaseP50Ns}. */
    public long phaseP90Ns(final int phase) {
        return phaseP90Ns[phase];
    }

    /** The period's 99th percentile of a phase (schema v3); see {@link #phaseP50Ns}. */
    public long phaseP99Ns(final int phase) {
        return phaseP99Ns[phase];
    }

    public void copyFrom(final FlowSummary o) {
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
    public String toString() {
        return "FlowSummary{period=[" + periodStartNs + "," + periodEndNs + ") host=" + Long.toHexString(hostId)
                + " kind=" + kind + (kind == KIND_QP ? " dev=" + device + " qp=" + qpNum : "") + " comm="
                + Long.toHexString(commHash) + " rank="
                + rank + " peer=" + peer + " ch=" + channel + (isSend ? " send" : " recv") + " posts=" + posts
                + " completions="
                + completions + " bytes=" + bytes + " window=" + windowCompletions + "/" + windowBytes + "B/"
                + windowSpanNs + "ns outstanding=" + outstandingSteps + "/" + outstandingBytes + "B}";
    }
}
