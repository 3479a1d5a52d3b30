package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hang through the real broker: a service simulating a run where rank 3 stops progressing (its waiter, rank 4,
 * on the other node), its agent publishing to Kafka, an aggregator consuming: the aggregator names the HANG with
 * the culprit the service names itself.
 */
class FleetHangIT {
    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    private static final String HANG =
            "nodes=2,gpus=4,channels=2,size=8M,seed=23,duration=900ms,fault=hang,rank=3,at=100ms";

    @TempDir
    Path dir;

    @Test
    void theAggregatorNamesTheHangWithTheCulpritTheServiceNames() throws Exception {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("simulate.scenario", HANG);
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), o);
        final FleetConfig fleet = CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                "fleet.role",
                                "agent",
                                "fleet.bootstrap",
                                BROKER.bootstrap(),
                                "fleet.topicPrefix",
                                "hang",
                                "fleet.agentId",
                                "agent-h",
                                "fleet.group",
                                "hang-group",
                                "fleet.partitions",
                                "4"))
                .fleet();
        final List<AnomalyEvent> service = new CopyOnWriteArrayList<>();
        final List<AnomalyEvent> fleetEvents = new CopyOnWriteArrayList<>();
        final Aggregator aggregator = new Aggregator(fleet, "hang-it", fleetEvents::add).start();
        AgentPublisher agent = null;
        try (CollectorService s = CollectorService.start(config, service::add)) {
            agent = Agents.start(s, config, fleet);
            await().atMost(Duration.ofSeconds(40))
                    .until(() ->
                            !hangs(service).isEmpty() && !hangs(fleetEvents).isEmpty());
        } finally {
            if (agent != null) {
                agent.close();
            }
            aggregator.close();
        }
        final List<Anomaly> expected = hangs(service);
        assertThat(expected).hasSize(1);
        assertThat(expected.get(0).culprit().rank()).isEqualTo(3);
        final List<Anomaly> named = hangs(fleetEvents);
        assertThat(named).hasSize(1);
        assertThat(named.get(0).culprit()).isEqualTo(expected.get(0).culprit());
        assertThat(named.get(0).detectedNs()).isEqualTo(expected.get(0).detectedNs());
        System.out.printf(
                "fleet hang IT: rank %d (peer %d) named by the aggregator, detected at %d ms; %d records consumed%n",
                named.get(0).culprit().rank(),
                named.get(0).culprit().peer(),
                named.get(0).detectedNs() / 1_000_000,
                aggregator.records());
    }

    private static List<Anomaly> hangs(final List<AnomalyEvent> events) {
        return events.stream()
                .filter(e -> e.type().equals("opened") && e.anomaly().kind() == AnomalyKind.HANG)
                .map(AnomalyEvent::anomaly)
                .toList();
    }
}
