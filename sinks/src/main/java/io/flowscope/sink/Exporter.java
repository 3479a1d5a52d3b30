package io.flowscope.sink;

import java.util.List;

/**
 * One destination for telemetry items (an InfluxDB server, an alert webhook, memory). Called by one
 * {@link BatchingProcessor} worker thread only, never by the engine thread: an exporter may block on I/O.
 * Batching, back-pressure, retries and counting live in the processor, not here.
 *
 * @param <T> what is exported (a line-protocol point, a notification)
 */
public interface Exporter<T> {
    /** Sends one batch, once (no retry here): the processor retries a {@link ExportResult#RETRYABLE} batch. */
    ExportResult export(List<T> batch);

    /** Pushes out anything the exporter buffers itself (most buffer nothing). */
    default void flush() {}

    /** Why the last export did not succeed, for logs and counters ("" when none failed). */
    default String lastError() {
        return "";
    }

    /** Releases resources; afterwards {@link #export} answers {@link ExportResult#FAILED}. */
    void shutdown();
}
