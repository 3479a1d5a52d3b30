package io.flowscope.api.summary;

/** Receives the engine's per-flow, per-period summaries through a reused {@link FlowSummary}. */
@FunctionalInterface
public interface FlowSummarySink {
    /** The summary is valid during the call only: copy what you keep ({@link FlowSummary#copyFrom}). */
    void onSummary(FlowSummary summary);
}
