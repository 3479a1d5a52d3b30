package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The aggregator's per-record path on the binary records of {@code fleet.wire} (no broker: as
 * {@code Aggregator.reference} applies them): the same anomalies as from the JSON records of the same run, either
 * encoding mixed on one partition, and damaged records counted and skipped without stopping the partition.
 */
class AggregatorWireTest {
    private static final List<byte[]> JSON = new ArrayList<>();
    private static final List<byte[]> BINARY = new ArrayList<>();

    /** One simulated run (a slow link), each output written in both encodings with the same agent and seq. */
    @BeforeAll
    static void records() {
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), Map.of());
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        final FleetWireEncoder wire = new FleetWireEncoder("agent-1");
        final long[] seq = {0};
        p.tap(
                s -> {
                    JSON.add(FleetCodec.flow("agent-1", ++seq[0], s, "node-a"));
                    BINARY.add(wire.flow(seq[0], s, "node-a"));
                },
                c -> {
                    JSON.add(FleetCodec.collective("agent-1", ++seq[0], c));
                    BINARY.add(wire.collective(seq[0], c));
                });
        final SimulatorSource sim = new SimulatorSource("default,duration=300ms", 1e12, 0);
        while (!sim.finished()) {
            sim.poll(p);
            p.endBatch(0);
        }
        p.finish();
    }

    private static Aggregator aggregator() {
        return new Aggregator(CollectorConfig.load(null, Map.of(), Map.of()).fleet(), "wire-test", e -> {});
    }

    @Test
    void binaryRecordsGiveTheSameAnomaliesAsJsonRecords() {
        final List<String> fromJson = aggregator().applyOffline(JSON);
        assertThat(fromJson).isNotEmpty();
        assertThat(aggregator().applyOffline(BINARY)).isEqualTo(fromJson);

        final List<byte[]> mixed = new ArrayList<>();
        for (int i = 0; i < JSON.size(); i++) {
            mixed.add(i % 2 == 0 ? JSON.get(i) : BINARY.get(i)); // agents upgraded one by one share a partition
        }
        assertThat(aggregator().applyOffline(mixed)).isEqualTo(fromJson);
    }

    @Test
    void damagedRecordsAreCountedAndSkippedAndTheRecordsAfterThemJudged() {
        final byte[] first = BINARY.get(0);
        final byte[] foreignSchema = first.clone();
        foreignSchema[4] = 0x34;
        foreignSchema[5] = 0x12;
        final List<byte[]> bad = List.of(
                Arrays.copyOf(first, 20),
                foreignSchema,
                new byte[0],
                "{\"v\":1,\"agent\":".getBytes(StandardCharsets.UTF_8),
                new byte[] {(byte) 0xAA, 0, 9, 0, 0x66, 0x73, 1, 0});
        final List<byte[]> damaged = new ArrayList<>();
        for (int i = 0; i < BINARY.size(); i++) {
            damaged.add(BINARY.get(i));
            if (i % 1000 == 500) {
                damaged.addAll(bad);
            }
        }
        final long inserted = damaged.size() - BINARY.size();
        assertThat(inserted).isPositive();
        damaged.add(BINARY.get(BINARY.size() / 2)); // an agent's resend: dropped by (agent, seq), not skipped

        final Aggregator a = aggregator();
        final List<String> events = a.applyOffline(damaged);
        assertThat(withoutOffsets(events)).isEqualTo(withoutOffsets(aggregator().applyOffline(BINARY)));
        assertThat(a.health().get("skippedRecords")).isEqualTo(inserted);
        assertThat(a.duplicates()).isEqualTo(1);
    }

    /** An anomaly event without the offset of the record that produced it (inserted records shift offsets). */
    private static List<String> withoutOffsets(final List<String> events) {
        return events.stream().map(e -> e.substring(e.indexOf(' ') + 1)).toList();
    }
}
