package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import org.junit.jupiter.api.Test;

/** {@link NicStallDetector} on a {@link ScriptedRing} whose rank's NIC stops completing work requests. */
class NicStallDetectorTest {
    @Test
    void aNicThatStopsCompletingIsNamedWithItsHostAndDevice() {
        // Down for 3 ops (6 ms: past the 2 ms stall threshold, well under the 20 ms hang one), then failover.
        final ScriptedRing ring = new ScriptedRing(4).nicDown(1, 100, 3).run(160, new AnomalyConfig());

        assertThat(ring.opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.NIC_STALL);
        final Anomaly stall = ring.opened.get(0);
        assertThat(stall.culprit().hostId()).isEqualTo(ScriptedRing.hostOf(1));
        assertThat(stall.culprit().device()).isEqualTo(0);
        assertThat(stall.evidence().get("stalledSendQps")).isGreaterThan(0);
        final long downNs = ScriptedRing.T0 + 100 * ScriptedRing.OP_NS;
        assertThat(stall.detectedNs() - downNs)
                .as("named past the 2 ms threshold, within two periods")
                .isBetween(2_000_000L, 5_000_000L);
        assertThat(ring.resolved)
                .as("settled after the failover")
                .extracting(a -> a.culprit().device())
                .containsExactly(0);
    }

    @Test
    void healthyWorkRequestsRaiseNothing() {
        final ScriptedRing ring = new ScriptedRing(4).run(200, new AnomalyConfig());

        assertThat(ring.opened).isEmpty();
    }
}
