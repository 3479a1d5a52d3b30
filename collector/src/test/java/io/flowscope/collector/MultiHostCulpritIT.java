package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.RingEventSource;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.replay.Replay;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.webhook.WebhookConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A culprit an operator can act on (issue #15, acceptance 3), with real rings: 4 producer processes, each its own
 * host ({@code unshare --uts}, hostname {@code node-<rank>}) driving the real plugin with NCCL's callback sequence
 * ({@code fs_rank}) on a GPU of its own: there is no GPU here, so each loads the tests' stand-in CUDA driver
 * ({@code fakecuda/libcuda.so.1}, by {@code LD_PRELOAD}) that makes device {@code 3 - rank} current, whose bus id
 * the plugin reads into its communicator entry as it does from the real driver. Faults as in
 * {@link MultiHostHarnessIT}'s 4-host run (rank 1 late, link 2 → 3 slow, rank 3 stopped; which of them the
 * detectors name, and how soon, is that test's to check). Every anomaly whose culprit is a rank opens with that
 * rank's host, pid, rank and GPU ({@code host node-3 pid 4242 rank 3 GPU 0 (0000:18:00.0): ...}; a link: its
 * sending rank), no summary names a host by its hex id, the API's culprit carries them as fields, and a replay of
 * the service's journal names every culprit with the same words. The same run checks every other surface (issue
 * #18 item 5): the API's rows, /metrics' labels, InfluxDB's tags and fields (a real influxd) and the Alertmanager
 * payload name the host by its hostname and a rank by its pid and GPU, the hex id only beside them. Needs root for
 * {@code unshare --uts}, like {@link MultiHostHarnessIT}.
 */
class MultiHostCulpritIT {
    private static final int RANKS = 4;
    private static final long LEAD_NS = 1_500_000_000L;
    private static final Pattern PRODUCER = Pattern.compile("fs_rank: rank=(\\d+) host=(\\S+) pid=(\\d+) ");

    private static Path fsRank;
    private static Path plugin;
    private static Path fakeCuda;

    @TempDir
    Path dir;

    private Path ringDir;

