package io.flowscope.anomaly;

/**
 * Median and MAD of a scratch array by selection (O(n), no allocation once the scratch is large enough).
 * <p>
 * <b>Warm start.</b> A communicator's statistics are recomputed every period over nearly the same values, so the
 * caller may pass last period's median and MAD ({@link #compute(double, double)}): one counting pass around that
 * guess then finds the median where it still holds (a value repeated across the middle), or at the edge next to it
 * (the largest value below or the smallest above), else selects among the values on one side only (copied apart,
 * about half of them) instead of all. The results are the same values as without a guess (order statistics are
 * values): where that could depend on the order of the values (a NaN among them, or a zero result while some
 * value is −0.0, since −0.0 == 0.0), it falls back to the selection over all of them, in their order.
 */
final class Robust {
    /** 1.4826 × MAD estimates σ for normal data. */
    static final double MAD_SIGMA = 1.4826;

    private double[] scratch = new double[64];
    private double[] devs = new double[64];
    /** The values of one side of a guess (warm start), selected apart so that the input keeps its order. */
    private double[] side = new double[64];

    private int n;
    /** Whether some value added is −0.0 (then a zero median found around a guess could differ in sign). */
    private boolean negativeZero;
    /** Cleared by {@link #medianNear} where its result could depend on the values' order (a NaN among them). */
    private boolean orderFree;

    double median;
    double mad;

    void clear() {
        n = 0;
        negativeZero = false;
    }

    void add(final double v) {
        if (n == scratch.length) {
            grow();
        }
        if (Double.doubleToRawLongBits(v) == Long.MIN_VALUE) {
            negativeZero = true;
        }
        scratch[n++] = v;
    }

    private void grow() {
        scratch = java.util.Arrays.copyOf(scratch, n * 2);
        devs = new double[n * 2];
        side = new double[n * 2];
    }

    int count() {
        return n;
    }

    /** Computes {@link #median} and {@link #mad} of the added values (n ≥ 1). */
    void compute() {
        compute(Double.NaN, Double.NaN);
    }

    /**
     * Computes {@link #median} and {@link #mad} of the added values, starting from guesses of them (last
     * period's; NaN: none). The same results as {@link #compute()}, in fewer steps where the guesses are close.
     */
    void compute(final double medianGuess, final double madGuess) {
        if (n == 0) {
            median = 0;
            mad = 0;
            return;
        }
        if (!negativeZero && medianGuess == medianGuess) {
            orderFree = true;
            median = medianNear(scratch, n, medianGuess, side);
            if (orderFree) {
                for (int i = 0; i < n; i++) {
                    devs[i] = Math.abs(scratch[i] - median);
                }
                // Deviations are never −0.0 (Math.abs); without a guess, any guess finds the MAD.
                mad = medianNear(devs, n, madGuess == madGuess ? madGuess : 0.0, side);
                if (orderFree) {
                    return;
                }
            }
        }
        // The selection over all values, in their order (scratch still has it: medianNear moves nothing).
        median = medianOf(scratch, n);
        for (int i = 0; i < n; i++) {
            devs[i] = Math.abs(scratch[i] - median);
        }
        mad = medianOf(devs, n);
    }

    /** Robust σ: 1.4826 × MAD. */
    double sigma() {
        return MAD_SIGMA * mad;
    }

    /**
     * {@link #medianOf} of {@code a[0 … n)}, none of them −0.0, found around a guess {@code g0}: one pass counts
     * the values below and equal to it (and keeps the largest below and the smallest above); the middle order
     * statistics are then {@code g} itself, one of those two, or a selection among one side's values (copied into
     * {@code tmp}). {@code a} keeps its order. Clears {@link #orderFree} (result void) where a value is NaN.
     */
    private double medianNear(final double[] a, final int n, final double g0, final double[] tmp) {
        // A guess of −0.0 as 0.0: the values (none −0.0) equal to it are 0.0.
        final double g = g0 + 0.0;
        int less = 0;
        int equal = 0;
        double maxLess = Double.NEGATIVE_INFINITY;
        double minGreater = Double.POSITIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            final double v = a[i];
            if (v < g) {
                less++;
                maxLess = v > maxLess ? v : maxLess;
            } else if (v > g) {
                minGreater = v < minGreater ? v : minGreater;
            } else if (v == g) {
                equal++;
            } else {
                // NaN: the selection's result depends on where it lies (compute() selects over all values).
                orderFree = false;
                return Double.NaN;
            }
        }
        final int k = n / 2;
        if ((n & 1) == 1) {
            return nth(a, n, k, g, less, equal, maxLess, minGreater, tmp);
        }
        // Even: the mean of the (k − 1)-th and k-th smallest.
        if (k < less) {
            // Both below the guess: select k there; the smaller ones lie before it (as in medianOf).
            final int m = copy(a, n, g, true, tmp);
            final double hi = select(tmp, m, k);
            return (maxOf(tmp, k) + hi) / 2;
        }
        if (k - 1 >= less + equal) {
            // Both above the guess, the (k − 1)-th not its smallest there (k − less − equal ≥ 1).
            final int m = copy(a, n, g, false, tmp);
            final int j = k - less - equal;
            final double hi = select(tmp, m, j);
            return (maxOf(tmp, j) + hi) / 2;
        }
        // Otherwise each is the guess or next to it (no selection).
        final double lo = nth(a, n, k - 1, g, less, equal, maxLess, minGreater, tmp);
        final double hi = nth(a, n, k, g, less, equal, maxLess, minGreater, tmp);
        return (lo + hi) / 2;
    }

    /** Copies the values of {@code a[0 … n)} below {@code g} (else above it) into {@code tmp}; returns how many. */
    private static int copy(final double[] a, final int n, final double g, final boolean below, final double[] tmp) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            final double v = a[i];
            if (below ? v < g : v > g) {
                tmp[m++] = v;
            }
        }
        return m;
    }

    /** The {@code j}-th smallest (0-based) of {@code a[0 … n)} from {@link #medianNear}'s counts. */
    private static double nth(
            final double[] a,
            final int n,
            final int j,
            final double g,
            final int less,
            final int equal,
            final double maxLess,
            final double minGreater,
            final double[] tmp) {
        if (j == less - 1) {
            return maxLess;
        }
        if (j < less) {
            return select(tmp, copy(a, n, g, true, tmp), j);
        }
        if (j < less + equal) {
            return g;
        }
        if (j == less + equal) {
            return minGreater;
        }
        return select(tmp, copy(a, n, g, false, tmp), j - less - equal);
    }

    private static double maxOf(final double[] a, final int k) {
        double m = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < k; i++) {
            m = Math.max(m, a[i]);
        }
        return m;
    }

    private static double medianOf(final double[] a, final int n) {
        final int k = n / 2;
        final double hi = select(a, n, k);
        if ((n & 1) == 1) {
            return hi;
        }
        return (maxOf(a, k) + hi) / 2;
    }

    /** Hoare selection: a[k] is the k-th smallest afterwards, smaller ones before it. */
    /** The k-th smallest of a[0..n) (0-based), by selection: reorders a[0..n). */
    static double select(final double[] a, final int n, final int k) {
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            final double pivot = a[(lo + hi) >>> 1];
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    final double t = a[i];
                    a[i] = a[j];
                    a[j] = t;
                    i++;
                    j--;
                }
            }
            if (k <= j) {
                hi = j;
            } else if (k >= i) {
                lo = i;
            } else {
                return a[k];
            }
        }
        return a[k];
    }
}
