package io.flowscope.collector.journal;

import io.flowscope.api.input.TelemetryListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * Recorded input read back batch by batch: a journal directory ({@link JournalReader}) or a JSON-lines trace
 * ({@link TraceReader}). Replay and inspect take either.
 */
public interface EventLog extends AutoCloseable {
    /**
     * Opens a journal directory or a trace file, whichever the path is; an {@link IllegalArgumentException} that
     * says what is wrong (missing, a file that is not named as a trace, a directory without cycle files) otherwise.
     */
    static EventLog open(final Path path) {
        if (Files.isDirectory(path)) {
            return new JournalReader(path);
        }
        if (!Files.exists(path)) {
            throw new IllegalArgumentException("no such journal directory or trace file: " + path);
        }
        if (!TraceReader.isTrace(path)) {
            throw new IllegalArgumentException(path + " is a file but not a trace: a trace is JSON lines named "
                    + "*.jsonl or *.jsonl.gz (as 'flowscope inspect JOURNAL > run.jsonl' writes it); a journal is a "
                    + "directory of .cq4 cycle files");
        }
        return new TraceReader(path);
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

    /**
     * Tells {@code listener} of every damaged range as it is skipped (where it is, how many batches or which line,
     * and why: one line each); returns this.
     */
    EventLog onDamage(Consumer<String> listener);

    /** How many damaged ranges were skipped (a range: consecutive batches, or one line of a trace). */
    long damagedRanges();

    /** The damaged ranges skipped, one line each, in reading order (the first 1,000). */
    List<String> damage();

    /** What {@link #corruptDocuments()} counts, for messages: "batches" or "lines". */
    String corruptionUnit();

    String lastCorruption();

    long firstEventNs();

    long lastEventNs();

    @Override
    void close();
}
