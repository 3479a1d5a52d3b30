package io.flowscope.collector.pipeline;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exceptions thrown while handling input, caught where they were thrown so that the rest of the batch, the other
 * stages and the next batches go on: a bug that one input reveals (an engine's null pointer on an input shape it
 * was never tested on) must not stop ingest, or the service goes blind exactly when the job misbehaves.
 * <p>
 * Counts them by {@link Stage}, keeps the last one for {@code /api/health}, and logs the first with its stack trace,
 * then at most one every {@link #LOG_INTERVAL_NS} (saying how many were not logged meanwhile): a stage that throws
 * on every summary would otherwise write thousands of stack traces a second.
 * <p>
 * Written by the thread that owns the pipeline (the drain thread, a replay); {@link #counts()} is an immutable copy
 * that the drain thread publishes with its snapshot.
 */
public final class IngestFailures {
    /** Where an exception was caught. */
    public enum Stage {
        /** The source's poll: ring discovery, decoding, the idle clock, the simulator. */
        SOURCE,
        /** The window engine, on an input call or at the end of input. */
        WINDOW,
        /** The anomaly stage, on a summary or when told a host's time. */
        ANOMALY,
        /** A consumer of the results: the anomaly listener (stream, sinks, console), a summary tap. */
        OUTPUT,
        /** The drain loop's own work between batches (ending the batch, publishing the snapshot). */
        DRAIN;

        /** The name in metrics and health: lower case. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What was counted, at one moment (immutable). */
    public record Counts(long total, Map<Stage, Long> byStage, String last, long lastWallMs) {
        public static final Counts NONE = new Counts(0, zeros(), null, 0);

        private static Map<Stage, Long> zeros() {
            final Map<Stage, Long> m = new EnumMap<>(Stage.class);
            for (final Stage s : Stage.values()) {
                m.put(s, 0L);
            }
            return Map.copyOf(m);
        }

        public long of(final Stage stage) {
            return byStage.getOrDefault(stage, 0L);
        }

        /** Whether the last failure is less than {@link #RECENT_MS} old at {@code nowWallMs}. */
        public boolean recent(final long nowWallMs) {
            return total > 0 && nowWallMs - lastWallMs < RECENT_MS;
        }

        /** {@code failures} of {@code /api/health}: how many, by stage, the last one and when, whether recent. */
        public Map<String, Object> toHealth(final long nowWallMs) {
            final Map<String, Object> f = new LinkedHashMap<>();
            f.put("total", total);
            final Map<String, Object> stages = new LinkedHashMap<>();
            for (final Stage stage : Stage.values()) {
                stages.put(stage.label(), of(stage));
            }
            f.put("byStage", stages);
            f.put("last", last);
            f.put("lastAtMs", total > 0 ? lastWallMs : null);
            f.put("recent", recent(nowWallMs));
            return f;
        }
    }

    /** Where failures are reported (the log; a list in tests). */
    @FunctionalInterface
    public interface Log {
        void failure(String message, Throwable cause);
    }

    /** At most one logged failure per this interval after the first. */
    public static final long LOG_INTERVAL_NS = 10_000_000_000L;
    /** A failure this recent makes the service DEGRADED in {@code /api/health}. */
    public static final long RECENT_MS = 60_000L;

    private static final Logger LOG = LoggerFactory.getLogger(IngestFailures.class);

    private final LongSupplier nanoClock;
    private final LongSupplier wallMsClock;
    private final Log log;
    private final long[] byStage = new long[Stage.values().length];
    private long total;
    private String last;
    private long lastWallMs;
    private long lastLoggedNs;
    private long notLogged;
    private Counts counts = Counts.NONE;

    public IngestFailures() {
        this(System::nanoTime, System::currentTimeMillis, LOG::error);
    }

    public IngestFailures(final LongSupplier nanoClock, final LongSupplier wallMsClock, final Log log) {
        this.nanoClock = nanoClock;
        this.wallMsClock = wallMsClock;
        this.log = log;
    }

    /**
     * Counts an exception caught in {@code stage} while handling {@code what} (a few words: "flow summary",
     * "ProxyStep stop"); logs it unless one was logged less than {@link #LOG_INTERVAL_NS} ago.
     */
    public void record(final Stage stage, final String what, final RuntimeException e) {
        byStage[stage.ordinal()]++;
        total++;
        last = stage.label() + " (" + what + "): " + e;
        lastWallMs = wallMsClock.getAsLong();
        final long now = nanoClock.getAsLong();
        if (total == 1 || now - lastLoggedNs >= LOG_INTERVAL_NS) {
            lastLoggedNs = now;
            final String unlogged = total == 1 ? "" : ", " + notLogged + " not logged since the last one logged";
            notLogged = 0;
            log.failure(
                    "ingest failure " + total + unlogged + ": the " + stage.label() + " stage threw on " + what
                            + "; counted and skipped, ingest goes on (flowscope_ingest_failures_total, /api/health failures)",
                    e);
        } else {
            notLogged++;
        }
    }

    public long total() {
        return total;
    }

    public long of(final Stage stage) {
        return byStage[stage.ordinal()];
    }

    /** An immutable copy of the counts (the same object while nothing new was counted). */
    public Counts counts() {
        if (counts.total() != total) {
            final Map<Stage, Long> m = new EnumMap<>(Stage.class);
            for (final Stage s : Stage.values()) {
                m.put(s, byStage[s.ordinal()]);
            }
            counts = new Counts(total, Map.copyOf(m), last, lastWallMs);
        }
        return counts;
    }
}
