package io.flowscope.anomaly;

/** Median and MAD of a scratch array by selection (O(n), no allocation once the scratch is large enough). */
final class Robust
{
    /** 1.4826 × MAD estimates σ for normal data. */
    static final double MAD_SIGMA = 1.4826;

    private double[] scratch = new double[64];
    private double[] devs = new double[64];
    private int n;
    double median;
    double mad;

    void clear()
    {
        n = 0;
    }

    void add(final double v)
    {
        if (n == scratch.length)
        {
            scratch = java.util.Arrays.copyOf(scratch, n * 2);
            devs = new double[n * 2];
        }
        scratch[n++] = v;
    }

    int count()
    {
        return n;
    }

    /** Computes {@link #median} and {@link #mad} of the added values (n ≥ 1). */
    void compute()
    {
        if (n == 0)
        {
            median = 0;
            mad = 0;
            return;
        }
        median = medianOf(scratch, n);
        for (int i = 0; i < n; i++)
        {
            devs[i] = Math.abs(scratch[i] - median);
        }
        mad = medianOf(devs, n);
    }

    /** Robust σ: 1.4826 × MAD. */
    double sigma()
    {
        return MAD_SIGMA * mad;
    }

    private static double medianOf(final double[] a, final int n)
    {
        final int k = n / 2;
        final double hi = select(a, n, k);
        if ((n & 1) == 1)
        {
            return hi;
        }
        double lo = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < k; i++)
        {
            lo = Math.max(lo, a[i]);
        }
        return (lo + hi) / 2;
    }

    /** Hoare selection: a[k] is the k-th smallest afterwards, smaller ones before it. */
    private static double select(final double[] a, final int n, final int k)
    {
        int lo = 0;
        int hi = n - 1;
        while (lo < hi)
        {
            final double pivot = a[(lo + hi) >>> 1];
            int i = lo;
            int j = hi;
            while (i <= j)
            {
                while (a[i] < pivot)
                {
                    i++;
                }
                while (a[j] > pivot)
                {
                    j--;
                }
                if (i <= j)
                {
                    final double t = a[i];
                    a[i] = a[j];
                    a[j] = t;
                    i++;
                    j--;
                }
            }
            if (k <= j)
            {
                hi = j;
            }
            else if (k >= i)
            {
                lo = i;
            }
            else
            {
                return a[k];
            }
        }
        return a[k];
    }
}
