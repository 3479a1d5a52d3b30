package io.flowscope.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClusterStreamTest {
    /** 8 nodes × 8 GPUs, 4 data-parallel groups of 2 nodes; a fault in three of them from the second template loop. */
    static final String SPEC =
            "nodes=8,gpus=8,group=2,channels=2,period=10,seed=7,template=2000,faults=slow-link:1:3:4@2;slow-gpu:2:12@2;"
                    + "hang:3:9@2";

    /**
     * Small enough to build three times (the templates' simulation is the cost): 4 nodes × 4 GPUs, 1 s templates, a
     * slow link from 1.25 s; 250 periods cover the healthy loop, the fault's run and its repeated second half.
     */
    static final String SMALL =
            "nodes=4,gpus=4,group=2,channels=2,period=10,seed=7,template=1000,faults=slow-link:1:3:4@1";

    /** One stream of {@link #SPEC} for the tests that only read it. */
    private static ClusterStream shared;

    private static synchronized ClusterStream shared() {
        if (shared == null) {
            shared = new ClusterStream(ClusterSpec.parse(SPEC));
        }
        return shared;
    }

    @Test
    void theSameSpecGivesTheSameStreamAndAnotherSeedAnother() throws Exception {
        final ClusterSpec spec = ClusterSpec.parse(SMALL);
        final String a = digest(new ClusterStream(spec), 250);
        final String b = digest(new ClusterStream(ClusterSpec.parse(spec.text())), 250);
        final String c = digest(new ClusterStream(ClusterSpec.parse(SMALL.replace("seed=7", "seed=8"))), 250);
        assertThat(b).isEqualTo(a);
        assertThat(c).isNotEqualTo(a);
    }

    @Test
    void anAgentsSelectionKeepsTheTensorParallelCommunicatorOnTheNodeAndSamplesCollectives() {
        final ClusterStream s = shared();
        final io.flowscope.collector.fleet.CentralSelection selection =
                new io.flowscope.collector.fleet.CentralSelection(false, 4);
        final int node = 3;
        final long host = s.hostId(node);
        s.ranks(node, (comm, rank, nranks) -> selection.onRank(host, comm, rank, nranks));
        assertThat(selection.keptOnNode(host, s.nodeComm(node))).isTrue();
        assertThat(selection.keptOnNode(host, s.groupComm(node / 2))).isFalse();
        final long[] counts = new long[4]; // made, of the node's communicator, collectives travelling, skipped
        final ClusterStream.Out out = new ClusterStream.Out() {
            @Override
            public void flow(final FlowSummary f) {
                counts[0]++;
                counts[1] += f.commHash() == s.nodeComm(node) ? 1 : 0;
            }

            @Override
            public void collective(final CollectiveSummary c) {
                counts[0]++;
                counts[1] += c.commHash() == s.nodeComm(node) ? 1 : 0;
                counts[2] += selection.collective(c) ? 1 : 0;
            }
        };
        long all = 0;
        for (long k = 0; k < 100; k++) {
            all += countOf(s, node, k);
            counts[3] += s.node(node, k, out, comm -> !selection.keptOnNode(host, comm));
        }
        assertThat(counts[1]).as("the node's own communicator is not made").isZero();
        assertThat(counts[3]).isPositive();
        assertThat(counts[0] + counts[3]).as("made + skipped = the whole node").isEqualTo(all);
        assertThat(counts[2]).isPositive().isLessThan(selection.sampledOut());
    }

    private static long countOf(final ClusterStream s, final int node, final long k) {
        final long[] n = {0};
        s.node(node, k, new ClusterStream.Out() {
            @Override
            public void flow(final FlowSummary f) {
                n[0]++;
            }

            @Override
            public void collective(final CollectiveSummary c) {
                n[0]++;
            }
        });
        return n[0];
    }

    @Test
    void everyNodeHasItsOwnHostAndEveryCommunicatorItsOwnHash() {
        final ClusterStream s = shared();
        final Set<Long> hosts = new HashSet<>();
        final Set<Long> comms = new HashSet<>();
        for (int n = 0; n < 8; n++) {
            hosts.add(s.hostId(n));
            comms.add(s.nodeComm(n));
        }
        for (int g = 0; g < 4; g++) {
            comms.add(s.groupComm(g));
        }
        assertThat(hosts).hasSize(8);
        assertThat(comms).hasSize(12);
        // a node's summaries carry its host and one of its two communicators, and time moves on across loops
        final long[] last = {Long.MIN_VALUE};
        for (final long k : new long[] {0, 199, 200, 201, 450}) {
            s.node(5, k, new ClusterStream.Out() {
                @Override
                public void flow(final FlowSummary f) {
                    assertThat(f.hostId()).isEqualTo(s.hostId(5));
                    assertThat(f.commHash()).isIn(s.groupComm(2), s.nodeComm(5));
                    assertThat(f.periodStartNs()).isEqualTo(k * 10_000_000L);
                    last[0] = Math.max(last[0], f.periodEndNs());
                }

                @Override
                public void collective(final CollectiveSummary c) {
                    assertThat(c.hostId()).isEqualTo(s.hostId(5));
                }
            });
        }
        assertThat(last[0]).isEqualTo(451 * 10_000_000L);
    }

    @Test
    void theReferenceNamesEveryInjectedFaultWithItsCulprit() {
        final ClusterSpec spec = ClusterSpec.parse(SPEC);
        final ClusterStream s = shared();
        final List<ClusterReference.Named> named = ClusterReference.opened(s, ClusterReference.nodes(spec, 64), 600);
        named.forEach(n -> System.out.println("reference: " + n));
        for (final ClusterSpec.FaultSpec f : spec.faults()) {
            final ClusterReference.Named a = ClusterReference.naming(s, f, named);
            assertThat(a).as("the reference names %s", f).isNotNull();
            assertThat(a.host()).isEqualTo(s.hostId(s.nodeOfRank(f.group(), f.rank())));
            assertThat(a.startNs()).isGreaterThanOrEqualTo(s.faultOnsetNs(f) - 100_000_000L);
        }
    }

    @Test
    void aBadSpecIsOneClearError() {
        assertThatThrownBy(() -> ClusterSpec.parse("nodes=3,group=2"))
                .hasMessageContaining("nodes a multiple of group");
        assertThatThrownBy(() -> ClusterSpec.parse("faults=slow-link:0:1@3"))
                .hasMessageContaining("a peer for slow-link only");
        assertThatThrownBy(() -> ClusterSpec.parse("faults=hang:9:1@3")).hasMessageContaining("needs a group 0..7");
        assertThatThrownBy(() -> ClusterSpec.parse("every=0")).hasMessageContaining("every >= 1");
        assertThat(ClusterSpec.parse(ClusterSpec.parse("every=16").text()).collectiveEvery())
                .isEqualTo(16);
    }

    private static String digest(final ClusterStream s, final long periods) throws Exception {
        final MessageDigest md = MessageDigest.getInstance("SHA-256");
        final FleetWireEncoder wire = new FleetWireEncoder("digest");
        final long[] seq = {0};
        final ClusterStream.Out out = new ClusterStream.Out() {
            @Override
            public void flow(final FlowSummary f) {
                md.update(wire.flow(++seq[0], f, "h"));
            }

            @Override
            public void collective(final CollectiveSummary c) {
                md.update(wire.collective(++seq[0], c));
            }
        };
        for (long k = 0; k < periods; k++) {
            for (int n = 0; n < s.spec().nodes(); n++) {
                s.node(n, k, out);
            }
        }
        assertThat(seq[0]).isGreaterThan(1000);
        return HexFormat.of().formatHex(md.digest());
    }
}
