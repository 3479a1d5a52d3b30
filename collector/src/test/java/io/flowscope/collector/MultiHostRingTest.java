package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.Stats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each rank on its own host (the normal case on a cluster), the rings drained unevenly, through the live service
 * with the real anomaly stage (issue #15, acceptance 4): the input that made the drain loop die within half a second
 * (a NullPointerException in the stage's hang judgement) must leave it alive and every record ingested.
 */
class MultiHostRingTest {
    private static final long COMM = 0x5EEDL;
    private static final int RANKS = 4;
    private static final int STEPS = 4;
    /** Rank 0's channel-0 receive from rank 3 of this iteration (200 ms of event time) waits for rank 3. */
    private static final int STALL = 100;

    private static final long STEP_NS = 50_000;

    @TempDir
    Path dir;

    private CollectorConfig config() {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("ring.scanMs", "20");
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        return CollectorConfig.load(null, Map.of(), o);
    }

    /**
     * Iterations [from, to) of one rank: on channel 0 a send to the next rank and a receive from the previous one,
     * on channel 1 the same (traffic that keeps the host's clock moving while channel 0 waits). Rank 0's channel-0
     * receive of iteration {@link #STALL} from rank 3 waits until rank 3's records arrive, and it posts none after it
     * meanwhile: a hang as rank 0's host sees it while rank 3's ring is not read. Iteration i starts at
     * t0 + i * 2 ms on every host.
     */
    private static void iterations(
            final RingTraffic ring, final int rank, final int from, final int to, final boolean rank3Arrived) {
        final long t0 = 1_000_000_000L;
        for (int i = from; i < to; i++) {
            final long t = t0 + i * 2_000_000L;
            final int next = (rank + 1) % RANKS;
            final int previous = (rank + RANKS - 1) % RANKS;
            ring.sendOp(next, 0, STEPS, 65536, t, STEP_NS);
            final boolean waitsOn3 = rank == 0 && !rank3Arrived && i >= STALL;
            if (!waitsOn3 || i == STALL) {
                ring.recvOp(previous, 0, STEPS, 65536, t + 10_000, STEP_NS, waitsOn3);
            }
            ring.sendOp(next, 1, STEPS, 65536, t + 500_000, STEP_NS);
            ring.recvOp(previous, 1, STEPS, 65536, t + 510_000, STEP_NS, false);
        }
    }

    @Test
    void shouldStayAliveAndIngestEveryRecordOfRanksOnTheirOwnHostsDrainedUnevenly() throws Exception {
        Files.createDirectories(dir.resolve("rings"));
        final int pid = (int) ProcessHandle.current().pid();
        final List<RingTraffic> rings = new ArrayList<>();
        final long[] ingested = {0};
        try {
            for (int r = 0; r < RANKS; r++) {
                rings.add(new RingTraffic(
                        dir.resolve("rings/flowscope-" + (pid + r) + "-0.ring"),
                        pid + r,
                        "node-" + r + ".cluster",
                        COMM,
                        r,
                        RANKS));
            }
            try (CollectorService s = CollectorService.start(config(), e -> {})) {
                // ranks 0..2 run 1.2 s of iterations, drained as they come; rank 3's ring stays empty meanwhile:
                // its host is silent, rank 0 waits on it from 200 ms on while its own clock keeps moving
                for (int chunk = 0; chunk < 4; chunk++) {
                    for (int r = 0; r < RANKS - 1; r++) {
                        iterations(rings.get(r), r, chunk * 150, chunk * 150 + 150, false);
                    }
                    Thread.sleep(250);
                }
                // 1 s later rank 3's records of those 1.2 s arrive at once (its ring read late), then 200 ms more of
                // everyone, rank 0's receives from rank 3 flowing again
                iterations(rings.get(3), 3, 0, 600, true);
                Thread.sleep(500);
                for (int r = 0; r < RANKS; r++) {
                    iterations(rings.get(r), r, 600, 700, true);
                }
                long written = 0;
                for (final RingTraffic ring : rings) {
                    written += ring.writer.claimed();
                }
                final long total = written;
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> s.snapshot().stats().ringRecordsTotal() == total);
                Thread.sleep(500); // a few more batches and periods after the last record

                assertThat(s.failure()).as("the drain loop").isNull();
                final JsonNode h = Http.json(s.url() + "api/health");
                assertThat(h.get("status").asText()).isNotEqualTo("DOWN");
                assertThat(h.get("ringsAttached").asInt()).isEqualTo(RANKS);
                final Stats st = s.snapshot().stats();
                assertThat(st.ringRecordsTotal()).isEqualTo(total);
                assertThat(st.eventsTotal()).isEqualTo(total);
                assertThat(st.ringCorrupt()).isZero();
                assertThat(st.ringProducerDrops()).isZero();
                // every host's flows reached the window engine
                for (int r = 0; r < RANKS; r++) {
                    assertThat(Http.json(s.url() + "api/links?rank=" + r + "&direction=send")
                                    .get("count")
                                    .asInt())
                            .as("rank " + r)
                            .isPositive();
                }
                // the drain loop still runs: it notices new input at once
                rings.get(0).sendOp(1, 1, STEPS, 65536, 1_300_000_000L, STEP_NS);
                final long more = total + 2 + 5L * STEPS;
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> s.snapshot().stats().ringRecordsTotal() == more);
                ingested[0] = more;
            }
        } finally {
            rings.forEach(RingTraffic::close);
        }
        // the journal holds every record
        assertThat(SimulatedInput.telemetryCalls(dir.resolve("journal"))).isEqualTo(ingested[0]);
    }
}
