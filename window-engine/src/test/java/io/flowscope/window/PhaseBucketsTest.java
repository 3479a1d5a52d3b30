package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.Phase;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PhaseBucketsTest {
    @Test
    void everyValueFallsIntoTheBucketWhoseBoundsContainIt() {
        final SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 200_000; i++) {
            final long v = i < 5000 ? i : rnd.nextLong(PhaseBuckets.MAX_VALUE_NS + 1);
            final int index = PhaseBuckets.index(v);
            assertThat(v)
                    .as("value %d, bucket %d", v, index)
                    .isGreaterThanOrEqualTo(PhaseBuckets.lowerBound(index))
                    .isLessThan(PhaseBuckets.lowerBound(index) + PhaseBuckets.width(index));
        }
    }

    @Test
    void bucketsAreContiguousAndCoverZeroToTheLargestTrackableValue() {
        assertThat(PhaseBuckets.lowerBound(0)).isZero();
        for (int i = 1; i < PhaseBuckets.COUNT; i++) {
            assertThat(PhaseBuckets.lowerBound(i))
                    .as("bucket %d", i)
                    .isEqualTo(PhaseBuckets.lowerBound(i - 1) + PhaseBuckets.width(i - 1));
        }
        final int last = PhaseBuckets.COUNT - 1;
        assertThat(PhaseBuckets.lowerBound(last) + PhaseBuckets.width(last) - 1).isEqualTo(PhaseBuckets.MAX_VALUE_NS);
        assertThat(PhaseBuckets.index(Long.MAX_VALUE)).isEqualTo(last);
        assertThat(PhaseBuckets.COUNT).isEqualTo(140);
    }

    @Test
    void theReportedValueOfABucketIsWithinTheDocumentedRelativeErrorOfEveryValueInIt() {
        for (int i = 0; i < PhaseBuckets.COUNT; i++) {
            final long r = PhaseBuckets.representative(i);
            final long lo = PhaseBuckets.lowerBound(i);
            final long hi = lo + PhaseBuckets.width(i) - 1;
            for (final long v : new long[] {lo, hi}) {
                assertThat((double) Math.abs(r - v))
                        .as("bucket %d value %d reported %d", i, v, r)
                        .isLessThanOrEqualTo(v * PhaseBuckets.RELATIVE_ERROR + 1);
            }
        }
    }

    @Test
    void percentilesOfAPeriodAgreeWithTheSortedValuesWithinTheBucketError() {
        final SplittableRandom rnd = new SplittableRandom(11);
        final long[] b = PhaseBuckets.allocate();
        final long[] p50 = new long[Phase.COUNT];
        final long[] p90 = new long[Phase.COUNT];
        final long[] p99 = new long[Phase.COUNT];
        for (int round = 0; round < 50; round++) {
            final List<Long> values = new ArrayList<>();
            final int n = 1 + rnd.nextInt(3000);
            long max = 0;
            for (int i = 0; i < n; i++) {
                // Log-uniform over 1 ns .. ~1 s, as phase durations spread.
                final long v = (long) Math.exp(rnd.nextDouble() * Math.log(1e9));
                values.add(v);
                max = Math.max(max, v);
                PhaseBuckets.record(b, 1, v);
            }
            assertThat(PhaseBuckets.count(b, 1)).isEqualTo(n);
            assertThat(PhaseBuckets.maxNs(b, 1)).isEqualTo(max);
            assertThat(PhaseBuckets.sumNs(b, 1))
                    .isEqualTo(values.stream().mapToLong(Long::longValue).sum());
            PhaseBuckets.percentiles(b, 1, p50, p90, p99, Phase.NETWORK);
            final long[] got = {p50[Phase.NETWORK], p90[Phase.NETWORK], p99[Phase.NETWORK]};
            for (int k = 0; k < 3; k++) {
                final long exact = ReferenceModel.percentile(values, PhaseBuckets.PERMILLE[k]);
                assertThat((double) Math.abs(got[k] - exact))
                        .as("round %d k %d", round, k)
                        .isLessThanOrEqualTo(exact * PhaseBuckets.RELATIVE_ERROR + 1);
            }
            PhaseBuckets.clear(b);
            assertThat(b).as("cleared").containsOnly(0L);
            PhaseBuckets.percentiles(b, 1, p50, p90, p99, Phase.NETWORK);
            assertThat(p50[Phase.NETWORK]).as("cleared").isEqualTo(Phase.ABSENT);
        }
    }

    @Test
    void aBucketThatWouldOverflowHalvesItsPhaseAndKeepsThePercentilesInPlace() {
        final long[] b = PhaseBuckets.allocate();
        // 70,000 records of 1,000 ns and 30,000 of 100,000 ns: p50 in the first, p90 / p99 in the second.
        for (int i = 0; i < 100_000; i++) {
            PhaseBuckets.record(b, 0, i % 10 < 7 ? 1_000 : 100_000);
        }
        final long[] p50 = new long[Phase.COUNT];
        final long[] p90 = new long[Phase.COUNT];
        final long[] p99 = new long[Phase.COUNT];
        PhaseBuckets.percentiles(b, 0, p50, p90, p99, 0);
        assertThat(PhaseBuckets.count(b, 0)).isEqualTo(100_000);
        assertThat((double) Math.abs(p50[0] - 1_000)).isLessThanOrEqualTo(1_000 * PhaseBuckets.RELATIVE_ERROR + 1);
        assertThat((double) Math.abs(p90[0] - 100_000)).isLessThanOrEqualTo(100_000 * PhaseBuckets.RELATIVE_ERROR + 1);
        assertThat(p99[0]).isEqualTo(p90[0]);
    }
}
