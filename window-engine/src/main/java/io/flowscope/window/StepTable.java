package io.flowscope.window;

/**
 * The live steps and work requests (and their tombstones): a compact open-addressing key index over a slab of
 * fixed rows. Nothing is allocated after construction.
 * <p>
 * <b>Why two arrays.</b> Step keys are hashes of (host, pid, record id): a new key's home slot is random, so
 * a table that holds the rows inline costs a cold line at every step / work request start, and another at
 * every expiry (reading the slot, then shifting its chain). Here the random probe goes into an index of 8 bytes
 * a slot (8× denser than the rows; 1 MiB for the default 65,536 steps), and the row comes from a LIFO free
 * stack: a start reuses the row that the last sweep freed, a line the sweep has just read. The rows in use stay
 * packed at the bottom of the slab (its peak occupancy), not spread over the table.
 * <p>
 * <b>Index</b> ({@code long[]}, capacity = the next power of two ≥ 2 × maxSteps, linear probing, at most half
 * full, deletion by backward shift with no deleted markers):
 * <pre>
 *   63                               32 31                                0
 *  +-----------------------------------+-----------------------------------+
 *  | tag: the key hash's high 32 bits  | row + 1 (0: empty slot)           |
 *  +-----------------------------------+-----------------------------------+
 * </pre>
 * The home slot is the tag's high log2(capacity) bits, so the backward shift finds every entry's home without
 * reading its row, and a probe dereferences a row only on a tag match.
 * <p>
 * <b>Row</b> ({@link #t}, {@link #STRIDE} longs = 64 bytes a row, base = row × 8):
 * <pre>
 *   +0 KEY    the step / work request key
 *   +1 FLOW   flow id (low 32) | flow generation (high 32)
 *   +2 FLAGS  seen bits 0-5 | POSTED 6 | COMPLETED 7 | STOPPED 8 | SEND 9 | OCCUPIED 10 | host index 11-31
 *             | position in the active list 32-63
 *   +3 START  start time
 *   +4 TA     t8 (send) / t10 (recv)
 *   +5 TB     t20 (send) / t11 (recv)
 *   +6 TC     t9 (send) / t12 (recv)
 *   +7 BYTES  transSize / WR length
 * </pre>
 * A dense active list (row, last record time: {@link #stamp}) lets the sweep scan times without touching rows.
 */
final class StepTable
{
    static final int SEEN_8 = 1;
    static final int SEEN_20 = 1 << 1;
    static final int SEEN_9 = 1 << 2;
    static final int SEEN_10 = 1 << 3;
    static final int SEEN_11 = 1 << 4;
    static final int SEEN_12 = 1 << 5;
    static final int SEEN_MASK = 0x3F;
    static final long POSTED = 1 << 6;
    static final long COMPLETED = 1 << 7;
    static final long STOPPED = 1 << 8;
    static final long SEND = 1 << 9;
    /** Set in every occupied row's flags. */
    static final long OCCUPIED = 1 << 10;
    static final int HOST_SHIFT = 11;
    static final long HOST_MASK = (1L << 21) - 1;
    static final int POS_SHIFT = 32;

    /** Row layout, offsets in longs. */
    static final int KEY = 0;
    static final int FLOW = 1;
    static final int FLAGS = 2;
    static final int START = 3;
    static final int TA = 4;
    static final int TB = 5;
    static final int TC = 6;
    static final int BYTES = 7;
    static final int STRIDE = 8;
    static final int SHIFT = 3;

    /** The rows. */
    final long[] t;
    private final long[] index;
    private final int mask;
    /** 64 − log2(capacity): an entry's (or a hash's) home slot is its value {@code >>> shift}. */
    private final int shift;
    private final int maxEntries;
    /** Free rows, a LIFO stack: the most recently freed row (hot in cache) is reused first. */
    private final int[] free;
    private int freeCount;
    /** Row of each active entry, dense. */
    private final int[] activeRow;
    /** Last record time of each active entry, parallel to {@link #activeRow}. */
    private final long[] stamp;
    private int count;

    StepTable(final int maxSteps)
    {
        int capacity = 16;
        while (capacity < 2L * maxSteps)
        {
            capacity <<= 1;
        }
        index = new long[capacity];
        mask = capacity - 1;
        shift = 64 - Integer.numberOfTrailingZeros(capacity);
        maxEntries = maxSteps;
        final int rows = Math.max(1, maxSteps);
        t = new long[rows * STRIDE];
        free = new int[rows];
        for (int r = 0; r < rows; r++)
        {
            free[r] = rows - 1 - r;
        }
        freeCount = rows;
        activeRow = new int[rows];
        stamp = new long[rows];
    }

    private static long hash(final long key)
    {
        long h = key * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return h * 0xBF58476D1CE4E5B9L;
    }

