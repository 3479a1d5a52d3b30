package io.flowscope.anomaly;

/**
 * One NIC device of a host, from its QP flows: its identity, its QP set and its NIC_STALL tracker; its
 * per-period state lives in its host's dense device tables (row {@link #idx}), read here through accessors.
 */
final class NicState extends Tracker {
    final HostState host;
    final int device;
    final org.agrona.collections.LongHashSet qps = new org.agrona.collections.LongHashSet();
    long episodeStartNs;

    /** Its row in its host's {@link HostState#devCur}, {@link HostState#devState} and {@link HostState#devWin}. */
    final int idx;

    /** Its NIC_STALL tracker: itself. */
    Tracker stall() {
        return this;
    }

    NicState(final HostState host, final int device, final int idx) {
        this.host = host;
        this.device = device;
        this.idx = idx;
    }

    /**
     * Records a QP not among the first two in its row ({@link HostState#DEV_QP0}, {@link HostState#DEV_QP1}, checked by
     * the caller); true when the device never carried it before.
     */
    boolean newQp(final long qp) {
        final boolean added = qps.add(qp);
        if (added) {
            final long[] cur = host.devCur;
            final int b = idx * HostState.DEV_CUR;
            if (cur[b + HostState.DEV_QP0] == Long.MIN_VALUE) {
                cur[b + HostState.DEV_QP0] = qp;
            } else if (cur[b + HostState.DEV_QP1] == Long.MIN_VALUE) {
                cur[b + HostState.DEV_QP1] = qp;
            }
        }
        return added;
    }

    private long state(final int k) {
        return host.devState[idx * HostState.DEV_STATE + k];
    }

    long outstanding() {
        return state(HostState.S_OUTSTANDING);
    }

    long lastProgressNs() {
        return state(HostState.S_LAST_PROGRESS);
    }

    long reportedEndNs() {
        return state(HostState.S_REPORTED_END);
    }

    long stalledNs() {
        return state(HostState.S_STALLED_NS);
    }

    int stalledSend() {
        return (int) (state(HostState.S_STALLED) & 0xffff_ffffL);
    }

    int stalledRecv() {
        return (int) (state(HostState.S_STALLED) >>> 32);
    }

    double latencyRatio() {
        return Double.longBitsToDouble(state(HostState.S_RATIO));
    }

    boolean candidate() {
        return state(HostState.S_CANDIDATE) != 0;
    }

    /** Its identity, QP set and tracker (its rows are its host's, written there). */
    void writeTo(final CheckpointOut out) {
        out.writeInt(device);
        out.writeSet(qps);
        out.writeLong(episodeStartNs);
        writeTracker(out);
    }

    static NicState readFrom(final CheckpointIn in, final HostState host, final int idx) {
        final NicState d = new NicState(host, in.readInt(), idx);
        in.readSet(d.qps);
        d.episodeStartNs = in.readLong();
        d.readTracker(in);
        return d;
    }
}
