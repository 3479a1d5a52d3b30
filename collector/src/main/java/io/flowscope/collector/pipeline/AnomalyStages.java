package io.flowscope.collector.pipeline;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.anomaly.AnomalyEngine;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;

/** Builds the anomaly stage the service and replay run: the anomaly module's detectors, default thresholds. */
public final class AnomalyStages {
    /**
     * The service's hang threshold, 500 ms, chosen from real NCCL traces (docs/detection.md): in their fault-free
     * phases no rank went more than 7.1 ms without a step completion, but the drain loop read one ring up to 194 ms
     * after another at job start, and the 20 ms of the simulator's suite named three false hangs there. A rank
     * that stops calling NCCL is named 0.5 s after it stopped; the simulator keeps its own 20 ms.
     */
    public static final long HANG_THRESHOLD_NS = 500_000_000L;

    /**
     * A stall pages (CRITICAL) after 10 s: until then it is a WARNING that names the rank the job waits on. Real
     * jobs wait on one rank for seconds without being hung (a checkpoint written by rank 0, an evaluation pass),
     * and an on-call engineer paged for each of those learns to ignore the page; a job stuck for 10 s is not doing
     * that. PyTorch's own watchdog gives up after 10 minutes.
     */
    public static final long HANG_CRITICAL_NS = 10_000_000_000L;

    /**
     * The period rules (slow link, slow node, congestion) open after 40 bad periods in the service (the simulator's
     * suite: 4): by then the wait-state rule has judged a straggler (two 25 ms windows), whose burst of sends
     * reads as a slow link of its own for a while (docs/perf-journal/6-collector.md, multi-host runs).
     */
    public static final int PERIOD_RULES_OPEN_AFTER = 40;

    /**
     * A NIC stalls in the service after 100 ms without a completion while work requests are outstanding (the
     * simulator's suite: 2 ms). A completion is seen when NCCL's proxy thread polls it: a proxy thread kept off its
     * core for a few ms (the multi-process harness's producers, SCHED_FIFO, ran up to 28 ms late on a loaded host)
     * read as a 2 ms NIC stall several times a second. A port that really goes down stalls for NCCL's IB timeout
     * (seconds), so 100 ms still names it long before NCCL gives up.
     */
    public static final long NIC_STALL_NS = 100_000_000L;

    /** The period rule's slow-node excess in the service: 450 µs (the simulator's suite: 50 µs). */
    public static final double SLOW_NODE_MIN_NS = 450_000;

    private AnomalyStages() {}

    public static AnomalyStage create(final AnomalySink sink) {
        return new AnomalyEngine(serviceConfig(), sink);
    }

    /**
     * The service's thresholds: the defaults (the simulator's suite), but a hang at {@link #HANG_THRESHOLD_NS}
     * (critical at {@link #HANG_CRITICAL_NS}), a NIC stall at {@link #NIC_STALL_NS}, the period rule's slow node at
     * {@link #SLOW_NODE_MIN_NS} of excess, as the wait-state straggler rule (real ranks' credit waits move by ~60 µs
     * without a straggler: docs/perf-journal/6-collector.md, multi-host runs), and the period rules opening after
     * {@link #PERIOD_RULES_OPEN_AFTER} periods.
     */
    public static AnomalyConfig serviceConfig() {
        return new AnomalyConfig()
                .hangThresholdNs(HANG_THRESHOLD_NS)
                .hangCriticalNs(HANG_CRITICAL_NS)
                .nicStallNs(NIC_STALL_NS)
                .slowNodeMinNs(SLOW_NODE_MIN_NS)
                .openAfter(PERIOD_RULES_OPEN_AFTER);
    }
}
