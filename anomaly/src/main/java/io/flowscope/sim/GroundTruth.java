package io.flowscope.sim;

import io.flowscope.api.anomaly.AnomalyKind;

/**
 * The label of an injected fault, as a detector should report it: the culprit's host id (clock domain) and
 * rank (or NIC device), and onset / end in that host's event time.
 *
 * @param kind    what was injected
 * @param hostId  the culprit host
 * @param rank    the culprit rank (-1 for a NIC or congestion fault)
 * @param peer    the slow link's receiving rank (-1 otherwise)
 * @param device  the NIC device (congestion and NIC faults; -1 otherwise)
 * @param onsetNs onset, event time of {@code hostId}
 * @param endNs   end, event time of {@code hostId}; Long.MAX_VALUE when it lasts to the end of the run
 */
public record GroundTruth(AnomalyKind kind, long hostId, int rank, int peer, int device, long onsetNs, long endNs) {}
