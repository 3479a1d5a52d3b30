package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.bench.cluster.ClusterReference;
import io.flowscope.bench.cluster.ClusterSpec;
import io.flowscope.bench.cluster.ClusterStream;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.fleet.wire.FleetWireFrame;
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
        final List<List<byte[]>> byPartition = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            byPartition.add(new ArrayList<>());
        }
        final int nodes = spec.nodes();
        final CentralSelection selection = new CentralSelection(false, spec.collectiveEvery());
        final FleetWireFrame[] frames = new FleetWireFrame[nodes];
        final long[] seqs = new long[nodes];
        for (int n = 0; n < nodes; n++) {
            frames[n] = new FleetWireFrame(new FleetWireEncoder(stream.hostName(n)));
            final long host = stream.hostId(n);
            stream.ranks(n, (comm, rank, nranks) -> selection.onRank(host, comm, rank, nranks));
        }
        final int[] node = {0};
        final int[] part = {0};
        final java.util.Set<Long> comms = new java.util.HashSet<>();
        final ClusterStream.Out out = new ClusterStream.Out() {
            @Override
            public void flow(final FlowSummary s) {
                final int n = node[0];
                ++seqs[n];
                if (selection.flow(s)) {
                    comms.add(s.commHash());
                    part[0] = FleetCodec.partition(s, partitions);
                    frames[n].addFlow(seqs[n], s, stream.hostName(n));
                }
            }

            @Override
            public void collective(final CollectiveSummary s) {
                final int n = node[0];
                ++seqs[n];
                if (selection.collective(s)) {
                    comms.add(s.commHash());
                    part[0] = FleetCodec.partition(s, partitions);
                    frames[n].addCollective(seqs[n], s);
                }
            }
        };
        for (long k = 0; k < periods; k++) {
            for (int n = 0; n < nodes; n++) {
                node[0] = n;
                final long host = stream.hostId(n);
                seqs[n] += stream.node(n, k, out, comm -> !selection.keptOnNode(host, comm));
                if (frames[n].count() > 0) {
                    byPartition.get(part[0]).add(frames[n].take());
                }
            }
        }
        for (int n = 0; n < nodes; n++) {
            assertThat(comms).as("node %d's own communicator stays on it", n).doesNotContain(stream.nodeComm(n));
        }
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
