package io.flowscope.anomaly;

/**
 * One direction rank → peer of a communicator, from the sender's step flows (all channels). Its period's
 * accumulators and its window live in its communicator's tables at row {@link #id}.
 */
final class LinkState extends Tracker {
    final CommState comm;
    final HostState host;
    final int rank;
    final int peer;
    RankState owner;
    /** The receiving rank (resolved once, not looked up per period). */
    RankState peerRank;
    /** Dense index in its communicator's tables, where all its state is (the object: identity, tracker). */
    final int id;

    /** Its SLOW_LINK tracker: itself. */
    Tracker slow() {
        return this;
    }
    /** Window series; in {@link CommState#lCur} at 1 + the series (after the period's start). */
    static final int BYTES = 0;

    static final int NET_NS = 1;
    static final int NET_COUNT = 2;
    static final int PEER_WAIT_NS = 3;
    static final int OUTSTANDING = 4;
    /** Kept for its window maximum, not its sum. */
    static final int PEER_WAIT_MAX = 5;
    /** Completed steps are not windowed: no judgement reads them, and every series costs each push. */
    static final int SERIES = 6;

    LinkState(final CommState comm, final HostState host, final int rank, final int peer, final int id) {
        this.comm = comm;
        this.host = host;
        this.rank = rank;
        this.peer = peer;
        this.id = id;
    }

    /**
     * The link's service rate over the window: bytes per ns of network time (9 → stop, queueing included),
     * all channels (computed once per push).
     */
    double rate() {
        return comm.lJudge[id * CommState.LJ + CommState.LJ_RATE];
    }

    long latestOutstanding() {
        return comm.lWin.latest(id, OUTSTANDING);
    }

    double peerWaitPerStep() {
        final long n = comm.lNetCount[id];
        return n == 0 ? 0 : (double) comm.lWin.sum(id, PEER_WAIT_NS) / n;
    }

    /** Its identity, ends and tracker (its rows are its communicator's, written there). */
    void writeTo(final CheckpointOut out) {
        out.writeInt(rank);
        out.writeInt(peer);
        out.writeHost(host);
        out.writeInt(owner.idx);
        out.writeInt(peerRank.idx);
        writeTracker(out);
    }

    /** A link of {@code comm}, whose ranks are read already. */
    static LinkState readFrom(final CheckpointIn in, final CommState comm, final int id) {
        final int rank = in.readInt();
        final int peer = in.readInt();
        final LinkState l = new LinkState(comm, in.readHost(), rank, peer, id);
        l.owner = comm.rankById[in.readIndex(comm.rankTotal)];
        l.peerRank = comm.rankById[in.readIndex(comm.rankTotal)];
        l.readTracker(in);
        return l;
    }
}
