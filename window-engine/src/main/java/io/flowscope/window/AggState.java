package io.flowscope.window;

import io.flowscope.api.summary.Phase;

/**
 * One aggregate of one period (a rank, a link or a communicator, per direction, of one host): the sums of the
 * step flows' period summaries. Pooled; lives for one period's emission only.
 */
final class AggState extends Pooled {
    long key;
    int kind;
    long commHash;
    int rank;
    int peer;
    boolean isSend;
    int flows;
    long posts;
    long completions;
    long bytes;
    long outstandingSteps;
    long outstandingBytes;
    long firstSteps;
    long firstStepWaitSumNs;
    final long[] phaseCount = new long[Phase.COUNT];
    final long[] phaseSumNs = new long[Phase.COUNT];
    final long[] phaseMaxNs = new long[Phase.COUNT];

    void reset(
            final long key, final int kind, final long commHash, final int rank, final int peer, final boolean isSend) {
        this.key = key;
        this.kind = kind;
        this.commHash = commHash;
        this.rank = rank;
        this.peer = peer;
        this.isSend = isSend;
        flows = 0;
        posts = 0;
        completions = 0;
        bytes = 0;
        outstandingSteps = 0;
        outstandingBytes = 0;
        firstSteps = 0;
        firstStepWaitSumNs = 0;
        for (int p = 0; p < Phase.COUNT; p++) {
            phaseCount[p] = 0;
            phaseSumNs[p] = 0;
            phaseMaxNs[p] = 0;
        }
    }

    boolean is(final int kind, final long commHash, final int rank, final int peer, final boolean isSend) {
        return this.kind == kind
                && this.commHash == commHash
                && this.rank == rank
                && this.peer == peer
                && this.isSend == isSend;
    }

    void add(final FlowState f) {
        flows++;
        posts += f.periodPosts;
        completions += f.periodCompletions;
        bytes += f.periodBytes;
        outstandingSteps += f.outstandingSteps;
        outstandingBytes += f.outstandingBytes;
        firstSteps += f.periodFirstSteps;
        firstStepWaitSumNs += f.periodFirstStepWaitNs;
        for (int slot = 0; slot < PhaseBuckets.SLOTS; slot++) {
            final int p = PhaseBuckets.phase(slot, f.isSend);
            phaseCount[p] += PhaseBuckets.count(f.phases, slot);
            phaseSumNs[p] += PhaseBuckets.sumNs(f.phases, slot);
            phaseMaxNs[p] = Math.max(phaseMaxNs[p], PhaseBuckets.maxNs(f.phases, slot));
        }
    }

    static long key(
            final int kind,
            final long commHash,
            final int rank,
            final int peer,
            final boolean isSend,
            final int attempt) {
        long h = FlowState.mix(commHash ^ (long) kind << 56);
        h = FlowState.mix(h ^ ((long) rank << 32 | peer & 0xFFFFFFFFL));
        return FlowState.mix(h + (isSend ? 1 : 0) + 2L * attempt);
    }
}
