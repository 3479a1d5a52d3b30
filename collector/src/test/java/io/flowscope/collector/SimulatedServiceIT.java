package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.replay.Replay;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service fed by the cluster simulator with a fault, end to end: the anomaly on the console, the API, the
 * live stream and the live page (real chromium); a replay of its journal finds the same anomalies; a restart on
 * the same journal does not announce them again.
 */
class SimulatedServiceIT {
    @TempDir
    Path dir;

    private CollectorConfig config(final String scenario, final Map<String, String> extra) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        o.put("simulate.scenario", scenario);
        o.putAll(extra);
        return CollectorConfig.load(null, Map.of(), o);
    }

    private static String key(final AnomalyEvent e) {
        final var a = e.anomaly();
        return e.type() + " " + Long.toHexString(a.id()) + " " + a.kind() + " " + a.culprit() + " " + a.startNs() + " "
                + a.detectedNs() + " " + a.resolvedNs() + " " + a.severity();
    }

    @Test
    void shouldDetectTheInjectedSlowLinkLiveAndReplayItsJournalToTheSameAnomalies() throws Exception {
        final List<AnomalyEvent> console = new CopyOnWriteArrayList<>();
        final long seconds = 2;
        try (CollectorService s = CollectorService.start(
                config("default", Map.of("simulate.durationSeconds", Long.toString(seconds), "simulate.speed", "1.0")),
                console::add)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> !console.isEmpty());
            final AnomalyEvent first = console.get(0);
            assertThat(first.type()).isEqualTo("opened");
            assertThat(first.anomaly().kind()).isEqualTo(AnomalyKind.SLOW_LINK);
            assertThat(first.anomaly().culprit().rank()).isEqualTo(3);
            assertThat(first.anomaly().culprit().peer()).isEqualTo(4);

            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Http.json(s.url() + "api/anomalies?state=open&rank=3")
                                    .get("count")
                                    .asInt()
                            == 1);
            final JsonNode a =
                    Http.json(s.url() + "api/anomalies?rank=3").get("items").get(0);
            assertThat(a.get("kind").asText()).isEqualTo("SLOW_LINK");
            assertThat(a.get("culprit").get("peer").asInt()).isEqualTo(4);
            assertThat(a.get("evidence").size()).isPositive();
            assertThat(Http.get(s.url() + "metrics").body())
                    .containsPattern("flowscope_anomaly_open\\{[^}]*kind=\"SLOW_LINK\"");

            // the live page draws the heatmap and shows the anomaly with its culprit (real chromium)
            final String dom = HeadlessChromium.checkPage(s, dir, "live-page-simulated-slow-link.png", true);
            assertThat(dom).contains("data-kind=\"SLOW_LINK\"", "rank 3 \u2192 4 (sim-node-0 \u2192 sim-node-1)");

            // run to the end of the simulation
            await().atMost(Duration.ofSeconds(60)).until(() -> s.finished());
        }
        final List<String> live = console.stream()
                .filter(e -> !"updated".equals(e.type()))
                .map(SimulatedServiceIT::key)
                .toList();
        assertThat(live).isNotEmpty();

        final Replay.Result r = Replay.run(
                dir.resolve("journal"), config("", Map.of()), Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        final List<String> replayed = r.events().stream()
                .filter(e -> !"updated".equals(e.type()))
                .map(SimulatedServiceIT::key)
                .toList();
        assertThat(replayed).isEqualTo(live);
        assertThat(r.corruptDocuments()).isZero();

        // a time range before the fault (injected at 100 ms) finds nothing; one over it finds the same opening
        final Replay.Result before = Replay.run(
                dir.resolve("journal"), config("", Map.of()), Long.MIN_VALUE, 90_000_000L, null, null, d -> {});
        assertThat(before.events()).isEmpty();
        final Replay.Result over = Replay.run(
                dir.resolve("journal"), config("", Map.of()), Long.MIN_VALUE, 200_000_000L, null, null, d -> {});
        assertThat(over.events()).isNotEmpty();
        assertThat(key(over.events().get(0))).isEqualTo(live.get(0));

        // and through the command, with a trace export
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final Path trace = dir.resolve("trace.json");
        assertThat(Main.run(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        "replay",
                        dir.resolve("journal").toString(),
                        "--trace",
                        trace.toString(),
                        "--json",
                        "--no-progress"))
                .isZero();
        final String[] lines = out.toString(StandardCharsets.UTF_8).strip().split("\n");
        assertThat(lines).hasSize(live.size());
        assertThat(Json.MAPPER.readTree(lines[0]).get("anomaly").get("kind").asText())
                .isEqualTo("SLOW_LINK");
        final JsonNode t = Json.MAPPER.readTree(Files.readString(trace));
        assertThat(t.get("traceEvents").size()).isGreaterThan(10);
        boolean anomalySpan = false;
        for (final JsonNode e : t.get("traceEvents")) {
            anomalySpan |=
                    "X".equals(e.path("ph").asText()) && e.path("name").asText().startsWith("SLOW_LINK");
        }
        assertThat(anomalySpan).isTrue();
    }

    /**
     * The journal's end marker: the live run ended its last period when its input ended; a reader that follows the
     * journal and never sees its end (a fleet agent) derives that period from the marker, exactly as a replay that
     * ends the period at the journal's end does.
     */
    @Test
    void shouldLetAJournalReaderDeriveTheLiveRunsLastPeriodFromTheEndMarker() throws Exception {
        final CollectorConfig config = config("default", Map.of("simulate.durationSeconds", "1"));
        try (CollectorService s = CollectorService.start(config, e -> {})) {
            await().atMost(Duration.ofSeconds(60)).until(() -> s.finished());
        }
        final long[] replayed = {0};
        Replay.run(
                dir.resolve("journal"),
                config,
                Long.MIN_VALUE,
                Long.MAX_VALUE,
                x -> replayed[0]++,
                x -> replayed[0]++,
                n -> {});
        final long[] following = {0, 0}; // summaries, end markers
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        p.tap(x -> following[0]++, x -> following[0]++);
        try (var r = new io.flowscope.collector.journal.JournalReader(dir.resolve("journal"))) {
            final var meta = new io.flowscope.collector.journal.JournalReader.Meta() {
                @Override
                public void onEnd() {
                    following[1]++;
                    p.finish();
                }
            };
            while (r.read(p, meta, 1) > 0) {
                p.endBatch(0);
            }
        }
        final long followed = following[0];
        assertThat(following[1]).isEqualTo(1);
        assertThat(following[0]).isEqualTo(replayed[0]);
        // and the marker is what made the difference: the last period's summaries come only from it
        final long[] blind = {0};
        final Pipeline q = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        q.tap(x -> blind[0]++, x -> blind[0]++);
        try (var r = new io.flowscope.collector.journal.JournalReader(dir.resolve("journal"))) {
            while (r.read(q, new io.flowscope.collector.journal.JournalReader.Meta() {}, 1) > 0) {
                q.endBatch(0);
            }
        }
        assertThat(blind[0]).isLessThan(followed);
    }

    @Test
    void shouldNotAnnounceAnAnomalyAgainAfterARestartOnTheSameJournal() throws Exception {
        final List<AnomalyEvent> first = new CopyOnWriteArrayList<>();
        try (CollectorService s =
                CollectorService.start(config("default", Map.of("simulate.durationSeconds", "1")), first::add)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> s.finished());
        }
        assertThat(first).filteredOn(e -> e.type().equals("opened")).hasSize(1);

        // restarted on the same journal, fed by (empty) rings: the state comes back, the anomaly is not announced
        final List<AnomalyEvent> second = new CopyOnWriteArrayList<>();
        Files.createDirectories(dir.resolve("rings"));
        try (CollectorService s = CollectorService.start(config("", Map.of()), second::add)) {
            final JsonNode list = Http.json(s.url() + "api/anomalies");
            assertThat(list.get("count").asInt()).isEqualTo(1);
            assertThat(list.get("items").get(0).get("id").asText())
                    .isEqualTo(FlowRow.hex(first.get(0).anomaly().id()));
            assertThat(Http.json(s.url() + "api/health")
                            .get("journal")
                            .get("recoveredEntries")
                            .asLong())
                    .isPositive();
        }
        assertThat(second).isEmpty();
        // the journal holds one announcement
        final long[] announced = {0};
        try (var r = new io.flowscope.collector.journal.JournalReader(dir.resolve("journal"))) {
            while (r.read(
                            new NoopListener(),
                            new io.flowscope.collector.journal.JournalReader.Meta() {
                                @Override
                                public void onAnomaly(final long id, final boolean opened, final String summary) {
                                    announced[0] += opened ? 1 : 0;
                                }
                            },
                            1000)
                    > 0) {
                // read
            }
        }
        assertThat(announced[0]).isEqualTo(1);
    }

    @Test
    void shouldResumeAfterTheServiceProcessIsKilledWithoutAnnouncingItsAnomalyAgain() throws Exception {
        // a separate JVM runs `flowscope simulate`; SIGKILL once it printed the anomaly
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("-Dchronicle.")) {
                cmd.add(a);
            }
        }
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "simulate",
                "--scenario",
                "default",
                "--port",
                "0",
                "--journal-dir",
                dir.resolve("journal").toString()));
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        final List<String> printed = new CopyOnWriteArrayList<>();
        final Thread reader = new Thread(() -> {
            try (var r = new java.io.BufferedReader(
                    new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    printed.add(line);
                }
            } catch (final java.io.IOException ignored) {
                // killed
            }
        });
        reader.start();
        try {
            // killed right after the announcement: what was announced must already be in the journal
            await().atMost(Duration.ofSeconds(120)).until(() -> printed.stream().anyMatch(l -> l.startsWith("OPENED")));
        } finally {
            p.destroyForcibly();
            p.waitFor();
            reader.join(10_000);
        }
        assertThat(printed).filteredOn(l -> l.startsWith("OPENED")).hasSize(1);

        final List<AnomalyEvent> second = new CopyOnWriteArrayList<>();
        Files.createDirectories(dir.resolve("rings"));
        try (CollectorService s = CollectorService.start(config("", Map.of()), second::add)) {
            final JsonNode list = Http.json(s.url() + "api/anomalies?state=open");
            assertThat(list.get("count").asInt()).isEqualTo(1);
            assertThat(list.get("items").get(0).get("kind").asText()).isEqualTo("SLOW_LINK");
            assertThat(Http.json(s.url() + "api/health")
                            .get("journal")
                            .get("recoveredEntries")
                            .asLong())
                    .isPositive();
        }
        assertThat(second).isEmpty();
    }

    @Test
    void shouldRunTheSimulateCommandWithAFaultFromItsFlagsAndPrintTheDetection() {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream()),
                "simulate",
                "--scenario",
                "clean-ring-2x4",
                "--fault",
                "hang:rank=5,at=50ms",
                "--set",
                "simulate.durationSeconds=1",
                "--port",
                "0",
                "--no-journal");
        assertThat(rc).isZero();
        final String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("flowscope: serving http://127.0.0.1:", "simulator clean-ring-2x4");
        // A stall warns at 500 ms and pages at 10 s: one simulated second shows the warning.
        assertThat(text).containsPattern("OPENED +HANG +WARNING .*stalled: rank 5");
    }

    @Test
    void shouldPushTheAnomalyOnTheLiveStream() throws Exception {
        // a quarter of real time: the fault (100 ms simulated) shows ~0.4 s after the start
        try (CollectorService s = CollectorService.start(
                config(
                        "default",
                        Map.of("simulate.speed", "0.25", "simulate.durationSeconds", "2", "journal.enabled", "false")),
                e -> {})) {
            final var client = java.net.http.HttpClient.newHttpClient();
            final var response = client.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(s.url() + "api/stream"))
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofLines());
            assertThat(response.headers().firstValue("Content-Type")).hasValue("text/event-stream");
            final java.util.Iterator<String> lines = response.body().iterator();
            String event = null;
            JsonNode anomaly = null;
            boolean snapshot = false;
            final long giveUp = System.nanoTime() + 120_000_000_000L; // snapshots keep coming: never blocks long
            while (anomaly == null && System.nanoTime() < giveUp && lines.hasNext()) {
                final String line = lines.next();
                if (line.startsWith("event: ")) {
                    event = line.substring(7);
                } else if (line.startsWith("data: ")) {
                    final JsonNode data = Json.MAPPER.readTree(line.substring(6));
                    if ("snapshot".equals(event)) {
                        snapshot = true;
                        assertThat(data.has("heatmaps")).isTrue();
                    } else if ("anomaly".equals(event)) {
                        anomaly = data;
                    }
                }
            }
            assertThat(snapshot).isTrue();
            assertThat(anomaly).isNotNull();
            assertThat(anomaly.get("type").asText()).isEqualTo("opened");
            assertThat(anomaly.get("anomaly").get("kind").asText()).isEqualTo("SLOW_LINK");
            assertThat(anomaly.get("anomaly").get("culprit").get("rank").asInt())
                    .isEqualTo(3);
            response.body().close();
        }
    }

    @Test
    void shouldRefuseAnUnknownScenarioClearly() {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true),
                "simulate",
                "--scenario",
                "nodes=two",
                "--port",
                "0",
                "--no-journal");
        assertThat(rc).isEqualTo(Main.EXIT_CONFIG);
        assertThat(err.toString()).contains("simulate.scenario = 'nodes=two'");
    }

    @Test
    void shouldSayWhenTheSimulatorCannotKeepItsClockAndWhenItCan() throws Exception {
        // 4 × 8 GPUs, 4 channels, 16 MiB at 50 × real time: far beyond one core (at 1 × it made 0.16 s of events
        // in 20 s of wall time on this VM).
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream()),
                "simulate",
                "--scenario",
                "nodes=4,gpus=8,channels=4,size=16M,seed=3",
                "--speed",
                "50",
                "--duration",
                "4",
                "--port",
                "0",
                "--no-journal",
                "--quiet");
        assertThat(rc).isZero();
        final String console = out.toString(StandardCharsets.UTF_8);
        assertThat(console)
                .containsPattern(
                        "flowscope: health DEGRADED: the simulator falls behind its clock .*" + "\\([0-9]+ ms behind");
        assertThat(console.lines().filter(l -> l.contains("health DEGRADED")))
                .as("said once, not every poll")
                .hasSizeLessThanOrEqualTo(2);

        try (CollectorService s = CollectorService.start(
                config(
                        "nodes=4,gpus=8,channels=4,size=16M,seed=3",
                        Map.of("simulate.speed", "50", "journal.enabled", "false")),
                e -> {})) {
            await().atMost(Duration.ofSeconds(30)).until(() -> "DEGRADED"
                    .equals(Http.json(s.url() + "api/health").get("status").asText()));
            final JsonNode h = Http.json(s.url() + "api/health");
            assertThat(h.get("simulator").get("keepingUp").asBoolean()).isFalse();
            assertThat(h.get("simulator").get("behindMs").asLong()).isGreaterThan(250);
            assertThat(h.get("reasons").get(0).asText()).contains("falls behind its clock");
        }

        // A 2 × 4 cluster at a twentieth of real time keeps up.
        try (CollectorService s = CollectorService.start(
                config("clean-ring-2x4", Map.of("simulate.speed", "0.05", "journal.enabled", "false")), e -> {})) {
            await().atMost(Duration.ofSeconds(30)).until(() -> Http.json(s.url() + "api/health")
                    .get("simulator")
                    .get("achievedSpeed")
                    .isNumber());
            final JsonNode h = Http.json(s.url() + "api/health");
            assertThat(h.get("status").asText()).isEqualTo("UP");
            assertThat(h.get("simulator").get("keepingUp").asBoolean()).isTrue();
            assertThat(h.get("reasons")).isEmpty();
        }
    }
}
