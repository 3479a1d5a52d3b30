package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.TraceReader;
import io.flowscope.collector.pipeline.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JSON-lines trace format of docs/trace-format.md as a reader meets it: version 1 (no {@code batch}: the real
 * recordings of ../shared/traces) stays readable, damaged lines are counted and skipped with their line number while
 * the rest is read, a trace cut short is read up to the cut, and replay of a wrong path says what is wrong.
 */
class TraceFormatTest {
    @TempDir
    static Path dir;

    private static final CollectorConfig CONFIG = CollectorConfig.load(null, Map.of(), Map.of());
    /** A version-2 trace of a simulated run, as inspect writes it. */
    private static Path trace;

    private static List<String> lines;

    @BeforeAll
    static void trace() throws IOException {
        final Path journal = dir.resolve("journal");
        SimulatedInput.journal(journal, CONFIG, "nodes=2,gpus=2,channels=1,size=2M,seed=5,duration=100ms");
        trace = dir.resolve("run.jsonl");
        TraceReplayTest.inspectTo(journal, trace);
        lines = Files.readAllLines(trace);
    }

    /** Reads a whole trace; returns [batches, entries, corrupt]. */
    private static long[] read(final TraceReader r) {
        while (r.read(new NoopListener(), new JournalReader.Meta() {}, 1000) > 0) {
            // all
        }
        return new long[] {r.documents(), r.entries(), r.corruptDocuments()};
    }

    private static Path write(final String name, final List<String> content) throws IOException {
        final Path p = dir.resolve(name);
        Files.write(p, content);
        return p;
    }

