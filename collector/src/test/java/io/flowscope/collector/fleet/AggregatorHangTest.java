package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A hang through the fleet's records alone: the aggregator, fed what an agent publishes for a simulated run with a
 * stalled rank (every summary, and the central subset), names the HANG the single-process pipeline names for the
 * same run, with the same culprit, start and detection time. No record of the hung host's time is needed: the
 * agent's window engine takes its idle ticks (journaled) and ends the waiting hosts' periods, and their receive
 * STEP flows, outstanding work and all, carry each host's time to the aggregator. A run must outlast the
 * service's 500 ms hang threshold ({@code AnomalyStages.HANG_THRESHOLD_NS}) for either to name one.
 */
class AggregatorHangTest {
    @ParameterizedTest(name = "rank {1} hangs: {0}")
    @CsvSource(
            delimiter = ';',
            value = {
                // culprit and waiter (rank 6) on one node
                "nodes=2,gpus=4,channels=2,size=8M,seed=23,duration=900ms,fault=hang,rank=5,at=100ms; 5",
                // culprit on node 0, its waiter (rank 4) on node 1: the wait-for graph spans nodes
                "nodes=2,gpus=4,channels=2,size=8M,seed=23,duration=900ms,fault=hang,rank=3,at=100ms; 3"
            })
    void theAggregatorNamesTheHangTheServiceNames(final String scenario, final int rank) {
        final SimulatedAgent run = SimulatedAgent.run(scenario);
        final List<AnomalyEvent> service = run.service();
        final List<byte[]> all = run.all();
        final List<byte[]> central = run.central();

        final List<Anomaly> serviceHangs = service.stream()
                .filter(e -> e.type().equals("opened") && e.anomaly().kind() == AnomalyKind.HANG)
                .map(AnomalyEvent::anomaly)
                .toList();
        assertThat(serviceHangs).as("the single-process service's hangs").hasSize(1);
        final Anomaly expected = serviceHangs.get(0);
        assertThat(expected.culprit().rank()).isEqualTo(rank);
        final String culprit =
                FleetCodec.MAPPER.valueToTree(Json.culprit(expected.culprit())).toString();

        for (final List<byte[]> records : List.of(all, central)) {
            final List<JsonNode> fleetHangs = hangs(aggregator().applyOffline(records));
            assertThat(fleetHangs)
                    .as("the aggregator's hangs from %d records", records.size())
                    .hasSize(1);
            final JsonNode got = fleetHangs.get(0);
            assertThat(got.path("culprit").toString()).isEqualTo(culprit);
            assertThat(got.path("startNs").asLong()).isEqualTo(expected.startNs());
            assertThat(got.path("detectedNs").asLong()).isEqualTo(expected.detectedNs());
        }
        System.out.printf(
                "fleet hang: rank %d (peer %d), detected at %d ms from %d records (central subset %d)%n",
                expected.culprit().rank(),
                expected.culprit().peer(),
                expected.detectedNs() / 1_000_000,
                all.size(),
                central.size());
    }

    private static Aggregator aggregator() {
        return new Aggregator(CollectorConfig.load(null, Map.of(), Map.of()).fleet(), "hang-test", e -> {});
    }

    /** The anomalies of the aggregator's HANG "opened" events ({@link Aggregator#describe}), as JSON. */
    private static List<JsonNode> hangs(final List<String> events) {
        final List<JsonNode> out = new ArrayList<>();
        for (final String e : events) {
            final String[] f = e.split(" ", 3);
            if (!f[1].equals("opened")) {
                continue;
            }
            final JsonNode a = FleetCodec.read(("{\"v\":1,\"a\":" + f[2] + "}").getBytes(StandardCharsets.UTF_8))
                    .path("a");
            if (a.path("kind").asText().equals(AnomalyKind.HANG.name())) {
                out.add(a);
            }
        }
        return out;
    }
}
