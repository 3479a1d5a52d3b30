package io.flowscope.anomaly;

/**
 * What the wait-state detector may ask of the hosts' NICs (the {@link NicStallDetector}'s work-request latency
 * against each NIC's baseline, from QP events): which NIC of a host slowed most, by how much, and how the other
 * hosts' NICs fare. Empty (no NIC known) where the traffic carries no QP events (sockets, NCCL without its net
 * profiler).
 */
interface NicView {
    /** The NIC of {@code hostId} whose work-request latency rose most against its baseline, or -1 (none known). */
    int worstNic(long hostId);

    /** That NIC's latency over its baseline (0: not known). */
    double latencyRatio(long hostId, int device);

    /** The median latency ratio of the other hosts' NICs (NaN: none known). */
    double othersMedianRatio(long hostId);

    /** No NIC known anywhere. */
    NicView NONE = new NicView() {
        @Override
        public int worstNic(final long hostId) {
            return -1;
        }

        @Override
        public double latencyRatio(final long hostId, final int device) {
            return 0;
        }

        @Override
        public double othersMedianRatio(final long hostId) {
            return Double.NaN;
        }
    };
}
