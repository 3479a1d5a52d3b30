package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.sim.Scenario;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.zip.CRC32;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link AnomalyEngine#checkpoint} and {@link AnomalyEngine#restore}: a stage restored from a checkpoint taken after
 * any prefix of a run, then fed the rest, makes exactly the sink calls (in order, equal anomalies) and ends with
 * exactly the open anomalies and state of one stage fed the whole run; the bytes of a restored stage's checkpoint
 * are the bytes it was restored from; a truncated, damaged, foreign or other-configuration checkpoint is refused
 * with an {@link IllegalArgumentException} and leaves the stage as it was.
 */
class CheckpointTest {
    private static final AnomalyConfig CONFIG = new AnomalyConfig();

    /** One sink call. */
    record Call(String type, Anomaly anomaly) {}

    private static AnomalyEngine engine(final List<Call> calls) {
        return new AnomalyEngine(CONFIG, AnomalySink.of((type, a) -> calls.add(new Call(type, a))));
    }

    /**
     * The heart of it: the input run once uninterrupted (never checkpointed) for the reference calls; once more,
     * checkpointed before each cut (a checkpoint must change nothing); then for every cut a fresh stage restored
     * from that checkpoint and fed the rest, compared call for call. Returns how many cuts had an anomaly open.
     */
    private static int assertRestoresExactly(final RecordedInput input) {
        final int n = input.size();
        final List<Call> reference = new ArrayList<>();
        final AnomalyEngine whole = engine(reference);
        // callsBefore[i]: the reference calls made before input i.
        final int[] callsBefore = new int[n + 1];
        for (int i = 0; i < n; i++) {
            callsBefore[i] = reference.size();
            input.feed(whole, i, i + 1);
        }
        callsBefore[n] = reference.size();
        final int[] cuts = cuts(input, callsBefore);

        final List<Call> checkpointed = new ArrayList<>();
        final AnomalyEngine probed = engine(checkpointed);
        final byte[][] checkpoints = new byte[cuts.length][];
        final int[] openAtCut = new int[cuts.length];
        int from = 0;
        for (int k = 0; k < cuts.length; k++) {
            input.feed(probed, from, cuts[k]);
            from = cuts[k];
            checkpoints[k] = probed.checkpoint();
            openAtCut[k] = probed.openAnomalies().size();
        }
        input.feed(probed, from, n);
        assertThat(checkpointed).as("calls of a stage checkpointed as it ran").isEqualTo(reference);

        final byte[] end = whole.checkpoint();
        int cutsWithOpen = 0;
        for (int k = 0; k < cuts.length; k++) {
            final List<Call> calls = new ArrayList<>();
            final AnomalyEngine restored = engine(calls);
            restored.restore(checkpoints[k]);
            assertThat(restored.checkpoint())
                    .as("checkpoint of a stage restored at input %d of %d", cuts[k], n)
                    .isEqualTo(checkpoints[k]);
            assertThat(restored.openAnomalies()).hasSize(openAtCut[k]);
            input.feed(restored, cuts[k], n);
            assertThat(calls)
                    .as("calls after a restore at input %d of %d", cuts[k], n)
                    .isEqualTo(reference.subList(callsBefore[cuts[k]], reference.size()));
            assertThat(restored.openAnomalies()).isEqualTo(whole.openAnomalies());
            assertThat(restored.summaries()).isEqualTo(whole.summaries());
            // And the same state at the end, what no call shows included (e.g. whose clock closes the windows).
            assertThat(restored.checkpoint())
                    .as("state at the end after a restore at input %d of %d", cuts[k], n)
                    .isEqualTo(end);
            cutsWithOpen += openAtCut[k] > 0 ? 1 : 0;
        }
        return cutsWithOpen;
    }

