package io.flowscope.sink.influx;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.SinkCounters;
import io.flowscope.sink.testing.Anomalies;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.testing.RealInfluxExtension;
import io.flowscope.sink.testing.Summaries;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The InfluxDB sink against a real influxd (1.6.7): write, then query back through /query. */
@ExtendWith(RealInfluxExtension.class)
class InfluxSinkIT {
    private static final long HOST = 0x5eedL;
    private static final long COMM = 0x1a2b3cL;
    private static final long T0 = System.currentTimeMillis() * 1_000_000L - 60_000_000_000L;
    private static final long MS = 1_000_000L;

    private static InfluxConfig.Builder config(final InfluxServer server, final String db) {
        return InfluxConfig.builder(server.url(), db)
                .clock(EventClock.epoch())
                .hostNames(id -> "node-" + id)
                .processor(ProcessorConfig.builder()
                        .name("influx-test")
                        .flushInterval(Duration.ofMillis(20))
                        .build());
    }

    @Test
    void flowCollectiveAndAnomalyPointsWrittenThroughTheSinkQueryBackByTheirTags(final InfluxServer server) {
        final String db = "roundtrip";
        try (InfluxSink sink = new InfluxSink(config(server, db).build())) {
            for (int period = 0; period < 10; period++) {
                final long start = T0 + period * MS;
                final FlowSummary step = Summaries.flow(
                        FlowSummary.KIND_STEP,
                        HOST,
                        COMM,
                        3,
                        4,
                        0,
                        true,
                        start,
                        start + MS,
                        20,
                        20 * 524_288L,
                        4,
                        4 * 524_288L);
                sink.onSummary(Summaries.phase(step, Phase.PEER_WAIT, 20, 20 * 9_000L, 15_000));
                sink.onSummary(Summaries.flow(
                        FlowSummary.KIND_COMM,
                        HOST,
                        COMM,
                        -1,
                        -1,
                        -1,
                        true,
                        start,
                        start + MS,
                        160,
                        160 * 524_288L,
                        32,
                        0));
                sink.onSummary(Summaries.qp(HOST, 1, 777, start, start + MS, 16, 16 * 65_536L, 2));
            }
            sink.onCollective(Summaries.collective(
                    HOST,
                    COMM,
                    3,
                    8,
                    41,
                    Collectives.ALL_REDUCE,
                    Collectives.ALGO_RING,
                    Collectives.PROTO_SIMPLE,
                    1 << 24,
                    4,
                    T0,
                    3 * MS));
            final Anomaly opened = Anomalies.slowLink(0xfeedL, HOST, COMM, 3, 4, Severity.WARNING, T0 + 2 * MS, -1);
            sink.onOpened(opened);
            sink.onResolved(Anomalies.resolved(opened, T0 + 8 * MS));

            assertThat(sink.flush(Duration.ofSeconds(60)))
                    .as(sink.lastFailure())
                    .isTrue();
            assertThat(sink.counters().exported()).isEqualTo(33);
            assertThat(sink.counters().lost()).isZero();
        }

        assertThat(server.count(
                        db,
                        "SELECT count(bytes) FROM flow WHERE kind='step' AND rank='3' AND peer='4' "
                                + "AND direction='send' AND host='node-" + HOST + "' AND comm='0x1a2b3c'"))
                .isEqualTo(10);
        assertThat(server.count(db, "SELECT sum(bytes) FROM flow WHERE kind='step'"))
                .isEqualTo(10 * 20 * 524_288L);
        assertThat(server.count(db, "SELECT max(peer_wait_max_ns) FROM flow WHERE kind='step'"))
                .isEqualTo(15_000);
        assertThat(server.count(db, "SELECT count(bw_period) FROM flow WHERE kind='comm'"))
                .isEqualTo(10);
        assertThat(server.count(db, "SELECT count(bytes) FROM flow WHERE kind='qp' AND device='1' AND qp='777'"))
                .isEqualTo(10);
        assertThat(server.count(db, "SELECT last(seq) FROM collective WHERE func='AllReduce' AND algo='Ring'"))
                .isEqualTo(41);
        final List<JsonNode> events =
                server.rows(db, "SELECT summary, state, severity FROM anomaly WHERE kind='slow_link' ORDER BY time");
        assertThat(events).hasSize(2);
        assertThat(events.get(0).get(0).asLong()).isEqualTo(T0 + 2 * MS);
        assertThat(events.get(0).get(2).asText()).isEqualTo("opened");
        assertThat(events.get(1).get(0).asLong()).isEqualTo(T0 + 8 * MS);
        assertThat(events.get(1).get(2).asText()).isEqualTo("resolved");
        assertThat(events.get(1).get(1).asText()).contains("rank 3 → 4");
    }

    @Test
    void pointsOfSeriesBeyondTheCapAreRefusedAndCountedAndNeverReachTheServer(final InfluxServer server) {
        final String db = "capped";
        final SinkCounters counters;
        try (InfluxSink sink = new InfluxSink(config(server, db).maxSeries(3).build())) {
            for (int rank = 0; rank < 5; rank++) {
                for (int period = 0; period < 2; period++) {
                    final long start = T0 + period * MS;
                    sink.onSummary(Summaries.flow(
                            FlowSummary.KIND_RANK, HOST, COMM, rank, -1, -1, true, start, start + MS, 1, 1_000, 0, 0));
                }
            }
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            counters = sink.counters();
        }

        assertThat(counters.refused()).isEqualTo(4);
        assertThat(counters.exported()).isEqualTo(6);
        assertThat(server.rows(db, "SHOW SERIES FROM flow")).hasSize(3);
    }