    @Test
    void shouldReadTheRealRecordingsOfVersionOneWithoutABatchFieldByTheirBatchWallTime() throws Exception {
        // a socket run (proxy ops and steps, collectives, ring attach/detach, end) and an NVLink run with KernelCh
        for (final Path events : SharedTraces.events("hang-r1-3s", "nvlink-k-clean")) {
            long lineCount = 0;
            long batches = 0;
            long lastWall = Long.MIN_VALUE;
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(new GZIPInputStream(Files.newInputStream(events)), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    lineCount++;
                    if (lineCount == 1) {
                        assertThat(line).as("version 1: no batch field").doesNotContain("\"batch\"");
                    }
                    final long wall =
                            Json.MAPPER.readTree(line).get("batchWallNs").asLong();
                    batches += wall != lastWall ? 1 : 0;
                    lastWall = wall;
                }
            }
            try (TraceReader r = new TraceReader(events)) {
                final long[] n = read(r);
                assertThat(n[2]).as(events + ": " + r.lastCorruption()).isZero();
                assertThat(n[1]).as(events + " entries").isEqualTo(lineCount);
                assertThat(n[0]).as(events + " batches").isEqualTo(batches);
                assertThat(r.lastEventNs()).isGreaterThan(r.firstEventNs());
            }
        }
    }

    @Test
    void shouldReadAVersionOneCopyOfATraceAsTheSameEntriesInBatchesOfOneWallTime() throws Exception {
        final List<String> v1 = new ArrayList<>();
        for (final String line : lines) {
            final ObjectNode o = (ObjectNode) Json.MAPPER.readTree(line);
            o.remove("batch");
            v1.add(Json.MAPPER.writeValueAsString(o));
        }
        final long[] v2n;
        try (TraceReader r = new TraceReader(trace)) {
            v2n = read(r);
        }
        try (TraceReader r = new TraceReader(write("v1.jsonl", v1))) {
            final long[] n = read(r);
            assertThat(n[2]).isZero();
            assertThat(n[1]).isEqualTo(v2n[1]).isEqualTo(lines.size());
            // batches written in the same millisecond read as one
            assertThat(n[0]).isPositive().isLessThanOrEqualTo(v2n[0]);
        }
        // inspect upgrades it: batch numbers by wall time, everything else as it was
        final TraceReplayTest.Result up =
                TraceReplayTest.main("inspect", dir.resolve("v1.jsonl").toString());
        assertThat(up.rc()).isZero();
        final String[] upgraded = up.out().split("\n");
        assertThat(upgraded).hasSize(lines.size());
        final JsonNode first = Json.MAPPER.readTree(upgraded[0]);
        assertThat(first.get("batch").asLong()).isZero();
        assertThat(((ObjectNode) Json.MAPPER.readTree(upgraded[upgraded.length - 1])).remove("batch"))
                .isNotNull();
        final ObjectNode last = (ObjectNode) Json.MAPPER.readTree(upgraded[upgraded.length - 1]);
        last.remove("batch");
        assertThat(Json.MAPPER.writeValueAsString(last)).isEqualTo(v1.get(v1.size() - 1));
    }

    @Test
    void shouldCountAndSkipDamagedLinesWithTheirLineNumbersAndReadTheRest() throws Exception {
        final List<String> damaged = new ArrayList<>(lines.subList(0, 2000));
        damaged.add(
                100, "{\"type\":\"proxyStepStop\",\"batch\":3,\"batchWallNs\":1,\"timeNs\":5}"); // line 101: no stepKey
        damaged.add(200, "this is not JSON"); // line 201
        damaged.add(300, "{\"type\":\"warpDrive\",\"batch\":7,\"batchWallNs\":1}"); // line 301
        damaged.add(400, "[1, 2, 3]"); // line 401
        damaged.add(500, ""); // blank: skipped
        damaged.add(
                600,
                "{\"type\":\"proxyOpStart\",\"opKey\":1,\"commHash\":\"0xZZ\",\"rank\":0,\"peer\":1,"
                        + "\"channel\":0,\"isSend\":true,\"timeNs\":9}"); // line 601
        final Path p = write("damaged.jsonl", damaged);
        try (TraceReader r = new TraceReader(p)) {
            final long[] n = read(r);
            assertThat(n[2]).isEqualTo(5);
            assertThat(n[1]).isEqualTo(2000);
            assertThat(r.lastCorruption()).isEqualTo("line 601 (proxyOpStart): \"commHash\" is not a hex id: 0xZZ");
            assertThat(r.corruptionUnit()).isEqualTo("lines");
        }
        final TraceReplayTest.Result replay = TraceReplayTest.main("replay", p.toString(), "--no-progress");
        assertThat(replay.rc()).isEqualTo(Main.EXIT_DAMAGED);
        assertThat(replay.err())
                .contains(
                        "2000 entries",
                        "5 corrupt lines skipped in 5 damaged ranges: line 101 " + "(proxyStepStop)",
                        "line 601 (proxyOpStart)",
                        "flowscope replay: damaged, skipped: line 201: not JSON");
        assertThat(TraceReplayTest.main("replay", p.toString(), "--no-progress", "--tolerate-corruption")
                        .rc())
                .isZero();
        final TraceReplayTest.Result inspect = TraceReplayTest.main("inspect", p.toString());
        assertThat(inspect.rc()).isEqualTo(Main.EXIT_DAMAGED);
        assertThat(inspect.out().split("\n")).hasSize(2000);
        assertThat(inspect.err()).contains("5 corrupt lines skipped", "flowscope inspect: damaged, skipped: line 301");

        // each kind of damage says what it is
        final List<String> messages = new ArrayList<>();
        for (final String bad : List.of(damaged.get(100), damaged.get(200), damaged.get(300), damaged.get(400))) {
            try (TraceReader r = new TraceReader(write("one.jsonl", List.of(lines.get(0), bad, lines.get(1))))) {
                final long[] n = read(r);
                assertThat(n[1]).isEqualTo(2);
                messages.add(r.lastCorruption());
            }
        }
        assertThat(messages.get(0)).isEqualTo("line 2 (proxyStepStop): missing or non-integer \"stepKey\"");
        assertThat(messages.get(1)).startsWith("line 2: not JSON: ");
        assertThat(messages.get(2)).isEqualTo("line 2: unknown type \"warpDrive\"");
        assertThat(messages.get(3)).isEqualTo("line 2: not an object with a \"type\"");
    }

    @Test
    void shouldReadATruncatedGzipUpToTheCutAndSaySo() throws Exception {
        final Path gz = dir.resolve("full.jsonl.gz");
        TraceReplayTest.gzip(trace, gz);
        final byte[] bytes = Files.readAllBytes(gz);
        final Path cut = dir.resolve("cut.jsonl.gz");
        Files.write(cut, java.util.Arrays.copyOf(bytes, bytes.length * 3 / 5));
        try (TraceReader r = new TraceReader(cut)) {
            final long[] n = read(r);
            assertThat(n[2]).isEqualTo(1);
            assertThat(n[1]).isPositive().isLessThan(lines.size());
            assertThat(r.lastCorruption()).startsWith("the file ends early after line " + n[1] + " (truncated gzip?)");
        }
        final TraceReplayTest.Result replay = TraceReplayTest.main("replay", cut.toString(), "--no-progress");
        assertThat(replay.rc()).isEqualTo(Main.EXIT_DAMAGED);
        assertThat(replay.err()).contains("1 corrupt lines skipped in 1 damaged range: the file ends early after line");
    }

    @Test
    void shouldRefuseAMissingOrWronglyNamedInputWithAClearMessageAndNoStackTrace() throws Exception {
        final Path txt = write("events.txt", lines.subList(0, 10));
        final Path emptyDir = Files.createDirectories(dir.resolve("not-a-journal"));
        final Map<String, String> expected = Map.of(
                dir.resolve("nope.jsonl.gz").toString(), "no such journal directory or trace file: ",
                txt.toString(), "is a file but not a trace: a trace is JSON lines named *.jsonl or *.jsonl.gz",
                emptyDir.toString(), "not a journal (no .cq4 cycle files): ");
        for (final Map.Entry<String, String> e : expected.entrySet()) {
            final TraceReplayTest.Result r = TraceReplayTest.main("replay", e.getKey(), "--no-progress");
            assertThat(r.rc()).as(e.getKey()).isEqualTo(Main.EXIT_INPUT);
            assertThat(r.err())
                    .as(e.getKey())
                    .startsWith("flowscope replay: ")
                    .contains(e.getValue(), e.getKey())
                    .doesNotContain("Exception", "\tat ");
            assertThat(r.out()).isEmpty();
        }
        // a trace export is not written for an input that cannot be read
        final Path export = dir.resolve("export.json");
        assertThat(TraceReplayTest.main("replay", txt.toString(), "--trace", export.toString())
                        .rc())
                .isEqualTo(Main.EXIT_INPUT);
        assertThat(export).doesNotExist();
        final TraceReplayTest.Result inspect =
                TraceReplayTest.main("inspect", dir.resolve("nope.jsonl").toString());
        assertThat(inspect.rc()).isEqualTo(Main.EXIT_INPUT);
        assertThat(inspect.err()).contains("no such ring file or journal directory (or trace file)");
    }
}
