package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.http.HttpVerticle;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.LiveTrackerTest;
import io.flowscope.collector.pipeline.RankIdentity;
import io.flowscope.collector.pipeline.Snapshot;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, acceptance 8: the live page read at a glance by an on-call engineer, in a real headless chromium, on
 * the demo (a simulated slow link), on a real NCCL recording fed into the service and on a service with nothing to
 * show yet. Each test checks what the page drew (its DOM and the data attributes of its canvases) and saves a
 * screenshot under target/; with {@code -Dflowscope.screenshots=../docs} also into the repository's docs/ (how the
 * screenshots there were made).
 */
class LivePageOnCallIT {
    @TempDir
    Path dir;

    private CollectorConfig config(final Map<String, String> extra) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.enabled", "false");
        o.put("publish.intervalMs", "100");
        o.putAll(extra);
        return CollectorConfig.load(null, Map.of(), o);
    }

    /** The page's DOM once its script ran, and a screenshot of it as {@code name}. */
    private String page(final CollectorService s, final String name) throws Exception {
        final String dom = HeadlessChromium.chromium(dir, s.url(), "--dump-dom");
        final Path png = HeadlessChromium.screenshot(s, dir, name);
        assertThat(Files.size(png)).as("a screenshot small enough for docs/").isLessThan(200_000);
        final String docs = System.getProperty("flowscope.screenshots");
        if (docs != null && !docs.isEmpty()) {
            Files.copy(png, Path.of(docs).resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
        return dom;
    }

    /** The page's row of a rank in the wait breakdown (from its class attribute to the next row). */
    private static String rank(final String dom, final int rank) {
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "class=\"rank[^\"]*\" data-rank=\"" + rank + "\".*?(?=class=\"rank[ \"]|</div>\\s*<h2)",
                        java.util.regex.Pattern.DOTALL)
                .matcher(dom);
        assertThat(m.find()).as("rank " + rank + " in the waits").isTrue();
        return m.group();
    }

    @Test
    void shouldShowTheDemosSlowLinkAsTheOneRedCellAndOpenOnIt() throws Exception {
        final List<AnomalyEvent> console = new CopyOnWriteArrayList<>();
        try (CollectorService s =
                CollectorService.start(config(Map.of("simulate.scenario", "default")), console::add)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> console.stream()
                    .anyMatch(e -> e.anomaly().kind() == AnomalyKind.SLOW_LINK
                            && e.anomaly().culprit().rank() == 3));
            Thread.sleep(3000); // a few seconds of the fault in the link's series

            // the API: the culprit link far below its own normal, every other link near its own
            final JsonNode heat =
                    Http.json(s.url() + "api/heatmap").get("heatmaps").get(0);
            int others = 0;
            for (final JsonNode l : heat.get("links")) {
                final double f = l.get("fractionOfNormal").asDouble();
                if (l.get("rank").asInt() == 3 && l.get("peer").asInt() == 4) {
                    assertThat(f).as("the slow link, fraction of its normal").isLessThan(0.6);
                } else {
                    assertThat(f).as("link " + l).isGreaterThan(0.8);
                    others++;
                }
            }
            assertThat(others).isEqualTo(7);
            assertThat(heat.get("rankInfo").get(3).get("hostname").asText()).isEqualTo("sim-node-0");
            final JsonNode series = Http.json(
                            s.url() + "api/series?comm=" + heat.get("comm").asText() + "&rank=3&peer=4")
                    .get("items")
                    .get(0);
            assertThat(series.get("fractionOfNormal").size()).isGreaterThan(10);

            final String dom = page(s, "live-page-demo.png");
            // what, where, since when, how bad: in the headline
            assertThat(dom).contains("id=\"headline\" data-state=\"alert\"");
            assertThat(dom)
                    .containsPattern("SLOW LINK — rank 3 → 4 \\(sim-node-0 → sim-node-1\\), at \\d+ % of "
                            + "its normal — since [0-9.]+ (s|ms|min) · (WARNING|CRITICAL)");
            // the culprit is the marked cell and the worst one; the chart opened on it
            assertThat(dom).containsPattern("id=\"heatmap\"[^>]*data-culprit=\"3-&gt;4\"");
            assertThat(dom).containsPattern("id=\"heatmap\"[^>]*data-worst=\"3-&gt;4:[1-5]?[0-9]\"");
            assertThat(dom).containsPattern("id=\"series\"[^>]*data-points=\"[1-9][0-9]+\"[^>]*data-link=\"3-&gt;4\"");
            // ranks by host with their waits; the anomaly in the timeline; the communicator picker
            assertThat(dom).containsPattern("class=\"rank\" data-rank=\"7\"[^>]*data-own-gpu=\"0\\.\\d+\"");
            assertThat(dom).contains("rank 7 · sim-node-1");
            assertThat(rank(dom, 3)).contains("data-outlier=\"network\"");
            assertThat(rank(dom, 4)).doesNotContain("data-outlier");
            assertThat(dom).containsPattern("class=\"tl anomaly [A-Z]+ open\" data-kind=\"SLOW_LINK\"");
            assertThat(dom).containsPattern("<select id=\"comm\"[^>]*>.*⚠ 0x[0-9a-f]+ · 8 ranks on 2 hosts");
            assertThat(dom).doesNotContain("rank -1", "comm 0x0");
        }
    }

    @Test
    void shouldShowARealNcclRecordingFedIntoTheServiceDuringItsFault() throws Exception {
        // net-r1-100us: two H100s over sockets, rank 1's send() 100 µs slower from 91.859 s to 93.325 s; fed up to
        // 93.2 s, as if the page were opened then
        final Path trace = SharedTraces.events("net-r1-100us").get(0);
        final TraceSource source = new TraceSource(
                trace,
                93_200_000_000L,
                "real trace net-r1-100us (2 x H100, sockets; rank 1 sends 100 us late from 91.86 s) replayed to 93.2 s");
        try (CollectorService s = CollectorService.start(config(Map.of()), source, e -> {})) {
            await().atMost(Duration.ofSeconds(120)).until(() -> s.finished());
            final JsonNode heat =
                    Http.json(s.url() + "api/heatmap").get("heatmaps").get(0);
            assertThat(heat.get("ranks").toString()).isEqualTo("[0,1]");
            assertThat(heat.get("rankInfo").get(1).get("hostname").asText()).isEqualTo("vm");

            final String dom = page(s, "live-page-real-trace.png");
            assertThat(dom).contains("id=\"headline\" data-state=\"alert\"");
            assertThat(dom)
                    .containsPattern(
                            "SLOW LINK — rank 1 → 0 \\(vm\\), at \\d+ % of its normal — since " + "[0-9.]+ (s|ms)");
            assertThat(dom).containsPattern("id=\"heatmap\"[^>]*data-culprit=\"1-&gt;0\"");
            assertThat(dom).containsPattern("id=\"heatmap\"[^>]*data-worst=\"1-&gt;0:[1-7][0-9]\"");
            assertThat(dom).containsPattern("id=\"series\"[^>]*data-points=\"[1-9][0-9]+\"[^>]*data-link=\"1-&gt;0\"");
            assertThat(dom).containsPattern("class=\"rank\" data-rank=\"1\"[^>]*data-network=\"0\\.\\d+\"");
            assertThat(rank(dom, 1)).contains("data-outlier=\"network\"");
            assertThat(rank(dom, 0)).doesNotContain("data-outlier");
        }
    }

    /**
     * A link that flaps 40 times, a NIC stall and a hang, served as a snapshot: the timeline has one row each (open
     * first, the flaps folded into one with their count), culprits by name (a NIC by its host), no card per episode.
     */
    @Test
    void shouldFoldAFlappingLinkIntoOneTimelineRow() throws Exception {
        final Snapshot snap = LiveTrackerTest.snapshot(
                LiveTrackerTest.flapping(), Map.of(7L, RankIdentity.host(0x77, "gpu-node-7")), 21_000_000_000L);
        final Vertx vertx = Vertx.vertx();
        try {
            final HttpVerticle http = new HttpVerticle("127.0.0.1", 0, 1000, () -> snap, () -> Map.of("status", "UP"));
            vertx.deployVerticle(http).await(30, TimeUnit.SECONDS);
            final String url = "http://127.0.0.1:" + http.actualPort() + "/";
            final String dom = HeadlessChromium.chromium(dir, url, "--dump-dom");
            HeadlessChromium.screenshot(url, dir, "live-page-flapping.png");
            assertThat(dom.split("class=\"tl anomaly ", -1)).hasSize(4);
            assertThat(dom)
                    .containsPattern(
                            "class=\"tl anomaly WARNING open\" data-kind=\"SLOW_LINK\" " + "data-episodes=\"40\"");
            assertThat(dom).contains("· ×40 episodes", "host gpu-node-7 · NIC 2", "NIC STALL (resolved)");
            assertThat(dom).doesNotContain("rank -1", "comm 0x0");
        } finally {
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldMakeAStragglerStandOutByItsOwnGpuWaits() throws Exception {
        // gpu-r1-2ms: rank 1's GPU busy 2 ms before each all_reduce from 70.96 s to 74.30 s; fed up to 73.5 s
        final Path trace = SharedTraces.events("gpu-r1-2ms").get(0);
        final TraceSource source = new TraceSource(
                trace,
                73_500_000_000L,
                "real trace gpu-r1-2ms (2 x H100, sockets; rank 1's GPU 2 ms late from 70.96 s) replayed to 73.5 s");
        try (CollectorService s = CollectorService.start(config(Map.of()), source, e -> {})) {
            await().atMost(Duration.ofSeconds(120)).until(() -> s.finished());
            final String dom = page(s, "live-page-straggler.png");
            assertThat(dom).containsPattern("SLOW NODE — rank 1 · host vm, late by [0-9.]+ ms per operation — since");
            assertThat(rank(dom, 1)).startsWith("class=\"rank culprit\"").contains("data-outlier=\"ownGpu\"");
            assertThat(rank(dom, 0)).startsWith("class=\"rank\"").doesNotContain("data-outlier");
        }
    }

    @Test
    void shouldSayWhichRingDirectoryItWatchesWhileNothingCame() throws Exception {
        try (CollectorService s = CollectorService.start(config(Map.of()), e -> {})) {
            final String dom = page(s, "live-page-empty.png");
            assertThat(dom)
                    .contains(
                            "id=\"empty\" data-state=\"shown\"",
                            "Waiting for NCCL jobs",
                            "<code>" + dir.resolve("rings") + "</code>",
                            "FLOWSCOPE_RING_DIR=",
                            "0 rings attached, 0 events so far");
            assertThat(Http.json(s.url() + "api/live")
                            .get("source")
                            .get("ringDir")
                            .asText())
                    .isEqualTo(dir.resolve("rings").toString());
        }
    }
}
