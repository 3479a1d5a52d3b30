package io.flowscope.window;

/**
 * The live steps and work requests (and their tombstones), inline in one open-addressing table: each slot is
 * {@link #STRIDE} longs (64 bytes, one cache line's worth) of one {@code long[]}, holding the key and every field
 * a record needs, so a record costs one probe into one slot instead of a map slot, a pooled object and its
 * fields. Linear probing, at most half full (capacity = the next power of two ≥ 2 × maxSteps), deletion by
 * backward shift (no deleted markers in the probe chains). A dense list of the occupied slots with each one's
 * last record time ({@link #stamp}) lets the sweep scan times without touching slots. Nothing is allocated
 * after construction.
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
    /** Set in every occupied slot's flags: a flags word of 0 is an empty slot. */
    static final long OCCUPIED = 1 << 10;
    static final int HOST_SHIFT = 11;
    static final long HOST_MASK = (1L << 21) - 1;
    static final int POS_SHIFT = 32;

    /** Slot layout, offsets in longs. */
    static final int KEY = 0;
    /** Flow id (low 32 bits) | flow generation (high 32 bits). */
    static final int FLOW = 1;
    /** Seen bits, POSTED, COMPLETED, STOPPED, SEND, OCCUPIED, host id << 11, active position << 32. */
    static final int FLAGS = 2;
    static final int START = 3;
    /** t8 (send) / t10 (recv). */
    static final int TA = 4;
    /** t20 (send) / t11 (recv). */
    static final int TB = 5;
    /** t9 (send) / t12 (recv). */
    static final int TC = 6;
    static final int BYTES = 7;
    static final int STRIDE = 8;
    static final int SHIFT = 3;

    final long[] t;
    private final int mask;
    private final int shift;
    private final int maxEntries;
    /** Slot index (not yet × STRIDE) of each active entry, dense. */
    private final int[] activeSlot;
    /** Last record time of each active entry, parallel to {@link #activeSlot}. */
    private final long[] stamp;
    private int count;

    StepTable(final int maxSteps)
    {
        int capacity = 16;
        while (capacity < 2L * maxSteps)
        {
            capacity <<= 1;
        }
        t = new long[capacity * STRIDE];
        mask = capacity - 1;
        shift = 64 - Integer.numberOfTrailingZeros(capacity);
        maxEntries = maxSteps;
        activeSlot = new int[Math.max(1, maxSteps)];
        stamp = new long[Math.max(1, maxSteps)];
    }

    private int home(final long key)
    {
        long h = key * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return (int)((h * 0xBF58476D1CE4E5B9L) >>> shift);
    }

    /** The base (index into {@link #t}) of {@code key}'s slot, or -1 when absent. */
    int find(final long key)
    {
        final long[] t = this.t;
        int i = home(key);
        while (true)
        {
            final int b = i << SHIFT;
            if (t[b + FLAGS] == 0)
            {
                return -1;
            }
            if (t[b + KEY] == key)
            {
                return b;
            }
            i = (i + 1) & mask;
        }
    }

    /**
     * One probe for a new key: the base of its (empty, not yet occupied) slot as a non-negative number, or
     * {@code -1 - base} when the key is present, or {@link Integer#MIN_VALUE} when the table holds maxSteps
     * entries.
     */
    int probeInsert(final long key)
    {
        final long[] t = this.t;
        int i = home(key);
        while (true)
        {
            final int b = i << SHIFT;
            if (t[b + FLAGS] == 0)
            {
                return count == maxEntries ? Integer.MIN_VALUE : b;
            }
            if (t[b + KEY] == key)
            {
                return -1 - b;
            }
            i = (i + 1) & mask;
        }
    }

    /** Occupies the empty slot {@code b} (from {@link #probeInsert}); the caller sets the rest of the fields. */
    void occupy(final int b, final long key, final int flowId, final int flowGeneration, final long flags,
        final int hostId, final long startNs)
    {
        final long[] t = this.t;
        final int pos = count++;
        activeSlot[pos] = b >>> SHIFT;
        stamp[pos] = startNs;
        t[b + KEY] = key;
        t[b + FLOW] = (flowId & 0xFFFF_FFFFL) | (long)flowGeneration << 32;
        t[b + FLAGS] = flags | OCCUPIED | ((long)hostId & HOST_MASK) << HOST_SHIFT | (long)pos << POS_SHIFT;
        t[b + START] = startNs;
        t[b + TA] = 0;
        t[b + TB] = 0;
        t[b + TC] = 0;
        t[b + BYTES] = 0;
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

    /** The slot base of the {@code pos}-th active entry. */
    int base(final int pos)
    {
        return activeSlot[pos] << SHIFT;
    }

    /** Removes the entry at slot base {@code b}: swap-remove from the active list, backward shift in the table. */
    void remove(final int b)
    {
        final long[] t = this.t;
        // The active list: the last entry takes this one's position.
        final int pos = position(t[b + FLAGS]);
        final int last = --count;
        if (pos != last)
        {
            final int lastSlot = activeSlot[last];
            activeSlot[pos] = lastSlot;
            stamp[pos] = stamp[last];
            final int lb = (lastSlot << SHIFT) + FLAGS;
            t[lb] = (t[lb] & 0xFFFF_FFFFL) | (long)pos << POS_SHIFT;
        }
        // The table: shift back the entries of the chain that may sit at the hole.
        int hole = b >>> SHIFT;
        int j = hole;
        while (true)
        {
            j = (j + 1) & mask;
            final int jb = j << SHIFT;
            if (t[jb + FLAGS] == 0)
            {
                break;
            }
            final int k = home(t[jb + KEY]);
            // The entry at j may move to the hole unless its home lies cyclically in (hole, j].
            final boolean stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
            if (!stays)
            {
                final int hb = hole << SHIFT;
                System.arraycopy(t, jb, t, hb, STRIDE);
                activeSlot[position(t[hb + FLAGS])] = hole;
                hole = j;
            }
        }
        t[(hole << SHIFT) + FLAGS] = 0;
    }
}
