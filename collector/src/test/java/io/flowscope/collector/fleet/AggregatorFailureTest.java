package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.FailingStage;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.Pipeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A fleet aggregator whose anomaly stage throws on some records (issue #15, acceptance 4, for the aggregator's
 * loop): the failures are counted and in its health, and the records after them are still judged. No broker: the
 * records go through the aggregator's own per-record path, as {@code Aggregator.reference} does.
 */
class AggregatorFailureTest {
    /** The agent's records of a simulated run: every flow and collective summary, as an agent publishes them. */
    private static List<byte[]> records() {
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), Map.of());
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        final List<byte[]> out = new ArrayList<>();
        final long[] seq = {0};
        p.tap(
                s -> out.add(FleetCodec.flow("agent-1", ++seq[0], s, "node-a")),
                c -> out.add(FleetCodec.collective("agent-1", ++seq[0], c)));
        final SimulatorSource sim = new SimulatorSource("default,duration=300ms", 1e12, 0);
        while (!sim.finished()) {
            sim.poll(p);
            p.endBatch(0);
        }
        p.finish();
        return out;
    }

    @Test
    void shouldCountAStageThatThrowsOnSomeRecordsAndJudgeTheRecordsAfterThem() {
        final List<byte[]> records = records();
        final AtomicLong thrown = new AtomicLong();
        final AtomicLong judgedAfter = new AtomicLong();
        final Function<AnomalySink, AnomalyStage> factory =
                FailingStage.factory(s -> s.rank() == 0, host -> false, thrown, judgedAfter);
        final Aggregator a =
                new Aggregator(CollectorConfig.load(null, Map.of(), Map.of()).fleet(), "test", e -> {}, factory);
        a.applyOffline(records);

        assertThat(thrown.get()).isPositive();
        assertThat(judgedAfter.get()).isPositive();
        final IngestFailures.Counts f = a.failures();
        assertThat(f.of(IngestFailures.Stage.ANOMALY)).isEqualTo(thrown.get());
        assertThat(f.last()).contains("injected by the test");
        final Map<String, Object> h = a.health();
        assertThat(h.get("status")).isEqualTo("DEGRADED");
        @SuppressWarnings("unchecked")
        final Map<String, Object> failures = (Map<String, Object>) h.get("failures");
        assertThat(failures.get("total")).isEqualTo(thrown.get());

        // the healthy aggregator on the same records: nothing counted, UP
        final Aggregator healthy =
                new Aggregator(CollectorConfig.load(null, Map.of(), Map.of()).fleet(), "ok", e -> {});
        assertThat(healthy.applyOffline(records)).isNotEmpty();
        assertThat(healthy.failures().total()).isZero();
        assertThat(healthy.health().get("status")).isEqualTo("UP");
    }
}
