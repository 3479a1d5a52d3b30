package io.flowscope.anomaly;

/** A sum over the last N pushed values (a fixed ring, no allocation after construction). */
final class Rolling
{
    private final long[] values;
    private int next;
    private int filled;
    private long sum;

    Rolling(final int n)
    {
        values = new long[n];
    }

    void push(final long v)
    {
        sum += v - values[next];
        values[next] = v;
        next = next + 1 == values.length ? 0 : next + 1;
        if (filled < values.length)
        {
            filled++;
        }
    }

    long sum()
    {
        return sum;
    }

    int filled()
    {
        return filled;
    }

    /** The value pushed {@code back} pushes ago (0 = the latest), or 0. */
    long ago(final int back)
    {
        if (back >= filled)
        {
            return 0;
        }
        int i = next - 1 - back;
        if (i < 0)
        {
            i += values.length;
        }
        return values[i];
    }

    void clear()
    {
        java.util.Arrays.fill(values, 0);
        next = 0;
        filled = 0;
        sum = 0;
    }
}
