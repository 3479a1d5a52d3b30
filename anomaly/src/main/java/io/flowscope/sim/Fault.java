package io.flowscope.sim;

import io.flowscope.api.anomaly.AnomalyKind;

/**
 * One injected fault of a {@link Scenario} (simulated time, ns from the start of the run).
 *
 * @param kind       {@link AnomalyKind#SLOW_LINK} (rank → peer at {@code fraction} of its bandwidth),
 *                   {@link AnomalyKind#SLOW_NODE} (rank's GPU work and compute gap × {@code 1 / fraction}, and
 *                   its GPU busy {@code delayNs} more before each collective; or, with {@code cpu}, its CPU calls
 *                   each collective {@code delayNs} after its GPU finished the previous one),
 *                   {@link AnomalyKind#CONGESTION} (the links out of {@code node}'s NIC {@code device}, i.e.
 *                   of every rank on it, drop to {@code fraction} of their bandwidth, ramping in and out over
 *                   2 ms, queues building),
 *                   {@link AnomalyKind#NIC_STALL} (NIC {@code device} of {@code node} stops completing; its QPs
 *                   move to the next device after {@code failoverNs}),
 *                   {@link AnomalyKind#HANG} (rank stops progressing)
 * @param rank       the culprit rank (SLOW_LINK, SLOW_NODE, HANG); -1 otherwise
 * @param peer       the receiving rank of a slow link; -1 otherwise
 * @param node       the culprit node (CONGESTION, NIC_STALL); -1 otherwise
 * @param device     the NIC device (CONGESTION, NIC_STALL); -1 otherwise
 * @param fraction   the remaining fraction of bandwidth or GPU speed, in (0, 1]
 * @param atNs       onset, simulated ns
 * @param durationNs how long it lasts; -1 = until the end of the run
 * @param delayNs    SLOW_NODE: how late the rank is at each collective (its GPU busy, or with {@code cpu} its CPU
 *                   calling late, as the real traces' {@code gpu} and {@code cpu} modes); 0 otherwise
 * @param cpu        SLOW_NODE: the lateness is the CPU's ({@code late-cpu}), not the GPU's
 */
public record Fault(
        AnomalyKind kind,
        int rank,
        int peer,
        int node,
        int device,
        double fraction,
        long atNs,
        long durationNs,
        long delayNs,
        boolean cpu) {
    /** A fault without a per-collective delay. */
    public Fault(
            final AnomalyKind kind,
            final int rank,
            final int peer,
            final int node,
            final int device,
            final double fraction,
            final long atNs,
            final long durationNs) {
        this(kind, rank, peer, node, device, fraction, atNs, durationNs, 0, false);
    }

    public long endNs() {
        return durationNs < 0 ? Long.MAX_VALUE : atNs + durationNs;
    }

    public boolean activeAt(final long simNs) {
        return simNs >= atNs && simNs < endNs();
    }
}
