package io.flowscope.collector;

import static io.flowscope.ring.EventKind.PROXY_STEP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.ProducerDrops;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.TestRingWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ring that fills up is never silent (issue #17, acceptance 5): its producer's drops, as the real ring header counts
 * them, show per producer in {@code /metrics} and {@code /api/health}, which turns DEGRADED with a reason naming the
 * producer, and the console says it once.
 */
class ProducerDropsTest {
    private static final int CAPACITY = 64;
    private static final int WRITTEN = 164;

    @TempDir
    Path dir;

    /** Writes {@code n} ProxyStep states into the ring (no consumer yet: those past its capacity are dropped). */
    private static void write(final TestRingWriter ring, final int n) {
        final TestRingWriter.Draft d = new TestRingWriter.Draft();
        final long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            ring.append(d.state(
                    PROXY_STEP,
                    0,
                    t0 + i * 1_000L,
                    (long) PROXY_STEP.code() << 60 | i + 1,
                    NcclState.PROXY_STEP_SEND_WAIT,
                    4096));
        }
    }

    private CollectorConfig config() {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("ring.scanMs", "20");
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        return CollectorConfig.load(null, Map.of(), o);
    }

    @Test
    void shouldReportAFullRingsDropsPerProducerInMetricsAndHealthAndSayItOnce() throws Exception {
        Files.createDirectories(dir.resolve("rings"));
        final int pid = (int) ProcessHandle.current().pid();
        final long mono = System.nanoTime();
        try (TestRingWriter full = TestRingWriter.builder(dir.resolve("rings/flowscope-" + pid + "-0.ring"))
                        .capacity(CAPACITY)
                        .pid(pid)
                        .hostname("node-full")
                        .anchors(System.currentTimeMillis() * 1_000_000L, mono)
                        .create();
                TestRingWriter fine = TestRingWriter.builder(dir.resolve("rings/flowscope-" + pid + "-1.ring"))
                        .capacity(CAPACITY)
                        .pid(pid)
                        .hostname("node-fine")
                        .anchors(System.currentTimeMillis() * 1_000_000L, mono)
                        .create()) {
            write(full, WRITTEN);
            write(fine, 10);
            assertThat(full.counter(io.flowscope.ring.RingLayout.DROPPED_FULL_OFFSET))
                    .isEqualTo(WRITTEN - CAPACITY);
            try (CollectorService s = CollectorService.start(config(), e -> {})) {
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                    final JsonNode h = Http.json(s.url() + "api/health");
                    assertThat(h.get("status").asText()).isEqualTo("DEGRADED");
                    assertThat(h.get("producers")).hasSize(2);
                });
                final JsonNode h = Http.json(s.url() + "api/health");
                assertThat(h.get("reasons").toString())
                        .contains("node-full pid " + pid)
                        .doesNotContain("node-fine");
                JsonNode dropped = null;
                for (final JsonNode p : h.get("producers")) {
                    if (p.get("host").asText().equals("node-full")) {
                        dropped = p;
                    } else {
                        assertThat(p.get("dropped").asLong()).isZero();
                        assertThat(p.get("dropping").asBoolean()).isFalse();
                    }
                }
                assertThat(dropped).isNotNull();
                assertThat(dropped.get("droppedFull").asLong()).isEqualTo(WRITTEN - CAPACITY);
                assertThat(dropped.get("pid").asInt()).isEqualTo(pid);
                assertThat(dropped.get("dropping").asBoolean()).isTrue();
                assertThat(dropped.get("attached").asBoolean()).isTrue();

                final String metrics = Http.get(s.url() + "metrics").body();
                assertThat(metrics)
                        .contains("flowscope_producer_dropped_total{host=\"node-full\",pid=\"" + pid
                                + "\",reason=\"full\"} " + (WRITTEN - CAPACITY))
                        .contains("flowscope_producer_dropped_total{host=\"node-fine\",pid=\"" + pid
                                + "\",reason=\"full\"} 0")
                        .contains("flowscope_producer_dropping{host=\"node-full\",pid=\"" + pid + "\"} 1")
                        .contains("flowscope_producer_dropping{host=\"node-fine\",pid=\"" + pid + "\"} 0")
                        .contains("flowscope_ring_producer_dropped_total " + (WRITTEN - CAPACITY));
                // what the ring held is ingested all the same
                assertThat(metrics).contains("flowscope_ring_records_total " + (CAPACITY + 10));

                // the console says it once: the same health again says nothing
                final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                final PrintWriter out = new PrintWriter(bytes, true, StandardCharsets.UTF_8);
                final String said = Main.sayHealth(s.health(), "UP", out);
                assertThat(Main.sayHealth(s.health(), said, out)).isEqualTo(said);
                final List<String> lines =
                        bytes.toString(StandardCharsets.UTF_8).lines().toList();
                assertThat(lines).hasSize(1);
                assertThat(lines.get(0)).contains("health DEGRADED", "rings dropping records", "node-full pid " + pid);
            }
        }
    }

    @Test
    void shouldStopCallingAProducerDroppingOnceItsDropsStoppedGrowing() {
        final ProducerDrops p = new ProducerDrops("node-1", 42, "flowscope-42-0.ring", true, 5, 1, 0, 1_000_000L);
        assertThat(p.dropped()).isEqualTo(6);
        assertThat(ProducerDrops.reason(List.of(p), 1_000_000L + ProducerDrops.DROPPING_MS - 1))
                .contains("node-1 pid 42");
        assertThat(ProducerDrops.reason(List.of(p), 1_000_000L + ProducerDrops.DROPPING_MS))
                .isNull();
        final ProducerDrops never = new ProducerDrops("node-2", 43, "flowscope-43-0.ring", true, 0, 0, 0, 0);
        assertThat(ProducerDrops.reason(List.of(never), 1_000_000L)).isNull();
        final List<ProducerDrops> many = List.of(
                p,
                new ProducerDrops("node-2", 2, "r", true, 1, 0, 0, 1_000_000L),
                new ProducerDrops("node-3", 3, "r", true, 1, 0, 0, 1_000_000L),
                new ProducerDrops("node-4", 4, "r", false, 1, 0, 0, 1_000_000L));
        assertThat(ProducerDrops.reason(many, 1_000_001L))
                .contains("node-3 pid 3", "and 1 more")
                .doesNotContain("node-4");
    }
}
