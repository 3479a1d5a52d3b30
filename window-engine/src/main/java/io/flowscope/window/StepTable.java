package io.flowscope.window;

import java.util.Arrays;

/**
 * The live steps and work requests, and the tombstones of stopped ones: a compact open-addressing index of the
 * live entries over a slab of fixed rows, and two generations of tombstone key sets. Nothing is allocated after
 * construction.
 * <p>
 * <b>Live index and rows.</b> Step keys are hashes of (host, pid, record id): a new key's home slot is random.
 * The random probe goes into an index of 8 bytes a slot that holds only the live entries (at a stream's rate a
 * few hundred: tombstones are elsewhere), sized by them (at most half full, at least {@link #MIN_INDEX} slots;
 * doubled when a start would fill it beyond half, halved at a sweep when it is less than an eighth full), so
 * it stays a few KiB and L1-resident. The row comes from a LIFO free stack: a start reuses the row that a stop
 * freed microseconds before.
 * <p>
 * <b>Index</b> ({@code long[]}, capacity a power of two, linear probing, deletion by backward shift with no
 * deleted markers):
 * <pre>
 *   63                               32 31                               0
 *  +-----------------------------------+----------------------------------+
 *  | tag: the key hash's high 32 bits  | row + 1                          |   (0: empty slot)
 *  +-----------------------------------+----------------------------------+
 * </pre>
 * The home slot is the tag's high log2(capacity) bits, so the backward shift and a resize find every entry's
 * home without reading its row, and a probe dereferences a row only on a tag match.
 * <p>
 * <b>Row</b> ({@link #t}, {@link #STRIDE} longs = 64 bytes a row, base = row × 8):
 * <pre>
 *   +0 KEY    the step / work request key
 *   +1 FLOW   flow id (low 32) | flow generation (high 32)
 *   +2 FLAGS  seen bits 0-5 | POSTED 6 | COMPLETED 7 | (8 unused) | SEND 9 | OCCUPIED 10 | host index 11-31
 *   +3 START  start time
 *   +4 TA     t8 (send) / t10 (recv)
 *   +5 TB     t20 (send) / t11 (recv)
 *   +6 TC     t9 (send) / t12 (recv)
 *   +7 BYTES  transSize / WR length
 * </pre>
 * <b>Tombstones by generation.</b> A stopped step only answers "seen before" (a later record of its key is a
 * duplicate) until its tombstone timeout T. At a stream's rate nearly all entries are tombstones (benchmark
 * stream: ~14 k against at most ~500 live). A stop ({@link #bury}) takes the entry out of the live index (a
 * backward shift in the small index) and inserts its key into the <em>current</em> of two insert-only
 * open-addressing sets (the key's 64-bit hash, a bijection of the key, as the exact key; 0 is the empty slot,
 * the one key whose hash is 0 has a slot of its own), with its host index and last record time. A tombstone is
 * never removed one by one: it is <em>alive</em> while {@code hostPeriodStart[host] − stamp < T}, evaluated
 * when it is looked up, with the period start of its own host (hosts have unrelated clocks). That is exactly
 * when the per-tombstone sweep of before kept it: a sweep at period start P removed the tombstones with
 * {@code P − stamp ≥ T}; a tombstone buried when that already holds has its stamp raised to
 * {@code P − T + 1} (alive until its host's next sweep, as before). Expiry is monotone (a host's period start
 * only grows), so at most one alive copy of a key exists.
 * <p>
 * <b>Rotation</b> ({@link #rotate}): the older set is emptied at once ({@code Arrays.fill} of its used slots)
 * and becomes the current one; the current one becomes the older one. At a sweep ({@link #onSweep}) the
 * older set is emptied when all its tombstones have expired (the newest stamp of each host in it is kept, so
 * that is one check per host present, not per tombstone); a rotation happens when the current set would be more
 * than half full. A rotation whose older set still holds alive tombstones copies those (survivors) into the new
 * current set first, so it never drops an alive one, and sizes the new set for the survivors and another
 * generation as long as the last one: the sets grow until a generation covers T (then no survivors) and never
 * hold more than {@code maxSteps} entries. A start that finds the table full (live + tombstones in the sets,
 * expired ones included, = {@code maxSteps}) first rotates twice (which drops every expired tombstone, so the
 * count is then exactly the live entries and alive tombstones of before) and only then counts as dropped.
 * <p>
 * <b>Sweep</b> of live entries: each row's last record time is in {@link #stamp}, indexed by row, and the
 * engine's sweep scans the slab's used prefix ({@link #highWater}) for live entries older than the step timeout.
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

    /** {@link #find} results other than a row base. */
    static final int ABSENT = -1;
    static final int BURIED = -2;

    /** Smallest live index and tombstone set capacity (slots). */
    static final int MIN_INDEX = 256;

    private static final long TAG_MASK = 0xFFFF_FFFF_0000_0000L;
    /** The live index and the tombstone sets are kept at most a quarter full (short probes, few mispredictions). */
    private static final int LOAD_SHIFT = 2;

    /** The rows. */
    final long[] t;
    /** The live index: slots {@code [0, capacity)} in use, the rest 0. */
    private final long[] index;
    private int mask;
    /** 64 − log2(capacity): an entry's (or a hash's) home slot is its value {@code >>> shift}. */
    private int shift;
    private final int maxCapacity;
    private final int maxEntries;
    /** Free rows, a LIFO stack: the most recently freed row (hot in cache) is reused first. */
    private final int[] free;
    private int freeCount;
    /** Last record time of each row (stale for a free row); read in place by the sweep. */
    final long[] stamp;
    /** 1 + the highest row ever used: rows at and above it were never occupied. */
    private int highWater;
    /** Live entries. */
    private int liveCount;
    /** The tag of the key of the last {@link #probeInsert}, for {@link #occupy} (no second hash). */
    private long probedTag;
    /** The index slot and key hash of the last row that {@link #find} returned, for {@link #bury}. */
    private int foundSlot;
    private long foundHash;

    /** The tombstone timeout T. */
    private final long tombstoneTimeoutNs;
    /** The current period start of each host (by host index), written by the engine. */
    final long[] hostPeriodStart;
    /** The two tombstone sets: the current one (inserted into) and the older one; swapped at a rotation. */
    private TombSet current;
    private TombSet older;
    /** The tombstone of the key whose hash is 0 (0 marks an empty set slot). */
    private boolean zeroTomb;
    private long zeroStamp;
    private int zeroHost;
    /** Survivors of a rotation (hash, stamp, host), or the live entries of a resize (hash only). */
    private final long[] scratchHash;
    private final long[] scratchStamp;
    private final int[] scratchHost;
    /** False after a rotation for a full table freed nothing, until the next sweep. */
    private boolean collectable = true;

    /** One insert-only tombstone set: key hashes (probed), their stamps and hosts (read on a match). */
    private static final class TombSet
    {
        final long[] hash;
        final long[] stamp;
        final int[] host;
        int mask;
        int shift;
        int count;
        /** The newest stamp of each host present, and the hosts present. */
        final long[] newest;
        final boolean[] present;
        final int[] hosts;
        int hostCount;
        /** The host of the last insert (present), or -1. */
        int lastHost = -1;

        TombSet(final int maxCapacity, final int maxHosts)
        {
            hash = new long[maxCapacity];
            stamp = new long[maxCapacity];
            host = new int[maxCapacity];
            newest = new long[maxHosts];
            present = new boolean[maxHosts];
            hosts = new int[maxHosts];
            capacity(Math.min(MIN_INDEX, maxCapacity));
        }

        void capacity(final int capacity)
        {
            mask = capacity - 1;
            shift = 64 - Integer.numberOfTrailingZeros(capacity);
        }

        /** The slot of {@code h} (non-zero), or -1. */
        int find(final long h)
        {
            final long[] hash = this.hash;
            int i = (int)(h >>> shift);
            while (true)
            {
                final long e = hash[i];
                if (e == h)
                {
                    return i;
                }
                if (e == 0)
                {
                    return -1;
                }
                i = i + 1 & mask;
            }
        }

        /** Inserts (or overwrites an expired copy of) {@code h}; room is the caller's concern. */
        void insert(final long h, final long stampNs, final int hostIndex)
        {
            final long[] hash = this.hash;
            int i = (int)(h >>> shift);
            while (true)
            {
                final long e = hash[i];
                if (e == 0)
                {
                    hash[i] = h;
                    count++;
                    break;
                }
                if (e == h)
                {
                    break;
                }
                i = i + 1 & mask;
            }
            stamp[i] = stampNs;
            host[i] = hostIndex;
            if (hostIndex == lastHost)
            {
                if (stampNs - newest[hostIndex] > 0)
                {
                    newest[hostIndex] = stampNs;
                }
                return;
            }
            lastHost = hostIndex;
            if (!present[hostIndex])
            {
                present[hostIndex] = true;
                newest[hostIndex] = stampNs;
                hosts[hostCount++] = hostIndex;
            }
            else if (stampNs - newest[hostIndex] > 0)
            {
                newest[hostIndex] = stampNs;
            }
        }

        /** Empties the set (its used slots only) and gives it {@code capacity} slots. */
        void clear(final int capacity)
        {
            if (count != 0)
            {
                Arrays.fill(hash, 0, mask + 1, 0L);
                count = 0;
            }
            for (int k = 0; k < hostCount; k++)
            {
                present[hosts[k]] = false;
            }
            hostCount = 0;
            lastHost = -1;
            capacity(capacity);
        }
    }

    StepTable(final int maxSteps, final int maxHosts, final long tombstoneTimeoutNs)
    {
        int capacity = MIN_INDEX;
        while (capacity < 2L * maxSteps)
        {
            capacity <<= 1;
        }
        maxCapacity = capacity;
        index = new long[capacity];
        mask = MIN_INDEX - 1;
        shift = 64 - Integer.numberOfTrailingZeros(MIN_INDEX);
        maxEntries = maxSteps;
        this.tombstoneTimeoutNs = tombstoneTimeoutNs;
        final int rows = Math.max(1, maxSteps);
        t = new long[rows * STRIDE];
        free = new int[rows];
        for (int r = 0; r < rows; r++)
        {
            free[r] = rows - 1 - r;
        }
        freeCount = rows;
        stamp = new long[rows];
        hostPeriodStart = new long[Math.max(1, maxHosts)];
        current = new TombSet(capacity, hostPeriodStart.length);
        older = new TombSet(capacity, hostPeriodStart.length);
        scratchHash = new long[rows];
        scratchStamp = new long[rows];
        scratchHost = new int[rows];
    }

    private static long hash(final long key)
    {
        long h = key * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return h * 0xBF58476D1CE4E5B9L;
    }

    /** Whether a tombstone of {@code hostIndex} with last record time {@code stampNs} has not yet expired. */
    private boolean alive(final long stampNs, final int hostIndex)
    {
        return hostPeriodStart[hostIndex] - stampNs < tombstoneTimeoutNs;
    }

    /** Whether an alive tombstone of the key of hash {@code h} exists. */
    private boolean buried(final long h)
    {
        if (h == 0)
        {
            return zeroTomb && alive(zeroStamp, zeroHost);
        }
        final TombSet a = current;
        int i = a.find(h);
        if (i >= 0 && alive(a.stamp[i], a.host[i]))
        {
            return true;
        }
        final TombSet o = older;
        if (o.count == 0)
        {
            return false;
        }
        i = o.find(h);
        return i >= 0 && alive(o.stamp[i], o.host[i]);
    }

    /**
     * The row base (index into {@link #t}) of the live entry {@code key}; {@link #BURIED} when {@code key} is an
     * alive tombstone, {@link #ABSENT} when it is neither.
     */
    int find(final long key)
    {
        final long[] index = this.index;
        final long h = hash(key);
        final long tag = h & TAG_MASK;
        int i = (int)(h >>> shift);
        while (true)
        {
            final long e = index[i];
            if (e == 0)
            {
                return buried(h) ? BURIED : ABSENT;
            }
            if ((e & TAG_MASK) == tag)
            {
                final int b = (int)e - 1 << SHIFT;
                if (t[b + KEY] == key)
                {
                    foundSlot = i;
                    foundHash = h;
                    return b;
                }
            }
            i = i + 1 & mask;
        }
    }

    /**
     * One probe for a new key: its (empty) index slot as a non-negative number, or -1 when the key is present
     * (live or an alive tombstone), or {@link Integer#MIN_VALUE} when the table holds maxSteps entries.
     */
    int probeInsert(final long key)
    {
        if (liveCount >= mask + 1 >>> LOAD_SHIFT)
        {
            grow();
        }
        final long[] index = this.index;
        final long h = hash(key);
        final long tag = h & TAG_MASK;
        int i = (int)(h >>> shift);
        while (true)
        {
            final long e = index[i];
            if (e == 0)
            {
                break;
            }
            if ((e & TAG_MASK) == tag && t[(int)e - 1 << SHIFT] == key)
            {
                return -1;
            }
            i = i + 1 & mask;
        }
        if (buried(h))
        {
            return -1;
        }
        if (liveCount + current.count + older.count >= maxEntries - 1 && full())
        {
            return Integer.MIN_VALUE;
        }
        probedTag = tag;
        return i;
    }

    /** Doubles the live index when it is a quarter full (at its largest capacity it may be half full). */
    private void grow()
    {
        if (mask + 1 < maxCapacity)
        {
            resize(mask + 1 << 1);
        }
    }

    /** Whether the table is full: first drops every expired tombstone (two rotations), then counts exactly. */
    private boolean full()
    {
        if (entries() < maxEntries)
        {
            return false;
        }
        if (!collectable)
        {
            return true;
        }
        rotate();
        rotate();
        if (zeroTomb && !alive(zeroStamp, zeroHost))
        {
            zeroTomb = false;
        }
        if (entries() >= maxEntries)
        {
            collectable = false;
            return true;
        }
        return false;
    }

    /** Live entries and tombstones held (expired ones not yet dropped included). */
    private int entries()
    {
        return liveCount + current.count + older.count + (zeroTomb ? 1 : 0);
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
        liveCount++;
        if (row >= highWater)
        {
            highWater = row + 1;
        }
        stamp[row] = startNs;
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

    /**
     * Turns the live entry of row base {@code b} (the last row {@link #find} returned, nothing inserted or removed
     * in between) into a tombstone of its key, host and last record time, and frees its row.
     */
    void bury(final int b)
    {
        final int row = b >>> SHIFT;
        final int hostIndex = hostId(t[b + FLAGS]);
        long st = stamp[row];
        // Already expired by its host's last sweep: alive until that host's next sweep, as the sweep of before.
        final long periodStart = hostPeriodStart[hostIndex];
        if (periodStart - st >= tombstoneTimeoutNs)
        {
            st = periodStart - tombstoneTimeoutNs + 1;
        }
        final long h = foundHash;
        unindexAt(foundSlot);
        t[b + FLAGS] = 0;
        free[freeCount++] = row;
        liveCount--;
        if (h == 0)
        {
            zeroTomb = true;
            zeroStamp = st;
            zeroHost = hostIndex;
            return;
        }
        TombSet s = current;
        if (s.count >= s.mask + 1 >>> LOAD_SHIFT && (s.mask + 1 < maxCapacity || s.count >= s.mask + 1 >>> 1))
        {
            rotate();
            s = current;
        }
        s.insert(h, st, hostIndex);
    }

    /**
     * Empties the older set and makes it the current one (the current one becomes the older): alive tombstones
     * of the older set are copied into it first, and it is sized for them and a generation as long as the last.
     */
    private void rotate()
    {
        final TombSet older = this.older;
        final TombSet current = this.current;
        int survivors = 0;
        if (older.count != 0 && !allExpired(older))
        {
            final long[] hash = older.hash;
            for (int i = older.mask; i >= 0; i--)
            {
                final long h = hash[i];
                if (h != 0 && alive(older.stamp[i], older.host[i]))
                {
                    scratchHash[survivors] = h;
                    scratchStamp[survivors] = older.stamp[i];
                    scratchHost[survivors] = older.host[i];
                    survivors++;
                }
            }
        }
        // Room at most a quarter full for the survivors and as many new tombstones as the current set holds.
        int capacity = MIN_INDEX;
        while (capacity < maxCapacity && capacity < 4L * (survivors + current.count))
        {
            capacity <<= 1;
        }
        older.clear(capacity);
        for (int k = 0; k < survivors; k++)
        {
            older.insert(scratchHash[k], scratchStamp[k], scratchHost[k]);
        }
        this.current = older;
        this.older = current;
    }

    /** Whether every tombstone of {@code s} has expired: the newest of each host present has. */
    private boolean allExpired(final TombSet s)
    {
        for (int k = 0; k < s.hostCount; k++)
        {
            final int hostIndex = s.hosts[k];
            if (alive(s.newest[hostIndex], hostIndex))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * After a sweep of host {@code hostIndex} at period start {@code periodStartNs}: empties the older tombstone
     * set when all its tombstones have expired, and halves a live index that is less than an eighth full.
     */
    void onSweep(final int hostIndex, final long periodStartNs)
    {
        hostPeriodStart[hostIndex] = periodStartNs;
        collectable = true;
        final TombSet older = this.older;
        if (older.count != 0 && allExpired(older))
        {
            older.clear(older.mask + 1);
        }
        if (zeroTomb && !alive(zeroStamp, zeroHost))
        {
            zeroTomb = false;
        }
        final int capacity = mask + 1;
        if (capacity > MIN_INDEX && liveCount < capacity >>> LOAD_SHIFT + 2)
        {
            resize(capacity >>> 1);
        }
    }

    /** Rehashes the live index into {@code capacity} slots (from the tags alone: no row is read). */
    private void resize(final int capacity)
    {
        final long[] index = this.index;
        int n = 0;
        for (int i = mask; i >= 0; i--)
        {
            final long e = index[i];
            if (e != 0)
            {
                scratchHash[n++] = e;
                index[i] = 0;
            }
        }
        mask = capacity - 1;
        shift = 64 - Integer.numberOfTrailingZeros(capacity);
        for (int k = 0; k < n; k++)
        {
            final long e = scratchHash[k];
            int i = (int)(e >>> shift);
            while (index[i] != 0)
            {
                i = i + 1 & mask;
            }
            index[i] = e;
        }
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

    /** Live entries and alive tombstones (a scan of the tombstone sets: not for the hot path). */
    int count()
    {
        return liveCount + (zeroTomb && alive(zeroStamp, zeroHost) ? 1 : 0) + countAlive(current) + countAlive(older);
    }

    private int countAlive(final TombSet s)
    {
        int n = 0;
        for (int i = s.mask; i >= 0; i--)
        {
            if (s.hash[i] != 0 && alive(s.stamp[i], s.host[i]))
            {
                n++;
            }
        }
        return n;
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

    /** Removes the live entry of row base {@code b}: its row back on the free stack, backward shift in the index. */
    void remove(final int b)
    {
        liveCount--;
        final int row = b >>> SHIFT;
        free[freeCount++] = row;
        final long ref = row + 1;
        int hole = (int)(hash(t[b + KEY]) >>> shift);
        while ((index[hole] & 0xFFFF_FFFFL) != ref)
        {
            hole = hole + 1 & mask;
        }
        unindexAt(hole);
        t[b + FLAGS] = 0;
    }

    /** Clears index slot {@code hole} and shifts back the entries of its chain. */
    private void unindexAt(int hole)
    {
        final long[] index = this.index;
        final int mask = this.mask;
        final int shift = this.shift;
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
    }
}
