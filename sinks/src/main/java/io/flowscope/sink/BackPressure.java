package io.flowscope.sink;

/** What {@link BatchingProcessor#offer} does when its bounded queue is full. Either way it is counted. */
public enum BackPressure {
    /** Evict the oldest queued item and enqueue the new one; never blocks the caller (the default). */
    DROP_OLDEST,
    /** Wait up to {@link ProcessorConfig#blockTimeout()} for room, then drop the new item. */
    BLOCK_WITH_TIMEOUT
}
