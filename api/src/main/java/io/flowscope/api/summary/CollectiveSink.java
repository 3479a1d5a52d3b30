package io.flowscope.api.summary;

/** Receives one {@link CollectiveSummary} per finished collective (or P2p operation), through a reused record. */
@FunctionalInterface
public interface CollectiveSink {
    /** The summary is valid during the call only: copy what you keep ({@link CollectiveSummary#copyFrom}). */
    void onCollective(CollectiveSummary summary);
}
