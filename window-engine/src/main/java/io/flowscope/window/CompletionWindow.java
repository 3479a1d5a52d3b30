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
 * Fixed footprint: one {@code long[4N]}, four blocks of N: ids, completion times, bytes, post times (one array
 * header and contiguous lines instead of four arrays: a record touches ~5 lines, not ~9). Entries are kept sorted,
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

    /** Blocks of N = {@link #cap}: ids [0, N), completion times [N, 2N), bytes [2N, 3N), post times [3N, 4N). */
    private final long[] e;
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
                if (e[i] == id)
                {
                    return DUPLICATE;
                }
            }
            final int oldest = head;
            final int last = oldest == 0 ? DEFAULT_SIZE - 1 : oldest - 1;
            if (after(completeNs, id, e[DEFAULT_SIZE + oldest], e[oldest]) &&
                after(completeNs, id, e[DEFAULT_SIZE + last], e[last]))
            {
                // It replaces the oldest and becomes the last, no shifting.
                head = oldest + 1 == DEFAULT_SIZE ? 0 : oldest + 1;
                bytesInWindow += bytes - e[2 * DEFAULT_SIZE + oldest];
                e[oldest] = id;
                e[DEFAULT_SIZE + oldest] = completeNs;
                e[2 * DEFAULT_SIZE + oldest] = bytes;
                e[3 * DEFAULT_SIZE + oldest] = postNs;
                return ACCEPTED;
            }
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
            final int oldest = head;
            final int last = oldest == 0 ? DEFAULT_SIZE - 1 : oldest - 1;
            if (after(completeNs, id, e[DEFAULT_SIZE + oldest], e[oldest]) &&
                after(completeNs, id, e[DEFAULT_SIZE + last], e[last]))
            {
                head = oldest + 1 == DEFAULT_SIZE ? 0 : oldest + 1;
                bytesInWindow += bytes - e[2 * DEFAULT_SIZE + oldest];
                e[oldest] = id;
                e[DEFAULT_SIZE + oldest] = completeNs;
                e[2 * DEFAULT_SIZE + oldest] = bytes;
                e[3 * DEFAULT_SIZE + oldest] = postNs;
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
            if (e[i] == id)
            {
                return DUPLICATE;
            }
        }
        int at;
        if (n == cap)
        {
            final int oldest = head;
            if (!after(completeNs, id, e[cap + oldest], e[oldest]))
            {
                return LATE;
            }
            bytesInWindow -= e[2 * cap + oldest];
            final int last = oldest == 0 ? cap - 1 : oldest - 1;
            if (after(completeNs, id, e[cap + last], e[last]))
            {
                // In order: the new one replaces the oldest and becomes the last, no shifting.
                head = oldest + 1 == cap ? 0 : oldest + 1;
                set(oldest, id, postNs, completeNs, bytes);
                return ACCEPTED;
            }
            // Drop the oldest and shift left while the new one belongs further on.
            at = 0;
            while (at + 1 < n && after(completeNs, id, e[cap + phys(at + 1)], e[phys(at + 1)]))
            {
                move(phys(at + 1), phys(at));
                at++;
            }
        }
        else
        {
            at = n;
            while (at > 0 && after(e[cap + phys(at - 1)], e[phys(at - 1)], completeNs, id))
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
        final int cap = this.cap;
        e[p] = id;
        e[cap + p] = completeNs;
        e[2 * cap + p] = bytes;
        e[3 * cap + p] = postNs;
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
        final long[] e = this.e;
        final int cap = this.cap;
        e[to] = e[from];
        e[cap + to] = e[cap + from];
        e[2 * cap + to] = e[2 * cap + from];
        e[3 * cap + to] = e[3 * cap + from];
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
        return e[cap + phys(count - 1)];
    }

    /** The earliest post time of the entries in the window (signed-difference minimum); meaningless when empty. */
    public long firstPostNs()
    {
        long first = e[3 * cap + head];
        for (int i = 1; i < count; i++)
        {
            final long p = e[3 * cap + phys(i)];
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
        return e[phys(i)];
    }

    public long postNs(final int i)
    {
        return e[3 * cap + phys(i)];
    }

    public long completeNs(final int i)
    {
        return e[cap + phys(i)];
    }

    public long bytes(final int i)
    {
        return e[2 * cap + phys(i)];
    }
}
