package io.flowscope.window;

import io.flowscope.api.summary.Phase;

/**
 * A flow's per-period phase statistics in one fixed {@code long[]} ({@link #allocate}): for each of the (at most
 * three) phases a flow can have, its count, sum and maximum, and a log-linear bucket array of 16-bit counts for
 * its percentiles. Static methods over the array, as a flyweight: the flow holds the array itself, so a record
 * reaches it with one load and no object in between.
 * <p>
 * <b>Bucket math</b> (HdrHistogram-style, two sub-bucket bits): values 0..3 ns have a bucket each; a value
 * {@code v ≥ 4} with highest set bit {@code e} falls into one of 4 equal sub-buckets of {@code [2^e, 2^(e+1))}:
 * <pre>
 *   index(v) = v                                   (v &lt; 4)
 *            = 4·(e − 1) + ((v &gt;&gt;&gt; (e − 2)) &amp; 3)    (v ≥ 4, e = 63 − nlz(v))
 *   bucket [L, L + w): L = (4 + sub) · 2^(e−2), w = 2^(e−2)
 * </pre>
 * Values are clamped to {@link #MAX_VALUE_NS} (2^36 − 1 ns, 68.7 s): {@link #COUNT} = 140 buckets. A percentile
 * is reported as {@code 2·L·U / (L + U)} of its bucket (U = L + w), rounded down, and at most the period's
 * exact maximum: its relative error is at most w / (2L + w) ≤ 1/9 ({@link #RELATIVE_ERROR}, 11.1 %), plus
 * 1 ns of rounding; exact below 4 ns.
 * <p>
 * <b>Layout</b> (longs; slot s = {@link #slot}(phase, direction): a send flow uses GPU_WAIT, PEER_WAIT, NETWORK, a
 * recv flow NETWORK, FLUSH, GPU_CONSUME, a QP flow NETWORK):
 * <pre>
 *   [s]                    touched words of slot s this period, one bit a word (35 words); bit 63: halved
 *   [3 + 3s]               count      [4 + 3s] sum ns      [5 + 3s] max ns
 *   [12 + 35s + (i / 4)]   bucket i's count in bits 16·(i mod 4) .. +15
 * </pre>
 * 117 longs (936 bytes) a flow. A record is one add to a bucket word, one OR into the touched mask and the three
 * statistics, no branch on the data (the first record of a bucket, a new maximum: both once mispredicted about
 * every other record); the statistics and masks share the array header's lines. A period's end reads and clears
 * only the touched words. A count that would pass 65,535 in one period halves every count of that slot first
 * (ranks keep their proportions; the percentiles then sum the counts instead of using the phase's count).
 */
final class PhaseBuckets {
    static final int SUB_BITS = 2;
    static final int SUB_COUNT = 1 << SUB_BITS;
    static final long MAX_VALUE_NS = (1L << 36) - 1;
    static final int COUNT = index(MAX_VALUE_NS) + 1;
    /** The largest relative error of a reported percentile (before the 1 ns of rounding). */
    static final double RELATIVE_ERROR = 1.0 / 9;

    static final int SLOTS = 3;

    /** The reported percentiles, per mille (p50, p90, p99). */
    static final int[] PERMILLE = {500, 900, 990};
    /** {@link #representative} of each bucket, computed once: a period's end reads three a slot. */
    private static final long[] REPRESENTATIVE = new long[COUNT];

    /** Bucket counts a word (16 bits each). */
    private static final int LANES = 4;
    /** The touched mask's bit of a slot halved this period (its counts no longer sum to its count). */
    private static final long HALVED = 1L << 63;

    private static final long LANE_MASK = 0xFFFF;
    /** Bucket words a slot. */
    static final int WORDS = (COUNT + LANES - 1) / LANES;

    private static final int STATS = SLOTS;
    private static final int BUCKETS = STATS + 3 * SLOTS;
    /** The array's length. */
    static final int LENGTH = BUCKETS + SLOTS * WORDS;

    static {
        for (int i = 0; i < COUNT; i++) {
            REPRESENTATIVE[i] = representative(i);
        }
    }

    private PhaseBuckets() {}

    /** A flow's empty statistics. */
    static long[] allocate() {
        return new long[LENGTH];
    }

    static int index(final long valueNs) {
        final long v = Math.min(valueNs, MAX_VALUE_NS);
        if (v < SUB_COUNT) {
            return (int) v;
        }
        final int e = 63 - Long.numberOfLeadingZeros(v);
        return (e - 1 << SUB_BITS) + (int) (v >>> e - SUB_BITS & SUB_COUNT - 1);
    }

    static long lowerBound(final int index) {
        if (index < SUB_COUNT) {
            return index;
        }
        final int e = (index >> SUB_BITS) + 1;
        return (long) (SUB_COUNT + (index & SUB_COUNT - 1)) << e - SUB_BITS;
    }

    static long width(final int index) {
        return index < SUB_COUNT ? 1 : 1L << (index >> SUB_BITS) + 1 - SUB_BITS;
    }

    /** The value reported for a percentile in bucket {@code index}: 2LU / (L + U), exact below 4 ns. */
    static long representative(final int index) {
        if (index < SUB_COUNT) {
            return index;
        }
        final long l = lowerBound(index);
        final long u = l + width(index);
        // 2LU / (L + U) without overflow: L, U < 2^37.
        return (long) ((double) (2 * l) * u / (l + u));
    }

