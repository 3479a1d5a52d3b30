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

    /** Its sequence number, size, and the durations of the ranks seen so far (all of its arrays' length). */
    void writeTo(final CheckpointOut out) {
        out.writeLong(seq);
        out.writeInt(nranks);
        out.writeInt(count);
        out.writeInt(seen.length);
        for (int r = 0; r < seen.length; r++) {
            out.writeBoolean(seen[r]);
            if (seen[r]) {
                out.writeLong(durationNs[r]);
            }
        }
    }

    static CollectiveRound readFrom(final CheckpointIn in) {
        final CollectiveRound round = new CollectiveRound();
        round.seq = in.readLong();
        round.nranks = in.readInt();
        round.count = in.readInt();
        final int length = in.readCount();
        CheckpointIn.check(
                round.nranks >= 0 && round.nranks <= length && round.count >= 0,
                "a collective round of " + round.nranks + " ranks, " + round.count + " seen, arrays of " + length);
        round.seen = new boolean[length];
        round.durationNs = new long[length];
        for (int r = 0; r < length; r++) {
            round.seen[r] = in.readBoolean();
            if (round.seen[r]) {
                round.durationNs[r] = in.readLong();
            }
        }
        return round;
    }
}
