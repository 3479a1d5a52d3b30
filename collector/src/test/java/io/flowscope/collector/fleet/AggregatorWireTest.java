package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.fleet.wire.FleetWireFrame;
import io.flowscope.collector.fleet.wire.WireFormatException;
import io.flowscope.collector.fleet.wire.WireSchema;
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

    /** The binary records in frames of {@code size} (the last one shorter), as an agent sends them. */
    private static List<byte[]> framed(final int size) {
        final FleetWireEncoder wire = new FleetWireEncoder("agent-1");
        final FleetWireFrame frame = new FleetWireFrame(wire);
        final List<byte[]> out = new ArrayList<>();
        final io.flowscope.collector.fleet.wire.FleetWireDecoder d =
                new io.flowscope.collector.fleet.wire.FleetWireDecoder();
        final io.flowscope.api.summary.FlowSummary f = new io.flowscope.api.summary.FlowSummary();
        final io.flowscope.api.summary.CollectiveSummary c = new io.flowscope.api.summary.CollectiveSummary();
        for (final byte[] r : BINARY) {
            if (d.wrap(r) == WireSchema.FLOW_TEMPLATE_ID) {
                frame.addFlow(d.seq(), d.flowInto(f), d.hostName());
            } else {
                frame.addCollective(d.seq(), d.collectiveInto(c));
            }
            if (frame.count() == size) {
                out.add(frame.take());
            }
        }
        if (frame.count() > 0) {
            out.add(frame.take());
        }
        return out;
    }

    @Test
    void framesGiveTheSameAnomaliesAsTheirRecordsOneByOne() {
        final List<String> single = withoutOffsets(aggregator().applyOffline(BINARY));
        assertThat(single).isNotEmpty();
        for (final int size : new int[] {1, 37, 1000}) {
            final List<byte[]> frames = framed(size);
            final List<byte[]> unpacked = new ArrayList<>();
            frames.forEach(fr -> unpacked.addAll(FleetWire.records(fr)));
            assertThat(unpacked).as("the records a frame holds").hasSameSizeAs(BINARY);
            for (int i = 0; i < BINARY.size(); i++) {
                assertThat(unpacked.get(i)).isEqualTo(BINARY.get(i));
            }
            assertThat(withoutOffsets(aggregator().applyOffline(frames)))
                    .as("frames of %d", size)
                    .isEqualTo(single);
        }
    }

    @Test
    void aDamagedFrameKeepsTheRecordsBeforeTheDamageAndSkipsItsRest() {
        final List<byte[]> frames = framed(100);
        final byte[] whole = frames.get(3);
        final byte[] truncated = Arrays.copyOf(whole, whole.length / 2);
        final byte[] nested = new FleetWireFrame(new FleetWireEncoder("x")).take(); // an empty frame: fine
        final byte[] badCount = whole.clone();
        badCount[WireSchema.HEADER_LENGTH] = (byte) 0xFF; // count 255 + ...: entries missing at the end
        final Aggregator a = aggregator();
        final List<byte[]> damaged = new ArrayList<>(frames);
        damaged.add(3, truncated); // the first half of frame 3 applied, its second half from the whole frame after
        damaged.add(nested);
        damaged.add(badCount); // every record a resend of frame 3: dropped, then the missing entry skipped
        final List<String> events = a.applyOffline(damaged);
        assertThat(withoutOffsets(events)).isEqualTo(withoutOffsets(aggregator().applyOffline(frames)));
        assertThat(a.health().get("skippedRecords")).isEqualTo(2L);
        assertThat(a.duplicates()).isGreaterThanOrEqualTo(100);
        // a frame inside a frame is refused record by record, not applied
        final io.flowscope.collector.fleet.wire.FleetWireDecoder d =
                new io.flowscope.collector.fleet.wire.FleetWireDecoder();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> d.wrap(whole))
                .isInstanceOf(WireFormatException.class)
                .hasMessageContaining("a frame where a summary record belongs");
    }

    /** An anomaly event without the offset of the record that produced it (inserted records shift offsets). */
    private static List<String> withoutOffsets(final List<String> events) {
        return events.stream().map(e -> e.substring(e.indexOf(' ') + 1)).toList();
    }
}
