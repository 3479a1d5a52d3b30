package io.flowscope.collector;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.anomaly.AnomalyEngine;
import io.flowscope.anomaly.AnomalySink;
import io.flowscope.anomaly.AnomalyStage;

/** Builds the anomaly stage the service and replay run: the anomaly module's detectors, default thresholds. */
public final class AnomalyStages
{
    private AnomalyStages()
    {
    }

    public static AnomalyStage create(final AnomalySink sink)
    {
        return new AnomalyEngine(new AnomalyConfig(), sink);
    }
}
