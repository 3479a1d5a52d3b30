package io.flowscope.collector.journal;

import io.flowscope.window.TelemetryListener;

/**
 * Recorded input read back batch by batch: a journal directory ({@link JournalReader}) or a JSON-lines trace
 * ({@link TraceReader}). Replay and inspect take either.
 */
public interface EventLog extends AutoCloseable
{
    /** Opens a journal directory or a trace file, whichever the path is. */
    static EventLog open(final java.nio.file.Path path)
    {
        return TraceReader.isTrace(path) ? new TraceReader(path) : new JournalReader(path);
    }

    EventLog timeRange(long fromNs, long toNs);

    /** Reads up to {@code maxDocuments} batches; returns how many were read (0 at the end). */
    int read(TelemetryListener out, JournalReader.Meta meta, int maxDocuments);

    /** The batch being (or last) read: a stable position of it in its log. */
    long index();

    long documents();

    long entries();

    /** Damaged batches (journal) or lines (trace) skipped. */
    long corruptDocuments();

    String lastCorruption();

    long firstEventNs();

    long lastEventNs();

    @Override
    void close();
}