    /** The row base (index into {@link #t}) of {@code key}, or -1 when absent. */
    int find(final long key)
    {
        final long[] index = this.index;
        final long h = hash(key);
        final long tag = h & 0xFFFF_FFFF_0000_0000L;
        int i = (int)(h >>> shift);
        while (true)
        {
            final long e = index[i];
            if (e == 0)
            {
                return -1;
            }
            if ((e & 0xFFFF_FFFF_0000_0000L) == tag)
            {
                final int b = (int)e - 1 << SHIFT;
                if (t[b + KEY] == key)
                {
                    return b;
                }
            }
            i = i + 1 & mask;
        }
    }

    /**
     * One probe for a new key: its (empty) index slot as a non-negative number, or {@code -1 - rowBase} when the
     * key is present, or {@link Integer#MIN_VALUE} when the table holds maxSteps entries.
     */
    int probeInsert(final long key)
    {
        final long[] index = this.index;
        final long h = hash(key);
        final long tag = h & 0xFFFF_FFFF_0000_0000L;
        int i = (int)(h >>> shift);
        while (true)
        {
            final long e = index[i];
            if (e == 0)
            {
                return count == maxEntries ? Integer.MIN_VALUE : i;
            }
            if ((e & 0xFFFF_FFFF_0000_0000L) == tag)
            {
                final int b = (int)e - 1 << SHIFT;
                if (t[b + KEY] == key)
                {
                    return -1 - b;
                }
            }
            i = i + 1 & mask;
        }
    }

    /**
     * Occupies the empty index slot {@code slot} (from {@link #probeInsert} of the same key, nothing inserted or
     * removed in between) with a free row; the caller sets the rest of the fields. @return the row base.
     */
    int occupy(final int slot, final long key, final int flowId, final int flowGeneration, final long flags,
        final int hostId, final long startNs)
    {
        final long[] t = this.t;
        final int row = free[--freeCount];
        index[slot] = hash(key) & 0xFFFF_FFFF_0000_0000L | row + 1;
        final int pos = count++;
        activeRow[pos] = row;
        stamp[pos] = startNs;
        final int b = row << SHIFT;
        t[b + KEY] = key;
        t[b + FLOW] = (flowId & 0xFFFF_FFFFL) | (long)flowGeneration << 32;
        t[b + FLAGS] = flags | OCCUPIED | ((long)hostId & HOST_MASK) << HOST_SHIFT | (long)pos << POS_SHIFT;
        t[b + START] = startNs;
        t[b + TA] = 0;
        t[b + TB] = 0;
        t[b + TC] = 0;
        t[b + BYTES] = 0;
        return b;
    }

    static int position(final long flags)
    {
        return (int)(flags >>> POS_SHIFT);
    }

    static int hostId(final long flags)
    {
        return (int)(flags >>> HOST_SHIFT & HOST_MASK);
    }

    static int flowId(final long flow)
    {
        return (int)flow;
    }

    static int flowGeneration(final long flow)
    {
        return (int)(flow >>> 32);
    }

    int count()
    {
        return count;
    }

    /** The last record time of the {@code pos}-th active entry. */
    long stamp(final int pos)
    {
        return stamp[pos];
    }

    void stamp(final int b, final long value)
    {
        stamp[position(t[b + FLAGS])] = value;
    }

    /** The row base of the {@code pos}-th active entry. */
    int base(final int pos)
    {
        return activeRow[pos] << SHIFT;
    }

    /** Removes the entry of row base {@code b}: swap-remove from the active list, backward shift in the index. */
    void remove(final int b)
    {
        final long[] t = this.t;
        final long[] index = this.index;
        // The active list: the last entry takes this one's position.
        final int pos = position(t[b + FLAGS]);
        final int last = --count;
        if (pos != last)
        {
            final int lastRow = activeRow[last];
            activeRow[pos] = lastRow;
            stamp[pos] = stamp[last];
            final int lb = (lastRow << SHIFT) + FLAGS;
            t[lb] = (t[lb] & 0xFFFF_FFFFL) | (long)pos << POS_SHIFT;
        }
        final int row = b >>> SHIFT;
        free[freeCount++] = row;
        // The index: find the row's slot, then shift back the entries of the chain that may sit at the hole.
        final long target = row + 1;
        int hole = (int)(hash(t[b + KEY]) >>> shift);
        while ((index[hole] & 0xFFFF_FFFFL) != target)
        {
            hole = hole + 1 & mask;
        }
        int j = hole;
        while (true)
        {
            j = j + 1 & mask;
            final long e = index[j];
            if (e == 0)
            {
                break;
            }
            final int k = (int)(e >>> shift);
            // The entry at j may move to the hole unless its home lies cyclically in (hole, j].
            final boolean stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
            if (!stays)
            {
                index[hole] = e;
                hole = j;
            }
        }
        index[hole] = 0;
        t[b + FLAGS] = 0;
    }
}
