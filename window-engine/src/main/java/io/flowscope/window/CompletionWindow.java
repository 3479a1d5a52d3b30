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
 * Fixed footprint: one {@code long[4N]}, an entry's four fields side by side (id, completion time, bytes, post
 * time: 32 bytes, half a line), so an in-order record reads the oldest and the last entry and writes one: at
 * most three lines, where four blocks of N (ids, times, bytes, posts) took five. Entries are kept sorted,
 * oldest first, as a ring: a completion later than all (the usual case) replaces the oldest without moving any; an
 * out-of-order one moves at most N entries (N = 8 by default). No allocation after construction.
 */
public final class CompletionWindow
{
    /** Default window size (VCCL's paper picks 8). */
    public static final int DEFAULT_SIZE = 8;

    /** {@link #record} result: the completion entered the window. */
    public static final int ACCEPTED = 0;
    /** {@link #record} result: a completion of this step id is already in the window. */
    public static final int DUPLICATE = 1;
    /** {@link #record} result: the window is full and every entry completed later than this one. */
    public static final int LATE = 2;

    /** Entry p at [4p, 4p + 4): {@link #ID}, {@link #COMPLETE}, {@link #BYTES}, {@link #POST}. */
    private final long[] e;
    private static final int ID = 0;
    private static final int COMPLETE = 1;
    private static final int BYTES = 2;
    private static final int POST = 3;
    private final int cap;
    private int count;
    /** The array index of the oldest entry. */
    private int head;
    private long bytesInWindow;

    public CompletionWindow(final int size)
    {
        if (size < 1)
        {
            throw new IllegalArgumentException("window size must be >= 1, was " + size);
        }
        e = new long[4 * size];
        cap = size;
    }

    public int capacity()
    {
        return cap;
    }

    public int size()
    {
        return count;
    }

    public void clear()
    {
        count = 0;
        head = 0;
        bytesInWindow = 0;
    }

    /**
     * @param id       the step's identity (duplicates are recognised by it)
     * @param postNs   when the work was posted (isend / irecv)
     * @param completeNs when it completed
     * @param bytes    bytes it moved
     * @return {@link #ACCEPTED}, {@link #DUPLICATE} or {@link #LATE}
     */
    public int record(final long id, final long postNs, final long completeNs, final long bytes)
    {
        // The usual case, a full window of the default size and a completion later than all in it, kept small
        // enough (bytecode) for C2 to inline into the engine's handlers, with constant offsets (one range check
        // for the four stores) and a scan of constant length (unrolled); anything else in recordAny.
        if (count == DEFAULT_SIZE && cap == DEFAULT_SIZE)
        {
            final long[] e = this.e;
            for (int i = 0; i < DEFAULT_SIZE; i++)
            {
                if (e[4 * i + ID] == id)
                {
                    return DUPLICATE;
                }
            }
            return recordUnique(id, postNs, completeNs, bytes);
        }
        return recordAny(id, postNs, completeNs, bytes);
    }

    /**
     * {@link #record} for a caller that never records an id twice while it may still be in the window (the
     * engine: a step or work request completes once, its COMPLETED flag), so the usual case skips the duplicate
     * scan. @return {@link #ACCEPTED} or {@link #LATE}
     */
    public int recordUnique(final long id, final long postNs, final long completeNs, final long bytes)
    {
        if (count == DEFAULT_SIZE && cap == DEFAULT_SIZE)
        {
            final long[] e = this.e;
            final int oldest = 4 * head;
            final int last = oldest == 0 ? 4 * (DEFAULT_SIZE - 1) : oldest - 4;
            if (after(completeNs, id, e[last + COMPLETE], e[last + ID]) &&
                after(completeNs, id, e[oldest + COMPLETE], e[oldest + ID]))
            {
                // It replaces the oldest and becomes the last, no shifting.
                head = head + 1 == DEFAULT_SIZE ? 0 : head + 1;
                bytesInWindow += bytes - e[oldest + BYTES];
                e[oldest + ID] = id;
                e[oldest + COMPLETE] = completeNs;
                e[oldest + BYTES] = bytes;
                e[oldest + POST] = postNs;
                return ACCEPTED;
            }
        }
        return recordAny(id, postNs, completeNs, bytes);
    }

