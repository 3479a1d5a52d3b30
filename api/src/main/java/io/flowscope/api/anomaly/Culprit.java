package io.flowscope.api.anomaly;

/**
 * Who is to blame: the host, and within it as much as is known. Fields that do not apply are -1
 * (e.g. {@code peer} for a slow node, {@code device}/{@code qpNum} for a step flow).
 *
 * @param hostId   the host (clock domain) id, as the window engine keys it
 * @param commHash the communicator, 0 when the culprit is a NIC or QP
 * @param rank     the culprit rank in that communicator
 * @param peer     the other end, for a link (rank → peer is the slow direction)
 * @param channel  the NCCL channel, when one channel is to blame
 * @param device   the NIC device index, for NIC/QP anomalies
 * @param qpNum    the queue pair, for a single-QP anomaly
 */
public record Culprit(long hostId, long commHash, int rank, int peer, int channel, int device, long qpNum) {
    public static Culprit rank(final long hostId, final long commHash, final int rank) {
        return new Culprit(hostId, commHash, rank, -1, -1, -1, -1);
    }

    public static Culprit link(final long hostId, final long commHash, final int rank, final int peer) {
        return new Culprit(hostId, commHash, rank, peer, -1, -1, -1);
    }

    public static Culprit nic(final long hostId, final int device) {
        return new Culprit(hostId, 0, -1, -1, -1, device, -1);
    }
}