    /** The slot of a phase in a flow of direction {@code isSend} (a QP flow is a send flow with NETWORK only). */
    static int slot(final int phase, final boolean isSend) {
        return isSend ? phase : phase - 2;
    }

    /** The phase of slot {@code slot} in a flow of direction {@code isSend} ({@link #slot}'s inverse). */
    static int phase(final int slot, final boolean isSend) {
        return isSend ? slot : slot + 2;
    }

    /** Records one duration (≥ 0) of slot {@code slot}. */
    static void record(final long[] w, final int slot, final long valueNs) {
        final int i = index(valueNs);
        final int word = i >>> 2;
        final int at = BUCKETS + slot * WORDS + word;
        final int shift = (i & LANES - 1) << 4;
        if ((w[at] >>> shift & LANE_MASK) == LANE_MASK) {
            halve(w, slot);
        }
        w[at] += 1L << shift;
        w[slot] |= 1L << word;
        final int stats = STATS + 3 * slot;
        w[stats]++;
        w[stats + 1] += valueNs;
        w[stats + 2] = Math.max(w[stats + 2], valueNs);
    }

    /** Halves every count of a slot (rounding up, so that no touched bucket empties). */
    private static void halve(final long[] w, final int slot) {
        final int base = BUCKETS + slot * WORDS;
        w[slot] |= HALVED;
        for (long touched = w[slot] & ~HALVED; touched != 0; touched &= touched - 1) {
            final int at = base + Long.numberOfTrailingZeros(touched);
            long halved = 0;
            for (int lane = 0; lane < LANES; lane++) {
                final long c = w[at] >>> 16 * lane & LANE_MASK;
                halved |= (c + 1 >>> 1) << 16 * lane;
            }
            w[at] = halved;
        }
    }

    static long count(final long[] w, final int slot) {
        return w[STATS + 3 * slot];
    }

    static long sumNs(final long[] w, final int slot) {
        return w[STATS + 3 * slot + 1];
    }

    static long maxNs(final long[] w, final int slot) {
        return w[STATS + 3 * slot + 2];
    }

    /**
     * Writes the p50, p90, p99 of a slot's period into {@code p50[phase]}, {@code p90[phase]}, {@code p99[phase]},
     * each at most the slot's maximum; {@link Phase#ABSENT} when the slot recorded nothing.
     */
    static void percentiles(
            final long[] w, final int slot, final long[] p50, final long[] p90, final long[] p99, final int phase) {
        final int base = BUCKETS + slot * WORDS;
        final long touched = w[slot] & ~HALVED;
        long total = count(w, slot);
        if ((w[slot] & HALVED) != 0) {
            total = 0;
            for (long m = touched; m != 0; m &= m - 1) {
                total += laneSum(w[base + Long.numberOfTrailingZeros(m)]);
            }
        }
        if (total == 0) {
            p50[phase] = Phase.ABSENT;
            p90[phase] = Phase.ABSENT;
            p99[phase] = Phase.ABSENT;
            return;
        }
        final long maxNs = maxNs(w, slot);
        int k = 0;
        long rank = rank(total, PERMILLE[0]);
        long seen = 0;
        for (long m = touched; m != 0; m &= m - 1) {
            final int word = Long.numberOfTrailingZeros(m);
            final long counts = w[base + word];
            final long inWord = laneSum(counts);
            if (seen + inWord < rank) {
                // No percentile in this word's four buckets.
                seen += inWord;
                continue;
            }
            for (int lane = 0; lane < LANES; lane++) {
                seen += counts >>> 16 * lane & LANE_MASK;
                while (seen >= rank) {
                    final long v = Math.min(REPRESENTATIVE[word * LANES + lane], maxNs);
                    (k == 0 ? p50 : k == 1 ? p90 : p99)[phase] = v;
                    if (++k == PERMILLE.length) {
                        return;
                    }
                    rank = rank(total, PERMILLE[k]);
                }
            }
        }
    }

    /** The sum of a word's four 16-bit counts. */
    private static long laneSum(final long word) {
        final long pairs = (word & 0x0000_FFFF_0000_FFFFL) + (word >>> 16 & 0x0000_FFFF_0000_FFFFL);
        return (pairs & 0xFFFF_FFFFL) + (pairs >>> 32);
    }

    /** Whether any slot recorded a duration this period. */
    static boolean recorded(final long[] w) {
        return (w[STATS] | w[STATS + 3] | w[STATS + 6]) != 0;
    }

    /** The 1-based rank of a percentile: ceil(n · permille / 1000), at least 1. */
    static long rank(final long n, final int permille) {
        return Math.max(1, (n * permille + 999) / 1000);
    }

    /** Clears the period's statistics and counts (the touched words only). */
    static void clear(final long[] w) {
        for (int s = 0; s < SLOTS; s++) {
            final int base = BUCKETS + s * WORDS;
            for (long m = w[s] & ~HALVED; m != 0; m &= m - 1) {
                w[base + Long.numberOfTrailingZeros(m)] = 0;
            }
            w[s] = 0;
        }
        java.util.Arrays.fill(w, STATS, BUCKETS, 0);
    }
}
