package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The decision of docs/fleet-wire.md, checked on the aggregator's own path: fed only what travels (receive STEP
 * flows, LINK aggregates, collectives; {@link FleetWire#judgedCentrally}) it names the same anomalies, with the
 * same culprits and figures, as fed every summary of the run. Faults whose evidence crosses nodes; NIC faults are
 * the agent's to name (its own stage reads its QP flows), so none is injected here. A hang, from every summary and
 * from the subset, is {@link AggregatorHangTest}'s: it needs a run longer than the service's 500 ms hang threshold.
 */
class CentralSubsetTest {
    @ParameterizedTest
    @ValueSource(
            strings = {
                "default,duration=400ms",
                "nodes=2,gpus=4,channels=2,duration=400ms,fault=slow-link,rank=3,peer=4,fraction=0.4,at=100ms",
                "nodes=2,gpus=4,channels=2,duration=400ms,fault=slow-gpu,rank=5,fraction=0.5,at=100ms"
            })
    void theCentralSubsetNamesWhatEverySummaryNames(final String scenario) {
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), Map.of());
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        final FleetWireEncoder wire = new FleetWireEncoder("agent-1");
        final List<byte[]> all = new ArrayList<>();
        final List<byte[]> central = new ArrayList<>();
        final long[] seq = {0};
        final long[] byKind = new long[5];
        p.tap(
                s -> {
                    final byte[] r = wire.flow(++seq[0], s, "node-a");
                    all.add(r);
                    byKind[s.kind()]++;
                    if (FleetWire.judgedCentrally(s)) {
                        central.add(r); // same agent and seq: the gaps are what a filtering agent leaves
                    }
                },
                c -> {
                    final byte[] r = wire.collective(++seq[0], c);
                    all.add(r);
                    central.add(r);
                });
        final SimulatorSource sim = new SimulatorSource(scenario, 1e12, 0);
        while (!sim.finished()) {
            sim.poll(p);
            p.endBatch(0);
        }
        p.finish();
        assertThat(byKind[FlowSummary.KIND_QP]).as("QP flows in the run").isPositive();
        assertThat(central.size()).isLessThan(all.size());

        final List<String> fromAll = withoutOffsets(aggregator().applyOffline(all));
        assertThat(fromAll).as("anomalies named from every summary").isNotEmpty();
        assertThat(withoutOffsets(aggregator().applyOffline(central))).isEqualTo(fromAll);
        System.out.printf(
                "central subset: %s: %d of %d records, %d anomaly events%n",
                scenario, central.size(), all.size(), fromAll.size());
    }

    private static Aggregator aggregator() {
        return new Aggregator(CollectorConfig.load(null, Map.of(), Map.of()).fleet(), "central-test", e -> {});
    }

    private static List<String> withoutOffsets(final List<String> events) {
        return events.stream().map(e -> e.substring(e.indexOf(' ') + 1)).toList();
    }
}
