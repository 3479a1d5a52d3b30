package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.flowscope.collector.CollectorService;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opt-in ({@code -Dflowscope.bench=true}): end-to-end throughput through a real broker. A simulated run is
 * journaled first (no Kafka), then timed: an agent publishing the whole journal (engine input events read,
 * summaries and anomaly events sent, every 1000th event sampled) until Kafka acknowledged all; then an
 * aggregator consuming every summary to the end (Kafka Streams, exactly once, checkpoints, the tail in the
 * summaries topic), timed from its start and from its first record; then the same with the tail in its state
 * store ({@code fleet.checkpoint.tail=store}). The figures are in docs/benchmarks.md section 8.
 */
@EnabledIfSystemProperty(named = "flowscope.bench", matches = "true")
class FleetBenchmark {
    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    @TempDir
    Path dir;

    @Test
    void shouldMeasureEventsAndSummariesPerSecondThroughKafka() throws Exception {
        final long seconds = Long.getLong("flowscope.bench.seconds", 5);
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("simulate.scenario", "default");
        o.put("simulate.durationSeconds", Long.toString(seconds));
        o.put("simulate.speed", "1000");
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), o);
        try (CollectorService s = CollectorService.start(config, e -> {})) {
            await().atMost(Duration.ofMinutes(5)).until(() -> s.finished());
        }
        final JournalCounts counts = JournalCounts.of(config, 1000);
        final long events = counts.events();
        final long summaries = counts.summaries();
        final long expected = counts.outputs();

        // both encodings of fleet.wire, each on its own topics: the JSON one is the baseline of the same run
        for (final String wire : new String[] {"json", "binary"}) {
            final FleetConfig fleet = CollectorConfig.load(
                            null,
                            Map.of(),
                            Map.of(
                                    "fleet.bootstrap",
                                    BROKER.bootstrap(),
                                    "fleet.topicPrefix",
                                    "bench-" + wire,
                                    "fleet.agentId",
                                    "bench-agent",
                                    "fleet.eventSampleEvery",
                                    "1000",
                                    "fleet.group",
                                    "bench-group-" + wire,
                                    "fleet.wire",
                                    wire,
                                    // every summary, as the figures in docs/benchmarks.md section 8 were taken
                                    "fleet.publish",
                                    "all"))
                    .fleet();
            Topics.ensure(fleet);
            // the journal's "published up to" mark of the previous encoding's agent: this one publishes it all
            java.nio.file.Files.deleteIfExists(Path.of(config.journalDir() + ".fleet-published"));
            final long t0 = System.nanoTime();
            try (AgentPublisher agent = new AgentPublisher(config, fleet).start()) {
                await().atMost(Duration.ofMinutes(10))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> agent.publishedUpTo() == expected);
            }
            final double agentS = (System.nanoTime() - t0) / 1e9;

            final long t1 = System.nanoTime();
            try (Aggregator agg = new Aggregator(fleet, "bench", e -> {}).start()) {
                // also timed from its first record: the group join and partition assignment left out
                final long first = firstRecordOfAll(agg, summaries);
                final double aggS = (System.nanoTime() - t1) / 1e9;
                final double steadyS = (System.nanoTime() - first) / 1e9;
                assertThat(agg.anomalies()).isNotEmpty();
                System.out.printf(
                        "FLEET BENCH (fleet.wire=%s): %d engine input events, %d summaries, %d records " + "in all%n"
                                + "FLEET BENCH (fleet.wire=%s): agent journal -> Kafka (acked): %.2f s = %.0f events/s, "
                                + "%.0f summaries/s, %.0f records/s%n"
                                + "FLEET BENCH (fleet.wire=%s): aggregator Kafka -> anomaly stage (transactions committed): "
                                + "%.2f s = %.0f summaries/s; %d transactions, %d anomalies%n"
                                + "FLEET BENCH (fleet.wire=%s): aggregator from its first record: %.2f s = %.0f summaries/s"
                                + " (fleet.checkpoint.tail=topic, %d checkpoints)%n",
                        wire,
                        events,
                        summaries,
                        expected,
                        wire,
                        agentS,
                        events / agentS,
                        summaries / agentS,
                        expected / agentS,
                        wire,
                        aggS,
                        summaries / aggS,
                        agg.transactions(),
                        agg.anomalies().size(),
                        wire,
                        steadyS,
                        summaries / steadyS,
                        agg.checkpoints());
            }
            for (final String tail : TAILS.split(",")) {
                timeWithTail(fleet, wire, summaries, tail);
            }
        }
    }

    /** {@code fleet.checkpoint.tail} of the further runs, one each ({@code -Dflowscope.bench.tails}; empty: none). */
    private static final String TAILS = System.getProperty("flowscope.bench.tails", "store");

    /**
     * The same summaries again (a group of its own) through an aggregator with another {@code fleet.checkpoint.tail}:
     * the run above reads the tail from the summaries topic (the default).
     */
    private static void timeWithTail(
            final FleetConfig fleet, final String wire, final long summaries, final String tail) throws Exception {
        if (tail.isBlank()) {
            return;
        }
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("fleet.bootstrap", fleet.bootstrap());
        o.put("fleet.topicPrefix", fleet.topicPrefix());
        o.put("fleet.group", fleet.group() + "-tail-" + tail);
        o.put("fleet.checkpoint.tail", tail);
        final FleetConfig again = CollectorConfig.load(null, Map.of(), o).fleet();
        try (Aggregator agg = new Aggregator(again, "bench-tail-" + tail, e -> {}).start()) {
            final double steadyS = (System.nanoTime() - firstRecordOfAll(agg, summaries)) / 1e9;
            System.out.printf(
                    "FLEET BENCH (fleet.wire=%s): aggregator with fleet.checkpoint.tail=%s: from its first record %.2f s"
                            + " = %.0f summaries/s; %d checkpoints%n",
                    wire, tail, steadyS, summaries / steadyS, agg.checkpoints());
        }
    }

    /** Waits until {@code agg} has consumed {@code summaries} records; returns when (nanoTime) its first came. */
    private static long firstRecordOfAll(final Aggregator agg, final long summaries) {
        final long[] first = {0};
        await().atMost(Duration.ofMinutes(10))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> {
                    if (first[0] == 0 && agg.records() > 0) {
                        first[0] = System.nanoTime();
                    }
                    return agg.records() >= summaries;
                });
        return first[0];
    }
}
