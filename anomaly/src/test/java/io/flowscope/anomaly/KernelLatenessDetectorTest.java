package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Stragglers over NVLink from KernelCh GPU timestamps: no proxy steps, only each rank's kernel start and stop per
 * channel. A late rank's kernel starts last and runs shortest (real trace nvlink-k-gpu-r1-05ms: 28 µs against
 * the peer's 526 µs).
 */
class KernelLatenessDetectorTest {
    static final long HOST = 0x6b65_726eL;
    private static final long COMM = 0xabcdL;
    static final long T0 = 5_000_000_000L;
    static final long OP_NS = 100_000;

    /** {@code ops} all_reduces of {@code ranks} ranks; {@code lateRank} is {@code lateNs} late in ops [from, to). */
    private static List<Anomaly> run(
            final int ranks, final int ops, final int lateRank, final long lateNs, final int from, final int to) {
        final List<Anomaly> opened = new ArrayList<>();
        feed(
                new AnomalyEngine(new AnomalyConfig(), AnomalySink.of((type, a) -> {
                    if (AnomalySink.OPENED.equals(type)) {
                        opened.add(a);
                    }
                })),
                ranks,
                ops,
                lateRank,
                lateNs,
                from,
                to);
        return opened;
    }

    /** Feeds the collectives into a stage (also {@link CheckpointTest}'s kernel-timed input). */
    static void feed(
            final AnomalyStage stage,
            final int ranks,
            final int ops,
            final int lateRank,
            final long lateNs,
            final int from,
            final int to) {
        final WindowEngine engine = new WindowEngine(new WindowConfig().periodNs(1_000_000), stage, stage);
        engine.onHost(HOST);
        final Random rnd = new Random(7);
        long key = 1;
        for (int op = 0; op < ops; op++) {
            final long start = T0 + op * (OP_NS + (op >= from && op < to ? lateNs : 0));
            final long late = op >= from && op < to ? lateNs : 0;
            // Every kernel ends when the last rank's data is in: the late rank's start + 28 µs.
            final long end = start + late + 28_000 + rnd.nextInt(4_000);
            for (int r = 0; r < ranks; r++) {
                final long collKey = key++;
                final long gpuStart = start + (r == lateRank ? late : 0) + rnd.nextInt(5_000);
                engine.onCollStart(collKey, COMM, r, ranks, 0, 1, 2, 1 << 20, 4, 1, op, start);
                final long ch = key++;
                engine.onKernelChStart(ch, collKey, 0, gpuStart, start + 1_000);
                engine.onKernelChStop(ch, end, end + 2_000);
                engine.onCollStop(collKey, start + 500);
            }
            stage.advanceTo(HOST, start + OP_NS);
        }
    }

    @Test
    void aLateRankOverNvlinkIsNamedFromItsKernelTiming() {
        final List<Anomaly> opened = run(2, 3_000, 1, 500_000, 1_000, 1_300);

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_NODE);
        assertThat(opened.get(0).culprit().rank()).isEqualTo(1);
        assertThat(opened.get(0).evidence().get("latenessNsPerOp")).isBetween(450_000.0, 550_000.0);
        assertThat(opened.get(0).summary()).contains("GPU timestamps");
    }

    @Test
    void ofEightRanksOnlyTheLateOneIsNamed() {
        final List<Anomaly> opened = run(8, 3_000, 5, 200_000, 1_000, 1_500);

        assertThat(opened).extracting(a -> a.culprit().rank()).containsExactly(5);
    }

    @Test
    void aStragglerResolvesWhenItsCommunicatorFallsSilent() {
        // Late from op 1,000 to the end: then nothing more (a hang, the job's end); time goes on.
        final List<Anomaly> opened = new ArrayList<>();
        final List<Anomaly> resolved = new ArrayList<>();
        final AnomalyEngine stage = new AnomalyEngine(new AnomalyConfig(), AnomalySink.of((type, a) -> {
            (AnomalySink.OPENED.equals(type)
                            ? opened
                            : AnomalySink.RESOLVED.equals(type) ? resolved : new ArrayList<Anomaly>())
                    .add(a);
        }));
        feed(stage, 2, 1_500, 1, 500_000, 1_000, 1_500);
        assertThat(opened).hasSize(1);
        final long end = T0 + 1_500 * (OP_NS + 500_000);
        for (long t = end; t < end + 300_000_000L; t += 1_000_000) {
            stage.advanceTo(HOST, t);
        }
        assertThat(resolved)
                .extracting(Anomaly::id)
                .containsExactly(opened.get(0).id());
    }

    @Test
    void ranksInStepRaiseNothing() {
        assertThat(run(2, 3_000, 1, 0, 0, 0)).isEmpty();
    }

    @Test
    void aLatenessBelowFiftyMicrosecondsIsNoStraggler() {
        assertThat(run(4, 3_000, 2, 30_000, 1_000, 2_000)).isEmpty();
    }
}
