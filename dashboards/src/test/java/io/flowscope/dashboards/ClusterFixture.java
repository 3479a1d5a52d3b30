package io.flowscope.dashboards;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.sink.influx.InfluxSink;
import io.flowscope.sink.testing.Anomalies;
import io.flowscope.sink.testing.Summaries;

/**
 * A realistic small cluster written through the real InfluxDB sink: two hosts of four GPUs, an 8-rank ring
 * communicator (0xa11ce5, with a slow link 3 → 4 between the hosts) and a 2-rank one (0xb0b), step flows on two
 * channels per direction, their link / rank / communicator aggregates, two NICs of two QPs per host,
 * AllReduce / AllGather collectives, and anomalies that open and resolve. Event times are epoch ns.
 */
final class ClusterFixture {
    static final long HOST_A = 0x1001L;
    static final long HOST_B = 0x1002L;
    static final long COMM_RING = 0xa11ce5L;
    static final long COMM_PAIR = 0xb0bL;
    static final int PERIODS = 40;
    static final long PERIOD_NS = 250_000_000L;
    static final long CHUNK = 1L << 19;

    private ClusterFixture() {}

    static String hostName(final long hostId) {
        return hostId == HOST_A ? "gpu-node-01" : hostId == HOST_B ? "gpu-node-02" : Long.toHexString(hostId);
    }

    /** Writes everything; returns the time span [first period start, last period end] in epoch ns. */
    static long[] fill(final InfluxSink sink, final long endNs) {
        final long t0 = endNs - PERIODS * PERIOD_NS;
        for (int p = 0; p < PERIODS; p++) {
            final long start = t0 + p * PERIOD_NS;
            communicator(sink, COMM_RING, 8, start, p);
            communicator(sink, COMM_PAIR, 2, start, p);
            for (final long host : new long[] {HOST_A, HOST_B}) {
                for (int device = 0; device < 2; device++) {
                    for (int qp = 0; qp < 2; qp++) {
                        final FlowSummary s = Summaries.qp(
                                host,
                                device,
                                1000 + device * 10 + qp,
                                start,
                                start + PERIOD_NS,
                                400,
                                400 * 65_536L,
                                12);
                        sink.onSummary(Summaries.phase(s, Phase.NETWORK, 400, 400 * 8_000L, 40_000));
                    }
                }
            }
        }
        final Anomaly slowLink =
                Anomalies.slowLink(0x51L, HOST_A, COMM_RING, 3, 4, Severity.WARNING, t0 + 10 * PERIOD_NS, -1);
        sink.onOpened(slowLink);
        sink.onUpdated(Anomalies.escalated(slowLink));
        sink.onResolved(Anomalies.resolved(slowLink, t0 + 30 * PERIOD_NS));
        final Anomaly nic = Anomalies.nicStall(0x52L, HOST_B, 1, t0 + 20 * PERIOD_NS, -1);
        sink.onOpened(nic);
        sink.onResolved(Anomalies.resolved(nic, t0 + 25 * PERIOD_NS));
        sink.onOpened(Anomalies.slowLink(0x53L, HOST_B, COMM_PAIR, 1, 0, Severity.CRITICAL, t0 + 35 * PERIOD_NS, -1));
        return new long[] {t0, endNs};
    }

    private static long hostOf(final long comm, final int nranks, final int rank) {
        return rank < nranks / 2 ? HOST_A : HOST_B;
    }

    private static void communicator(
            final InfluxSink sink, final long comm, final int n, final long start, final int period) {
        final long end = start + PERIOD_NS;
        final long[][] commTotals = new long[2][2]; // [host a/b][send/recv] bytes
        for (int rank = 0; rank < n; rank++) {
            final long host = hostOf(comm, n, rank);
            for (final boolean send : new boolean[] {true, false}) {
                final int peer = send ? (rank + 1) % n : (rank - 1 + n) % n;
                final boolean slow = comm == COMM_RING
                        && period >= 10
                        && period < 30
                        && ((send && rank == 3) || (!send && rank == 4));
                final long completions = slow ? 60 : 200 + (rank * 7 + period) % 20;
                long linkBytes = 0;
                for (int channel = 0; channel < 2; channel++) {
                    final FlowSummary s = Summaries.flow(
                            FlowSummary.KIND_STEP,
                            host,
                            comm,
                            rank,
                            peer,
                            channel,
                            send,
                            start,
                            end,
                            completions,
                            completions * CHUNK,
                            4,
                            4 * CHUNK);
                    if (send) {
                        Summaries.phase(s, Phase.GPU_WAIT, completions, completions * 3_000L, 9_000);
                        Summaries.phase(
                                s, Phase.PEER_WAIT, completions, completions * (slow ? 40_000L : 5_000L), 80_000);
                        Summaries.phase(s, Phase.NETWORK, completions, completions * 20_000L, 60_000);
                    } else {
                        Summaries.phase(s, Phase.NETWORK, completions, completions * 21_000L, 61_000);
                        Summaries.phase(s, Phase.FLUSH, completions, completions * 1_000L, 4_000);
                        Summaries.phase(s, Phase.GPU_CONSUME, completions, completions * 2_000L, 7_000);
                    }
                    sink.onSummary(s);
                    linkBytes += completions * CHUNK;
                }
                sink.onSummary(Summaries.flow(
                        FlowSummary.KIND_LINK,
                        host,
                        comm,
                        rank,
                        peer,
                        -1,
                        send,
                        start,
                        end,
                        2 * completions,
                        linkBytes,
                        8,
                        8 * CHUNK));
                sink.onSummary(Summaries.flow(
                        FlowSummary.KIND_RANK,
                        host,
                        comm,
                        rank,
                        -1,
                        -1,
                        send,
                        start,
                        end,
                        2 * completions,
                        linkBytes,
                        8,
                        8 * CHUNK));
                commTotals[host == HOST_A ? 0 : 1][send ? 0 : 1] += linkBytes;
            }
            if (period % 2 == 0) {
                final boolean allReduce = period % 4 == 0;
                sink.onCollective(Summaries.collective(
                        host,
                        comm,
                        rank,
                        n,
                        period / 2,
                        allReduce ? Collectives.ALL_REDUCE : Collectives.ALL_GATHER,
                        Collectives.ALGO_RING,
                        Collectives.PROTO_SIMPLE,
                        1 << 22,
                        4,
                        start + 1_000_000,
                        40_000_000 + rank * 100_000L));
            }
        }
        for (int h = 0; h < 2; h++) {
            for (int d = 0; d < 2; d++) {
                sink.onSummary(Summaries.flow(
                        FlowSummary.KIND_COMM,
                        h == 0 ? HOST_A : HOST_B,
                        comm,
                        -1,
                        -1,
                        -1,
                        d == 0,
                        start,
                        end,
                        commTotals[h][d] / CHUNK,
                        commTotals[h][d],
                        0,
                        0));
            }
        }
    }
}
