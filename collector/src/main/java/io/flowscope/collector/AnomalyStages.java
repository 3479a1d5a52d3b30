package io.flowscope.collector;

import java.util.List;

import io.flowscope.anomaly.Anomaly;
import io.flowscope.anomaly.AnomalySink;
import io.flowscope.anomaly.AnomalyStage;
import io.flowscope.window.CollectiveSummary;
import io.flowscope.window.FlowSummary;

/** Builds the anomaly stage the service runs. */
public final class AnomalyStages
{
    private AnomalyStages()
    {
    }

    /** The detectors of the anomaly module. */
    public static AnomalyStage create(final AnomalySink sink)
    {
        return new AnomalyStage()
        {
            @Override
            public void advanceTo(final long hostId, final long timeNs)
            {
            }

            @Override
            public List<Anomaly> openAnomalies()
            {
                return List.of();
            }

            @Override
            public void onSummary(final FlowSummary summary)
            {
            }

            @Override
            public void onCollective(final CollectiveSummary summary)
            {
            }
        };
    }
}
