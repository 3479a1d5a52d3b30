package io.flowscope.collector.replay;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.Main;
import io.flowscope.collector.pipeline.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replay builds its engines with the engine settings the journal says the live run used (issue #16), unless told
 * otherwise, and says which and whence on stderr: a run with {@code window.periodMs=2} replays to its own anomalies
 * without being told; told other settings, the replay says they are not the journal's; a journal (or trace) without
 * the entry gets the defaults, said so; the entry travels into traces and back.
 */
class ReplayEngineSettingsTest {
    @TempDir
    static Path dir;

    static Path journal;
    /** The live run's anomaly lines (opened and resolved), as its console printed them. */
    static List<String> live;

    private record Result(int rc, String out, String err) {
        List<String> anomalies() {
            return out.lines()
                    .filter(l -> l.startsWith("OPENED") || l.startsWith("RESOLVED"))
                    .toList();
        }
    }

    private static Result run(final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                args);
        return new Result(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @BeforeAll
    static void liveRunWithOtherSettingsThanTheDefaults() {
        journal = dir.resolve("journal");
        final Result r = run(
                "simulate",
                "--scenario",
                "nodes=2,gpus=2,channels=1,size=1M,bw=2e9,duration=900ms",
                "--fault",
                "slow-link:rank=1,peer=2,fraction=0.5,at=200ms",
                "--speed",
                "20",
                "--port",
                "0",
                "--journal-dir",
                journal.toString(),
                "--set",
                "window.periodMs=2",
                "--set",
                "window.windowSize=6");
        assertThat(r.rc).as(r.err).isZero();
        live = r.anomalies();
        assertThat(live).as(r.out).anyMatch(l -> l.matches("OPENED +SLOW_LINK .*rank 1 → 2 .*"));
    }

    @Test
    void shouldReplayWithTheJournalsOwnSettingsAndSaySo() {
        final Result r = run("replay", journal.toString(), "--no-progress");
        assertThat(r.rc).as(r.err).isZero();
        assertThat(r.err.lines().findFirst().orElseThrow())
                .isEqualTo("flowscope replay: engine settings of the journal: window.periodMs=2 window.windowSize=6");
        assertThat(r.anomalies()).isEqualTo(live);
    }

    @Test
    void shouldSayWhenToldOtherSettingsThanTheJournals() throws Exception {
        final Result r = run("replay", journal.toString(), "--no-progress", "--set", "window.periodMs=1");
        assertThat(r.rc).as(r.err).isZero();
        assertThat(r.err)
                .contains("flowscope replay: engine settings window.periodMs=1 window.windowSize=6 "
                        + "(window.periodMs from the command line), not the journal's (window.periodMs=2 window.windowSize=6): "
                        + "anomalies may differ from the live run's");
        // what a replay that ignored the journal's settings gave: not the live run's anomalies
        assertThat(r.anomalies()).isNotEqualTo(live);

        final Path cfg = dir.resolve("replay.yaml");
        Files.writeString(cfg, "window:\n  windowSize: 6\n  periodMs: 2\n");
        final Result same = run("replay", journal.toString(), "--no-progress", "--config", cfg.toString());
        assertThat(same.err)
                .contains("engine settings window.periodMs=2 window.windowSize=6 (window.periodMs from " + "file " + cfg
                        + ", window.windowSize from file " + cfg + "), the same as the journal's");
        assertThat(same.anomalies()).isEqualTo(live);
    }

    @Test
    void shouldCarryTheSettingsIntoTracesAndTakeTheDefaultsWithoutThem() throws Exception {
        final Path trace = dir.resolve("run.jsonl");
        final Result inspect = run("inspect", journal.toString());
        assertThat(inspect.rc).isZero();
        Files.writeString(trace, inspect.out);
        final JsonNode first =
                Json.MAPPER.readTree(inspect.out.lines().findFirst().orElseThrow());
        assertThat(first.path("type").asText()).isEqualTo("engineSettings");
        assertThat(first.path("settings").path("window.periodMs").asText()).isEqualTo("2");
        assertThat(first.path("settings").path("window.windowSize").asText()).isEqualTo("6");

        final Result fromTrace = run("replay", trace.toString(), "--no-progress");
        assertThat(fromTrace.err).contains("engine settings of the journal: window.periodMs=2 window.windowSize=6");
        assertThat(fromTrace.anomalies()).isEqualTo(live);

        // an older journal's trace: no entry, so the defaults, said
        final Path older = dir.resolve("older.jsonl");
        Files.writeString(
                older,
                String.join(
                                "\n",
                                inspect.out
                                        .lines()
                                        .filter(l -> !l.contains("\"engineSettings\""))
                                        .toList()) + "\n");
        final Result defaults = run("replay", older.toString(), "--no-progress");
        assertThat(defaults.rc).as(defaults.err).isZero();
        assertThat(defaults.err)
                .contains("flowscope replay: engine settings: the defaults, window.periodMs=1 "
                        + "window.windowSize=8: the journal does not say its own (written before they were journaled); if the live "
                        + "run used others, give them with --set");
        final Result told = run(
                "replay",
                older.toString(),
                "--no-progress",
                "--set",
                "window.periodMs=2",
                "--set",
                "window.windowSize=6");
        assertThat(told.err)
                .contains(
                        "engine settings window.periodMs=2 window.windowSize=6 (window.periodMs from "
                                + "the command line, window.windowSize from the command line); the journal does not say its own");
        assertThat(told.anomalies()).isEqualTo(live);
    }

    @Test
    void shouldSayWhenTheInputHoldsRunsWithDifferentSettings() throws Exception {
        // a service restarted with another configuration wrote on: a second settings entry, another period
        final Result inspect = run("inspect", journal.toString());
        final List<String> lines = inspect.out.lines().toList();
        final Path mixed = dir.resolve("mixed.jsonl");
        final String other = lines.get(0)
                .replace("\"window.periodMs\":\"2\"", "\"window.periodMs\":\"1\"")
                .replace("\"batch\":0", "\"batch\":" + (lines.size() + 1));
        Files.writeString(mixed, String.join("\n", lines) + "\n" + other + "\n");
        final Result r = run("replay", mixed.toString(), "--no-progress");
        assertThat(r.err)
                .contains("flowscope replay: the input holds runs with different engine settings "
                        + "(window.periodMs=2 window.windowSize=6; window.periodMs=1 window.windowSize=6); all were replayed with "
                        + "window.periodMs=2 window.windowSize=6");
    }
}
