package io.flowscope.window;

/**
 * The last N completions of one flow, and their bandwidth: bytes in the window / (last completion − first
 * post), VCCL's sliding-window throughput made exact.
 * <p>
 * "Last" is by completion time, not by arrival: completions that arrive out of order (records of several
 * threads, lanes drained in turn) land where their time puts them. The window holds the N greatest
 * completions under the total order (completion time, step id); a completion older than all N of a full
 * window is {@link #LATE} and left out. A completion whose step id is already in the window is a
 * {@link #DUPLICATE} and changes nothing. Times are compared by signed difference, so a clock that wraps
 * past 2^63 (or 2^64) keeps working while the window spans less than 2^63 ns.
 * <p>
 * Fixed footprint: one {@code long[4 + 4N]} ({@link #allocate}): the head, the count and the bytes in the window,
 * then the entries, an entry's four fields side by side (id, completion time, bytes, post time: 32 bytes, half a
 * line), so an in-order record reads the oldest and the last entry and writes one. Entries are kept sorted,
 * oldest first, as a ring: a completion later than all (the usual case) replaces the oldest without moving any;
 * an out-of-order one moves at most N entries (N = 8 by default). No allocation after construction.
 * <p>
 * The logic is static over that array, as a flyweight: the engine's flows hold the array itself, so a completion
 * reaches the window with one load and no object in between (an object's line, and the array's header line, were
 * two misses a completion); an instance wraps one array for everyone else.
 */
public final class CompletionWindow {
    /** Default window size (VCCL's paper picks 8). */
    public static final int DEFAULT_SIZE = 8;

    /** {@link #record} result: the completion entered the window. */
    public static final int ACCEPTED = 0;
    /** {@link #record} result: a completion of this step id is already in the window. */
    public static final int DUPLICATE = 1;
    /** {@link #record} result: the window is full and every entry completed later than this one. */
    public static final int LATE = 2;

    /** Header: the array index of the oldest entry's first field, the entry count, the bytes in the window. */
    private static final int HEAD = 0;

    private static final int COUNT = 1;
    private static final int IN_WINDOW = 2;
    /** Entry p's fields at [ENTRIES + 4p, + 4): {@link #ID}, {@link #COMPLETE}, {@link #BYTES}, {@link #POST}. */
    private static final int ENTRIES = 4;

    private static final int ID = 0;
    private static final int COMPLETE = 1;
    private static final int BYTES = 2;
    private static final int POST = 3;
    /** The array length of a window of the default size. */
    private static final int DEFAULT_LENGTH = ENTRIES + 4 * DEFAULT_SIZE;

    private final long[] w;

    public CompletionWindow(final int size) {
        w = allocate(size);
    }

    /** An empty window of {@code size} entries, as an array for the static methods. */
    static long[] allocate(final int size) {
        if (size < 1) {
            throw new IllegalArgumentException("window size must be >= 1, was " + size);
        }
        final long[] w = new long[ENTRIES + 4 * size];
        w[HEAD] = ENTRIES;
        return w;
    }

    public int capacity() {
        return capacity(w);
    }

    static int capacity(final long[] w) {
        return (w.length - ENTRIES) >> 2;
    }

    public int size() {
        return size(w);
    }

    static int size(final long[] w) {
        return (int) w[COUNT];
    }

    public void clear() {
        clear(w);
    }

    static void clear(final long[] w) {
        w[HEAD] = ENTRIES;
        w[COUNT] = 0;
        w[IN_WINDOW] = 0;
    }

    /**
     * @param id       the step's identity (duplicates are recognised by it)
     * @param postNs   when the work was posted (isend / irecv)
     * @param completeNs when it completed
     * @param bytes    bytes it moved
     * @return {@link #ACCEPTED}, {@link #DUPLICATE} or {@link #LATE}
     */
    public int record(final long id, final long postNs, final long completeNs, final long bytes) {
        final long[] w = this.w;
        final int n = size(w);
        for (int i = 0; i < n; i++) {
            if (w[ENTRIES + 4 * i + ID] == id) {
                return DUPLICATE;
            }
        }
        return recordUnique(w, id, postNs, completeNs, bytes);
    }

    /**
     * {@link #record} for a caller that never records an id twice while it may still be in the window (the
     * engine: a step or work request completes once, its COMPLETED flag), so it skips the duplicate scan.
     * @return {@link #ACCEPTED} or {@link #LATE}
     */
    public int recordUnique(final long id, final long postNs, final long completeNs, final long bytes) {
        return recordUnique(w, id, postNs, completeNs, bytes);
    }

