package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.SharedTraces;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.TraceReader;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CentralSelectionTest {
    private static final long HOST_A = 0xA;
    private static final long HOST_B = 0xB;
    private static final long COMM = 0xC0FFEE;

    private static FlowSummary flow(final long host, final long comm, final int kind, final boolean send) {
        return FlowSummary.builder()
                .hostId(host)
                .commHash(comm)
                .kind(kind)
                .isSend(send)
                .rank(0)
                .peer(1)
                .build();
    }

    private static FlowSummary recvLink(final long host, final long comm) {
        return flow(host, comm, FlowSummary.KIND_LINK, false);
    }

    private static CollectiveSummary collective(final long host, final long comm, final long seq) {
        return CollectiveSummary.builder()
                .hostId(host)
                .commHash(comm)
                .rank(0)
                .nranks(8)
                .seqNumber(seq)
                .build();
    }

    private static void describe(final CentralSelection s, final long host, final int from, final int to, final int n) {
        for (int r = from; r < to; r++) {
            s.onRank(host, COMM, r, n);
        }
    }

    @Test
    void centralSendsTheKindsTheAggregatorsReadAndAllSendsEverything() {
        final CentralSelection central = new CentralSelection(false, 1);
        final CentralSelection all = new CentralSelection(true, 1);
        for (final int kind : new int[] {
            FlowSummary.KIND_STEP,
            FlowSummary.KIND_QP,
            FlowSummary.KIND_RANK,
            FlowSummary.KIND_LINK,
            FlowSummary.KIND_COMM
        }) {
            for (final boolean send : new boolean[] {false, true}) {
                final boolean expected = kind == FlowSummary.KIND_LINK || kind == FlowSummary.KIND_STEP && !send;
                assertThat(central.flow(flow(HOST_A, COMM, kind, send)))
                        .as("kind %d send %b", kind, send)
                        .isEqualTo(expected);
                assertThat(all.flow(flow(HOST_A, COMM, kind, send))).isTrue();
            }
        }
        assertThat(central.collective(collective(HOST_A, COMM, 7))).isTrue();
    }

    @Test
    void aCommunicatorWhoseRanksAllLiveOnTheHostStaysThere() {
        final CentralSelection s = new CentralSelection(false, 1);
        describe(s, HOST_A, 0, 8, 8);
        assertThat(s.flow(recvLink(HOST_A, COMM))).isFalse();
        assertThat(s.collective(collective(HOST_A, COMM, 0))).isFalse();
        assertThat(s.localSummaries()).isEqualTo(2);
        // the same communicator seen from a host whose rings described none of it travels
        assertThat(s.flow(recvLink(HOST_B, COMM))).isTrue();
        // fleet.publish = all sends it anyway
        final CentralSelection all = new CentralSelection(true, 1);
        describe(all, HOST_A, 0, 8, 8);
        assertThat(all.flow(recvLink(HOST_A, COMM))).isTrue();
    }

    @Test
    void aCommunicatorSpanningHostsTravelsFromEachOfThem() {
        final CentralSelection s = new CentralSelection(false, 1);
        describe(s, HOST_A, 0, 8, 16);
        describe(s, HOST_B, 8, 16, 16);
        assertThat(s.flow(recvLink(HOST_A, COMM))).isTrue();
        assertThat(s.flow(recvLink(HOST_B, COMM))).isTrue();
        assertThat(s.collective(collective(HOST_B, COMM, 3))).isTrue();
        assertThat(s.localSummaries()).isZero();
    }

    @Test
    void aCommunicatorStopsTravellingOnceItsLastRankIsSeenOnTheHost() {
        final CentralSelection s = new CentralSelection(false, 1);
        describe(s, HOST_A, 0, 7, 8); // rank 7 not seen yet: its ring's records come later
        assertThat(s.flow(recvLink(HOST_A, COMM))).isTrue();
        describe(s, HOST_A, 7, 8, 8);
        assertThat(s.flow(recvLink(HOST_A, COMM))).isFalse();
        assertThat(s.collective(collective(HOST_A, COMM, 1))).isFalse();
        // the hash reused by a communicator of another size: its ranks start again
        s.onRank(HOST_A, COMM, 0, 16);
        assertThat(s.flow(recvLink(HOST_A, COMM))).isTrue();
    }

    @Test
    void collectivesAreSampledByTheirSequenceNumberSoEveryRankSendsTheSameRounds() {
        final CentralSelection s = new CentralSelection(false, 4);
        final StringBuilder sent = new StringBuilder();
        for (long seq = -4; seq <= 9; seq++) {
            if (s.collective(collective(HOST_A, COMM, seq))) {
                sent.append(seq).append(' ');
            }
        }
        assertThat(sent.toString().trim()).isEqualTo("-4 0 4 8");
        assertThat(s.sampledOut()).isEqualTo(10);
        assertThat(s.flow(recvLink(HOST_A, COMM))).as("flows are not sampled").isTrue();
        assertThat(new CentralSelection(true, 4).collective(collective(HOST_A, COMM, 3)))
                .isTrue();
        assertThatThrownBy(() -> new CentralSelection(false, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anAgentOnTheRecordedTwoGpuHostSendsAlmostNothingOfItsCommunicators() throws Exception {
        // the real recordings: two H100s of one host, every communicator's ranks on it (shared/traces/README.md); these
        // recordings predate the journaled ring entries, so the collectives' starts tell the ranks
        for (final Path events : SharedTraces.events("clean", "nvlink-k-clean")) {
            final CollectorConfig config = CollectorConfig.load(null, Map.of(), Map.of());
            final CentralSelection selection = CentralSelection.of(config.fleet());
            final long[] summaries = new long[2]; // produced, travelling
            final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
            p.tap(
                    f -> {
                        summaries[0]++;
                        summaries[1] += selection.flow(f) ? 1 : 0;
                    },
                    c -> {
                        summaries[0]++;
                        summaries[1] += selection.collective(c) ? 1 : 0;
                    });
            final AgentPublisher.EventSampler in = new AgentPublisher.EventSampler(p, 0, (h, c, a) -> {}, selection);
            try (TraceReader r = new TraceReader(events)) {
                while (r.read(in, new JournalReader.Meta() {}, 1) > 0) {
                    p.endBatch(0);
                }
            }
            p.finish();
            // a few travel before the second rank's records reach the journal (CentralSelection), then none
            System.out.printf(
                    "%s: %d summaries, %d travel, %d kept as node-local%n",
                    events, summaries[0], summaries[1], selection.localSummaries());
            assertThat(summaries[0]).as(events + ": summaries").isGreaterThan(1_000);
            assertThat(selection.localSummaries())
                    .as(events + ": kept as node-local")
                    .isGreaterThan(summaries[0] / 4);
            assertThat(summaries[1] * 100).as(events + ": travelling").isLessThan(summaries[0]);
        }
    }
}