    @Test
    void whenTheServerStopsTheCallerGoesOnAndPointsAreDroppedAndCountedThenWritesResumeAfterItRestarts()
            throws Exception {
        try (InfluxServer own = new InfluxServer().start()) {
            final InfluxConfig config = config(own, "restart")
                    .processor(ProcessorConfig.builder()
                            .name("influx-down")
                            .queueCapacity(100)
                            .maxBatch(50)
                            .flushInterval(Duration.ofMillis(5))
                            .maxAttempts(2)
                            .initialBackoff(Duration.ofMillis(200))
                            .maxBackoff(Duration.ofMillis(200))
                            .jitter(0)
                            .build())
                    .build();
            try (InfluxSink sink = new InfluxSink(config)) {
                for (int i = 0; i < 5; i++) {
                    sink.onSummary(Summaries.flow(
                            FlowSummary.KIND_RANK,
                            HOST,
                            COMM,
                            0,
                            -1,
                            -1,
                            true,
                            T0 + i * MS,
                            T0 + (i + 1) * MS,
                            1,
                            1_000,
                            0,
                            0));
                }
                assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
                assertThat(sink.counters().exported()).as(sink.lastFailure()).isEqualTo(5);
                own.stop();

                for (int i = 0; i < 10_000; i++) {
                    sink.onSummary(Summaries.flow(
                            FlowSummary.KIND_COMM,
                            HOST,
                            COMM,
                            -1,
                            -1,
                            -1,
                            true,
                            T0 + i * MS,
                            T0 + (i + 1) * MS,
                            1,
                            1_000,
                            0,
                            0));
                }
                assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
                final SinkCounters down = sink.counters();
                assertThat(down.offered()).isEqualTo(10_005);
                assertThat(down.exported()).isEqualTo(5);
                assertThat(down.droppedQueueFull()).isPositive();
                assertThat(down.droppedAfterRetries()).isPositive();
                assertThat(down.retries()).isPositive();
                assertThat(down.droppedQueueFull() + down.droppedAfterRetries()).isEqualTo(10_000);
                assertThat(sink.lastFailure()).contains("/write?db=restart").contains("ConnectException");

                own.start();
                for (int i = 0; i < 20; i++) {
                    sink.onSummary(Summaries.flow(
                            FlowSummary.KIND_COMM,
                            HOST,
                            COMM,
                            -1,
                            -1,
                            -1,
                            false,
                            T0 + i * MS,
                            T0 + (i + 1) * MS,
                            1,
                            1_000,
                            0,
                            0));
                }
                assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
                assertThat(sink.counters().exported()).as(sink.lastFailure()).isEqualTo(25);
            }
            assertThat(own.count("restart", "SELECT count(bytes) FROM flow WHERE direction='recv'"))
                    .isEqualTo(20);
            assertThat(own.count("restart", "SELECT count(bytes) FROM flow WHERE kind='rank'"))
                    .isEqualTo(5);
        }
    }

    @Test
    void anAnomalyQueuedBehindABacklogOfFlowPointsTenTimesTheQueueIsStillWritten() throws Exception {
        try (InfluxServer own = new InfluxServer().start()) {
            // retried for as long as the test needs: the flows' worker keeps its first batch while the server is down
            final InfluxConfig config = config(own, "backlog")
                    .processor(ProcessorConfig.builder()
                            .name("influx-backlog")
                            .queueCapacity(100)
                            .maxBatch(10)
                            .flushInterval(Duration.ofMillis(5))
                            .maxAttempts(1_000)
                            .initialBackoff(Duration.ofMillis(50))
                            .maxBackoff(Duration.ofMillis(50))
                            .jitter(0)
                            .build())
                    .build();
            own.stop();
            try (InfluxSink sink = new InfluxSink(config)) {
                for (int i = 0; i < 10; i++) {
                    sink.onSummary(Summaries.flow(
                            FlowSummary.KIND_COMM,
                            HOST,
                            COMM,
                            -1,
                            -1,
                            -1,
                            true,
                            T0 + i * MS,
                            T0 + (i + 1) * MS,
                            1,
                            1_000,
                            0,
                            0));
                }
                io.flowscope.sink.testing.Eventually.await(() -> sink.counters().retries() > 0, sink::toString);
                sink.onOpened(Anomalies.slowLink(0xa1L, HOST, COMM, 3, 4, Severity.CRITICAL, T0 + 20 * MS, -1));
                // ten times the queue: before the fix the anomaly, queued among the flows, was the oldest and evicted
                for (int i = 0; i < 1_000; i++) {
                    sink.onSummary(Summaries.flow(
                            FlowSummary.KIND_COMM,
                            HOST,
                            COMM,
                            -1,
                            -1,
                            -1,
                            true,
                            T0 + (30 + i) * MS,
                            T0 + (31 + i) * MS,
                            1,
                            1_000,
                            0,
                            0));
                }
                assertThat(sink.counters().droppedQueueFull()).isGreaterThanOrEqualTo(900);

                own.start();
                assertThat(sink.flush(Duration.ofSeconds(60)))
                        .as(sink.lastFailure())
                        .isTrue();
                assertThat(own.rows("backlog", "SELECT \"summary\" FROM \"anomaly\" WHERE \"state\" = 'opened'"))
                        .hasSize(1);
                assertThat(sink.anomalyCounters().exported()).isEqualTo(1);
                assertThat(sink.anomalyCounters().lost()).isZero();
                final SinkCounters all = sink.counters();
                assertThat(all.offered()).isEqualTo(1_011);
                assertThat(all.exported() + all.droppedQueueFull()).isEqualTo(1_011);
            }
        }
    }
}
