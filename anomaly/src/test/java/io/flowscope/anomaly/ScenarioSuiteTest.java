package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.sim.DetectionReport;
import io.flowscope.sim.Fault;
import io.flowscope.sim.GroundTruth;
import io.flowscope.sim.Scenario;
import io.flowscope.sim.SuiteScore;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The labelled suite (issue #4 goals), run once for all tests: every built-in scenario through simulator →
 * window engine → anomaly engine, scored by {@link SuiteScore}. Times are event times.
 */
class ScenarioSuiteTest {
    private static final AnomalyConfig CONFIG = new AnomalyConfig();
    private static List<SuiteScore.Outcome> outcomes;

    @BeforeAll
    static void runSuite() {
        outcomes = DetectionReport.runSuite(CONFIG);
    }

    @Test
    void theSuiteHasAtLeastThirtyLabelledScenariosCoveringEveryKindAndFaultFreeRuns() {
        assertThat(outcomes).hasSizeGreaterThanOrEqualTo(30);
        assertThat(outcomes.stream().filter(SuiteScore.Outcome::clean).count()).isGreaterThanOrEqualTo(5);
        final Map<AnomalyKind, SuiteScore.KindScore> byKind = SuiteScore.byKind(outcomes);
        for (final AnomalyKind k : AnomalyKind.values()) {
            assertThat(byKind.get(k).faults).as(k.toString()).isGreaterThanOrEqualTo(4);
        }
    }

    @Test
    void faultFreeNoisyRunsRaiseNoAnomaly() {
        for (final SuiteScore.Outcome o : outcomes) {
            if (o.clean()) {
                assertThat(o.opened()).as(o.scenario()).isEmpty();
            }
        }
    }

    @Test
    void culpritAccuracyIsAtLeastNinetyFivePercentForEveryKind() {
        SuiteScore.byKind(outcomes).forEach((kind, k) -> assertThat(k.culpritRight)
                .as(kind.toString())
                .isGreaterThanOrEqualTo((int) Math.ceil(0.95 * k.detected)));
    }

    @Test
    void slowLinksOfThirtyPercentOrMoreAreNamedWithinFiftyMillisecondsOfOnset() {
        int checked = 0;
        for (final SuiteScore.Outcome o : outcomes) {
            final Scenario s = Scenario.builtIn(o.scenario());
            for (int i = 0; i < o.truth().size(); i++) {
                final Fault f = s.faults().get(i);
                if (f.kind() == AnomalyKind.SLOW_LINK && f.fraction() <= 0.7) {
                    checked++;
                    assertDetectedWithin(o, i, 50_000_000L);
                }
            }
        }
        assertThat(checked).isGreaterThanOrEqualTo(5);
    }

    @Test
    void congestionOfThirtyPercentOrMoreIsNamedWithinFiftyMillisecondsOfOnset() {
        int checked = 0;
        for (final SuiteScore.Outcome o : outcomes) {
            final Scenario s = Scenario.builtIn(o.scenario());
            for (int i = 0; i < o.truth().size(); i++) {
                final Fault f = s.faults().get(i);
                if (f.kind() == AnomalyKind.CONGESTION && f.fraction() <= 0.7) {
                    checked++;
                    assertDetectedWithin(o, i, 50_000_000L);
                }
            }
        }
        assertThat(checked).isGreaterThanOrEqualTo(5);
    }

    @Test
    void hangsAreNamedWithinTwiceTheHangThreshold() {
        int checked = 0;
        for (final SuiteScore.Outcome o : outcomes) {
            for (int i = 0; i < o.truth().size(); i++) {
                if (o.truth().get(i).kind() == AnomalyKind.HANG) {
                    checked++;
                    assertDetectedWithin(o, i, 2 * CONFIG.hangThresholdNs());
                }
            }
        }
        assertThat(checked).isGreaterThanOrEqualTo(5);
    }

    @Test
    void everyInjectedFaultIsDetected() {
        SuiteScore.byKind(outcomes)
                .forEach((kind, k) -> assertThat(k.detected).as(kind.toString()).isEqualTo(k.faults));
    }

    private static void assertDetectedWithin(final SuiteScore.Outcome o, final int i, final long limitNs) {
        final GroundTruth g = o.truth().get(i);
        final Anomaly a = o.matched().get(i);
        assertThat(a).as(o.scenario() + " detected").isNotNull();
        assertThat(o.culpritRight().get(i)).as(o.scenario() + " culprit").isTrue();
        assertThat(a.detectedNs() - g.onsetNs())
                .as(o.scenario() + " time to detect")
                .isBetween(0L, limitNs);
    }
}
