package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.sim.Scenario;
import io.flowscope.sim.SimulatedRun;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link CreditWaitDetector}: the period rule's straggler, on the simulator's slow-GPU scenarios (a rank whose
 * GPU consumes late: its senders wait for its credit). Its anomalies carry the rule's own evidence (the credit
 * wait into the rank, its lateness at collectives, the excess over its baseline against the communicator's).
 */
class CreditWaitDetectorTest {
    private static List<Anomaly> byRule(final String scenario) {
        return new SimulatedRun(Scenario.builtIn(scenario), new AnomalyConfig())
                .run().opened().stream()
                        .filter(a -> a.evidence().containsKey("creditWaitIntoRankMaxNs"))
                        .toList();
    }

    @Test
    void theRankItsSendersWaitOnIsNamed() {
        final List<Anomaly> named = byRule("slow-gpu-ring-4x4-33");

        assertThat(named).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_NODE);
        final Anomaly a = named.get(0);
        assertThat(a.culprit().rank()).as("the scenario's slow GPU").isEqualTo(9);
        assertThat(a.evidence().get("excessNs"))
                .as("excess over its baseline")
                .isGreaterThan(a.evidence().get("medianExcessNs") + 50_000);
    }

    @Test
    void aHealthyClusterHasNoStraggler() {
        assertThat(byRule("clean-ring-4x8-1M")).isEmpty();
        assertThat(byRule("clean-mixed-2x4-noisy")).isEmpty();
    }
}
