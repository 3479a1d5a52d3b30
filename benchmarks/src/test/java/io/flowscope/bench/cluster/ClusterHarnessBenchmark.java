package io.flowscope.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.fleet.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Opt-in ({@code -Dflowscope.bench=true}): the fleet at cluster scale through a real broker, every part its own
 * process ({@link ClusterHarness}). Defaults: 16 nodes × 8 GPUs (8 data-parallel communicators of 2 nodes, 16
 * tensor-parallel ones), 10 ms periods, a slow link, a slow GPU and a hang from 5 s, 1 agent, 1 aggregator, 4
 * partitions, 20 s. {@code -Dflowscope.cluster.spec=...}, {@code .agents}, {@code .aggregators},
 * {@code .partitions}, {@code .seconds}, {@code .out} (where the time series and summary go) change them. Fails
 * unless the aggregators name every injected fault with the reference's culprit. Figures:
 * docs/perf-journal/8-kafka-fleet.md.
 */
@EnabledIfSystemProperty(named = "flowscope.bench", matches = "true")
class ClusterHarnessBenchmark {
    static final String SPEC =
            "nodes=16,gpus=8,group=2,channels=2,period=10,seed=3,template=4000,faults=slow-link:1:3:4@4;"
                    + "slow-gpu:4:12@4;hang:6:9@4";

    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    @Test
    void theAggregatorsNameEveryInjectedFaultAsTheReferenceDoes() throws Exception {
        final ClusterSpec spec = ClusterSpec.parse(System.getProperty("flowscope.cluster.spec", SPEC));
        final Path out = Path.of(System.getProperty("flowscope.cluster.out", "target/cluster"));
        Files.createDirectories(out);
        final ClusterHarness.Params p = new ClusterHarness.Params(
                spec,
                Integer.getInteger("flowscope.cluster.agents", 1),
                Integer.getInteger("flowscope.cluster.aggregators", 1),
                Integer.getInteger("flowscope.cluster.partitions", 4),
                Long.getLong("flowscope.cluster.seconds", 20),
                BROKER.bootstrap(),
                Long.parseLong(
                        Files.readString(BROKER.dir().resolve("broker.pid")).trim()));
        final ClusterHarness.Result r = new ClusterHarness(p, out).run();
        assertThat(r.faults()).hasSize(spec.faults().size());
        r.faults().forEach((fault, verdict) -> assertThat(verdict).as(fault).startsWith("named "));
    }
}
