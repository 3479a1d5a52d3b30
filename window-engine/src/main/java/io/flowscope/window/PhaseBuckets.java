package io.flowscope.window;

/**
 * A flow's per-period phase duration percentiles in fixed memory: for each of the (at most three) phases a
 * flow can have, a log-linear bucket array of 16-bit counts.
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
 * <b>Per flow</b>: 3 phases × 140 × 2 bytes = 840 bytes of counts (and 12 of touched ranges). A send flow uses GPU_WAIT, PEER_WAIT,
 * NETWORK; a recv flow NETWORK, FLUSH, GPU_CONSUME; a QP flow NETWORK ({@link #slot}). Recording is one
 * increment and a touched-range update; a period's end reads and clears only the touched range. A count that
 * would pass 65,535 in one period halves every count of that phase first (ranks keep their proportions;
 * more than 65,535 records of one phase of one flow in one period).
 */
final class PhaseBuckets
{
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

    static
    {
        for (int i = 0; i < COUNT; i++)
        {
            REPRESENTATIVE[i] = representative(i);
        }
    }

    /**
     * First the touched range of each slot, {@code [2s]} its lowest bucket and {@code [2s + 1]} one past its
     * highest ({@code COUNT, 0} when untouched), then the counts, slot s's bucket i at {@link #BUCKETS}
     * {@code + s × COUNT + i}: the ranges share the array header's line, which a record reads anyway (the
     * bounds check), instead of two more arrays.
     */
    private final char[] counts = new char[BUCKETS + SLOTS * COUNT];
    private static final int BUCKETS = 2 * SLOTS;
    /** Slots halved this period: their total is no longer the phase's count. */
    private int halved;

    PhaseBuckets()
    {
        for (int s = 0; s < SLOTS; s++)
        {
            counts[2 * s] = (char)COUNT;
        }
    }

    static int index(final long valueNs)
    {
        final long v = Math.min(valueNs, MAX_VALUE_NS);
        if (v < SUB_COUNT)
        {
            return (int)v;
        }
        final int e = 63 - Long.numberOfLeadingZeros(v);
        return (e - 1 << SUB_BITS) + (int)(v >>> e - SUB_BITS & SUB_COUNT - 1);
    }

    static long lowerBound(final int index)
    {
        if (index < SUB_COUNT)
        {
            return index;
        }
        final int e = (index >> SUB_BITS) + 1;
        return (long)(SUB_COUNT + (index & SUB_COUNT - 1)) << e - SUB_BITS;
    }

    static long width(final int index)
    {
        return index < SUB_COUNT ? 1 : 1L << (index >> SUB_BITS) + 1 - SUB_BITS;
    }

    /** The value reported for a percentile in bucket {@code index}: 2LU / (L + U), exact below 4 ns. */
    static long representative(final int index)
    {
        if (index < SUB_COUNT)
        {
            return index;
        }
        final long l = lowerBound(index);
        final long u = l + width(index);
        // 2LU / (L + U) without overflow: L, U < 2^37.
        return (long)((double)(2 * l) * u / (l + u));
    }

    /** The slot of a phase in a flow of direction {@code isSend} (a QP flow is a send flow with NETWORK only). */
    static int slot(final int phase, final boolean isSend)
    {
        return isSend ? phase : phase - 2;
    }

    void record(final int slot, final long valueNs)
    {
        final int i = index(valueNs);
        final int at = BUCKETS + slot * COUNT + i;
        final char c = counts[at];
        if (c == 0)
        {
            // The first record of a bucket in the period: the touched range may grow (rarely taken).
            touch(slot, i);
        }
        else if (c == Character.MAX_VALUE)
        {
            halve(slot);
            counts[at]++;
            return;
        }
        counts[at] = (char)(c + 1);
    }

    private void touch(final int slot, final int i)
    {
        final char[] counts = this.counts;
        if (i < counts[2 * slot])
        {
            counts[2 * slot] = (char)i;
        }
        if (i >= counts[2 * slot + 1])
        {
            counts[2 * slot + 1] = (char)(i + 1);
        }
    }

    private void halve(final int slot)
    {
        halved |= 1 << slot;
        final int base = BUCKETS + slot * COUNT;
        for (int i = counts[2 * slot], end = counts[2 * slot + 1]; i < end; i++)
        {
            final int at = base + i;
            counts[at] = (char)(counts[at] + 1 >>> 1);
        }
    }

    /**
     * Writes the p50, p90, p99 of a slot's period ({@code count} records, the phase's count) into {@code p50[phase]}, {@code p90[phase]}, {@code p99[phase]},
     * each at most {@code maxNs}; {@link Phase#ABSENT} when the slot recorded nothing.
     */
    void percentiles(final int slot, final long count, final long maxNs, final long[] p50, final long[] p90,
        final long[] p99, final int phase)
    {
        final int base = BUCKETS + slot * COUNT;
        final int lo = counts[2 * slot];
        final int end = counts[2 * slot + 1];
        long total = count;
        if ((halved & 1 << slot) != 0)
        {
            total = 0;
            for (int i = lo; i < end; i++)
            {
                total += counts[base + i];
            }
        }
        if (total == 0)
        {
            p50[phase] = Phase.ABSENT;
            p90[phase] = Phase.ABSENT;
            p99[phase] = Phase.ABSENT;
            return;
        }
        int k = 0;
        long rank = rank(total, PERMILLE[0]);
        long seen = 0;
        for (int i = lo; i < end && k < PERMILLE.length; i++)
        {
            seen += counts[base + i];
            while (k < PERMILLE.length && seen >= rank)
            {
                final long v = Math.min(REPRESENTATIVE[i], maxNs);
                (k == 0 ? p50 : k == 1 ? p90 : p99)[phase] = v;
                k++;
                if (k < PERMILLE.length)
                {
                    rank = rank(total, PERMILLE[k]);
                }
            }
        }
    }

    /** The 1-based rank of a percentile: ceil(n · permille / 1000), at least 1. */
    static long rank(final long n, final int permille)
    {
        return Math.max(1, (n * permille + 999) / 1000);
    }

    /** Clears the period's counts (the touched range only). */
    void clear()
    {
        for (int s = 0; s < SLOTS; s++)
        {
            final int lo = counts[2 * s];
            final int end = counts[2 * s + 1];
            if (end > lo)
            {
                java.util.Arrays.fill(counts, BUCKETS + s * COUNT + lo, BUCKETS + s * COUNT + end, (char)0);
            }
            counts[2 * s] = (char)COUNT;
            counts[2 * s + 1] = 0;
        }
        halved = 0;
    }
}
