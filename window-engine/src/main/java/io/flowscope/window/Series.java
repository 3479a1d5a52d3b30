package io.flowscope.window;

/**
 * A flow's completed bytes over time at four resolutions, each a fixed ring of buckets: 10 µs × 100 (the last
 * 1 ms), 1 ms × 100 (100 ms), 100 ms × 10 (1 s), 1 s × 60 (1 min). Every completion adds its bytes to the
 * bucket of its completion time at every level, so the coarse levels are exact roll-ups of the fine ones
 * (over what each retains), whatever order completions arrive in. A level retains the buckets
 * {@code (newest − capacity, newest]}; a completion older than that is late there (not counted). Bucket
 * indexes are of event time relative to the host's series epoch (a signed difference: a wrapping clock works).
 * Fixed footprint: 270 longs plus 4 indexes. No allocation after construction.
 */
public final class Series {
    public static final int LEVEL_10US = 0;
    public static final int LEVEL_1MS = 1;
    public static final int LEVEL_100MS = 2;
    public static final int LEVEL_1S = 3;
    public static final int LEVELS = 4;

    private static final long[] WIDTH_NS = {10_000L, 1_000_000L, 100_000_000L, 1_000_000_000L};
    private static final int[] CAPACITY = {100, 100, 10, 60};

    private final long[][] bytes = new long[LEVELS][];
    private final long[] newest = new long[LEVELS];
    private boolean empty = true;
    private long late;

    public Series() {
        for (int l = 0; l < LEVELS; l++) {
            bytes[l] = new long[CAPACITY[l]];
        }
    }

    public static long widthNs(final int level) {
        return WIDTH_NS[level];
    }

    public static int capacity(final int level) {
        return CAPACITY[level];
    }

    /** The bucket index of {@code relNs} (event time − epoch) at {@code level}. */
    public static long bucket(final int level, final long relNs) {
        return Math.floorDiv(relNs, WIDTH_NS[level]);
    }

    public void clear() {
        for (int l = 0; l < LEVELS; l++) {
            java.util.Arrays.fill(bytes[l], 0);
        }
        empty = true;
        late = 0;
    }

    /** Adds a completion of {@code n} bytes at {@code relNs} (event time − the host's series epoch). */
    public void add(final long relNs, final long n) {
        if (empty) {
            empty = false;
            for (int l = 0; l < LEVELS; l++) {
                newest[l] = bucket(l, relNs);
            }
        }
        for (int l = 0; l < LEVELS; l++) {
            final long[] b = bytes[l];
            final int cap = b.length;
            final long idx = bucket(l, relNs);
            final long ahead = idx - newest[l];
            if (ahead > 0) {
                // Zero the buckets the ring moves past (at most all of them).
                final long clear = Math.min(ahead, cap);
                for (long k = 1; k <= clear; k++) {
                    b[(int) Math.floorMod(newest[l] + k, (long) cap)] = 0;
                }
                newest[l] = idx;
            } else if (ahead <= -cap) {
                late++;
                continue;
            }
            b[(int) Math.floorMod(idx, (long) cap)] += n;
        }
    }

    /** The bytes of bucket {@code index} at {@code level}, or -1 when the level does not retain it. */
    public long bytes(final int level, final long index) {
        final int cap = CAPACITY[level];
        if (empty || index > newest[level] || index <= newest[level] - cap) {
            return -1;
        }
        return bytes[level][(int) Math.floorMod(index, (long) cap)];
    }

    /** The newest bucket index at {@code level} (meaningless when nothing was added). */
    public long newest(final int level) {
        return newest[level];
    }

    /** Completions older than a level's ring, counted once per level. */
    public long late() {
        return late;
    }
}