    @BeforeAll
    static void findProducerAndDriver() throws Exception {
        final Path nativeDir = Path.of(System.getProperty("flowscope.native.dir", "../profiler-plugin/build"));
        fsRank = nativeDir.resolve("fs_rank").toAbsolutePath();
        plugin = nativeDir.resolve("libnccl-profiler-flowscope.so").toAbsolutePath();
        fakeCuda = nativeDir.resolve("fakecuda/libcuda.so.1").toAbsolutePath();
        final boolean present =
                Files.isExecutable(fsRank) && Files.isRegularFile(plugin) && Files.isRegularFile(fakeCuda);
        if (Boolean.getBoolean("flowscope.harness.optional")) {
            Assumptions.assumeTrue(present, "no fs_rank in " + nativeDir);
        }
        assertThat(present)
                .as("%s, %s and %s (built by make all)", fsRank, plugin, fakeCuda)
                .isTrue();
        final Process p = new ProcessBuilder(
                        "unshare", "--uts", "sh", "-c", "hostname \"$0\" && hostname", "fs-uts-probe")
                .redirectErrorStream(true)
                .start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 && out.equals("fs-uts-probe"))
                .as("`unshare --uts` with its own hostname (needs root / CAP_SYS_ADMIN): %s", out)
                .isTrue();
    }

    @AfterEach
    void removeRings() throws IOException {
        if (ringDir != null && Files.isDirectory(ringDir)) {
            try (var s = Files.list(ringDir)) {
                for (final Path p : (Iterable<Path>) s::iterator) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(ringDir);
        }
    }

    /** The GPU each rank's process has current: not its rank, so that a summary naming it proves where it came from. */
    private static int gpuOf(final int rank) {
        return RANKS - 1 - rank;
    }

    private static String busIdOf(final int gpu) {
        return String.format("0000:%02X:00.0", 0x18 + gpu); // the stand-in driver's (fs_fake_cuda.h)
    }

    /** The stand-in driver's UUID of a device (fs_fake_cuda.h), as nvidia-smi prints it. */
    private static String uuidOf(final int gpu) {
        return String.format("GPU-f5ca0000-0000-4000-8000-0000000000%02x", gpu);
    }

    @Test
    void everyCulpritRankIsNamedByItsHostPidRankAndGpuLiveAndInTheReplayOfTheJournal() throws Exception {
        final Path shm = Path.of("/dev/shm");
        ringDir = Files.isDirectory(shm) && Files.isWritable(shm)
                ? shm.resolve("flowscope-culprit-" + UUID.randomUUID())
                : dir.resolve("rings");
        Files.createDirectories(ringDir);
        final Path runDir = Files.createTempDirectory(dir, "run-");
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", ringDir.toString());
        o.put("ring.scanMs", "20");
        o.put("journal.dir", runDir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        final InfluxServer influx = new InfluxServer().start();
        final WebhookReceiver alertmanager = new WebhookReceiver(WebhookConfig.DEFAULT_SIGNATURE_HEADER);
        o.put("sinks.influxdb.enabled", "true");
        o.put("sinks.influxdb.url", influx.url().toString());
        o.put("sinks.influxdb.database", "fs_names");
        o.put("sinks.webhooks.0.url", alertmanager.url());
        o.put("sinks.webhooks.0.format", "alertmanager");
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), o);
        final List<AnomalyEvent> events = Collections.synchronizedList(new ArrayList<>());
        final List<Process> procs = new ArrayList<>();
        final Map<Integer, Integer> pids = new LinkedHashMap<>();
        final List<Map<String, Object>> apiCulprits = new ArrayList<>();
        final List<JsonNode> apiRows = new ArrayList<>();
        String metrics = "";
        try (influx;
                alertmanager) {
            try (CollectorService s = CollectorService.start(config, events::add)) {
                final long t0 = System.nanoTime() + LEAD_NS;
                for (int r = 0; r < RANKS; r++) {
                    final ProcessBuilder pb = new ProcessBuilder(
                                    "unshare",
                                    "--uts",
                                    "sh",
                                    "-c",
                                    "hostname \"$0\" && exec \"$@\"",
                                    "node-" + r,
                                    fsRank.toString(),
                                    "--plugin",
                                    plugin.toString(),
                                    "--rank",
                                    "" + r,
                                    "--nranks",
                                    "" + RANKS,
                                    "--start-ns",
                                    "" + t0,
                                    "--ops",
                                    "800",
                                    "--period-us",
                                    "4000",
                                    "--expect-hostname",
                                    "node-" + r,
                                    "--rt-priority",
                                    "10",
                                    "--ns-per-byte",
                                    "0.4",
                                    "--channels",
                                    "2",
                                    "--late-rank",
                                    "1",
                                    "--late-us",
                                    "1000",
                                    "--late-from",
                                    "150",
                                    "--late-to",
                                    "250",
                                    "--slow-rank",
                                    "2",
                                    "--slow-factor",
                                    "2.5",
                                    "--slow-from",
                                    "350",
                                    "--slow-to",
                                    "550",
                                    "--hang-rank",
                                    "3",
                                    "--hang-at",
                                    "700",
                                    "--hang-ms",
                                    "1500")
                            .redirectOutput(runDir.resolve("rank-" + r + ".out").toFile())
                            .redirectError(runDir.resolve("rank-" + r + ".err").toFile());
                    pb.environment().put("FLOWSCOPE_RING_DIR", ringDir.toString());
                    pb.environment().put("FLOWSCOPE_RING_SIZE", "16M");
                    pb.environment().put("FLOWSCOPE_RING_LANES", "1");
                    pb.environment().put("LD_PRELOAD", fakeCuda.toString());
                    pb.environment().put("FS_FAKE_CUDA_DEVICE", "" + gpuOf(r));
                    procs.add(pb.start());
                }
                for (int r = 0; r < RANKS; r++) {
                    assertThat(procs.get(r).waitFor(60, TimeUnit.SECONDS))
                            .as("rank %d ends", r)
                            .isTrue();
                    final String out = Files.readString(runDir.resolve("rank-" + r + ".out"));
                    assertThat(procs.get(r).exitValue())
                            .as("rank %d: %s%s", r, out, Files.readString(runDir.resolve("rank-" + r + ".err")))
                            .isZero();
                    final Matcher m = PRODUCER.matcher(out);
                    assertThat(m.find())
                            .as("fs_rank's summary line in: %s", out)
                            .isTrue();
                    assertThat(m.group(2)).isEqualTo("node-" + r);
                    pids.put(r, Integer.parseInt(m.group(3)));
                }
                Thread.sleep(1000); // drained, a few more batches and snapshots
                for (final JsonNodeMap a : JsonNodeMap.anomalies(s.url())) {
                    apiCulprits.add(a.culprit());
                }
                for (final String route : List.of("api/flows", "api/links", "api/ranks", "api/comms")) {
                    final JsonNode items =
                            Http.json(s.url() + route + "?limit=100000").path("items");
                    assertThat(items.size()).as(route).isPositive();
                    items.forEach(apiRows::add);
                }
                // the page's routes: every heatmap link and every series names its sending rank's host
                final List<JsonNode> linkRows = new ArrayList<>();
                Http.json(s.url() + "api/heatmap").path("heatmaps").forEach(h -> h.path("links")
                        .forEach(linkRows::add));
                Http.json(s.url() + "api/series").path("items").forEach(linkRows::add);
                assertThat(linkRows).as("heatmap links and series").isNotEmpty().allSatisfy(l -> {
                    final int rank = l.path("rank").asInt();
                    assertThat(l.path("hostname").asText()).as("%s", l).isEqualTo("node-" + rank);
                    assertThat(l.path("host").asText()).isEqualTo(FlowRow.hex(RingEventSource.hostId("node-" + rank)));
                });
                metrics = Http.get(s.url() + "metrics").body();
                s.sinks().flush(Duration.ofSeconds(30));
                namedInInfluxAndAlerts(influx, alertmanager, pids);
            }
        } finally {
            procs.forEach(Process::destroyForcibly);
        }
        namedInTheApiAndMetrics(apiRows, metrics, pids);

        final List<AnomalyEvent> published;
        synchronized (events) {
            published = List.copyOf(events);
        }
        final Map<Long, String> live = new LinkedHashMap<>();
        final List<String> problems = new ArrayList<>();
        int rankCulprits = 0;
        for (final AnomalyEvent e : published) {
            final Anomaly a = e.anomaly();
            if (e.type().equals("opened")) {
                live.put(a.id(), a.summary());
            }
            for (int r = 0; r < RANKS; r++) {
                if (a.summary().contains(Long.toHexString(RingEventSource.hostId("node-" + r)))) {
                    problems.add("names host node-" + r + " by its id: " + a.summary());
                }
            }
            final int rank = a.culprit().rank();
            if (rank < 0 || a.culprit().commHash() == 0) {
                continue;
            }
            final String words = "host node-" + rank + " pid " + pids.get(rank) + " rank " + rank + " GPU "
                    + gpuOf(rank) + " (" + busIdOf(gpuOf(rank)) + "): ";
            if (!a.summary().startsWith(words)) {
                problems.add(e.type() + " " + a.kind() + " of rank " + rank + " does not open with '" + words + "': "
                        + a.summary());
            }
            rankCulprits++;
        }
        assertThat(problems).isEmpty();
        // which faults the detectors name is MultiHostHarnessIT's to check; here: whatever they name is named so
        assertThat(rankCulprits)
                .as("anomalies with a rank as culprit; published: %s", live.values())
                .isPositive();
        final List<Map<String, Object>> rankApiCulprits = apiCulprits.stream()
                .filter(c -> ((Number) c.get("rank")).intValue() >= 0)
                .toList();
        assertThat(rankApiCulprits)
                .as("/api/anomalies culprits that are ranks")
                .isNotEmpty()
                .allSatisfy(c -> {
                    final int rank = ((Number) c.get("rank")).intValue();
                    assertThat(c)
                            .containsEntry("hostname", "node-" + rank)
                            .containsEntry("pid", pids.get(rank))
                            .containsEntry("gpu", gpuOf(rank))
                            .containsEntry("gpuBusId", busIdOf(gpuOf(rank)))
                            .containsEntry("gpuUuid", uuidOf(gpuOf(rank)))
                            .containsEntry("host", FlowRow.hex(RingEventSource.hostId("node-" + rank)));
                });

        final Replay.Result replay =
                Replay.run(runDir.resolve("journal"), config, Long.MIN_VALUE, Long.MAX_VALUE, null, null, n -> {});
        final Map<Long, String> replayed = new LinkedHashMap<>();
        for (final AnomalyEvent e : replay.events()) {
            if (e.type().equals("opened")) {
                replayed.put(e.anomaly().id(), e.anomaly().summary());
            }
        }
        assertThat(replayed).as("the replay's anomalies, by id").containsAllEntriesOf(live);
        // the journal carries each rank's GPU UUID (entry type 28): the replay knows it as the live run did
        final List<AnomalyEvent> replayedRanks = replay.events().stream()
                .filter(e -> e.anomaly().culprit().rank() >= 0
                        && e.anomaly().culprit().commHash() != 0)
                .toList();
        assertThat(replayedRanks).isNotEmpty().allSatisfy(e -> assertThat(
                        e.culprit().gpuUuid())
                .isEqualTo(uuidOf(gpuOf(e.anomaly().culprit().rank()))));
    }

    /**
     * Issue #18 item 5: every row of the API routes is named by its host (and a rank's row by its pid and GPU) beside
     * the hex id; /metrics labels hosts by name and ranks by GPU and bus id, never a host by its hex id.
     */
    private static void namedInTheApiAndMetrics(
            final List<JsonNode> rows, final String metrics, final Map<Integer, Integer> pids) {
        assertThat(rows).allSatisfy(row -> {
            final String host = row.path("host").asText();
            final String name = row.path("hostname").asText();
            assertThat(name).as("hostname of %s", row).matches("node-[0-3]");
            assertThat(host).isEqualTo(FlowRow.hex(RingEventSource.hostId(name)));
            final int rank = row.path("rank").asInt();
            if (rank >= 0) {
                assertThat(name).as("a rank's host: %s", row).isEqualTo("node-" + rank);
                assertThat(row.path("pid").asInt()).as("pid: %s", row).isEqualTo(pids.get(rank));
                assertThat(row.path("gpu").asInt(-1)).as("gpu: %s", row).isEqualTo(gpuOf(rank));
                assertThat(row.path("gpuBusId").asText()).isEqualTo(busIdOf(gpuOf(rank)));
                assertThat(row.path("gpuUuid").asText()).isEqualTo(uuidOf(gpuOf(rank)));
            }
        });
        final List<String> linkLines = metrics.lines()
                .filter(l -> l.startsWith("flowscope_link_bytes_total{"))
                .toList();
        assertThat(linkLines).isNotEmpty().allSatisfy(l -> {
            final Matcher m =
                    Pattern.compile("host=\"node-(\\d)\".*rank=\"(\\d)\"").matcher(l);
            assertThat(m.find()).as("host by name: %s", l).isTrue();
            final int rank = Integer.parseInt(m.group(2));
            assertThat(m.group(1)).isEqualTo("" + rank);
            assertThat(l)
                    .contains("gpu=\"" + gpuOf(rank) + "\"")
                    .contains("pci_bus_id=\"" + busIdOf(gpuOf(rank)) + "\"")
                    .contains("gpu_uuid=\"" + uuidOf(gpuOf(rank)) + "\"");
        });
        assertThat(metrics).doesNotContainPattern("host=\"(0x)?[0-9a-f]{12,16}\"");
    }

    /**
     * Issue #18 item 5: InfluxDB's {@code host} tag is the hostname and a rank's {@code gpu} tag its GPU; an anomaly
     * point carries its rank's pid and bus id and the hex host id beside; Alertmanager's {@code host} label is the
     * hostname, the pid, GPU and bus id are annotations, the hex id only the {@code host_id} annotation.
     */
    private static void namedInInfluxAndAlerts(
            final InfluxServer influx, final WebhookReceiver alertmanager, final Map<Integer, Integer> pids)
            throws Exception {
        final java.util.Set<String> hostTags = new java.util.TreeSet<>();
        influx.query("fs_names", "SHOW TAG VALUES FROM \"flow\" WITH KEY = \"host\"")
                .path("results")
                .path(0)
                .path("series")
                .forEach(series -> series.path("values")
                        .forEach(v -> hostTags.add(v.path(1).asText())));
        assertThat(hostTags).containsExactly("node-0", "node-1", "node-2", "node-3");
        for (int r = 0; r < RANKS; r++) {
            final String where = " WHERE \"host\" = 'node-" + r + "' AND \"rank\" = '" + r + "'";
            assertThat(influx.count(
                            "fs_names",
                            "SELECT count(\"bytes\") FROM \"flow\"" + where + " AND \"gpu\" = '" + gpuOf(r) + "'"))
                    .as("rank %d's flows tagged gpu %d", r, gpuOf(r))
                    .isPositive();
            assertThat(influx.count(
                            "fs_names",
                            "SELECT count(\"bytes\") FROM \"flow\"" + where + " AND \"gpu\" != '" + gpuOf(r) + "'"))
                    .as("rank %d's flows under another gpu tag", r)
                    .isZero();
        }
        final List<JsonNode> anomalies = influx.rows(
                "fs_names",
                "SELECT \"host\", \"rank\", \"gpu\", \"pid\", \"pci_bus_id\", \"host_id\", \"gpu_uuid\" FROM \"anomaly\" "
                        + "WHERE \"rank\" != ''");
        assertThat(anomalies).as("anomaly points of ranks").isNotEmpty().allSatisfy(row -> {
            final int rank = row.path(2).asInt();
            assertThat(row.path(1).asText()).isEqualTo("node-" + rank);
            assertThat(row.path(3).asText()).isEqualTo("" + gpuOf(rank));
            assertThat(row.path(4).asInt()).isEqualTo(pids.get(rank));
            assertThat(row.path(5).asText()).isEqualTo(busIdOf(gpuOf(rank)));
            assertThat(row.path(6).asText()).isEqualTo(FlowRow.hex(RingEventSource.hostId("node-" + rank)));
            assertThat(row.path(7).asText()).isEqualTo(uuidOf(gpuOf(rank)));
        });

        final List<JsonNode> alerts = new ArrayList<>();
        for (final WebhookReceiver.Post p : alertmanager.posts) {
            Json.MAPPER.readTree(p.body()).forEach(alerts::add);
        }
        final List<JsonNode> rankAlerts =
                alerts.stream().filter(a -> a.path("labels").has("rank")).toList();
        assertThat(rankAlerts).as("Alertmanager alerts of ranks").isNotEmpty().allSatisfy(a -> {
            final int rank = a.path("labels").path("rank").asInt();
            assertThat(a.path("labels").path("host").asText()).isEqualTo("node-" + rank);
            final JsonNode ann = a.path("annotations");
            assertThat(ann.path("pid").asText()).isEqualTo("" + pids.get(rank));
            assertThat(ann.path("gpu").asText()).isEqualTo("" + gpuOf(rank));
            assertThat(ann.path("pci_bus_id").asText()).isEqualTo(busIdOf(gpuOf(rank)));
            assertThat(ann.path("gpu_uuid").asText()).isEqualTo(uuidOf(gpuOf(rank)));
            assertThat(ann.path("host_id").asText()).isEqualTo(FlowRow.hex(RingEventSource.hostId("node-" + rank)));
        });
    }

    /** An anomaly of {@code /api/anomalies}, as its JSON. */
    private record JsonNodeMap(Map<String, Object> fields) {
        @SuppressWarnings("unchecked")
        static List<JsonNodeMap> anomalies(final String url) throws Exception {
            final Map<String, Object> body =
                    Json.MAPPER.readValue(Http.get(url + "api/anomalies").body(), Map.class);
            final List<JsonNodeMap> out = new ArrayList<>();
            for (final Object item : (List<Object>) body.get("items")) {
                out.add(new JsonNodeMap((Map<String, Object>) item));
            }
            return out;
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> culprit() {
            return (Map<String, Object>) fields.get("culprit");
        }
    }
}
