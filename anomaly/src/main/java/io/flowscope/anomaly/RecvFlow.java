package io.flowscope.anomaly;

/** One receive step flow (receiver rank ← sender peer, channel) on the receiver's host. */
final class RecvFlow {
    final CommState comm;
    final HostState host;
    final int rank;
    final int peer;
    final int channel;
    RankState owner;
    /** Its row in its host's receive table ({@link HostState#recvRows}). */
    final int idx;

    RecvFlow(
            final CommState comm,
            final HostState host,
            final int rank,
            final int peer,
            final int channel,
            final int idx) {
        this.comm = comm;
        this.host = host;
        this.rank = rank;
        this.peer = peer;
        this.channel = channel;
        this.idx = idx;
    }

    /** The owner's row in its communicator's tables. */
    int ownerIdx() {
        return (int) host.recvRows[idx * HostState.RECV_ROW + HostState.RECV_OWNER];
    }

    long lastProgressNs() {
        return host.recvRows[idx * HostState.RECV_ROW + HostState.RECV_PROGRESS];
    }
}
