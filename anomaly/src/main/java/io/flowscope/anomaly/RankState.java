package io.flowscope.anomaly;

import java.util.ArrayList;
import java.util.List;

/** One rank of a communicator: its GPU consumption (its receives) and the credit waits of links into it. */
final class RankState extends Tracker {
    final CommState comm;
    final int rank;
    final List<RecvFlow> recvFlows = new ArrayList<>();
    /** The host of its latest summary (mirrored in {@link CommState#rHost}: set through {@link CommState#setHost}). */
    HostState host;

    final long[] lateness = new long[4];
    int latenessCount;
    /** Dense index in its communicator's rank table. */
    final int idx;

    /** Its SLOW_NODE tracker: itself. */
    Tracker slow() {
        return this;
    }
    /** The links into this rank, as indexes of the communicator's link table. */
    int[] in = new int[2];

    int inCount;
    /** Window series (in {@link CommState#rWin}): GPU consume ns and count, longest data wait. */
    static final int CONSUME_NS = 0;

    static final int CONSUME_COUNT = 1;
    static final int DATA_WAIT_MAX = 2;
    static final int SERIES = 3;

    RankState(final CommState comm, final int rank, final int idx) {
        this.comm = comm;
        this.rank = rank;
        this.idx = idx;
    }

    void addIncoming(final int linkId) {
        if (inCount == in.length) {
            in = java.util.Arrays.copyOf(in, inCount * 2);
        }
        in[inCount++] = linkId;
    }

    void pushLateness(final long ns) {
        lateness[latenessCount++ % lateness.length] = ns;
    }

    /** How late this rank arrived at each of its last collectives, at least (0 without enough of them). */
    long collectiveLatenessNs() {
        if (latenessCount < lateness.length) {
            return 0;
        }
        long m = Long.MAX_VALUE;
        for (final long l : lateness) {
            m = Math.min(m, l);
        }
        return Math.max(0, m);
    }

    /** The longest this rank waited for data from its senders (10 → 11) over the window. */
    long dataWaitMaxNs() {
        return comm.rWin.max(idx, DATA_WAIT_MAX);
    }

    double consumePerStep() {
        final long n = comm.rWin.sum(idx, CONSUME_COUNT);
        return n == 0 ? 0 : (double) comm.rWin.sum(idx, CONSUME_NS) / n;
    }

    /** Its identity, host, collective lateness and tracker (its rows are its communicator's, written there). */
    void writeTo(final CheckpointOut out) {
        out.writeInt(rank);
        out.writeHost(host);
        for (final long l : lateness) {
            out.writeLong(l);
        }
        out.writeInt(latenessCount);
        writeTracker(out);
    }

    static RankState readFrom(final CheckpointIn in, final CommState comm, final int idx) {
        final RankState r = new RankState(comm, in.readInt(), idx);
        r.host = in.readHostOrNull();
        for (int i = 0; i < r.lateness.length; i++) {
            r.lateness[i] = in.readLong();
        }
        r.latenessCount = in.readInt();
        CheckpointIn.check(r.latenessCount >= 0, "a lateness count of " + r.latenessCount);
        r.readTracker(in);
        return r;
    }
}
