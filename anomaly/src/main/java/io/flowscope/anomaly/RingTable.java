package io.flowscope.anomaly;

import java.util.Arrays;

/**
 * Sliding-window sums of many owners (the links, ranks or NICs of a table, by dense index) in one flat array:
 * per owner its sums, then its ring slot by slot (a slot holds every series' value of one push). Owners created
 * one after another (a host's links) lie side by side, and a push touches an owner's sums and one slot: two or
 * three adjacent cache lines and no object of its own. Allocates only when the table grows.
 */
final class RingTable
{
    private final int series;
    private final int window;
    private final int stride;
    private long[] data;
    /** Per owner: the start of the slot under way, and how many pushes the ring holds (at most the window). */
    private int[] slot;
    private int[] filled;

    RingTable(final int series, final int window, final int capacity)
    {
        this.series = series;
        this.window = window;
        stride = series * (window + 1);
        data = new long[capacity * stride];
        slot = new int[capacity];
        filled = new int[capacity];
    }

    /** Makes room for owner {@code o} (owners are added in index order). */
    void add(final int o)
    {
        if (o >= slot.length)
        {
            final int n = Math.max(o + 1, slot.length * 2);
            data = Arrays.copyOf(data, n * stride);
            slot = Arrays.copyOf(slot, n);
            filled = Arrays.copyOf(filled, n);
        }
        slot[o] = o * stride + series;
    }

    /** Where owner {@code o}'s slot under way starts: pass it to {@link #set} for every series of the push. */
    int slot(final int o)
    {
        return slot[o];
    }

    /** The value of series {@code k} of owner {@code o} for the push under way at {@code slot}. */
    void set(final int o, final int slot, final int k, final long v)
    {
        final int s = o * stride + k;
        final int i = slot + k;
        data[s] += v - data[i];
        data[i] = v;
    }

    /**
     * The push under way at {@code slot} of owner {@code o} for series 0 … {@code n} − 1 at once: their values
     * from {@code src[from …]}, which are cleared (a period's accumulators), their window sums kept. The same as
     * {@link #set} per series, with the offsets computed once.
     */
    void setAll(final int o, final int slot, final long[] src, final int from, final int n)
    {
        final long[] d = data;
        final int s = o * stride;
        for (int k = 0; k < n; k++)
        {
            final long v = src[from + k];
            d[s + k] += v - d[slot + k];
            d[slot + k] = v;
            src[from + k] = 0;
        }
    }

    /**
     * Like {@link #set}, for a series whose window maximum is wanted rather than its sum: returns the value the
     * push replaces (so that the owner can keep its maximum without rescanning the ring on every push).
     */
    long replace(final int slot, final int k, final long v)
    {
        final int i = slot + k;
        final long old = data[i];
        data[i] = v;
        return old;
    }

    /** Ends owner {@code o}'s push. */
    void advance(final int o)
    {
        final int base = o * stride;
        final int next = slot[o] + series;
        slot[o] = next == base + stride ? base + series : next;
        if (filled[o] < window)
        {
            filled[o]++;
        }
    }

    long sum(final int o, final int k)
    {
        return data[o * stride + k];
    }

    /** The largest value of series {@code k} of owner {@code o} over its ring (slots never pushed hold 0), ≥ 0. */
    long max(final int o, final int k)
    {
        long m = 0;
        final int end = (o + 1) * stride;
        for (int i = o * stride + series + k; i < end; i += series)
        {
            m = Math.max(m, data[i]);
        }
        return m;
    }

    int filled(final int o)
    {
        return filled[o];
    }

    /** The latest value of series {@code k} of owner {@code o}, or 0. */
    long latest(final int o, final int k)
    {
        if (filled[o] == 0)
        {
            return 0;
        }
        final int base = o * stride + series;
        final int i = slot[o] == base ? base + (window - 1) * series : slot[o] - series;
        return data[i + k];
    }
}
