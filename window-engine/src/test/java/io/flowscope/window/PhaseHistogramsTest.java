package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.Phase;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** The deferred engine-wide phase histograms read exactly as histograms that recorded every value. */
class PhaseHistogramsTest {
    private static long sample(final SplittableRandom rnd, final int i) {
        if (i % 97 == 0) {
            return rnd.nextInt(300); // small values, 0 included
        }
        if (i % 1009 == 0) {
            return PhaseHistograms.HIGHEST + rnd.nextLong(1_000_000); // clamped, as the engine did
        }
        return (long) Math.pow(2, rnd.nextDouble() * 41.7); // log-uniform up to ~HIGHEST
    }

    @Test
    void indexIsHdrHistogramsBucketAndValueMapsBack() {
        final Histogram h = new Histogram(PhaseHistograms.HIGHEST, PhaseHistograms.DIGITS);
        final SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < 300_000; i++) {
            final long v = Math.min(sample(rnd, i), PhaseHistograms.HIGHEST);
            final int index = PhaseHistograms.index(v);
            assertThat(index).isBetween(0, PhaseHistograms.LENGTH - 1);
            assertThat(PhaseHistograms.value(index)).as("value %d", v).isEqualTo(h.lowestEquivalentValue(v));
            assertThat(PhaseHistograms.index(PhaseHistograms.value(index))).isEqualTo(index);
        }
    }

    @Test
    void addToEqualsRecordingEveryValue() {
        final PhaseHistograms deferred = new PhaseHistograms();
        final Histogram[] direct = new Histogram[2 * Phase.COUNT];
        for (int k = 0; k < direct.length; k++) {
            direct[k] = new Histogram(PhaseHistograms.HIGHEST, PhaseHistograms.DIGITS);
        }
        final SplittableRandom rnd = new SplittableRandom(11);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 100_000; i++) {
                final boolean isSend = rnd.nextBoolean();
                final int phase = rnd.nextInt(Phase.COUNT);
                final long v = sample(rnd, i);
                deferred.record(isSend, phase, v);
                direct[(isSend ? 0 : Phase.COUNT) + phase].recordValue(Math.min(v, PhaseHistograms.HIGHEST));
            }
            // Read after every round: what was folded in before stays, what came since is added.
            for (int k = 0; k < direct.length; k++) {
                final Histogram got = new Histogram(PhaseHistograms.HIGHEST, PhaseHistograms.DIGITS);
                final Histogram want = new Histogram(PhaseHistograms.HIGHEST, PhaseHistograms.DIGITS);
                deferred.addTo(k < Phase.COUNT, k % Phase.COUNT, got);
                want.add(direct[k]);
                assertThat(got.getTotalCount()).isEqualTo(want.getTotalCount());
                assertThat(got.getMaxValue()).isEqualTo(want.getMaxValue());
                assertThat(got.getMinNonZeroValue()).isEqualTo(want.getMinNonZeroValue());
                assertThat(got.getMinValue()).isEqualTo(want.getMinValue());
                assertThat(got.getMean()).isEqualTo(want.getMean());
                assertThat(got.getStdDeviation()).isEqualTo(want.getStdDeviation());
                for (final double q : new double[] {0, 1, 25, 50, 90, 99, 99.9, 100}) {
                    assertThat(got.getValueAtPercentile(q)).isEqualTo(want.getValueAtPercentile(q));
                }
                assertThat(got).isEqualTo(want);
            }
        }
    }

    @Test
    void aCountAboutToOverflowIsFoldedIntoItsHistogramAndNothingIsLost() {
        // 2^31 + 2 records of one value in one bucket (an int count holds 2^31 - 1): ~2 G increments, a few s.
        final PhaseHistograms deferred = new PhaseHistograms();
        final long records = Integer.MAX_VALUE + 3L;
        for (long i = 0; i < records; i++) {
            deferred.record(false, Phase.FLUSH, 1_500);
        }
        deferred.record(false, Phase.FLUSH, 70_000);
        final Histogram h = new Histogram(PhaseHistograms.HIGHEST, PhaseHistograms.DIGITS);
        deferred.addTo(false, Phase.FLUSH, h);
        assertThat(h.getTotalCount()).isEqualTo(records + 1);
        assertThat(h.getCountAtValue(1_500)).isEqualTo(records);
        assertThat(h.getMaxValue()).isEqualTo(h.highestEquivalentValue(70_000));
    }
}
