package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.replay.Replay;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The service end to end: real rings, a real Vert.x server over HTTP, a real Chronicle journal. */
class ServiceIT {
    private static final long COMM = 0xC0FFEEL;
    private static final int DEAD_PID = 4_100_000; // above Linux's pid_max: never alive

    @TempDir
    Path dir;

    private CollectorConfig config(final Map<String, String> extra) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("ring.scanMs", "20");
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        o.putAll(extra);
        return CollectorConfig.load(null, Map.of(), o);
    }

    private static List<AnomalyEvent> sink() {
        return new ArrayList<>();
    }

    private static JsonNode link(final CollectorService s, final int rank, final int peer) throws Exception {
        for (final JsonNode n : Http.json(s.url() + "api/links?rank=" + rank + "&peer=" + peer + "&direction=send")
                .get("items")) {
            return n;
        }
        return null;
    }

    @Test
    void shouldServeLinksFlowsRanksAndMetricsOfARealRingAndFollowNewTrafficLive() throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("rings"));
        final int pid = (int) ProcessHandle.current().pid();
        try (RingTraffic ring =
                new RingTraffic(dir.resolve("rings/flowscope-" + pid + "-0.ring"), pid, "node-a", COMM, 0, 4)) {
            long t = ring.sendOp(1, 0, 300, 65536, 1_000_000_000L, 100_000);
            try (CollectorService s = CollectorService.start(config(Map.of()), e -> {})) {
                await().atMost(Duration.ofSeconds(30)).until(() -> link(s, 0, 1) != null);
                final JsonNode l = link(s, 0, 1);
                assertThat(l.get("comm").asText()).isEqualTo("0xc0ffee");
                assertThat(l.get("periodBandwidthBytesPerSecond").asDouble()).isGreaterThan(0);
                assertThat(Http.json(s.url() + "api/flows?rank=0&direction=send&comm=0xc0ffee")
                                .get("count")
                                .asInt())
                        .isEqualTo(1);
                assertThat(Http.json(s.url() + "api/ranks?rank=0").get("count").asInt())
                        .isGreaterThan(0);
                assertThat(Http.json(s.url() + "api/flows?comm=0x1")
                                .get("count")
                                .asInt())
                        .isZero();
                assertThat(Http.json(s.url() + "api/flows?to=10").get("count").asInt())
                        .isZero();

                // a new link appears while the service runs
                ring.sendOp(2, 1, 300, 65536, t, 100_000);
                await().atMost(Duration.ofSeconds(30)).until(() -> link(s, 0, 2) != null);

                // a second process comes (its ring is discovered and drained) and goes (its pid is gone: detached)
                try (RingTraffic other = new RingTraffic(
                        dir.resolve("rings/flowscope-" + DEAD_PID + "-0.ring"),
                        DEAD_PID,
                        io.flowscope.ring.RingDirectory.localHostname(),
                        COMM,
                        3,
                        4)) {
                    other.sendOp(0, 0, 300, 65536, t, 100_000);
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> link(s, 3, 0) != null);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> Http.json(s.url() + "api/health")
                                        .get("ringsAttached")
                                        .asInt()
                                == 1);

                final JsonNode health = Http.json(s.url() + "api/health");
                assertThat(health.get("status").asText()).isEqualTo("UP");
                assertThat(health.get("ringsAttached").asInt()).isEqualTo(1);
                assertThat(Http.get(s.url() + "api/health/ready").statusCode()).isEqualTo(200);
                assertThat(Http.get(s.url() + "api/health/live").statusCode()).isEqualTo(200);

                final String metrics = Http.get(s.url() + "metrics").body();
                assertThat(metrics)
                        .contains(
                                "flowscope_events_total ",
                                "flowscope_ring_lag_records ",
                                "flowscope_journal_bytes ",
                                "flowscope_ring_corrupt_records_total 0")
                        .containsPattern(
                                "flowscope_link_bytes_total\\{comm=\"0xc0ffee\",direction=\"send\",[^}]*peer=\"2\","
                                        + "rank=\"0\"}");
                final JsonNode heat =
                        Http.json(s.url() + "api/heatmap").get("heatmaps").get(0);
                assertThat(heat.get("ranks").toString()).isEqualTo("[0,1,2,3]");
                assertThat(Http.get(s.url()).body()).contains("id=\"heatmap\"");
                // the live page in a real headless chromium draws the 4-rank heatmap and a series
                final String dom = HeadlessChromium.checkPage(s, dir, "live-page-rings.png", false);
                assertThat(dom).contains("data-ranks=\"4\"");
            }
        }
        assertThat(JournalWriter.cycleFiles(dir.resolve("journal"))).isNotEmpty();
    }

    /**
     * A live producer whose last receive never completes, then silence: no record moves the host's clock, so
     * only the service's idle tick of a drained ring (stamped with this machine's clock) lets the hang detector
     * see time pass. Without it the hang is never named.
     */
    @Test
    void shouldNameAHangOnARealRingWhileTheHungHostSendsNothingMore() throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("rings"));
        final int pid = (int) ProcessHandle.current().pid();
        final List<AnomalyEvent> events = java.util.Collections.synchronizedList(new ArrayList<>());
        try (RingTraffic ring = RingTraffic.onThisMachine(
                        dir.resolve("rings/flowscope-" + pid + "-0.ring"),
                        pid,
                        io.flowscope.ring.RingDirectory.localHostname(),
                        COMM,
                        0,
                        2);
                CollectorService s = CollectorService.start(config(Map.of()), events::add)) {
            final long start = System.nanoTime() - 60_000_000L;
            ring.recvOp(1, 0, 40, 65536, start, 1_000_000L, true);
            await().atMost(Duration.ofSeconds(30)).until(() -> hang(events) != null);
            final Anomaly hang = hang(events);
            assertThat(hang.culprit().rank()).as("the sender that stopped").isEqualTo(1);
            assertThat(hang.culprit().peer()).as("the receiver waiting on it").isZero();
            assertThat(hang.culprit().channel()).isZero();
            assertThat(hang.culprit().commHash()).isEqualTo(COMM);
            // dated by the stalled receive (posted ~39 ms after start), not by the tick that revealed it
            assertThat(hang.startNs()).isBetween(start, start + 60_000_000L);
            // the REST view follows at its publish interval; the hang stays open while nothing moves
            await().atMost(Duration.ofSeconds(10)).until(() -> Http.json(s.url() + "api/anomalies?state=open")
                    .toString()
                    .contains("HANG"));
        }
        // the idle ticks are journaled input: a replay names the same hang, dated the same
        final Replay.Result replay = Replay.run(
                dir.resolve("journal"), config(Map.of()), Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        final Anomaly replayed = hang(replay.events());
        assertThat(replayed).isNotNull();
        assertThat(replayed.culprit()).isEqualTo(hang(events).culprit());
        assertThat(replayed.startNs()).isEqualTo(hang(events).startNs());
    }

    private static Anomaly hang(final List<AnomalyEvent> events) {
        synchronized (events) {
            for (final AnomalyEvent e : events) {
                if (e.anomaly().kind() == io.flowscope.api.anomaly.AnomalyKind.HANG) {
                    return e.anomaly();
                }
            }
        }
        return null;
    }

    @Test
    void shouldAnswerMalformedRequestsWith400AndAReason() throws Exception {
        try (CollectorService s = CollectorService.start(config(Map.of()), e -> {})) {
            final Map<String, String> bad = Map.of(
                    "api/flows?rank=abc", "rank must be an integer",
                    "api/links?from=5&to=1", "from (5) is after to (1)",
                    "api/anomalies?state=maybe", "state must be open, resolved or all",
                    "api/flows?color=red", "unknown query parameter 'color'",
                    "api/comms?comm=0xZZ", "comm must be a communicator hash",
                    "api/ranks?limit=0", "limit must be in 1..100000",
                    "api/flows?rank=1&rank=2", "given more than once",
                    "api/links?direction=up", "direction must be send or recv");
            for (final Map.Entry<String, String> e : bad.entrySet()) {
                final var r = Http.get(s.url() + e.getKey());
                assertThat(r.statusCode()).as(e.getKey()).isEqualTo(400);
                assertThat(Json.MAPPER.readTree(r.body()).get("error").asText())
                        .as(e.getKey())
                        .contains(e.getValue());
            }
            assertThat(Http.get(s.url() + "api/nothing").statusCode()).isEqualTo(404);
            final var post = Http.send("POST", s.url() + "api/flows");
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(post.body()).contains("read-only");
        }
    }

    @Test
    void shouldSkipTheSlotOfAProducerThatDiedMidWriteDrainTheRestAndDetachTheRing() throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("rings"));
        try (RingTraffic ring = new RingTraffic(
                dir.resolve("rings/flowscope-" + DEAD_PID + "-0.ring"),
                DEAD_PID,
                io.flowscope.ring.RingDirectory.localHostname(),
                COMM,
                3,
                4)) {
            final long t = ring.sendOp(1, 0, 200, 65536, 2_000_000_000L, 100_000);
            ring.abandonClaim();
            ring.sendOp(2, 0, 200, 65536, t, 100_000);
        }
        try (CollectorService s = CollectorService.start(config(Map.of()), e -> {})) {
            // the records written after the abandoned slot arrive
            await().atMost(Duration.ofSeconds(30)).until(() -> link(s, 3, 2) != null);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Http.json(s.url() + "api/health")
                                    .get("ringsAttached")
                                    .asInt()
                            == 0);
            assertThat(link(s, 3, 1)).isNotNull();
        }
        final List<String> detached = new ArrayList<>();
        try (JournalReader r = new JournalReader(dir.resolve("journal"))) {
            while (r.read(
                            new NoopListener(),
                            new JournalReader.Meta() {
                                @Override
                                public void onRingDetached(final int pid, final String path, final String reason) {
                                    detached.add(pid + " " + reason);
                                }
                            },
                            100)
                    > 0) {
                // read all
            }
        }
        assertThat(detached).containsExactly(DEAD_PID + " PRODUCER_GONE");
    }

    @Test
    void shouldSkipACorruptRingRecordCountItAndDrainTheRest() throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("rings"));
        try (RingTraffic ring = new RingTraffic(
                dir.resolve("rings/flowscope-" + DEAD_PID + "-0.ring"),
                DEAD_PID,
                io.flowscope.ring.RingDirectory.localHostname(),
                COMM,
                5,
                8)) {
            final long t = ring.sendOp(6, 0, 200, 65536, 5_000_000_000L, 100_000);
            ring.sendOp(7, 0, 200, 65536, t, 100_000);
            // flip payload bits of a published record (the 10th): its checksum no longer matches
            final int slot = ring.writer.slotOffset(0, 10);
            ring.writer.buffer().putByte(slot + 40, (byte) (ring.writer.buffer().getByte(slot + 40) ^ 0x5A));
        }
        try (CollectorService s = CollectorService.start(config(Map.of()), e -> {})) {
            await().atMost(Duration.ofSeconds(30)).until(() -> link(s, 5, 7) != null);
            await().atMost(Duration.ofSeconds(30)).until(() -> Http.get(s.url() + "metrics")
                    .body()
                    .contains("flowscope_ring_corrupt_records_total 1.0\n"));
            assertThat(link(s, 5, 6)).isNotNull();
        }
    }

    @Test
    void shouldResumeFromItsJournalAfterARestartWithoutReadingTheRingAgain() throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("rings"));
        try (RingTraffic ring = new RingTraffic(
                dir.resolve("rings/flowscope-" + DEAD_PID + "-0.ring"),
                DEAD_PID,
                io.flowscope.ring.RingDirectory.localHostname(),
                COMM,
                1,
                4)) {
            ring.sendOp(0, 0, 300, 65536, 3_000_000_000L, 100_000);
        }
        long journaled;
        try (CollectorService s = CollectorService.start(config(Map.of()), e -> {})) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Http.json(s.url() + "api/health")
                                            .get("ringsAttached")
                                            .asInt()
                                    == 0
                            && link(s, 1, 0) != null);
        }
        journaled = countEntries(dir.resolve("journal"));
        assertThat(journaled).isGreaterThan(300 * 5);

        try (CollectorService s = CollectorService.start(config(Map.of()), e -> {})) {
            final JsonNode h = Http.json(s.url() + "api/health");
            assertThat(h.get("journal").get("recoveredEntries").asLong()).isGreaterThanOrEqualTo(journaled);
            // the engines' state came back from the journal: the link is served before any new ring record
            await().atMost(Duration.ofSeconds(30)).until(() -> link(s, 1, 0) != null);
            assertThat(s.snapshot().stats().ringRecordsTotal()).isZero();
        }
        // nothing was journaled twice
        assertThat(countEntries(dir.resolve("journal"))).isEqualTo(journaled);
    }

    /** Telemetry entries of a journal (ring attach/clock/detach, anomaly and settings records not counted). */
    static long countEntries(final Path journal) {
        final long[] meta = {0};
        try (JournalReader r = new JournalReader(journal)) {
            while (r.read(
                            new NoopListener(),
                            new JournalReader.Meta() {
                                @Override
                                public void onRingAttached(
                                        final long hostId, final int pid, final String hostname, final String path) {
                                    meta[0]++;
                                }

                                @Override
                                public void onRingClock(
                                        final long hostId,
                                        final int pid,
                                        final long realtimeNs,
                                        final long monotonicNs) {
                                    meta[0]++;
                                }

                                @Override
                                public void onRingDetached(final int pid, final String path, final String reason) {
                                    meta[0]++;
                                }

                                @Override
                                public void onAnomaly(final long id, final boolean opened, final String summary) {
                                    meta[0]++;
                                }

                                @Override
                                public void onEngineSettings(final String settings) {
                                    meta[0]++;
                                }
                            },
                            1000)
                    > 0) {
                // count
            }
            return r.entries() - meta[0];
        }
    }
}