    static int recordUnique(final long[] w, final long id, final long postNs, final long completeNs, final long bytes) {
        // The usual case, a full window of the default size and a completion later than all in it, kept small
        // enough (bytecode) for C2 to inline into the engine's handlers, with constant bounds (one range check).
        if (w.length == DEFAULT_LENGTH && w[COUNT] == DEFAULT_SIZE) {
            final int oldest = (int) w[HEAD];
            final int last = oldest == ENTRIES ? DEFAULT_LENGTH - 4 : oldest - 4;
            if (after(completeNs, id, w[last + COMPLETE], w[last + ID])
                    && after(completeNs, id, w[oldest + COMPLETE], w[oldest + ID])) {
                // It replaces the oldest and becomes the last, no shifting.
                w[HEAD] = oldest + 4 == DEFAULT_LENGTH ? ENTRIES : oldest + 4;
                w[IN_WINDOW] += bytes - w[oldest + BYTES];
                w[oldest + ID] = id;
                w[oldest + COMPLETE] = completeNs;
                w[oldest + BYTES] = bytes;
                w[oldest + POST] = postNs;
                return ACCEPTED;
            }
        }
        return recordAny(w, id, postNs, completeNs, bytes);
    }

    private static int recordAny(
            final long[] w, final long id, final long postNs, final long completeNs, final long bytes) {
        final int cap = capacity(w);
        final int n = size(w);
        int at;
        if (n == cap) {
            final int oldest = (int) w[HEAD];
            if (!after(completeNs, id, w[oldest + COMPLETE], w[oldest + ID])) {
                return LATE;
            }
            w[IN_WINDOW] -= w[oldest + BYTES];
            final int last = slot(w, n - 1);
            if (after(completeNs, id, w[last + COMPLETE], w[last + ID])) {
                // In order: the new one replaces the oldest and becomes the last, no shifting.
                w[HEAD] = oldest + 4 == w.length ? ENTRIES : oldest + 4;
                set(w, oldest, id, postNs, completeNs, bytes);
                return ACCEPTED;
            }
            // Drop the oldest and shift left while the new one belongs further on.
            at = 0;
            while (at + 1 < n && after(completeNs, id, w[slot(w, at + 1) + COMPLETE], w[slot(w, at + 1) + ID])) {
                System.arraycopy(w, slot(w, at + 1), w, slot(w, at), 4);
                at++;
            }
        } else {
            // Not full: the head has not moved, the entries are slots [0, n).
            at = n;
            while (at > 0 && after(w[slot(w, at - 1) + COMPLETE], w[slot(w, at - 1) + ID], completeNs, id)) {
                System.arraycopy(w, slot(w, at - 1), w, slot(w, at), 4);
                at--;
            }
            w[COUNT] = n + 1;
        }
        set(w, slot(w, at), id, postNs, completeNs, bytes);
        return ACCEPTED;
    }

    private static void set(
            final long[] w, final int at, final long id, final long postNs, final long completeNs, final long bytes) {
        w[at + ID] = id;
        w[at + COMPLETE] = completeNs;
        w[at + BYTES] = bytes;
        w[at + POST] = postNs;
        w[IN_WINDOW] += bytes;
    }

    /** The array index of the i-th entry's first field (oldest first): the entries are a ring from the head. */
    private static int slot(final long[] w, final int i) {
        final int at = (int) w[HEAD] + 4 * i;
        return at >= w.length ? at - (w.length - ENTRIES) : at;
    }

    /** True when (t1, id1) comes strictly after (t2, id2): by time (signed difference), then by id. */
    static boolean after(final long t1, final long id1, final long t2, final long id2) {
        final long d = t1 - t2;
        return d > 0 || (d == 0 && id1 > id2);
    }

    public long bytesInWindow() {
        return bytesInWindow(w);
    }

    static long bytesInWindow(final long[] w) {
        return w[IN_WINDOW];
    }

    /** The latest completion time in the window; meaningless when empty. */
    public long lastCompletionNs() {
        return lastCompletionNs(w);
    }

    static long lastCompletionNs(final long[] w) {
        return w[slot(w, size(w) - 1) + COMPLETE];
    }

    /** The earliest post time of the entries in the window (signed-difference minimum); meaningless when empty. */
    public long firstPostNs() {
        return firstPostNs(w);
    }

    static long firstPostNs(final long[] w) {
        long first = w[(int) w[HEAD] + POST];
        for (int i = 1; i < size(w); i++) {
            final long p = w[slot(w, i) + POST];
            if (p - first < 0) {
                first = p;
            }
        }
        return first;
    }

    /** last completion − first post, 0 when empty. */
    public long spanNs() {
        return spanNs(w);
    }

    static long spanNs(final long[] w) {
        return size(w) == 0 ? 0 : lastCompletionNs(w) - firstPostNs(w);
    }

    /** Bytes in the window / span, in bytes per second; 0 when empty or when the span is not positive. */
    public double bandwidthBytesPerSecond() {
        final long span = spanNs(w);
        return span <= 0 ? 0.0 : w[IN_WINDOW] * 1e9 / span;
    }

    /** The i-th entry's id, oldest completion first. */
    public long id(final int i) {
        return w[slot(w, i) + ID];
    }

    public long postNs(final int i) {
        return w[slot(w, i) + POST];
    }

    public long completeNs(final int i) {
        return w[slot(w, i) + COMPLETE];
    }

    public long bytes(final int i) {
        return w[slot(w, i) + BYTES];
    }
}
