package io.flowscope.sink.influx;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.testing.Anomalies;
import io.flowscope.sink.testing.Summaries;
import org.junit.jupiter.api.Test;

class InfluxSchemaTest {
    private final InfluxSchema schema = new InfluxSchema(id -> "node" + id, EventClock.epoch());
    private final StringBuilder out = new StringBuilder();
    private final LineProtocol p = new LineProtocol(out);

    @Test
    void aStepFlowIsTaggedByItsBoundedIdentityAndNeverByItsFlowKey() {
        final FlowSummary s =
                Summaries.flow(FlowSummary.KIND_STEP, 7, 0x1a2bL, 3, 4, 1, true, 1_000, 2_000, 10, 5_000, 2, 1_000);
        Summaries.phase(s, Phase.PEER_WAIT, 10, 900, 200);

        schema.flow(s, p);

        assertThat(p.seriesKey())
                .isEqualTo("flow,channel=1,comm=0x1a2b,direction=send,host=node7,kind=step,peer=4,rank=3");
        assertThat(out.toString())
                .contains(" flows=1i,posts=10i,completions=10i,bytes=5000i,bw_period=5.0E9,")
                .contains("peer_wait_count=10i,peer_wait_sum_ns=900i,peer_wait_max_ns=200i")
                .doesNotContain("gpu_wait")
                .doesNotContain("flowKey")
                .doesNotContain("flow_key")
                .endsWith(" 2000");
    }

    @Test
    void anAggregateLeavesOutTheDimensionsItDoesNotGroupBy() {
        schema.flow(
                Summaries.flow(FlowSummary.KIND_COMM, 7, 0x1a2bL, -1, -1, -1, false, 0, 1_000_000, 4, 4_000, 0, 0), p);

        assertThat(p.seriesKey()).isEqualTo("flow,comm=0x1a2b,direction=recv,host=node7,kind=comm");
    }

    @Test
    void aQpFlowIsTaggedByNicDeviceAndQpWithoutCommunicatorOrDirection() {
        schema.flow(Summaries.qp(7, 1, 4242, 0, 1_000_000, 8, 8 << 16, 3), p);

        assertThat(p.seriesKey()).isEqualTo("flow,device=1,host=node7,kind=qp,qp=4242");
    }

    @Test
    void aCollectiveIsTaggedByNamedFunctionAlgorithmAndProtocol() {
        schema.collective(
                Summaries.collective(
                        7,
                        0xabcL,
                        2,
                        8,
                        41,
                        Collectives.ALL_REDUCE,
                        Collectives.ALGO_RING,
                        Collectives.PROTO_SIMPLE,
                        1 << 20,
                        4,
                        10_000,
                        5_000),
                p);

        assertThat(p.seriesKey())
                .isEqualTo("collective,algo=Ring,comm=0xabc,func=AllReduce,host=node7,proto=Simple,rank=2");
        assertThat(out.toString()).contains("seq=41i").contains("complete=t").endsWith(" 15000");
    }

    @Test
    void anAnomalyIsAnEventAtItsOnsetWhenOpenedAndAtItsResolutionWhenResolved() {
        final var opened = Anomalies.slowLink(0xfeedL, 7, 0x1a2bL, 3, 4, Severity.WARNING, 50_000, -1);
        schema.anomaly(opened, "opened", p);
        assertThat(p.seriesKey())
                .isEqualTo("anomaly,comm=0x1a2b,host=node7,kind=slow_link,peer=4,rank=3,severity=warning,state=opened");
        assertThat(out.toString())
                .contains("id=\"0xfeed\"")
                .contains("ev_medianPeerBandwidth=1.0E10")
                .doesNotContain("duration_ns")
                .endsWith(" 50000");

        out.setLength(0);
        schema.anomaly(Anomalies.resolved(opened, 90_000), "resolved", p);
        assertThat(out.toString()).contains("duration_ns=40000i").endsWith(" 90000");
    }

    /** Rank 3 of comm 0x1a2b on host 7 is pid 48213 on GPU 1; nothing else is known. */
    private static final RankNames KNOWN = (hostId, commHash, rank) -> hostId == 7 && commHash == 0x1a2bL && rank == 3
            ? new RankNames.Name(48213, 1, "0000:19:00.0", "GPU-1a2b3c4d-0000-1111-2222-333344445555")
            : null;

    @Test
    void aRankWhoseGpuIsKnownIsTaggedByItAndItsAnomalyCarriesPidBusIdUuidAndHexHostAsFields() {
        final InfluxSchema named = new InfluxSchema(id -> "gpu-node-" + id, KNOWN, EventClock.epoch());
        named.flow(
                Summaries.flow(FlowSummary.KIND_STEP, 7, 0x1a2bL, 3, 4, 1, true, 1_000, 2_000, 10, 5_000, 2, 1_000), p);
        assertThat(p.seriesKey())
                .isEqualTo("flow,channel=1,comm=0x1a2b,direction=send,gpu=1,host=gpu-node-7,kind=step,peer=4,rank=3");

        out.setLength(0);
        named.collective(
                Summaries.collective(
                        7,
                        0x1a2bL,
                        3,
                        8,
                        41,
                        Collectives.ALL_REDUCE,
                        Collectives.ALGO_RING,
                        Collectives.PROTO_SIMPLE,
                        1 << 20,
                        4,
                        10_000,
                        5_000),
                p);
        assertThat(p.seriesKey())
                .isEqualTo("collective,algo=Ring,comm=0x1a2b,func=AllReduce,gpu=1,host=gpu-node-7,proto=Simple,rank=3");

        out.setLength(0);
        named.anomaly(Anomalies.slowLink(0xfeedL, 7, 0x1a2bL, 3, 4, Severity.WARNING, 50_000, -1), "opened", p);
        assertThat(p.seriesKey())
                .isEqualTo(
                        "anomaly,comm=0x1a2b,gpu=1,host=gpu-node-7,kind=slow_link,peer=4,rank=3,severity=warning,state=opened");
        assertThat(out.toString())
                .contains("host_id=\"0x7\"")
                .contains("pid=48213i")
                .contains("pci_bus_id=\"0000:19:00.0\"")
                .contains("gpu_uuid=\"GPU-1a2b3c4d-0000-1111-2222-333344445555\"");

        // another rank of the same host: no GPU known, no gpu tag and no rank fields
        out.setLength(0);
        named.flow(
                Summaries.flow(FlowSummary.KIND_STEP, 7, 0x1a2bL, 2, 3, 1, true, 1_000, 2_000, 10, 5_000, 2, 1_000), p);
        assertThat(p.seriesKey()).doesNotContain("gpu=").contains("host=gpu-node-7");
        out.setLength(0);
        named.anomaly(Anomalies.slowLink(0xbeefL, 7, 0x1a2bL, 2, 3, Severity.WARNING, 50_000, -1), "opened", p);
        assertThat(out.toString()).doesNotContain("gpu=").doesNotContain("pid=").contains("host_id=\"0x7\"");
    }
}