    private int recordAny(final long id, final long postNs, final long completeNs, final long bytes)
    {
        final int cap = this.cap;
        final int n = count;
        final long[] e = this.e;
        // The window's entries occupy physical slots [0, n): head moves only once the window is full.
        for (int i = 0; i < n; i++)
        {
            if (e[4 * i + ID] == id)
            {
                return DUPLICATE;
            }
        }
        int at;
        if (n == cap)
        {
            final int oldest = head;
            if (!after(completeNs, id, e[4 * oldest + COMPLETE], e[4 * oldest + ID]))
            {
                return LATE;
            }
            bytesInWindow -= e[4 * oldest + BYTES];
            final int last = oldest == 0 ? cap - 1 : oldest - 1;
            if (after(completeNs, id, e[4 * last + COMPLETE], e[4 * last + ID]))
            {
                // In order: the new one replaces the oldest and becomes the last, no shifting.
                head = oldest + 1 == cap ? 0 : oldest + 1;
                set(oldest, id, postNs, completeNs, bytes);
                return ACCEPTED;
            }
            // Drop the oldest and shift left while the new one belongs further on.
            at = 0;
            while (at + 1 < n && after(completeNs, id, completeNs(at + 1), id(at + 1)))
            {
                move(phys(at + 1), phys(at));
                at++;
            }
        }
        else
        {
            at = n;
            while (at > 0 && after(completeNs(at - 1), id(at - 1), completeNs, id))
            {
                move(phys(at - 1), phys(at));
                at--;
            }
            count++;
        }
        set(phys(at), id, postNs, completeNs, bytes);
        return ACCEPTED;
    }

    private void set(final int p, final long id, final long postNs, final long completeNs, final long bytes)
    {
        final long[] e = this.e;
        e[4 * p + ID] = id;
        e[4 * p + COMPLETE] = completeNs;
        e[4 * p + BYTES] = bytes;
        e[4 * p + POST] = postNs;
        bytesInWindow += bytes;
    }

    /** The array index of the i-th entry (oldest first): the entries are a ring starting at {@link #head}. */
    private int phys(final int i)
    {
        final int j = head + i;
        return j >= cap ? j - cap : j;
    }

    private void move(final int from, final int to)
    {
        System.arraycopy(e, 4 * from, e, 4 * to, 4);
    }

    /** True when (t1, id1) comes strictly after (t2, id2): by time (signed difference), then by id. */
    static boolean after(final long t1, final long id1, final long t2, final long id2)
    {
        final long d = t1 - t2;
        return d > 0 || (d == 0 && id1 > id2);
    }

    public long bytesInWindow()
    {
        return bytesInWindow;
    }

    /** The latest completion time in the window; meaningless when empty. */
    public long lastCompletionNs()
    {
        return e[4 * phys(count - 1) + COMPLETE];
    }

    /** The earliest post time of the entries in the window (signed-difference minimum); meaningless when empty. */
    public long firstPostNs()
    {
        long first = e[4 * head + POST];
        for (int i = 1; i < count; i++)
        {
            final long p = e[4 * phys(i) + POST];
            if (p - first < 0)
            {
                first = p;
            }
        }
        return first;
    }

    /** last completion − first post, 0 when empty. */
    public long spanNs()
    {
        return count == 0 ? 0 : lastCompletionNs() - firstPostNs();
    }

    /** Bytes in the window / span, in bytes per second; 0 when empty or when the span is not positive. */
    public double bandwidthBytesPerSecond()
    {
        final long span = spanNs();
        return span <= 0 ? 0.0 : bytesInWindow * 1e9 / span;
    }

    /** The i-th entry's id, oldest completion first. */
    public long id(final int i)
    {
        return e[4 * phys(i) + ID];
    }

    public long postNs(final int i)
    {
        return e[4 * phys(i) + POST];
    }

    public long completeNs(final int i)
    {
        return e[4 * phys(i) + COMPLETE];
    }

    public long bytes(final int i)
    {
        return e[4 * phys(i) + BYTES];
    }
}
