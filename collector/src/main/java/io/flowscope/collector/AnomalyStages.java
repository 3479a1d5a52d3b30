package io.flowscope.collector;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.anomaly.AnomalyEngine;
import io.flowscope.anomaly.AnomalySink;
import io.flowscope.anomaly.AnomalyStage;

/** Builds the anomaly stage the service and replay run: the anomaly module's detectors, default thresholds. */
public final class AnomalyStages
{
    /**
     * The service's hang threshold, 500 ms, chosen from real NCCL traces (docs/detection.md): in their fault-free
     * phases no rank went more than 7.1 ms without a step completion, but the drain loop read one ring up to 194 ms
     * after another at job start, and the 20 ms of the simulator's suite named three false hangs there. A rank
     * that stops calling NCCL is named 0.5 s after it stopped; the simulator keeps its own 20 ms.
     */
    public static final long HANG_THRESHOLD_NS = 500_000_000L;

    private AnomalyStages()
    {
    }

    public static AnomalyStage create(final AnomalySink sink)
    {
        return new AnomalyEngine(new AnomalyConfig().hangThresholdNs(HANG_THRESHOLD_NS), sink);
    }
}
