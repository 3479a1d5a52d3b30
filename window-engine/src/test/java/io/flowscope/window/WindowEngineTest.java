package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class WindowEngineTest {
    private final List<FlowSummary> out = new ArrayList<>();
    private final List<FlowSummary> aggregates = new ArrayList<>();

    private WindowEngine engine(final WindowConfig config) {
        return new WindowEngine(config, s -> {
            final FlowSummary c = new FlowSummary();
            c.copyFrom(s);
            (s.kind() >= FlowSummary.KIND_RANK ? aggregates : out).add(c);
        });
    }

    private static void recvStep(final WindowEngine e, final long step, final long op, final long t, final long bytes) {
        e.onProxyStepStart(step, op, 0, t);
        e.onProxyStepState(step, 10, 0, t + 10);
        e.onProxyStepState(step, 11, bytes, t + 110);
        e.onProxyStepState(step, 12, bytes, t + 130);
        e.onProxyStepStop(step, t + 160);
    }

    @Test
    void shouldSplitARecvStepIntoNetworkFlushAndGpuConsume() {
        final WindowEngine e = engine(new WindowConfig());
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 1_000);
        recvStep(e, 2, 1, 1_000, 4096);
        e.flush();

        assertThat(out).hasSize(1);
        final FlowSummary s = out.get(0);
        assertThat(s.phaseSumNs(Phase.NETWORK)).isEqualTo(100);
        assertThat(s.phaseSumNs(Phase.FLUSH)).isEqualTo(20);
        assertThat(s.phaseSumNs(Phase.GPU_CONSUME)).isEqualTo(30);
        assertThat(s.phaseCount(Phase.GPU_WAIT)).isZero();
        assertThat(s.windowSpanNs()).isEqualTo(100);
        assertThat(s.windowBandwidthBytesPerSecond()).isEqualTo(4096 * 1e9 / 100);
        final Histogram h = new Histogram(3_600_000_000_000L, 2);
        e.addPhaseHistogramTo(false, Phase.NETWORK, h);
        assertThat(h.getTotalCount()).isEqualTo(1);
        assertThat(h.getValueAtPercentile(50)).isEqualTo(100);
    }

    @Test
    void anOpsFirstStepsWaitsAreItsEntryWaitsAndOnlyTheFirstStepCounts() {
        final WindowEngine e = engine(new WindowConfig());
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 1_000);
        // Receive steps 0 and 1: only step 0's 10 -> 11 (100 ns) is the entry wait.
        recvStep(e, 2, 1, 1_000, 4096);
        e.onProxyStepStart(3, 1, 1, 2_000);
        e.onProxyStepState(3, 10, 0, 2_000);
        e.onProxyStepState(3, 11, 4096, 2_900);
        e.onProxyStepStop(3, 3_000);
        // Send steps 0 (8 -> 20 after 300 ns, then 9) and 1 (8 -> 9 after 50 ns): step 0's GPU wait only.
        e.onProxyOpStart(4, 9, 0, 1, 0, true, 1_000);
        e.onProxyStepStart(5, 4, 0, 1_000);
        e.onProxyStepState(5, 8, 0, 1_000);
        e.onProxyStepState(5, 20, 4096, 1_300);
        e.onProxyStepState(5, 9, 4096, 1_400);
        e.onProxyStepStop(5, 1_600);
        e.onProxyStepStart(6, 4, 1, 1_700);
        e.onProxyStepState(6, 8, 0, 1_700);
        e.onProxyStepState(6, 9, 4096, 1_750);
        e.onProxyStepStop(6, 1_900);
        e.flush();

        assertThat(out).hasSize(2);
        final FlowSummary recv =
                out.stream().filter(s -> !s.isSend()).findFirst().orElseThrow();
        final FlowSummary send =
                out.stream().filter(FlowSummary::isSend).findFirst().orElseThrow();
        assertThat(recv.firstSteps()).isEqualTo(1);
        assertThat(recv.firstStepWaitSumNs()).isEqualTo(100);
        assertThat(recv.phaseSumNs(Phase.NETWORK))
                .as("every step's network phase")
                .isEqualTo(1_000);
        assertThat(send.firstSteps()).isEqualTo(1);
        assertThat(send.firstStepWaitSumNs()).isEqualTo(300);
        assertThat(aggregates)
                .filteredOn(a -> a.kind() == FlowSummary.KIND_RANK && !a.isSend())
                .extracting(FlowSummary::firstStepWaitSumNs)
                .containsExactly(100L);
    }

    @Test
    void shouldCountPostedSendBytesAsOutstandingUntilTheStop() {
        final WindowEngine e = engine(new WindowConfig());
        e.onProxyOpStart(1, 9, 0, 1, 0, true, 0);
        e.onProxyStepStart(2, 1, 0, 10);
        e.onProxyStepState(2, 9, 1000, 20);
        final FlowSummary snap = new FlowSummary();
        e.snapshot(9, 0, 1, 0, true, snap);
        assertThat(snap.outstandingSteps()).isEqualTo(1);
        assertThat(snap.outstandingBytes()).isEqualTo(1000);

        e.onProxyStepStop(2, 50);
        e.snapshot(9, 0, 1, 0, true, snap);
        assertThat(snap.outstandingSteps()).isZero();
        assertThat(snap.outstandingBytes()).isZero();
    }

    @Test
    void shouldEmitOneSummaryPerActiveFlowPerPeriodOfEventTime() {
        final WindowEngine e = engine(new WindowConfig().periodNs(1_000));
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 100);
        e.onProxyOpStart(3, 9, 0, 2, 0, false, 100);
        recvStep(e, 2, 1, 200, 10);
        recvStep(e, 4, 3, 300, 20);
        assertThat(out).isEmpty();

        recvStep(e, 5, 1, 1_200, 30); // enters period [1000, 2000): emits [0, 1000)
        assertThat(out).hasSize(2);
        assertThat(out).allSatisfy(s -> assertThat(s.periodStartNs()).isZero());
        assertThat(out).extracting(FlowSummary::bytes).containsExactlyInAnyOrder(10L, 20L);

        e.flush();
        assertThat(out).hasSize(3);
        assertThat(out.get(2).periodStartNs()).isEqualTo(1_000);
        assertThat(out.get(2).bytes()).isEqualTo(30);
        assertThat(out.get(2).windowBytes()).isEqualTo(40);
    }

    @Test
    void shouldEvictAFlowIdleForTheIdleTimeoutAndReuseItsSlot() {
        final WindowEngine e = engine(new WindowConfig()
                .periodNs(1_000)
                .idleTimeoutNs(10_000)
                .stepTimeoutNs(5_000)
                .maxFlows(1));
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 0);
        recvStep(e, 2, 1, 100, 10);
        e.onProxyOpStop(1, 500);
        assertThat(e.liveFlows()).isEqualTo(1);

        e.onProxyOpStart(3, 9, 0, 2, 0, false, 50_000); // the table holds one flow: the idle one must go first
        assertThat(e.flowsEvicted()).isEqualTo(1);
        assertThat(e.droppedFlowTableFull()).isZero();
        assertThat(e.liveFlows()).isEqualTo(1);
        assertThat(e.totalBytes(9, 0, 1, 0, false)).isEqualTo(-1);
        assertThat(e.liveSteps()).isZero();
    }

    /**
     * An engine whose idle timeout (10 µs) is shorter than its step timeout (1 ms), with op 1 of flow (9, 0, 1, 0,
     * send) started at 0 and its step 2 at 10.
     */
    private WindowEngine idleFlowEngineWithStepOfOp1() {
        final WindowEngine e =
                engine(new WindowConfig().periodNs(1_000).idleTimeoutNs(10_000).stepTimeoutNs(1_000_000));
        e.onProxyOpStart(1, 9, 0, 1, 0, true, 0);
        e.onProxyStepStart(2, 1, 0, 10);
        return e;
    }

    @Test
    void shouldCountTheStateRecordsOfALiveStepAsActivityOfItsFlow() {
        // State records update the step's stamp, not the flow (folded in before an eviction): same idleness.
        final WindowEngine e = idleFlowEngineWithStepOfOp1();
        e.onProxyStepState(2, 8, 0, 5_000);
        e.onProxyStepState(2, 20, 0, 9_000);
        e.onProxyStepState(2, 9, 1_000, 14_000);
        e.onProxyOpStart(3, 9, 0, 2, 0, true, 20_000); // sweep as of 20,000: the state at 14,000 keeps flow 1

        assertThat(e.flowsEvicted()).isZero();
        assertThat(e.totalBytes(9, 0, 1, 0, true)).isZero();

        e.onProxyOpStart(4, 9, 0, 2, 0, true, 24_000); // as of 24,000: 10,000 after its last record
        assertThat(e.flowsEvicted()).isEqualTo(1);
        assertThat(e.totalBytes(9, 0, 1, 0, true)).isEqualTo(-1);
        assertThat(e.totalBytes(9, 0, 2, 0, true)).isZero();
    }

    @Test
    void shouldDropAStepWhoseStopNeverCameAfterTheStepTimeout() {
        final WindowEngine e = engine(new WindowConfig().periodNs(1_000).stepTimeoutNs(5_000));
        e.onProxyOpStart(1, 9, 0, 1, 0, true, 0);
        e.onProxyStepStart(2, 1, 0, 10);
        e.onProxyStepState(2, 9, 1000, 20);
        e.onProxyOpStart(3, 9, 0, 2, 0, true, 20_000);

        assertThat(e.stepsTimedOut()).isEqualTo(1);
        final FlowSummary snap = new FlowSummary();
        e.snapshot(9, 0, 1, 0, true, snap);
        assertThat(snap.outstandingSteps()).isZero();
        assertThat(snap.outstandingBytes()).isZero();
    }

    @Test
    void shouldKeepOpsWhoseKeysShareASlot() {
        // maxOps 8: 64 op slots; keys 5, 69, 133 and 197 share slot 5 (one held there, the others spilled).
        final WindowEngine e = engine(new WindowConfig().maxOps(8));
        e.onProxyOpStart(5, 9, 0, 1, 0, true, 0);
        e.onProxyOpStart(69, 9, 0, 2, 0, true, 1);
        e.onProxyOpStart(133, 9, 0, 3, 0, true, 2);
        e.onProxyOpStart(133, 9, 0, 3, 0, true, 3); // a duplicate of a spilled op
        assertThat(e.duplicateRecords()).isEqualTo(1);
        e.onProxyOpStop(5, 4); // the slot frees; 69 and 133 stay findable
        e.onProxyOpStart(197, 9, 0, 4, 0, true, 5); // into the freed slot
        final long[] opKeys = {69, 133, 197};
        for (int i = 0; i < opKeys.length; i++) {
            final long stepKey = 100 + i;
            e.onProxyStepStart(stepKey, opKeys[i], 0, 10);
            e.onProxyStepState(stepKey, 9, 1_000L * (i + 1), 20);
            e.onProxyStepStop(stepKey, 30);
        }
        assertThat(e.totalBytes(9, 0, 1, 0, true)).isZero();
        assertThat(e.totalBytes(9, 0, 2, 0, true)).isEqualTo(1_000);
        assertThat(e.totalBytes(9, 0, 3, 0, true)).isEqualTo(2_000);
        assertThat(e.totalBytes(9, 0, 4, 0, true)).isEqualTo(3_000);

        e.onProxyOpStop(69, 40);
        final long unknown = e.unknownOpRecords();
        e.onProxyStepStart(200, 69, 1, 50); // its op stopped
        e.onProxyStepStart(201, 5, 1, 50); // likewise
        assertThat(e.unknownOpRecords()).isEqualTo(unknown + 2);
        e.onProxyStepStart(202, 133, 1, 60);
        e.onProxyStepState(202, 9, 4_000, 70);
        e.onProxyStepStop(202, 80);
        assertThat(e.totalBytes(9, 0, 3, 0, true)).isEqualTo(6_000);
    }

    @Test
    void shouldDropTheLiveStepsOfAnEvictedFlowSoThatTheirRecordsAreUnknown() {
        // Idle timeout shorter than the step timeout: flow 1 is evicted with its step still live.
        final WindowEngine e = idleFlowEngineWithStepOfOp1();
        e.onProxyStepState(2, 8, 0, 100);
        e.onProxyOpStart(3, 9, 0, 2, 0, true, 20_000); // sweep as of 20,000: flow 1 evicted
        assertThat(e.flowsEvicted()).isEqualTo(1);
        assertThat(e.stepsTimedOut()).isEqualTo(1);

        e.onProxyOpStart(4, 9, 0, 3, 0, true, 20_100); // a new flow, in the evicted flow's state object
        final long unknown = e.unknownStepRecords();
        e.onProxyStepState(2, 9, 1_000, 20_200);
        e.onProxyStepStop(2, 20_300);

        assertThat(e.unknownStepRecords()).isEqualTo(unknown + 2);
        final FlowSummary snap = new FlowSummary();
        for (final int peer : new int[] {2, 3}) {
            assertThat(e.snapshot(9, 0, peer, 0, true, snap)).isTrue();
            assertThat(snap.outstandingSteps()).isZero();
            assertThat(snap.outstandingBytes()).isZero();
            assertThat(e.totalBytes(9, 0, peer, 0, true)).isZero();
        }
    }

    @Test
    void shouldRemoveTheOpsOfAnEvictedFlowInTheSameSweepSoThatTheirNewStepsAreUnknown() {
        final WindowEngine e = idleFlowEngineWithStepOfOp1();
        e.onProxyStepStop(2, 20);
        e.onProxyOpStart(3, 9, 0, 2, 0, true, 20_000); // sweep as of 20,000: flow 1 evicted, op 1 with it
        assertThat(e.flowsEvicted()).isEqualTo(1);
        e.onProxyOpStart(4, 9, 0, 3, 0, true, 20_100); // a new flow, in the evicted flow's state object

        // Same period, no sweep in between: a step of op 1 is unknown, not a step of the new flow.
        final long unknownOp = e.unknownOpRecords();
        final long unknownStep = e.unknownStepRecords();
        e.onProxyStepStart(5, 1, 1, 20_150);
        e.onProxyStepState(5, 9, 1_000, 20_200);
        e.onProxyStepStop(5, 20_300);
        assertThat(e.unknownOpRecords()).isEqualTo(unknownOp + 1);
        assertThat(e.unknownStepRecords()).isEqualTo(unknownStep + 2);
        assertThat(e.totalBytes(9, 0, 3, 0, true)).isZero();
    }

    @Test
    void shouldTimeAStepOutFromItsLastStateRecordNotFromItsStart() {
        final WindowEngine e = engine(new WindowConfig().periodNs(1_000).stepTimeoutNs(5_000));
        e.onProxyOpStart(1, 9, 0, 1, 0, true, 0);
        e.onProxyStepStart(2, 1, 0, 10);
        e.onProxyStepState(2, 8, 0, 3_000);
        e.onProxyStepState(2, 9, 1000, 4_500);
        e.onProxyOpStart(3, 9, 0, 2, 0, true, 9_000); // sweep as of 9,000: 4,500 after the last record

        assertThat(e.stepsTimedOut()).isZero();
        final FlowSummary snap = new FlowSummary();
        e.snapshot(9, 0, 1, 0, true, snap);
        assertThat(snap.outstandingSteps()).isEqualTo(1);

        e.onProxyOpStart(4, 9, 0, 2, 0, true, 10_000); // as of 10,000: 5,500 after it
        assertThat(e.stepsTimedOut()).isEqualTo(1);
        e.snapshot(9, 0, 1, 0, true, snap);
        assertThat(snap.outstandingSteps()).isZero();
    }

    @Test
    void shouldExpireAStoppedStepsTombstoneAfterTheTombstoneTimeoutButKeepALiveStep() {
        assertThat(new WindowConfig().effectiveTombstoneTimeoutNs())
                .isEqualTo(WindowConfig.DEFAULT_TOMBSTONE_TIMEOUT_NS);
        assertThat(new WindowConfig().stepTimeoutNs(1_000).effectiveTombstoneTimeoutNs())
                .isEqualTo(1_000);
        final WindowEngine e =
                engine(new WindowConfig().periodNs(1_000).stepTimeoutNs(100_000).tombstoneTimeoutNs(5_000));
        e.onProxyOpStart(1, 9, 0, 1, 0, true, 0);
        e.onProxyStepStart(2, 1, 0, 10); // stopped: a tombstone
        e.onProxyStepState(2, 9, 1000, 20);
        e.onProxyStepStop(2, 30);
        e.onProxyStepStart(3, 1, 1, 10); // live, posted
        e.onProxyStepState(3, 9, 1000, 20);
        e.onProxyStepStop(2, 3_000); // within the tombstone timeout: a duplicate
        assertThat(e.duplicateRecords()).isEqualTo(1);

        e.onProxyOpStart(4, 9, 0, 2, 0, true, 20_000);
        assertThat(e.liveSteps()).isEqualTo(1);
        assertThat(e.stepsTimedOut()).isZero();
        e.onProxyStepStop(2, 20_100); // the tombstone is gone: unknown
        assertThat(e.unknownStepRecords()).isEqualTo(1);
        e.onProxyStepStop(3, 20_200); // the live step still completes
        assertThat(e.totalBytes(9, 0, 1, 0, true)).isEqualTo(2000);
    }

    @Test
    void shouldKeepATombstoneForTheTimeoutAfterTheStopNotAfterTheStart() {
        final WindowEngine e =
                engine(new WindowConfig().periodNs(1_000).stepTimeoutNs(100_000).tombstoneTimeoutNs(5_000));
        e.onProxyOpStart(1, 9, 0, 1, 0, true, 0);
        e.onProxyStepStart(2, 1, 0, 10);
        e.onProxyStepState(2, 9, 1000, 20);
        e.onProxyStepStop(2, 4_000);
        e.onQpStart(3, 0, 7, 1, 1000, 100);
        e.onQpStop(3, 4_000);
        e.onProxyOpStart(4, 9, 0, 2, 0, true, 8_000); // sweep as of 8,000: 7,990 after the start, 4,000 after the stop
        e.onProxyStepStop(2, 8_100);
        e.onQpStop(3, 8_100);
        assertThat(e.duplicateRecords()).isEqualTo(2);
        assertThat(e.unknownStepRecords()).isZero();

        e.onProxyOpStart(5, 9, 0, 2, 0, true, 9_000); // as of 9,000: 5,000 after the stop
        e.onProxyStepStop(2, 9_100);
        e.onQpStop(3, 9_100);
        assertThat(e.unknownStepRecords()).isEqualTo(2);
    }

    @Test
    void shouldIgnoreRecordsOfUnknownStepsAndStepsOfUnknownOps() {
        final WindowEngine e = engine(new WindowConfig());
        e.onProxyStepStart(2, 77, 0, 10);
        e.onProxyStepState(5, 9, 100, 11);
        e.onProxyStepStop(6, 12);

        assertThat(e.unknownOpRecords()).isEqualTo(1);
        assertThat(e.unknownStepRecords()).isEqualTo(2);
        assertThat(e.liveFlows()).isZero();
        assertThat(e.liveSteps()).isZero();
    }

    @Test
    void shouldKeepFlowsWithTheSameKeyHashApart() {
        final WindowEngine e = engine(new WindowConfig());
        // Same communicator and peer, different direction and channel: four flows.
        e.onProxyOpStart(1, 9, 0, 1, 0, true, 0);
        e.onProxyOpStart(2, 9, 0, 1, 0, false, 0);
        e.onProxyOpStart(3, 9, 0, 1, 1, true, 0);
        e.onProxyOpStart(4, 9, 0, 1, 1, false, 0);
        assertThat(e.liveFlows()).isEqualTo(4);
    }

    @Test
    void shouldKeepTheClocksOfDifferentHostsApart() {
        final WindowEngine e = engine(new WindowConfig().periodNs(1_000).idleTimeoutNs(10_000));
        final long far = 1_000_000_000_000_000L; // host 2's clock is 10^18 ns ahead of host 1's
        e.onHost(1);
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 100);
        e.onHost(2);
        e.onProxyOpStart(3, 9, 0, 1, 0, false, far + 100);
        e.onHost(1);
        recvStep(e, 2, 1, 200, 10);
        e.onHost(2);
        recvStep(e, 4, 3, far + 300, 20);
        // Neither host reached the end of its first period, nor made the other's flows look idle.
        assertThat(out).isEmpty();
        assertThat(e.flowsEvicted()).isZero();

        e.onHost(1);
        e.onProxyOpStop(1, 1_500); // host 1 enters [1000, 2000): only host 1's flow is emitted
        assertThat(out).hasSize(1);
        assertThat(out.get(0).hostId()).isEqualTo(1);
        assertThat(out.get(0).periodStartNs()).isZero();
        assertThat(out.get(0).bytes()).isEqualTo(10);
        e.flush();
        assertThat(out).hasSize(2);
        assertThat(out.get(1).hostId()).isEqualTo(2);
        assertThat(out.get(1).periodStartNs()).isEqualTo(far);
        assertThat(e.totalBytes(2, 9, 0, 1, 0, false)).isEqualTo(20);
        assertThat(e.totalBytes(1, 9, 0, 1, 0, false)).isEqualTo(10);
        assertThat(e.liveHosts()).isEqualTo(3); // 0 (the default), 1, 2
    }

    @Test
    void shouldEndAnIdleHostsPeriodOnAdvanceToWithoutCountingAnythingOrChangingTheCurrentHost() {
        final WindowEngine e = engine(new WindowConfig().periodNs(1_000));
        e.onHost(1);
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 100);
        recvStep(e, 2, 1, 200, 10);
        e.onHost(2);
        e.onProxyOpStart(3, 9, 0, 1, 0, false, 100);
        assertThat(out).isEmpty();

        e.advanceTo(1, 1_500); // host 1 is idle at 1500: its first period [0, 1000) ends, host 2's does not
        assertThat(out).hasSize(1);
        assertThat(out.get(0).hostId()).isEqualTo(1);
        assertThat(out.get(0).bytes()).isEqualTo(10);
        assertThat(e.unknownOpRecords()).isZero();
        assertThat(e.duplicateRecords()).isZero();

        // The calls that follow are still host 2's: its step lands on its own flow, and its clock is not host 1's.
        recvStep(e, 4, 3, 300, 20);
        e.advanceTo(1, 1_800); // the same period of host 1: nothing more
        assertThat(out).hasSize(1);
        e.advanceTo(2, 2_100);
        assertThat(out).hasSize(2);
        assertThat(out.get(1).hostId()).isEqualTo(2);
        assertThat(out.get(1).bytes()).isEqualTo(20);
        assertThat(e.totalBytes(2, 9, 0, 1, 0, false)).isEqualTo(20);
        assertThat(e.unknownOpRecords()).isZero();
    }

    @Test
    void shouldDropTheEventsOfAHostBeyondTheHostTable() {
        final WindowEngine e = engine(new WindowConfig().maxHosts(2));
        e.onHost(1);
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 100);
        e.onHost(2);
        e.onProxyOpStart(2, 9, 0, 1, 0, false, 100);
        assertThat(e.droppedHostTableFull()).isEqualTo(1);
        assertThat(e.liveFlows()).isEqualTo(1);
    }

    @Test
    void shouldTrackAQpFlowsOutstandingWorkRequestsAndWindow() {
        final WindowEngine e = engine(new WindowConfig().periodNs(1_000_000));
        e.onHost(5);
        e.onQpStart(1, 0, 77, 0, 1_000, 100);
        e.onQpStart(2, 0, 77, 0, 3_000, 200);
        e.onQpStart(3, 1, 77, 0, 8, 200); // another device: another flow
        final FlowSummary snap = new FlowSummary();
        assertThat(e.snapshotQp(5, 0, 77, snap)).isTrue();
        assertThat(snap.kind()).isEqualTo(FlowSummary.KIND_QP);
        assertThat(snap.outstandingSteps()).isEqualTo(2);
        assertThat(snap.outstandingBytes()).isEqualTo(4_000);

        e.onQpStop(2, 700);
        e.onQpStop(2, 900); // duplicate
        e.onQpStop(1, 1_100);
        e.snapshotQp(5, 0, 77, snap);
        assertThat(snap.outstandingSteps()).isZero();
        assertThat(snap.windowBytes()).isEqualTo(4_000);
        assertThat(snap.windowSpanNs()).isEqualTo(1_000); // first post 100 .. last completion 1100
        assertThat(snap.phaseSumNs(Phase.NETWORK)).isEqualTo(500 + 1_000);
        assertThat(e.duplicateRecords()).isEqualTo(1);
        e.flush();
        assertThat(out).extracting(FlowSummary::kind).containsOnly(FlowSummary.KIND_QP);
        assertThat(out).extracting(FlowSummary::device).containsExactlyInAnyOrder(0, 1);
        assertThat(out).filteredOn(s -> s.device() == 1).singleElement().satisfies(s -> assertThat(s.outstandingBytes())
                .isEqualTo(8));
    }

    @Test
    void shouldEmitRankLinkAndCommunicatorAggregatesPerPeriod() {
        final WindowEngine e = engine(new WindowConfig().periodNs(1_000));
        e.onProxyOpStart(1, 9, 0, 1, 0, false, 100); // rank 0 <- 1, channel 0
        e.onProxyOpStart(3, 9, 0, 1, 1, false, 100); // rank 0 <- 1, channel 1
        e.onProxyOpStart(5, 9, 0, 2, 0, false, 100); // rank 0 <- 2
        e.onProxyOpStart(7, 9, 1, 0, 0, false, 100); // rank 1 <- 0
        recvStep(e, 2, 1, 100, 10);
        recvStep(e, 4, 3, 100, 20);
        recvStep(e, 6, 5, 100, 40);
        recvStep(e, 8, 7, 100, 80);
        e.flush();
        assertThat(out).hasSize(4);
        assertThat(aggregates)
                .filteredOn(s -> s.kind() == FlowSummary.KIND_LINK)
                .extracting(s -> s.rank() + "<" + s.peer() + ":" + s.bytes() + "/" + s.flows())
                .containsExactlyInAnyOrder("0<1:30/2", "0<2:40/1", "1<0:80/1");
        assertThat(aggregates)
                .filteredOn(s -> s.kind() == FlowSummary.KIND_RANK)
                .extracting(s -> s.rank() + ":" + s.bytes() + "/" + s.completions())
                .containsExactlyInAnyOrder("0:70/3", "1:80/1");
        assertThat(aggregates)
                .filteredOn(s -> s.kind() == FlowSummary.KIND_COMM)
                .singleElement()
                .satisfies(s -> {
                    assertThat(s.bytes()).isEqualTo(150);
                    assertThat(s.flows()).isEqualTo(4);
                    assertThat(s.periodBandwidthBytesPerSecond()).isEqualTo(150 * 1e9 / 1_000);
                    assertThat(s.phaseSumNs(Phase.NETWORK)).isEqualTo(4 * 100);
                    assertThat(s.isSend()).isFalse();
                });
    }

    @Test
    void shouldEmitACollectiveWhoseChannelsNeverReportAtTheCollectiveTimeoutWithItsHostSpan() {
        final List<CollectiveSummary> colls = new ArrayList<>();
        final WindowEngine e =
                new WindowEngine(new WindowConfig().periodNs(1_000).collectiveTimeoutNs(10_000), s -> {}, s -> {
                    final CollectiveSummary c = new CollectiveSummary();
                    c.copyFrom(s);
                    colls.add(c);
                });
        e.onCollStart(
                1, 9, 0, 4, Collectives.ALL_GATHER, Collectives.ALGO_RING, Collectives.PROTO_LL, 1_000, 4, 2, 7, 100);
        e.onCollStop(1, 2_100);
        assertThat(colls).isEmpty();
        e.onCollStart(
                2,
                9,
                0,
                4,
                Collectives.BROADCAST,
                Collectives.ALGO_RING,
                Collectives.PROTO_LL,
                10,
                1,
                2,
                8,
                20_000); // a later event: the first one's timeout has passed at this period's start
        assertThat(colls).singleElement().satisfies(c -> {
            assertThat(c.complete()).isFalse();
            assertThat(c.gpuTimed()).isFalse();
            assertThat(c.durationNs()).isEqualTo(2_000);
            assertThat(c.bytes()).isEqualTo(1_000 * 4 * 4);
            assertThat(c.algBandwidthBytesPerSecond()).isEqualTo(16_000 * 1e9 / 2_000);
            assertThat(c.busBandwidthBytesPerSecond()).isEqualTo(16_000 * 1e9 / 2_000 * 3 / 4);
        });
        assertThat(e.collectivesIncomplete()).isEqualTo(1);
        assertThat(e.liveCollectives()).isEqualTo(1);
    }

    @Test
    void shouldAttachKernelChannelsThatCameBeforeTheirCollStartWhenItComes() {
        final List<CollectiveSummary> colls = new ArrayList<>();
        final WindowEngine e =
                new WindowEngine(new WindowConfig().periodNs(1_000).pendingKernelChannels(4, 50_000), s -> {}, s -> {
                    final CollectiveSummary c = new CollectiveSummary();
                    c.copyFrom(s);
                    colls.add(c);
                });
        // Channel 0 starts and stops, channel 1 only starts, before the Coll START (another ring lane).
        e.onKernelChStart(11, 1, 0, 5_000_000, 10_000);
        e.onKernelChStop(11, 5_004_000, 14_000);
        e.onKernelChStart(12, 1, 1, 5_001_000, 11_000);
        e.onKernelChStart(12, 1, 1, 5_001_000, 11_000); // a duplicate while pending
        assertThat(e.pendingKernelChannels()).isEqualTo(2);
        assertThat(e.unknownCollRecords()).isZero();
        e.onCollStart(
                1,
                9,
                2,
                4,
                Collectives.ALL_REDUCE,
                Collectives.ALGO_RING,
                Collectives.PROTO_SIMPLE,
                1_000,
                4,
                2,
                7,
                12_000);
        assertThat(e.pendingKernelChannels()).isZero();
        assertThat(e.pendingKernelChAttached()).isEqualTo(2);
        e.onKernelChStop(12, 5_006_000, 16_000);
        e.onCollStop(1, 17_000);
        assertThat(colls).singleElement().satisfies(c -> {
            assertThat(c.complete()).isTrue();
            assertThat(c.kernelChannels()).isEqualTo(2);
            assertThat(c.gpuStartNs()).isEqualTo(5_000_000);
            assertThat(c.gpuEndNs()).isEqualTo(5_006_000);
            // The GPU (host 0, comm 9, rank 2) sampled at attach: offset min(10,000 − 5,000,000, 11,000 − 5,001,000).
            assertThat(c.gpuStartHostKnown()).isTrue();
            assertThat(c.gpuStartHostNs()).isEqualTo(5_000_000 - 4_990_000);
        });
        assertThat(e.duplicateRecords()).isEqualTo(1);
        final GpuClockEstimate g = new GpuClockEstimate();
        assertThat(e.gpuClock(0, 9, 2, g)).isTrue();
        assertThat(g.samples()).isEqualTo(2);
        assertThat(g.offsetNs()).isEqualTo(-4_990_000);
    }

    @Test
    void shouldCountAPendingKernelChannelAsUnknownWhenItsCollStartNeverComes() {
        final WindowEngine e =
                new WindowEngine(new WindowConfig().periodNs(1_000).pendingKernelChannels(2, 50_000), s -> {});
        e.onKernelChStart(11, 1, 0, 5_000_000, 10_000);
        e.onKernelChStart(12, 1, 1, 5_000_000, 10_000);
        e.onKernelChStart(13, 1, 2, 5_000_000, 10_000); // the table (2) is full: unknown at once
        assertThat(e.pendingKernelChannels()).isEqualTo(2);
        assertThat(e.unknownCollRecords()).isEqualTo(1);
        e.onKernelChStop(12, 5_001_000, 20_000);
        e.onCollStop(5, 59_999); // the window (50 us) has not passed at this period's start (59,000)
        assertThat(e.pendingKernelChannels()).isEqualTo(2);
        e.onCollStop(5, 60_000);
        assertThat(e.pendingKernelChannels()).isZero();
        assertThat(e.unknownCollRecords()).isEqualTo(1 + 2 + 2); // the full table, two expired, two unknown stops
        e.onCollStart(
                1,
                9,
                2,
                4,
                Collectives.ALL_REDUCE,
                Collectives.ALGO_RING,
                Collectives.PROTO_SIMPLE,
                1_000,
                4,
                3,
                7,
                61_000);
        assertThat(e.pendingKernelChAttached()).isZero();
    }
}
