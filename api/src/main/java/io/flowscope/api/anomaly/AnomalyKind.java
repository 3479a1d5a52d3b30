package io.flowscope.api.anomaly;

/** What went wrong. Each kind has its own detector and its own culprit rule (see the module README). */
public enum AnomalyKind {
    /** One direction between two ranks moves data slower than the same links of its communicator. */
    SLOW_LINK,
    /** One rank (its GPU) is late: the others wait for it (compute straggler). */
    SLOW_NODE,
    /** Queues build on a flow or QP: outstanding work grows while bandwidth falls. */
    CONGESTION,
    /** The QPs of one NIC device stop completing work; traffic may move to another device. */
    NIC_STALL,
    /** A rank stops making progress; everyone else waits on it. */
    HANG
}
