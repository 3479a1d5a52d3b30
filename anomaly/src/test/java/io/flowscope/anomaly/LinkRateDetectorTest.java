package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link LinkRateDetector}: the period rule's slow link, on {@link RingTraffic} of eight ranks whose one sender's
 * network time per step grows. Its anomalies carry the rule's own evidence (the link's fraction of its baseline
 * against its communicator's median), which tells them from the wait-state detector's.
 */
class LinkRateDetectorTest {
    private static List<Anomaly> rateRule(final List<Anomaly> opened) {
        return opened.stream()
                .filter(a -> a.evidence().containsKey("medianFractionOfBaseline"))
                .toList();
    }

    @Test
    void aSenderWhoseNetworkTimeDoublesIsASlowLinkToItsRightNeighbour() {
        final RingTraffic t = new RingTraffic();
        t.ranks = 8;
        t.slowdownPercent = RingTraffic.between(150, 400, 2, 250, 100);
        final List<Anomaly> byRule = rateRule(t.run(400, new AnomalyConfig()));

        assertThat(byRule).hasSize(1);
        final Anomaly a = byRule.get(0);
        assertThat(a.kind()).isEqualTo(AnomalyKind.SLOW_LINK);
        assertThat(a.culprit().rank()).isEqualTo(2);
        assertThat(a.culprit().peer()).isEqualTo(3);
        assertThat(a.evidence().get("fractionOfBaseline"))
                .as("2.5× the network time")
                .isLessThan(0.6);
        assertThat(a.evidence().get("medianFractionOfBaseline")).isGreaterThan(0.8);
        final long onsetNs = 1_000_000_000L + 150 * t.opPeriodNs;
        assertThat(a.detectedNs() - onsetNs)
                .as("a window and openAfter periods")
                .isBetween(0L, 40_000_000L);
    }

    @Test
    void jitterAloneRaisesNothing() {
        final RingTraffic t = new RingTraffic();
        t.ranks = 8;
        t.jitter = 0.3;

        assertThat(t.run(400, new AnomalyConfig())).isEmpty();
    }

    @Test
    void fewerLinksThanMinLinksAreNotJudged() {
        // Two ranks: two links, under minLinks (4): no median to judge one link against.
        final RingTraffic t = new RingTraffic();
        t.slowdownPercent = RingTraffic.between(150, 400, 1, 250, 100);

        assertThat(rateRule(t.run(400, new AnomalyConfig()))).isEmpty();
    }
}
