package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.pipeline.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The decision of docs/fleet-wire.md, checked on the aggregator's own path against the service. Fed every summary
 * of a run, the aggregator publishes what the service's pipeline publishes over the same run, event for event
 * (times and evidence included); fed only what travels (receive STEP flows, LINK aggregates, collectives;
 * {@link FleetWire#judgedCentrally}) it names the same anomalies with the same kinds and culprits. Their times may
 * differ there: without the QP flows the aggregator does not see the node's NICs, which hold the period rules back
 * while a NIC's latency reads as congestion (the slow GPU below: its link named 59 ms earlier, at the fault's
 * onset). Faults whose evidence crosses nodes; NIC faults are the agent's to name (its own stage reads its QP
 * flows). A hang, from every summary and from the subset, is {@link AggregatorHangTest}'s: it needs a run longer
 * than the service's 500 ms hang threshold. {@code FleetPeriodComparison} (benchmarks) runs the simulator's
 * built-in scenarios the same way.
 */
class CentralSubsetTest {
    @ParameterizedTest
    @ValueSource(
            strings = {
                "default,duration=400ms",
                "nodes=2,gpus=4,channels=2,duration=400ms,fault=slow-link,rank=3,peer=4,fraction=0.4,at=100ms",
                "nodes=2,gpus=4,channels=2,duration=400ms,fault=slow-gpu,rank=5,fraction=0.5,at=100ms"
            })
    void theAggregatorNamesWhatTheServiceNames(final String scenario) {
        final SimulatedAgent run = SimulatedAgent.run(scenario);
        final List<byte[]> all = run.all();
        final List<byte[]> central = run.central();
        final List<String> service = run.service().stream()
                .map(e -> e.type() + " " + FleetCodec.MAPPER.valueToTree(Json.anomaly(e.anomaly())))
                .toList();
        assertThat(run.flowsByKind()[FlowSummary.KIND_QP])
                .as("QP flows in the run")
                .isPositive();
        assertThat(central.size()).isLessThan(all.size());

        assertThat(service).as("anomalies the service names").isNotEmpty();
        assertThat(withoutOffsets(aggregator().applyOffline(all)))
                .as("every summary: what the service publishes")
                .isEqualTo(service);
        final List<String> fromCentral = withoutOffsets(aggregator().applyOffline(central));
        assertThat(culprits(fromCentral))
                .as("the central subset: the service's kinds and culprits")
                .isEqualTo(culprits(service));
        System.out.printf(
                "central subset: %s: %d of %d records, %d anomaly events%n",
                scenario, central.size(), all.size(), service.size());
    }

    private static Aggregator aggregator() {
        return new Aggregator(CollectorConfig.load(null, Map.of(), Map.of()).fleet(), "central-test", e -> {});
    }

    /** "event kind culprit" of each anomaly event, in order: what is named, not when. */
    private static List<String> culprits(final List<String> events) {
        return events.stream()
                .map(e -> {
                    final String[] parts = e.split(" ", 2);
                    try {
                        final JsonNode a = FleetCodec.MAPPER.readTree(parts[1]);
                        return parts[0] + " " + a.path("kind").asText() + " " + a.path("culprit");
                    } catch (final java.io.IOException x) {
                        throw new IllegalStateException(x);
                    }
                })
                .toList();
    }

    private static List<String> withoutOffsets(final List<String> events) {
        return events.stream().map(e -> e.substring(e.indexOf(' ') + 1)).toList();
    }
}
