package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.sim.Scenario;
import io.flowscope.sim.SimulatedRun;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link CongestionDetector} on the simulator's congestion scenarios (one NIC of a node carries several ranks'
 * links and slows for all of them) against a single slow link (one rank's link: no congestion).
 */
class CongestionDetectorTest {
    private static SimulatedRun run(final String scenario) {
        return new SimulatedRun(Scenario.builtIn(scenario), new AnomalyConfig()).run();
    }

    private static List<Anomaly> congestion(final SimulatedRun run) {
        return run.opened().stream()
                .filter(a -> a.kind() == AnomalyKind.CONGESTION)
                .toList();
    }

    @Test
    void theNicSeveralRanksSlowedLinksShareIsNamed() {
        // nodes=2, gpus=4, nics=2: node 0's NIC 1 slows to half at 100 ms for 60 ms.
        final SimulatedRun run = run("congestion-ring-2x4-50");
        final List<Anomaly> named = congestion(run);

        assertThat(named).isNotEmpty();
        final Anomaly a = named.get(0);
        assertThat(a.culprit().hostId()).isEqualTo(run.simulator().hostId(0));
        assertThat(a.culprit().device()).isEqualTo(1);
        assertThat(a.evidence().get("deviceLatencyRatio"))
                .as("the NIC's work requests slowed")
                .isGreaterThan(1.25);
        assertThat(a.evidence().get("outstandingBytes"))
                .as("work queued on the slowed links")
                .isGreaterThan(a.evidence().get("baselineOutstandingBytes"));
        assertThat(a.startNs()).isGreaterThanOrEqualTo(100_000_000L);
        assertThat(run.opened())
                .as("its links are not named slow one by one")
                .noneMatch(o -> o.kind() == AnomalyKind.SLOW_LINK);
    }

    @Test
    void oneSlowLinkIsNotCongestion() {
        assertThat(congestion(run("slow-link-ring-2x4-50"))).isEmpty();
        assertThat(congestion(run("clean-mixed-4x4-bursty"))).isEmpty();
    }
}