    /**
     * Where to cut: at the very start, in the warm-up (5 % in), every fortieth of the run (at an odd offset: inside
     * periods), and around every publication: 10 % of the run before it (a tracker counting bad evaluations, a
     * hang's receives stalling), just before and just after it, and halfway between an opening and what follows.
     */
    private static int[] cuts(final RecordedInput input, final int[] callsBefore) {
        final int n = input.size();
        final TreeSet<Integer> cuts = new TreeSet<>();
        cuts.add(1);
        cuts.add(n / 20);
        for (int k = 0; k < 40; k++) {
            cuts.add(k * (n / 40) + 7);
        }
        int call = 0;
        int previous = 0;
        for (int i = 0; i < n; i++) {
            while (call < callsBefore[i + 1]) {
                // Input i made this call.
                cuts.add(i);
                cuts.add(i + 1);
                cuts.add(i - n / 10);
                cuts.add((previous + i) / 2);
                previous = i;
                call++;
            }
        }
        return cuts.stream()
                .filter(c -> c >= 0 && c <= n)
                .limit(100)
                .mapToInt(Integer::intValue)
                .toArray();
    }

    static List<String> suite() {
        return Scenario.builtInNames();
    }

    @ParameterizedTest
    @MethodSource("suite")
    void aStageRestoredAnywhereInASuiteRunPublishesWhatAnUninterruptedOneDoes(final String name) {
        final int cutsWithOpen = assertRestoresExactly(RecordedInput.of(Scenario.builtIn(name)));
        if (!name.startsWith("clean-")) {
            assertThat(cutsWithOpen).as("cuts with an anomaly open").isGreaterThan(0);
        }
    }

