package io.flowscope.api.anomaly;

import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.FlowSummarySink;
import java.util.List;

/**
 * The anomaly stage: consumes the window engine's summary streams (flow summaries schema v2 and collective
 * summaries) and publishes anomalies to its {@link AnomalySink}. Deterministic: driven by event time only.
 * The implementation is {@code AnomalyEngine(AnomalyConfig, AnomalySink)}.
 */
public interface AnomalyStage extends FlowSummarySink, CollectiveSink {
    /**
     * Event time on {@code hostId} has reached {@code timeNs} with nothing else to report (lets a hang be
     * named when no summaries arrive; the service calls it from its drain loop with the last event time).
     */
    void advanceTo(long hostId, long timeNs);

    /** The anomalies open now, in a stable order (by start, then id). */
    List<Anomaly> openAnomalies();

    /**
     * The stage's whole state (what it learned and what is open) as bytes: a stage {@link #restore restored} from
     * them judges what follows exactly as this one would. A fleet aggregator keeps it in a state store so that a
     * partition taken over resumes from the last committed state, not from its first offset.
     */
    default byte[] checkpoint() {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no checkpoint");
    }

    /**
     * Takes the state of a {@link #checkpoint}; called on a fresh stage, before anything is consumed. A checkpoint
     * that cannot be read (another format version, truncated, damaged) throws {@link IllegalArgumentException}.
     */
    default void restore(final byte[] checkpoint) {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no checkpoint");
    }
}
