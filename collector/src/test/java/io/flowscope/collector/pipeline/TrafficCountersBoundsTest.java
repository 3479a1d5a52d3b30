package io.flowscope.collector.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The histograms' bucket bounds: 1, 2.5 and 5 times each power of ten, as Prometheus users read them. */
class TrafficCountersBoundsTest {
    @Test
    void collectiveDurationsFromTenMicrosecondsToTenSeconds() {
        assertThat(TrafficCounters.COLLECTIVE_BOUNDS_NS)
                .hasSize(19)
                .startsWith(10_000L, 25_000L, 50_000L, 100_000L)
                .endsWith(2_500_000_000L, 5_000_000_000L, 10_000_000_000L)
                .isSorted();
    }

    @Test
    void waitPhasesFromOneMicrosecondToTenSeconds() {
        assertThat(TrafficCounters.PHASE_BOUNDS_NS)
                .hasSize(22)
                .startsWith(1_000L, 2_500L, 5_000L, 10_000L)
                .endsWith(5_000_000_000L, 10_000_000_000L)
                .contains(TrafficCounters.COLLECTIVE_BOUNDS_NS)
                .isSorted();
    }

    @Test
    void oneDecadeIsFourBounds() {
        assertThat(TrafficCounters.oneTwoFiveSteps(10, 100)).containsExactly(10, 25, 50, 100);
        assertThat(TrafficCounters.oneTwoFiveSteps(1, 1)).containsExactly(1);
    }
}
