package io.flowscope.anomaly;

/**
 * Several sums over the last N pushed values, pushed together, in one flat array: the sums first, then the ring
 * slot by slot (a slot holds every series' value of one push). A push touches the sums and one slot, two or three
 * adjacent cache lines, where a series-major layout touched a sum and a slot per series. No allocation after
 * construction.
 */
final class Rings
{
    private final long[] data;
    private final int window;
    private final int series;
    /** Index of the slot under way. */
    private int slot;
    private int next;
    private int filled;

    Rings(final int series, final int window)
    {
        this.window = window;
        this.series = series;
        slot = series;
        data = new long[series * (window + 1)];
    }

    /** The value of series {@code k} for the push under way (every series, then {@link #advance()}). */
    void set(final int k, final long v)
    {
        final int i = slot + k;
        data[k] += v - data[i];
        data[i] = v;
    }

    /**
     * Like {@link #set}, for a series whose window maximum is wanted rather than its sum: returns the value the
     * push replaces (so that the owner can keep the maximum without rescanning the ring on every push).
     */
    long replace(final int k, final long v)
    {
        final int i = slot + k;
        final long old = data[i];
        data[i] = v;
        return old;
    }

    /** Ends a push. */
    void advance()
    {
        next = next + 1 == window ? 0 : next + 1;
        slot = series + next * series;
        if (filled < window)
        {
            filled++;
        }
    }

    long sum(final int k)
    {
        return data[k];
    }

    /** The largest value of series {@code k} over the whole ring (slots not yet pushed hold 0), at least 0. */
    long max(final int k)
    {
        long m = 0;
        for (int i = series + k; i < data.length; i += series)
        {
            m = Math.max(m, data[i]);
        }
        return m;
    }

    int filled()
    {
        return filled;
    }

    /** The latest value of series {@code k}, or 0. */
    long latest(final int k)
    {
        if (filled == 0)
        {
            return 0;
        }
        final int i = next == 0 ? window - 1 : next - 1;
        return data[series + i * series + k];
    }
}
