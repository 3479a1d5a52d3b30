package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The communicator's median ratio without the judged link's own (WaitStateDetector.medianWithout). */
class MedianWithoutTest {
    @Test
    void leavesOutOneInstanceOfTheOwnValue() {
        final double[] sorted = {0.9, 1.0, 1.1, 1.8};
        assertThat(WaitStateDetector.medianWithout(sorted, 4, 1.8)).isEqualTo(1.0);
        assertThat(WaitStateDetector.medianWithout(sorted, 4, 0.9)).isEqualTo(1.1);
        assertThat(WaitStateDetector.medianWithout(sorted, 4, 1.0)).isEqualTo(1.1);
        assertThat(WaitStateDetector.medianWithout(new double[] {1.0, 1.0, 2.0}, 3, 1.0))
                .isEqualTo(1.5);
    }

    @Test
    void twoLinksCompareWithEachOtherAndOneWithNothing() {
        assertThat(WaitStateDetector.medianWithout(new double[] {1.1, 1.6}, 2, 1.6))
                .isEqualTo(1.1);
        assertThat(WaitStateDetector.medianWithout(new double[] {1.6}, 1, 1.6)).isNaN();
        assertThat(WaitStateDetector.medianWithout(new double[] {1.1, 1.3}, 2, 5.0))
                .isCloseTo(1.2, within(1e-12));
    }
}
