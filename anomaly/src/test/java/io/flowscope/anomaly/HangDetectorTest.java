package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Severity;
import org.junit.jupiter.api.Test;

/** {@link HangDetector} on a {@link ScriptedRing}: a rank that stops, the ranks blocked behind it, short pauses. */
class HangDetectorTest {
    private static final long THRESHOLD_NS = 20_000_000L;

    private static AnomalyConfig config() {
        return new AnomalyConfig().hangThresholdNs(THRESHOLD_NS);
    }

    @Test
    void aRankThatStopsIsNamedNotTheRanksBlockedBehindIt() {
        final ScriptedRing ring =
                new ScriptedRing(4).stop(2, 100, Integer.MAX_VALUE).run(160, config());

        assertThat(ring.opened).as("one anomaly: the hang").hasSize(1);
        final Anomaly hang = ring.opened.get(0);
        assertThat(hang.kind()).isEqualTo(AnomalyKind.HANG);
        assertThat(hang.severity()).isEqualTo(Severity.CRITICAL);
        assertThat(hang.culprit().rank())
                .as("the stopped rank, root of the wait-for graph")
                .isEqualTo(2);
        assertThat(hang.culprit().hostId()).isEqualTo(ScriptedRing.hostOf(2));
        final long stopNs = ScriptedRing.T0 + 100 * ScriptedRing.OP_NS;
        // Its receivers' last progress was in the op before (up to one op earlier): the threshold counts from there.
        assertThat(hang.detectedNs() - stopNs)
                .as("named at the threshold, within two periods")
                .isBetween(THRESHOLD_NS - ScriptedRing.OP_NS, THRESHOLD_NS + 2_000_000L);
        assertThat(hang.evidence()).containsKeys("stalledReceives", "waitersOnCulprit", "noProgressNs");
        assertThat(ring.updated)
                .as("the culprit never moves to a blocked rank")
                .allSatisfy(a -> assertThat(a.culprit().rank()).isEqualTo(2));
    }

    @Test
    void aPauseShorterThanTheThresholdIsNoHang() {
        // 8 ops of 2 ms: 16 ms without progress, under the 20 ms threshold.
        final ScriptedRing ring = new ScriptedRing(4).stop(1, 100, 108).run(200, config());

        assertThat(ring.opened).isEmpty();
    }

    @Test
    void theHangResolvesWhenTheRankComesBackAndKeepsItsCulprit() {
        final ScriptedRing ring = new ScriptedRing(4).stop(3, 100, 130).run(200, config());

        assertThat(ring.opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.HANG);
        assertThat(ring.resolved).hasSize(1);
        final Anomaly resolved = ring.resolved.get(0);
        assertThat(resolved.culprit().rank()).isEqualTo(3);
        final long backNs = ScriptedRing.T0 + 130 * ScriptedRing.OP_NS;
        assertThat(resolved.resolvedNs() - backNs)
                .as("resolved once the receives progress again")
                .isBetween(0L, 4_000_000L);
    }

    @Test
    void aStallIsAWarningUntilItHasLastedTheCriticalTime() {
        final AnomalyConfig config = config().hangCriticalNs(60_000_000L);
        final ScriptedRing ring =
                new ScriptedRing(4).stop(2, 100, Integer.MAX_VALUE).run(160, config);

        assertThat(ring.opened).hasSize(1);
        final Anomaly stall = ring.opened.get(0);
        assertThat(stall.severity()).isEqualTo(Severity.WARNING);
        assertThat(stall.culprit().rank()).isEqualTo(2);
        assertThat(stall.summary()).contains("stalled: rank 2 has not progressed");
        assertThat(ring.updated)
                .as("escalated once, same anomaly, same culprit")
                .hasSize(1);
        final Anomaly hang = ring.updated.get(0);
        assertThat(hang.id()).isEqualTo(stall.id());
        assertThat(hang.severity()).isEqualTo(Severity.CRITICAL);
        assertThat(hang.culprit().rank()).isEqualTo(2);
        assertThat(hang.summary()).contains("hung: rank 2 does not progress");
        final long stopNs = ScriptedRing.T0 + 100 * ScriptedRing.OP_NS;
        assertThat(hang.windowEndNs() - stopNs)
                .as("critical at 60 ms of no progress")
                .isBetween(60_000_000L - ScriptedRing.OP_NS, 62_000_000L);
    }

    @Test
    void aStallShorterThanTheCriticalTimeStaysAWarning() {
        // 15 ops of 2 ms: 30 ms, past the 20 ms threshold, short of the 60 ms critical time.
        final ScriptedRing ring = new ScriptedRing(4).stop(1, 100, 115).run(200, config().hangCriticalNs(60_000_000L));

        assertThat(ring.opened).extracting(Anomaly::severity).containsExactly(Severity.WARNING);
        assertThat(ring.updated).isEmpty();
        assertThat(ring.resolved).extracting(Anomaly::severity).containsExactly(Severity.WARNING);
    }

    @Test
    void clocksFarPastTwoToTheFortyNanosecondsNameTheSame() {
        // Hosts up for days: their clocks read 3 × 2^40 ns (55 minutes) and more; nothing in the window engine or
        // the anomaly stage may pack an absolute time into 40 bits.
        final ScriptedRing early = new ScriptedRing(4).stop(2, 100, 140).run(200, config());
        final ScriptedRing late = new ScriptedRing(4);
        late.t0 = 3L << 40;
        late.stop(2, 100, 140).run(200, config());

        assertThat(late.opened).hasSameSizeAs(early.opened).isNotEmpty();
        for (int i = 0; i < early.opened.size(); i++) {
            final Anomaly a = early.opened.get(i);
            final Anomaly b = late.opened.get(i);
            assertThat(b.kind()).isEqualTo(a.kind());
            assertThat(b.culprit()).isEqualTo(a.culprit());
            assertThat(b.detectedNs() - late.t0).isEqualTo(a.detectedNs() - early.t0);
        }
        assertThat(late.resolved).hasSameSizeAs(early.resolved);
    }

    @Test
    void aJobThatPausesLongerThanTheThresholdIsNoHangWhenItResumes() {
        // Every rank idle for 100 ops (200 ms, ten thresholds): a checkpoint. The receives it posts after are new.
        final ScriptedRing ring = new ScriptedRing(4).idle(100, 200).run(300, config());

        assertThat(ring.opened).isEmpty();
    }
}
