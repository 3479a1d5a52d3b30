package io.flowscope.window;

import io.flowscope.api.summary.Phase;
import org.HdrHistogram.Histogram;

/**
 * The engine-wide phase histograms (per direction and phase: {@link WindowEngine#addPhaseHistogramTo}), recorded
 * as plain counts in one flat {@code long[]} and folded into their {@link Histogram}s only when read.
 * <p>
 * <b>Why.</b> A step stop records up to three phases; {@link Histogram#recordValue} touches the histogram
 * object's fields (index parameters, total, min, max) and its own counts array, about four cache lines a record
 * across ten histograms of 37 KB each. Here a record is one increment of one line of a shared array whose
 * header stays hot.
 * <p>
 * <b>Layout</b>: {@code counts[h × LENGTH + index(v)]}, h = direction × {@link Phase#COUNT} + phase
 * (send 0..4, recv 5..9), with HdrHistogram's own bucket index for {@code new Histogram(HIGHEST, 2)} (unit 1 ns,
 * 256 sub-buckets, 128 per half-bucket):
 * <pre>
 *   bucket = 56 − nlz(v | 255);  sub = v &gt;&gt;&gt; bucket;  index(v) = (bucket + 1) · 128 + sub − 128
 *   value(index) = sub' &lt;&lt; bucket',  bucket' = max(0, index / 128 − 1),
 *                  sub' = index mod 128 + (index ≥ 128 ? 128 : 0)
 * </pre>
 * so folding a count in with {@code recordValueWithCount(value(index), count)} lands in the same bucket; the
 * histogram's total, min and max (reported as bucket-equivalent values) are then those of recording each value
 * ({@code PhaseHistogramsTest}).
 */
final class PhaseHistograms {
    /** Highest trackable value (1 h), as the engine's histograms. */
    static final long HIGHEST = 3_600_000_000_000L;

    static final int DIGITS = 2;
    private static final int SUB_HALF_MAGNITUDE = 7;
    private static final int SUB_HALF = 1 << SUB_HALF_MAGNITUDE;
    private static final int LEADING_ZERO_BASE = 64 - SUB_HALF_MAGNITUDE - 1;
    /** Counts per histogram: HdrHistogram's countsArrayLength for (HIGHEST, 2 digits): 36 buckets × 128. */
    static final int LENGTH = 36 * SUB_HALF;

    /**
     * Counts since the last fold, {@code int} (half the lines of {@code long}); a count about to overflow is folded
     * into its histogram at once.
     */
    private final int[] counts = new int[2 * Phase.COUNT * LENGTH];

    private final Histogram[] histograms = new Histogram[2 * Phase.COUNT];

    PhaseHistograms() {
        for (int h = 0; h < histograms.length; h++) {
            histograms[h] = new Histogram(HIGHEST, DIGITS);
        }
    }

    static int index(final long value) {
        final int bucket = LEADING_ZERO_BASE - Long.numberOfLeadingZeros(value | SUB_HALF * 2 - 1);
        return (bucket + 1 << SUB_HALF_MAGNITUDE) + (int) (value >>> bucket) - SUB_HALF;
    }

    static long value(final int index) {
        int bucket = (index >> SUB_HALF_MAGNITUDE) - 1;
        int sub = (index & SUB_HALF - 1) + SUB_HALF;
        if (bucket < 0) {
            sub -= SUB_HALF;
            bucket = 0;
        }
        return (long) sub << bucket;
    }

    /** Records a duration (≥ 0) of a phase; clamped to {@link #HIGHEST} as the histograms would need. */
    void record(final boolean isSend, final int phase, final long ns) {
        final int at = (isSend ? phase : Phase.COUNT + phase) * LENGTH + index(Math.min(ns, HIGHEST));
        if (++counts[at] == Integer.MAX_VALUE) {
            fold(at);
        }
    }

    private void fold(final int at) {
        histograms[at / LENGTH].recordValueWithCount(value(at % LENGTH), counts[at]);
        counts[at] = 0;
    }

    /** Adds every duration recorded so far of one direction and phase to {@code target}. */
    void addTo(final boolean isSend, final int phase, final Histogram target) {
        final int h = isSend ? phase : Phase.COUNT + phase;
        final Histogram histogram = histograms[h];
        final int base = h * LENGTH;
        for (int i = 0; i < LENGTH; i++) {
            if (counts[base + i] != 0) {
                fold(base + i);
            }
        }
        target.add(histogram);
    }
}
