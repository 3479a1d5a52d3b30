package io.flowscope.anomaly;

import java.util.Arrays;

/**
 * The last {@code window} periods' values of a few series per owner (by dense index), in one flat array,
 * accumulated in place: a period's first summary opens the next slot (clearing it) and every summary adds into
 * it, so that a period end has nothing to push. No running sums are kept: for series read only as evidence,
 * when an anomaly is published, a scan of the ring on that rare read is cheaper than maintaining a sum on every
 * period. Slots never written hold 0, so a scan equals the sum or maximum of the periods written. Allocates only
 * when the table grows.
 */
final class PeriodRing
{
    private final int series;
    private final int stride;
    private long[] data;
    /** Per owner: the start of its current slot (the period being accumulated, else the last one). */
    private int[] slot;

    PeriodRing(final int series, final int window, final int capacity)
    {
        this.series = series;
        stride = series * window;
        data = new long[capacity * stride];
        slot = new int[capacity];
    }

    /** Makes room for owner {@code o} (owners are added in index order). */
    void add(final int o)
    {
        if (o >= slot.length)
        {
            final int n = Math.max(o + 1, slot.length * 2);
            data = Arrays.copyOf(data, n * stride);
            slot = Arrays.copyOf(slot, n);
        }
        // The last slot, so that the first period opens slot 0.
        slot[o] = o * stride + stride - series;
    }

    /** Starts owner {@code o}'s next period: its oldest slot is cleared and becomes the current one. */
    void open(final int o)
    {
        final int base = o * stride;
        final int next = slot[o] + series;
        final int s = next == base + stride ? base : next;
        slot[o] = s;
        for (int k = 0; k < series; k++)
        {
            data[s + k] = 0;
        }
    }

    /** Where owner {@code o}'s current slot starts (for {@link #add(int, int, long)} and {@link #max}). */
    int current(final int o)
    {
        return slot[o];
    }

    void add(final int at, final int k, final long v)
    {
        data[at + k] += v;
    }

    void max(final int at, final int k, final long v)
    {
        final int i = at + k;
        data[i] = Math.max(data[i], v);
    }

    /** The sum of series {@code k} of owner {@code o} over its ring. */
    long sum(final int o, final int k)
    {
        long s = 0;
        final int end = (o + 1) * stride;
        for (int i = o * stride + k; i < end; i += series)
        {
            s += data[i];
        }
        return s;
    }

    /** The largest value of series {@code k} of owner {@code o} over its ring, ≥ 0. */
    long max(final int o, final int k)
    {
        long m = 0;
        final int end = (o + 1) * stride;
        for (int i = o * stride + k; i < end; i += series)
        {
            m = Math.max(m, data[i]);
        }
        return m;
    }
}
