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
 *             | (32-63 unused)
 *   +3 START  start time
 *   +4 TA     t8 (send) / t10 (recv)
 *   +5 TB     t20 (send) / t11 (recv)
 *   +6 TC     t9 (send) / t12 (recv)
 *   +7 BYTES  transSize / WR length
 * </pre>
 * <b>Sweep</b>: each row's last record time is in {@link #stamp}, indexed by row, so a record updates it
 * without reading a list position and the sweep scans the slab's used prefix ({@link #highWater}: the LIFO
 * keeps it near the peak occupancy) without touching rows; {@link #occupied} tells a free row's stale stamp
 * from a live one. A removal pushes the row and clears its index slot; no other row moves.
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
    /** Last record time of each row (stale for a free row); read in place by the sweep. */
    final long[] stamp;
    /** Whether each row holds an entry; read in place by the sweep. */
    final boolean[] occupied;
    /** 1 + the highest row ever used: rows at and above it were never occupied. */
    private int highWater;
    private int count;
    /** The tag of the key of the last {@link #probeInsert}, for {@link #occupy} (no second hash). */
    private long probedTag;

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
        stamp = new long[rows];
        occupied = new boolean[rows];
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
                probedTag = tag;
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
     * Occupies the empty index slot {@code slot} (from the last {@link #probeInsert}, of the same key, nothing
     * inserted or removed in between) with a free row; the caller sets the rest of the fields. @return the row base.
     */
    int occupy(final int slot, final long key, final int flowId, final int flowGeneration, final long flags,
        final int hostId, final long startNs)
    {
        final long[] t = this.t;
        final int row = free[--freeCount];
        index[slot] = probedTag | row + 1;
        count++;
        if (row >= highWater)
        {
            highWater = row + 1;
        }
        stamp[row] = startNs;
        occupied[row] = true;
        final int b = row << SHIFT;
        t[b + KEY] = key;
        t[b + FLOW] = (flowId & 0xFFFF_FFFFL) | (long)flowGeneration << 32;
        t[b + FLAGS] = flags | OCCUPIED | ((long)hostId & HOST_MASK) << HOST_SHIFT;
        t[b + START] = startNs;
        t[b + TA] = 0;
        t[b + TB] = 0;
        t[b + TC] = 0;
        t[b + BYTES] = 0;
        return b;
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

    /** Rows {@code [0, highWater())} are all that were ever occupied. */
    int highWater()
    {
        return highWater;
    }

    /** The last record time of the entry at row base {@code b}. */
    long stamp(final int b)
    {
        return stamp[b >>> SHIFT];
    }

    void stamp(final int b, final long value)
    {
        stamp[b >>> SHIFT] = value;
    }

    /** Removes the entry of row base {@code b}: its row back on the free stack, backward shift in the index. */
    void remove(final int b)
    {
        final long[] t = this.t;
        final long[] index = this.index;
        count--;
        final int row = b >>> SHIFT;
        occupied[row] = false;
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