    /** Faults that end: the counters towards resolving, the resolutions, a hang that clears, the nccl model. */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "nodes=2,gpus=4,channels=2,size=8M,seed=22,duration=300ms,"
                        + "fault=slow-link,rank=3,peer=4,fraction=0.5,at=100ms,for=60ms",
                "nodes=2,gpus=4,channels=2,size=8M,seed=24,duration=300ms,"
                        + "fault=slow-gpu,rank=2,fraction=0.5,at=100ms,for=60ms",
                "nodes=2,gpus=4,channels=2,size=8M,seed=25,model=nccl,duration=250ms,"
                        + "fault=slow-link,rank=3,peer=4,fraction=0.5,at=100ms,for=80ms"
            })
    void aStageRestoredAnywhereAroundAFaultThatEndsPublishesWhatAnUninterruptedOneDoes(final String spec) {
        assertThat(assertRestoresExactly(RecordedInput.of(Scenario.parse(spec))))
                .isGreaterThan(0);
    }

    @Test
    void waitStateStragglersOfTheNcclModelRestoreExactly() {
        // The wait-state detector's windows and episodes (real NCCL's socket shape, a late CPU).
        assertThat(assertRestoresExactly(RecordedInput.of(Scenario.parse(Scenario.REAL_SOCKET_PAIR
                        + ",size=4M,duration=300ms,fault=late-cpu,rank=0,delay=1ms,at=100ms"))))
                .isGreaterThan(0);
    }

    @Test
    void kernelTimedStragglersRestoreExactly() {
        // The kernel-lateness detector's rounds and windows (NVLink: KernelCh only), opened then resolved.
        final RecordedInput input = new RecordedInput();
        KernelLatenessDetectorTest.feed(input, 8, 1_500, 5, 200_000, 600, 1_500);
        // Then silence: empty windows resolve the straggler.
        final long end = KernelLatenessDetectorTest.T0 + 1_500 * (KernelLatenessDetectorTest.OP_NS + 200_000);
        for (long t = end; t < end + 300_000_000L; t += 1_000_000) {
            input.advanceTo(KernelLatenessDetectorTest.HOST, t);
        }
        assertThat(assertRestoresExactly(input)).isGreaterThan(0);
    }

    @Test
    void aStallThatClearsRestoresExactly() {
        // A rank stopped for 60 ms: the hang opens, its culprit held, then it resolves (HangDetectorTest's ring).
        final RecordedInput input = new RecordedInput();
        new ScriptedRing(4).stop(3, 100, 130).feed(200, input);
        assertThat(assertRestoresExactly(input)).isGreaterThan(0);
    }

    @Test
    void aSilentAnchorHostsWindowsTakenOverRestoreExactly() {
        // The wait-state windows close on their anchor host's clock; when it falls silent another host takes them
        // over after 64 of its periods: cuts before, during and after that count.
        final RecordedInput ring = new RecordedInput();
        new ScriptedRing(4).feed(200, ring);
        final AnomalyEngine first = engine(new ArrayList<>());
        ring.feed(first, 0, ring.size() / 10);
        final long anchor = first.waitStates().anchorHostOf(ScriptedRing.COMM);
        // The anchor host is gone from a fifth of the run on: neither its summaries nor its time come.
        final RecordedInput input = ring.withoutHost(anchor, ring.size() / 5);
        final AnomalyEngine e = engine(new ArrayList<>());
        input.feed(e, 0, input.size());
        assertThat(e.waitStates().anchorHostOf(ScriptedRing.COMM))
                .as("taken over")
                .isNotEqualTo(anchor);
        assertRestoresExactly(input);
    }

    @Test
    void aNicThatGoesDownAndFailsOverRestoresExactly() {
        final RecordedInput input = new RecordedInput();
        new ScriptedRing(4).nicDown(1, 100, 6).feed(200, input);
        assertThat(assertRestoresExactly(input)).isGreaterThan(0);
    }

    // Refusals.

    private static byte[] rich;

    /** A checkpoint with much in it: a hang open, NICs, links, rounds, windows mid-period. */
    @BeforeAll
    static void richCheckpoint() {
        final RecordedInput input = RecordedInput.of(Scenario.builtIn("hang-ring-2x4"));
        final List<Call> calls = new ArrayList<>();
        final AnomalyEngine e = engine(calls);
        int i = 0;
        while (i < input.size() && e.openAnomalies().isEmpty()) {
            input.feed(e, i, ++i);
        }
        // Past the opening, to a point inside a period.
        input.feed(e, i, i + 1_003);
        assertThat(e.openAnomalies()).isNotEmpty();
        rich = e.checkpoint();
    }

    /** The bytes with the header's payload length and the CRC made to fit again (damage the CRC would not see). */
    private static byte[] resealed(final byte[] damaged) {
        final byte[] b = damaged.clone();
        final int payload = b.length - CheckpointOut.HEADER - CheckpointOut.CRC;
        for (int i = 0; i < 4; i++) {
            b[CheckpointOut.HEADER - 4 + i] = (byte) (payload >>> (8 * (3 - i)));
        }
        final CRC32 crc = new CRC32();
        crc.update(b, 0, b.length - CheckpointOut.CRC);
        final long v = crc.getValue();
        for (int i = 0; i < 4; i++) {
            b[b.length - 4 + i] = (byte) (v >>> (8 * (3 - i)));
        }
        return b;
    }

    /** A stage restored from {@link #rich}, to be refused other bytes and stay as it was. */
    private static AnomalyEngine restoredRich() {
        final AnomalyEngine e = engine(new ArrayList<>());
        e.restore(rich);
        return e;
    }

    @Test
    void everyTruncationIsRefusedAndTheStageStaysAsItWas() {
        final AnomalyEngine e = restoredRich();
        for (int len = 0; len < rich.length; len++) {
            final byte[] cut = Arrays.copyOf(rich, len);
            assertThatThrownBy(() -> e.restore(cut)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(e.checkpoint()).isEqualTo(rich);
    }

    @Test
    void truncationsThatTheLengthAndCrcWouldNotSeeAreRefusedByTheReadsThemselves() {
        final AnomalyEngine e = restoredRich();
        final int payload = rich.length - CheckpointOut.HEADER - CheckpointOut.CRC;
        final int stride = Math.max(1, payload / 3_000);
        for (int p = 0; p < payload; p += stride) {
            final byte[] b = new byte[CheckpointOut.HEADER + p + CheckpointOut.CRC];
            System.arraycopy(rich, 0, b, 0, CheckpointOut.HEADER + p);
            assertRefusedByTheReads(e, resealed(b), "payload cut at " + p);
        }
        assertThat(e.checkpoint()).isEqualTo(rich);
    }

    /** Refused with the reads' own message, not by the guard around them (no cause: no exception was caught). */
    private static void assertRefusedByTheReads(final AnomalyEngine e, final byte[] b, final String what) {
        assertThatThrownBy(() -> e.restore(b))
                .as(what)
                .isInstanceOf(IllegalArgumentException.class)
                .hasNoCause()
                .hasMessageStartingWith("anomaly checkpoint");
    }

    @Test
    void randomlyDamagedBytesAreRefusedAndTheStageStaysAsItWas() {
        final AnomalyEngine e = restoredRich();
        final Random rnd = new Random(20);
        int readable = 0;
        int refusedByReads = 0;
        for (int trial = 0; trial < 3_000; trial++) {
            final byte[] b = rich.clone();
            final int flips = 1 + rnd.nextInt(3);
            for (int f = 0; f < flips; f++) {
                final int at = rnd.nextInt(b.length);
                b[at] = (byte) (b[at] ^ (1 + rnd.nextInt(255)));
            }
            assertThatThrownBy(() -> e.restore(b)).isInstanceOf(IllegalArgumentException.class);
            // The same damage past the CRC: refused by the reads, or read (a figure changed, not the structure).
            try {
                e.restore(resealed(b));
                readable++;
                e.restore(rich);
            } catch (final IllegalArgumentException refused) {
                assertThat(refused).as("trial %d", trial).hasNoCause();
                refusedByReads++;
            }
            assertThat(e.checkpoint()).isEqualTo(rich);
        }
        assertThat(refusedByReads).as("refused past the CRC").isGreaterThan(300);
        assertThat(readable + refusedByReads).isEqualTo(3_000);
    }

    @Test
    void foreignBytesAndOtherVersionsAreRefusedByName() {
        final AnomalyEngine e = restoredRich();
        assertThatThrownBy(() -> e.restore("{\"not\":\"a checkpoint at all\"}".getBytes()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not an anomaly checkpoint");
        final byte[] other = rich.clone();
        other[5] = (byte) (CheckpointOut.VERSION + 1);
        assertThatThrownBy(() -> e.restore(resealed(other)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("format version " + (CheckpointOut.VERSION + 1));
        assertThatThrownBy(() -> e.restore(new byte[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> e.restore(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(e.checkpoint()).isEqualTo(rich);
    }

    @Test
    void aCheckpointMadeUnderOtherThresholdsIsRefused() {
        final AnomalyEngine other = new AnomalyEngine(new AnomalyConfig().openAfter(5), AnomalySink.of((t, a) -> {}));
        assertThatThrownBy(() -> other.restore(rich))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("other thresholds");
        assertThat(other.openAnomalies()).isEmpty();
    }

    @Test
    void everyThresholdCountsInTheFingerprint() throws IllegalAccessException {
        final long base = new AnomalyConfig().fingerprint();
        int fields = 0;
        for (final Field f : AnomalyConfig.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            final AnomalyConfig c = new AnomalyConfig();
            if (f.getType() == int.class) {
                f.setInt(c, f.getInt(c) + 1);
            } else if (f.getType() == long.class) {
                f.setLong(c, f.getLong(c) + 1);
            } else if (f.getType() == double.class) {
                f.setDouble(c, f.getDouble(c) * 1.5 + 1);
            } else {
                f.setBoolean(c, !f.getBoolean(c));
            }
            assertThat(c.fingerprint()).as(f.getName()).isNotEqualTo(base);
            fields++;
        }
        assertThat(fields).isGreaterThan(20);
        assertThat(new AnomalyConfig().fingerprint()).isEqualTo(base);
    }
}
