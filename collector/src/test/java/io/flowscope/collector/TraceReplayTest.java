package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.replay.Replay;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #15, acceptance 1: a journal, {@code flowscope inspect} to a JSON-lines trace, and {@code flowscope replay}
 * of the journal, of the trace and of its gzipped copy give the same anomalies (kind, culprit, start, detection,
 * resolution, evidence) and read the same batches and entries; so do time ranges; inspect of the trace gives back
 * the lines it was made of. All through {@link Main}, as a user runs them.
 */
class TraceReplayTest {
    /** One journal and its traces for the class (made once: the tests only read them). */
    @TempDir
    static Path dir;

    private static final CollectorConfig CONFIG = CollectorConfig.load(null, Map.of(), Map.of());
    private static Path journal;
    private static Path trace;
    private static Path gzipped;
    private static Pipeline live;

    record Result(int rc, String out, String err) {}

    static Result main(final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                args);
        return new Result(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** {@code flowscope inspect <input> > file}: stdout into a file, as a shell redirect does. */
    static void inspectTo(final Path input, final Path file) throws IOException {
        try (OutputStream f = Files.newOutputStream(file);
                PrintStream out = new PrintStream(f, false, StandardCharsets.UTF_8)) {
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertThat(Main.run(out, new PrintStream(err, true, StandardCharsets.UTF_8), "inspect", input.toString()))
                    .as(err.toString(StandardCharsets.UTF_8))
                    .isZero();
        }
    }

    static void gzip(final Path from, final Path to) throws IOException {
        try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(to))) {
            Files.copy(from, o);
        }
    }

    @BeforeAll
    static void journalAndTrace() throws IOException {
        journal = dir.resolve("journal");
        live = SimulatedInput.journal(journal, CONFIG, SimulatedInput.FAULTS);
        trace = dir.resolve("run.jsonl");
        inspectTo(journal, trace);
        gzipped = dir.resolve("run.jsonl.gz");
        gzip(trace, gzipped);
    }

    /** The anomaly events a replay printed with --json, without their publication times (wall, monotonic). */
    private static List<JsonNode> anomalies(final Result r) throws IOException {
        assertThat(r.rc).as(r.err).isZero();
        final List<JsonNode> events = new ArrayList<>();
        for (final String line : r.out.strip().split("\n")) {
            final ObjectNode e = (ObjectNode) Json.MAPPER.readTree(line);
            e.remove("publishedWallMs");
            e.remove("publishedMonoNs");
            events.add(e);
        }
        return events;
    }

    /** "replay: N batches, M entries in" of the summary line. */
    private static String counts(final Result r) {
        // the summary line (not the engine settings line before it, nor the progress bar's)
        final String s = r.err.lines()
                .filter(l -> l.startsWith("replay: ") && l.contains(" entries in "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no summary line in: " + r.err));
        return s.substring(0, s.indexOf(" in "));
    }

    private static String key(final AnomalyEvent e) {
        final var a = e.anomaly();
        return e.type() + " " + a.kind() + " " + a.culprit() + " start=" + a.startNs() + " detected=" + a.detectedNs()
                + " resolved=" + a.resolvedNs() + " " + a.severity() + " " + a.evidence();
    }

    private static List<String> keys(final List<AnomalyEvent> events) {
        return events.stream()
                .filter(e -> !"updated".equals(e.type()))
                .map(TraceReplayTest::key)
                .toList();
    }

    @Test
    void shouldReplayATraceThatInspectWroteFromAJournalToTheSameAnomaliesPlainAndGzipped() throws Exception {
        final Result fromJournal = main("replay", journal.toString(), "--json", "--no-progress");
        final Result fromTrace = main("replay", trace.toString(), "--json", "--no-progress");
        final Result fromGzip = main("replay", gzipped.toString(), "--json", "--no-progress");

        final List<JsonNode> expected = anomalies(fromJournal);
        // not vacuous: several kinds, opened and resolved
        assertThat(expected.stream()
                        .map(e -> e.get("anomaly").get("kind").asText())
                        .distinct()
                        .count())
                .isGreaterThanOrEqualTo(2);
        assertThat(expected).anySatisfy(e -> assertThat(e.get("type").asText()).isEqualTo("resolved"));
        assertThat(anomalies(fromTrace)).isEqualTo(expected);
        assertThat(anomalies(fromGzip)).isEqualTo(expected);

        // the same batches and entries read, nothing corrupt, no engine failure
        assertThat(counts(fromJournal)).matches("replay: \\d+ batches, \\d+ entries");
        assertThat(counts(fromTrace)).isEqualTo(counts(fromJournal));
        assertThat(counts(fromGzip)).isEqualTo(counts(fromJournal));
        assertThat(fromJournal.err).contains("0 corrupt batches skipped").doesNotContain("engine failures");
        assertThat(fromTrace.err).contains("0 corrupt lines skipped").doesNotContain("engine failures");
        assertThat(fromGzip.err).contains("0 corrupt lines skipped");

        // and the same as the run that wrote the journal, updates included, through the API a program uses
        final List<String> ran = keys(live.history());
        assertThat(keys(Replay.run(journal, CONFIG, Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {})
                        .events()))
                .isEqualTo(ran);
        final Replay.Result r = Replay.run(gzipped, CONFIG, Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        assertThat(keys(r.events())).isEqualTo(ran);
        assertThat(r.events().stream().filter(e -> "updated".equals(e.type())).count())
                .isEqualTo(live.history().stream()
                        .filter(e -> "updated".equals(e.type()))
                        .count());
        assertThat(r.corruptionUnit()).isEqualTo("lines");
    }

    @Test
    void shouldReplayATimeRangeOfATraceAsOfItsJournal() throws Exception {
        // over the slow link (100..300 ms) and the start of the slow GPU (350 ms on)
        final String from = "90000000";
        final String to = "450000000";
        final Result j = main("replay", journal.toString(), "--from", from, "--to", to, "--json", "--no-progress");
        final Result t = main("replay", gzipped.toString(), "--from", from, "--to", to, "--json", "--no-progress");
        final List<JsonNode> expected = anomalies(j);
        assertThat(expected).isNotEmpty();
        assertThat(anomalies(t)).isEqualTo(expected);
        assertThat(counts(t)).isEqualTo(counts(j));
        for (final JsonNode e : expected) {
            assertThat(e.get("anomaly").get("startNs").asLong()).isBetween(90_000_000L, 450_000_000L);
        }
        // a range before any fault: nothing, from either
        assertThat(main("replay", trace.toString(), "--to", "80000000", "--no-progress").out)
                .isEmpty();
        assertThat(main("replay", journal.toString(), "--to", "80000000", "--no-progress").out)
                .isEmpty();
    }

    @Test
    void shouldInspectATraceBackToTheLinesItWasMadeOfAndFilterItsTimeRange() throws Exception {
        final String lines = Files.readString(trace);
        assertThat(main("inspect", gzipped.toString()).out).isEqualTo(lines);
        assertThat(main("inspect", trace.toString(), "--limit", "5").out.split("\n"))
                .hasSize(5);

        final Result journalRange = main("inspect", journal.toString(), "--from", "100000000", "--to", "101000000");
        final Result traceRange = main("inspect", gzipped.toString(), "--from", "100000000", "--to", "101000000");
        assertThat(traceRange.rc).isZero();
        assertThat(traceRange.out).isEqualTo(journalRange.out);
        // events of that millisecond only; the other entries (host switches, ring and anomaly records) pass, so the
        // range is itself a trace that replays with its hosts
        long events = 0;
        for (final String line : traceRange.out.strip().split("\n")) {
            final JsonNode o = Json.MAPPER.readTree(line);
            if (o.has("timeNs")) {
                events++;
                assertThat(o.get("timeNs").asLong()).isBetween(100_000_000L, 101_000_000L);
            }
        }
        assertThat(events).isPositive().isLessThan(live.events() / 100);
        final Result ring = main("inspect", dir.resolve("none.ring").toString(), "--from", "1");
        assertThat(ring.rc).isEqualTo(Main.EXIT_INPUT);
        assertThat(ring.err).contains("--from / --to apply to a journal or a trace");
    }

    @Test
    void shouldShowTheProgressOfATraceReplayAsACountOfBatchesOnItsOwnLine() {
        final Result r = main("replay", trace.toString());
        assertThat(r.rc).isZero();
        assertThat(r.err).containsPattern("\rreplay: \\d+ batches\n").contains("\nreplay: ");
        final Result j = main("replay", journal.toString());
        assertThat(j.err).containsPattern("100% (\\d+)/\\1 batches\n").contains("\nreplay: ");
    }
}
