package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link AnomalyLifecycle}: the hysteresis of every period rule, and one publication per kind and culprit. */
class AnomalyLifecycleTest {
    private static final Culprit RANK_3 = Culprit.rank(0x10, 0xc0, 3);

    private final List<String> events = new ArrayList<>();
    private AnomalyLifecycle lifecycle;
    private final Tracker t = new Tracker();
    private long now;

    @BeforeEach
    void setUp() {
        lifecycle = new AnomalyLifecycle(
                new AnomalyConfig().openAfter(3).resolveAfter(2),
                AnomalySink.of((type, a) -> events.add(type + " " + a.severity())));
    }

    private void evaluate(final boolean bad, final boolean good, final Severity severity) {
        now += 1_000_000;
        lifecycle.evidence().clear();
        lifecycle.evidence().put("excessNs", 1);
        lifecycle.track(
                t,
                bad,
                good,
                AnomalyKind.SLOW_NODE,
                RANK_3,
                severity,
                now - 1_000_000,
                now,
                now - 8_000_000,
                "rank 3 is late");
    }

    @Test
    void opensAfterOpenAfterConsecutiveBadEvaluationsOnly() {
        evaluate(true, false, Severity.WARNING);
        evaluate(true, false, Severity.WARNING);
        evaluate(false, true, Severity.WARNING);
        assertThat(events).as("an interrupted run of bad ones starts again").isEmpty();
        evaluate(true, false, Severity.WARNING);
        evaluate(true, false, Severity.WARNING);
        evaluate(true, false, Severity.WARNING);
        assertThat(events).containsExactly("opened WARNING");
        assertThat(lifecycle.openAnomalies()).hasSize(1);
        assertThat(lifecycle.openAnomalies().get(0).startNs())
                .as("from the first bad period of the run")
                .isEqualTo(3_000_000L);
    }

    @Test
    void escalatesToCriticalAndResolvesAfterResolveAfterGoodOnes() {
        for (int i = 0; i < 3; i++) {
            evaluate(true, false, Severity.WARNING);
        }
        evaluate(true, false, Severity.CRITICAL);
        evaluate(false, false, Severity.WARNING);
        evaluate(false, true, Severity.WARNING);
        assertThat(lifecycle.openAnomalies())
                .as("neither bad nor good resets the good count")
                .hasSize(1);
        evaluate(false, true, Severity.WARNING);
        assertThat(events).containsExactly("opened WARNING", "updated CRITICAL", "resolved CRITICAL");
        assertThat(lifecycle.openAnomalies()).isEmpty();
    }

    @Test
    void anEpisodeDoesNotOpenWhatATrackerHasOpenForTheSameCulprit() {
        for (int i = 0; i < 3; i++) {
            evaluate(true, false, Severity.WARNING);
        }
        final Anomaly again = lifecycle
                .episodes()
                .open(
                        AnomalyKind.SLOW_NODE,
                        RANK_3,
                        Severity.WARNING,
                        now,
                        now,
                        new java.util.TreeMap<>(),
                        "rank 3 straggles");

        assertThat(again).isNull();
        assertThat(lifecycle.openAnomalies()).hasSize(1);
    }

    @Test
    void aHostsCongestionIsKnownOpenWhicheverRuleOpenedItAndAfterARestore() {
        final long host = 0x10;
        final Culprit nic1 = Culprit.nic(host, 1);
        final Anomaly byEpisode = lifecycle
                .episodes()
                .open(AnomalyKind.CONGESTION, nic1, Severity.WARNING, 0, 0, new java.util.TreeMap<>(), "NIC 1");
        final Tracker byPeriodRule = new Tracker();
        for (int i = 0; i < 3; i++) {
            lifecycle.track(
                    byPeriodRule,
                    true,
                    false,
                    AnomalyKind.CONGESTION,
                    Culprit.nic(host, 0),
                    Severity.WARNING,
                    i,
                    i + 1,
                    0,
                    "NIC 0");
        }
        assertThat(lifecycle.congestionOpen(host)).isTrue();
        assertThat(lifecycle.congestionOpen(0x11)).as("another host").isFalse();
        assertThat(lifecycle.episodes().congestionOpen(host)).isTrue();

        // Into a fresh lifecycle through a checkpoint: still open there.
        final CheckpointOut out = new CheckpointOut(7, new HostState[0], new CommState[0], 0);
        lifecycle.writeTo(out);
        final AnomalyLifecycle restored = new AnomalyLifecycle(new AnomalyConfig(), AnomalySink.of((type, a) -> {}));
        restored.readFrom(CheckpointIn.open(out.finish(), 7));
        assertThat(restored.congestionOpen(host)).isTrue();

        lifecycle.episodes().resolve(byEpisode, 5);
        assertThat(lifecycle.congestionOpen(host)).as("NIC 0's still open").isTrue();
        lifecycle.resolve(byPeriodRule, 6);
        assertThat(lifecycle.congestionOpen(host)).isFalse();
    }

    @Test
    void idsFollowKindCulpritAndStart() {
        final long a = AnomalyLifecycle.id(AnomalyKind.HANG, RANK_3, 5);
        assertThat(AnomalyLifecycle.id(AnomalyKind.HANG, RANK_3, 5)).isEqualTo(a);
        assertThat(AnomalyLifecycle.id(AnomalyKind.SLOW_NODE, RANK_3, 5)).isNotEqualTo(a);
        assertThat(AnomalyLifecycle.id(AnomalyKind.HANG, Culprit.rank(0x10, 0xc0, 4), 5))
                .isNotEqualTo(a);
        assertThat(AnomalyLifecycle.id(AnomalyKind.HANG, RANK_3, 6)).isNotEqualTo(a);
    }
}
