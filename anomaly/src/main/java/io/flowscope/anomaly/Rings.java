package io.flowscope.anomaly;

/**
 * Several sums over the last N pushed values, pushed together, in one flat array (per series its sum, then its
 * ring): one object and one array per owner instead of one ring object and its array per series, so that a
 * period end touches a few adjacent cache lines. No allocation after construction.
 */
final class Rings
{
    private final long[] data;
    private final int window;
    private final int stride;
    private int next;
    private int filled;

    Rings(final int series, final int window)
    {
        this.window = window;
        this.stride = window + 1;
        data = new long[series * stride];
    }

    /** The value of series {@code k} for the push under way (every series, then {@link #advance()}). */
    void set(final int k, final long v)
    {
        final int b = k * stride;
        final int i = b + 1 + next;
        data[b] += v - data[i];
        data[i] = v;
    }

    /** Ends a push. */
    void advance()
    {
        next = next + 1 == window ? 0 : next + 1;
        if (filled < window)
        {
            filled++;
        }
    }

    long sum(final int k)
    {
        return data[k * stride];
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
        return data[k * stride + 1 + i];
    }
}
