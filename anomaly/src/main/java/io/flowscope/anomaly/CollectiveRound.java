package io.flowscope.anomaly;

/** The collective durations of one (communicator, sequence number) gathered across ranks. */
final class CollectiveRound {
    long seq;
    int nranks;
    int count;
    boolean[] seen = new boolean[0];
    long[] durationNs = new long[0];

    void reset(final long seq, final int nranks) {
        this.seq = seq;
        this.nranks = nranks;
        count = 0;
        if (seen.length < nranks) {
            seen = new boolean[nranks];
            durationNs = new long[nranks];
        }
        java.util.Arrays.fill(seen, 0, nranks, false);
    }
}
