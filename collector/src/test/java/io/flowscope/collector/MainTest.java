package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line: complete help for every command, clear configuration errors, inspect of a real ring. */
class MainTest {
    @TempDir
    Path dir;

    private record Result(int rc, String out, String err) {}

    private static Result run(final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                args);
        return new Result(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldPrintCompleteHelpForEveryCommand() {
        final Map<String, String[]> expected = Map.of(
                "", new String[] {"run", "simulate", "replay", "inspect"},
                "run",
                        new String[] {
                            "--config",
                            "--set",
                            "--port",
                            "--host",
                            "--ring-dir",
                            "--journal-dir",
                            "--no-journal",
                            "--duration",
                            "--quiet",
                            "--simulate"
                        },
                "simulate", new String[] {"--scenario", "--fault", "--speed", "--port", "--journal-dir", "--duration"},
                "replay", new String[] {"JOURNAL", "--from", "--to", "--json", "--trace", "--no-progress", "--config"},
                "inspect", new String[] {"RING|JOURNAL", "--limit"});
        for (final Map.Entry<String, String[]> e : expected.entrySet()) {
            final Result r = e.getKey().isEmpty() ? run("--help") : run(e.getKey(), "--help");
            assertThat(r.rc).as(e.getKey()).isZero();
            assertThat(r.out).as(e.getKey()).contains(e.getValue()).contains("--help", "--version");
            final String[] lines = r.out.split("\n");
            for (int i = 0; i < lines.length; i++) {
                if (lines[i].matches("^ {1,8}(-\\w, )?--\\S.*")) {
                    // every option has a description: after its name, or on the next line when the name is long
                    final boolean sameLine = lines[i].trim().split("\\s{2,}").length > 1;
                    final boolean nextLine = i + 1 < lines.length && lines[i + 1].matches("^ {20,}\\S.*");
                    assertThat(sameLine || nextLine).as(lines[i]).isTrue();
                }
            }
        }
    }

    @Test
    void shouldRefuseABadConfigurationWithTheKeyTheSourceAndWhatIsExpected() throws Exception {
        final Path cfg = dir.resolve("c.yaml");
        Files.writeString(cfg, "http:\n  port: seventy\n");
        Result r = run("run", "--config", cfg.toString());
        assertThat(r.rc).isEqualTo(Main.EXIT_CONFIG);
        assertThat(r.err).contains("http.port = 'seventy' (from file " + cfg + "): expected an integer in 0..65535");

        Files.writeString(cfg, "jornal:\n  dir: /tmp/x\n");
        r = run("run", "--config", cfg.toString());
        assertThat(r.rc).isEqualTo(Main.EXIT_CONFIG);
        assertThat(r.err).contains("unknown key 'jornal.dir'", "journal.dir");

        r = run("run", "--set", "journal.rollCycle=HOURLYISH");
        assertThat(r.rc).isEqualTo(Main.EXIT_CONFIG);
        assertThat(r.err).contains("journal.rollCycle = 'HOURLYISH' (from the command line): expected one of");
    }

    @Test
    void shouldLayerDefaultsFileEnvironmentAndFlags() throws Exception {
        final Path cfg = dir.resolve("c.json");
        Files.writeString(cfg, "{\"http\": {\"port\": 8081, \"host\": \"127.0.0.1\"}, \"window.periodMs\": 5}");
        final CollectorConfig c = CollectorConfig.load(
                cfg,
                Map.of("FLOWSCOPE_HTTP_PORT", "9090", "FLOWSCOPE_JOURNAL_MAX_BYTES", "12345"),
                Map.of("window.periodMs", "7"));
        assertThat(c.httpPort()).isEqualTo(9090);
        assertThat(c.journalMaxBytes()).isEqualTo(12345);
        assertThat(c.windowPeriodMs()).isEqualTo(7);
        assertThat(c.ringDir()).isEqualTo(Path.of("/dev/shm/flowscope"));
        assertThat(CollectorConfig.envName("journal.maxBytes")).isEqualTo("FLOWSCOPE_JOURNAL_MAX_BYTES");
        final CollectorConfig.ConfigException e = org.assertj.core.api.Assertions.catchThrowableOfType(
                () -> CollectorConfig.load(null, Map.of("FLOWSCOPE_RING_SCAN_MS", "-1"), Map.of()),
                CollectorConfig.ConfigException.class);
        assertThat(e).hasMessageContaining("ring.scanMs = '-1' (from env FLOWSCOPE_RING_SCAN_MS)");
    }

    @Test
    void shouldDocumentEveryConfigurationKeyWithItsDefaultAndEnvironmentName() throws Exception {
        final String readme = Files.readString(Path.of("README.md"));
        for (final Map.Entry<String, String> e : CollectorConfig.DEFAULTS.entrySet()) {
            if (e.getKey().startsWith("sinks.webhooks.") && !e.getKey().startsWith("sinks.webhooks.0.")) {
                continue; // documented once, for index 0
            }
            if (e.getKey().startsWith("fleet.")) {
                continue; // the fleet section's own table (FleetConfigTest: agentId defaults to a host hash)
            }
            final String dflt = e.getValue().isEmpty() ? "(off)" : "`" + e.getValue() + "`";
            assertThat(readme)
                    .contains(
                            "| `" + e.getKey() + "` | " + dflt + " | `" + CollectorConfig.envName(e.getKey()) + "` |");
        }
    }

    @Test
    void shouldInspectARealRingAsJsonLines() throws Exception {
        final Path ring = dir.resolve("flowscope-1-0.ring");
        try (RingTraffic t = new RingTraffic(ring, 4_100_001, "node-x", 0xABCL, 2, 4)) {
            t.sendOp(3, 1, 2, 4096, 1_000_000L, 10_000);
        }
        final Result r = run("inspect", ring.toString());
        assertThat(r.rc).isZero();
        final String[] lines = r.out.strip().split("\n");
        assertThat(lines).hasSize(2 + 2 * 5);
        final JsonNode first = Json.MAPPER.readTree(lines[0]);
        assertThat(first.get("kind").asText()).isEqualTo("ProxyOp");
        assertThat(first.get("rank").asInt()).isEqualTo(2);

        final Result missing = run("inspect", dir.resolve("nope").toString());
        assertThat(missing.rc).isEqualTo(Main.EXIT_INPUT);
        assertThat(missing.err).contains("no such ring file or journal directory");
    }

    @Test
    void shouldReadTheDocumentedFaultFlagAndTheSpecForm() {
        assertThat(Main.Simulate.faultSpec("slow-link:rank=3,peer=4,fraction=0.5,at=200ms"))
                .isEqualTo("slow-link,rank=3,peer=4,fraction=0.5,at=200ms");
        assertThat(Main.Simulate.faultSpec("hang,rank=5,at=50ms")).isEqualTo("hang,rank=5,at=50ms");
        assertThat(Main.Simulate.faultSpec("hang")).isEqualTo("hang");
        // the spec the service is given parses: the README's example
        io.flowscope.sim.Scenario.parse(
                "nodes=4,gpus=8,fault=" + Main.Simulate.faultSpec("slow-link:rank=3,peer=4,fraction=0.5,at=200ms"));
    }

    @Test
    void shouldRefuseAnEmptyTimeRange() {
        final Path trace = Path.of("../testdata/traces/socket-clean-1m/events.jsonl.gz");
        for (final String command : new String[] {"replay", "inspect"}) {
            final Result r = run(command, trace.toString(), "--from", "10", "--to", "5");
            assertThat(r.rc).as(command).isEqualTo(Main.EXIT_CONFIG);
            assertThat(r.err).as(command).contains("--from 10 is after --to 5");
            assertThat(r.out).as(command).isEmpty();
        }
    }

    @Test
    void shouldStopInspectingWhenItsReaderGoesAway() {
        // `inspect TRACE | head`: the pipe breaks after a few lines; inspect must stop, not decode the rest.
        final long[] attempts = new long[1];
        final java.io.OutputStream brokenPipe = new java.io.OutputStream() {
            private long written;

            @Override
            public void write(final int b) throws java.io.IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(final byte[] b, final int off, final int len) throws java.io.IOException {
                attempts[0]++;
                written += len;
                if (written > 16_384) {
                    throw new java.io.IOException("Broken pipe");
                }
            }
        };
        final int rc = Main.run(
                new PrintStream(brokenPipe, false, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                "inspect",
                "../testdata/traces/socket-clean-1m/events.jsonl.gz");

        assertThat(rc).isZero();
        // The trace has ~1.1 M lines (~2.2 M writes); after the break at most one more batch (~2,000 lines).
        assertThat(attempts[0]).isLessThan(10_000);
    }
}
