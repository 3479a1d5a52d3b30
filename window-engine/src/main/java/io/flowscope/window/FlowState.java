package io.flowscope.window;

import io.flowscope.api.summary.FlowSummary;

/**
 * Fixed-size state of one flow (communicator, rank, peer, channel, direction): its completion window,
 * outstanding work, totals and the statistics of the current period. Pooled and reused; {@link #generation}
 * changes on every reuse so that stale references (from ops and the QP cache) are recognised; steps of an evicted
 * flow are dropped with it.
 */
final class FlowState extends Pooled {
    long key;
    HostState host;
    /** {@link FlowSummary#KIND_STEP} or {@link FlowSummary#KIND_QP}. */
    int kind;

    int device;
    long qpNum;
    long commHash;
    int rank;
    int peer;
    int channel;
    boolean isSend;
    int generation;
    /** Index of this object among the engine's flows, fixed at construction. */
    int id;
    /** The completion window ({@link CompletionWindow}'s static methods over it). */
    final long[] window;
    /** Null unless the engine keeps series. */
    final Series series;

    /**
     * The flow's latest record time, for the idle timeout, except the state records of its live steps: those are in
     * the steps' stamps, folded in at the step's stop or, before the sweep evicts, by
     * {@code PeriodSweep.foldLiveStamps} (a state record then writes one field, not two).
     */
    long lastActivityNs;

    long outstandingSteps;
    long outstandingBytes;
    /** Bytes of the flow's completed periods: {@link #totalBytes()} adds the current one's. */
    long bytesBeforePeriod;

    long periodPosts;
    long periodCompletions;
    long periodBytes;
    /** Ops' first steps stopped this period, and the sum of their waits (see {@link FlowSummary#firstSteps}). */
    long periodFirstSteps;

    long periodFirstStepWaitNs;
    /** The period's phase statistics and duration buckets, for per-flow percentiles ({@link PhaseBuckets}). */
    final long[] phases = PhaseBuckets.allocate();

    FlowState(final int windowSize, final boolean series) {
        window = CompletionWindow.allocate(windowSize);
        this.series = series ? new Series() : null;
    }

    void reset(
            final long key,
            final HostState host,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long nowNs) {
        this.key = key;
        this.host = host;
        this.kind = FlowSummary.KIND_STEP;
        this.device = -1;
        this.qpNum = -1;
        this.commHash = commHash;
        this.rank = rank;
        this.peer = peer;
        this.channel = channel;
        this.isSend = isSend;
        CompletionWindow.clear(window);
        if (series != null) {
            series.clear();
        }
        lastActivityNs = nowNs;
        outstandingSteps = 0;
        outstandingBytes = 0;
        resetPeriod();
        bytesBeforePeriod = 0;
    }

    boolean is(
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend) {
        return kind == FlowSummary.KIND_STEP
                && host.hostId == hostId
                && this.commHash == commHash
                && this.rank == rank
                && this.peer == peer
                && this.channel == channel
                && this.isSend == isSend;
    }

    /** Makes this a QP flow: (host, device, qpNum); the step identity fields are -1 / 0. */
    void resetQp(final long key, final HostState host, final int device, final long qpNum, final long nowNs) {
        reset(key, host, 0, -1, -1, -1, true, nowNs);
        kind = FlowSummary.KIND_QP;
        this.device = device;
        this.qpNum = qpNum;
    }

    boolean isQp(final long hostId, final int device, final long qpNum) {
        return kind == FlowSummary.KIND_QP && host.hostId == hostId && this.device == device && this.qpNum == qpNum;
    }

    static long qpKey(final long hostId, final int device, final long qpNum, final int attempt) {
        long h = mix(hostId ^ 0x51505150L) ^ qpNum * 0x9E3779B97F4A7C15L;
        h = mix(h ^ (long) device << 40);
        return mix(h + attempt);
    }

    /**
     * Records one phase duration of this period; {@code slot} = {@link PhaseBuckets#slot}(phase, isSend), a constant
     * where the callers know the direction (no load and branch on {@link #isSend} per record).
     */
    void phase(final int slot, final long ns) {
        PhaseBuckets.record(phases, slot, ns);
    }

    boolean activeInPeriod() {
        return periodPosts != 0 || periodCompletions != 0 || PhaseBuckets.recorded(phases);
    }

    /** Lifetime bytes completed. */
    long totalBytes() {
        return bytesBeforePeriod + periodBytes;
    }

    void resetPeriod() {
        bytesBeforePeriod += periodBytes;
        periodPosts = 0;
        periodCompletions = 0;
        periodBytes = 0;
        periodFirstSteps = 0;
        periodFirstStepWaitNs = 0;
        PhaseBuckets.clear(phases);
    }

    /** The flow key: a 64-bit mix of the identity; {@code attempt} > 0 rehashes after a collision. */
    static long key(
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final int attempt) {
        long h = mix(hostId) ^ commHash * 0x9E3779B97F4A7C15L;
        h = mix(h ^ rank);
        h = mix(h ^ ((long) peer << 20 ^ (long) channel << 8 ^ (isSend ? 1 : 0)));
        h = mix(h + attempt);
        return h;
    }

    static long mix(final long x) {
        long z = x * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 31)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 29);
    }
}
