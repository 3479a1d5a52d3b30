package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.bench.cluster.ClusterFrames;
import io.flowscope.bench.cluster.ClusterReference;
import io.flowscope.bench.cluster.ClusterSpec;
import io.flowscope.bench.cluster.ClusterStream;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.fleet.wire.FleetWireDecoder;
import io.flowscope.collector.fleet.wire.WireSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The cluster harness's stream through the agents' selection and frames into aggregators, without a broker: eight
 * data-parallel communicators of two nodes on two partitions (several communicators and their hosts in one stage, as
 * at cluster scale), three faults. The aggregators open exactly what the single-process reference opens over every
 * node, with the same culprits and detection times; the node-local communicators never reach them.
 */
class ClusterFramesTest {
    private static final String SPEC = "nodes=16,gpus=8,group=2,channels=2,period=10,seed=3,template=4000,every=16,"
            + "faults=slow-link:1:3:4@4;slow-gpu:3:12@4;hang:5:9@4";

    @Test
    void aggregatorsFedFramesNameWhatTheReferenceNames() throws Exception {
        final ClusterSpec spec = ClusterSpec.parse(SPEC);
        final int partitions = 2;
        final long periods = 7_000 / spec.periodMs();
        final ClusterStream stream = new ClusterStream(spec);
        final int nodes = spec.nodes();
        final List<List<byte[]>> byPartition = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            byPartition.add(new ArrayList<>());
        }
        final ClusterFrames agents = new ClusterFrames(stream, 0, nodes, partitions);
        for (long k = 0; k < periods; k++) {
            agents.period(
                    k,
                    (partition, summaries, frame) -> byPartition.get(partition).add(frame));
        }
        // the communicators that reached the aggregators: never a node's own
        final java.util.Set<Long> comms = new java.util.HashSet<>();
        final FleetWireDecoder d = new FleetWireDecoder();
        final FlowSummary flow = new FlowSummary();
        final CollectiveSummary coll = new CollectiveSummary();
        for (final List<byte[]> partition : byPartition) {
            for (final byte[] frame : partition) {
                for (final byte[] r : FleetWire.records(frame)) {
                    comms.add(
                            d.wrap(r) == WireSchema.FLOW_TEMPLATE_ID
                                    ? d.flowInto(flow).commHash()
                                    : d.collectiveInto(coll).commHash());
                }
            }
        }
        assertThat(comms).hasSize(spec.groups());
        for (int n = 0; n < nodes; n++) {
            assertThat(comms).as("node %d's own communicator stays on it", n).doesNotContain(stream.nodeComm(n));
        }
        assertThat(agents.keptOnNode()).isPositive();
        assertThat(byPartition).allSatisfy(p -> assertThat(p).isNotEmpty());
        final TreeSet<String> aggregated = new TreeSet<>();
        for (int p = 0; p < partitions; p++) {
            final Aggregator a = new Aggregator(
                    CollectorConfig.load(null, Map.of(), Map.of()).fleet(), "frames", e -> {});
            for (final String e : a.applyOffline(byPartition.get(p))) {
                final String[] parts = e.split(" ", 3);
                if (parts[1].equals("opened")) {
                    final JsonNode j = FleetCodec.MAPPER.readTree(parts[2]);
                    final JsonNode c = j.path("culprit");
                    aggregated.add(String.format(
                            "%s host=%s comm=%s rank=%d peer=%d detected %d ms",
                            j.path("kind").asText(),
                            c.path("host").asText().replace("0x", ""),
                            c.path("comm").asText().replace("0x", ""),
                            c.path("rank").asInt(),
                            c.path("peer").asInt(),
                            j.path("detectedNs").asLong() / 1_000_000));
                }
            }
        }
        final int[] all = new int[nodes];
        for (int n = 0; n < nodes; n++) {
            all[n] = n;
        }
        final List<ClusterReference.Named> reference = ClusterReference.opened(stream, all, periods);
        final TreeSet<String> expected = new TreeSet<>();
        reference.forEach(r -> expected.add(r.identity() + " detected " + r.detectedNs() / 1_000_000 + " ms"));
        for (final ClusterSpec.FaultSpec f : spec.faults()) {
            assertThat(ClusterReference.naming(stream, f, reference))
                    .as("the reference names " + f)
                    .isNotNull();
        }
        assertThat(aggregated).isEqualTo(expected);
    }
}
