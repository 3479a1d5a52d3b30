package io.flowscope.window;

/**
 * The live steps and work requests, and the tombstones of stopped ones: a compact open-addressing key index over
 * a slab of fixed rows (live entries) and a slab of small tombstone slots. Nothing is allocated after construction.
 * <p>
 * <b>Why rows apart.</b> A table that holds the rows inline touches a 64-byte row wherever its key lands; here
 * the key's slot holds a reference (4 bytes a direct slot, 8 an index slot), and the row comes from a LIFO
 * free stack.
 * <p>
 * <b>Why tombstones apart.</b> A stopped step only answers "seen before" (a later record of its key is a
 * duplicate) until its tombstone timeout: of its row only the key, the host and the last record time are still
 * read. At a stream's rate nearly all entries are tombstones (benchmark stream: ~14 k entries before a sweep, at
 * most ~500 of them live: 2 ms of stopped steps against tens of µs of live ones). So a stop ({@link #bury}) moves
 * those three fields into a tombstone slot (20 bytes in three dense arrays, not a 64-byte row) and frees its row
 * at once: the next start reuses that row while it is still in L1, the rows in use stay as few as the live
 * steps, and the sweep expires tombstones by reading dense arrays instead of rows.
 * <p>
 * <b>Direct slots first.</b> An entry goes into the direct slot of its key's low bits ({@link #direct}, an
 * {@code int} reference a slot, the index entry's low word below) when that slot is free, else into the index
 * (the overflow). Record ids are numbered in start order by the plugin (per thread, in blocks: see
 * {@code RingEventSource#key}), so a stream's live steps and fresh tombstones sit in neighbouring direct
 * slots: a start, a record and an expiry touch a line that the previous ones did, where a hashed home slot
 * is a random line of the 1 MiB index, mostly a cache miss (measured: the step table took ~39 % of the engine
 * benchmark's cycles with hashed slots alone, docs/benchmarks.md section 4). Keys of any other shape still
 * work: colliding ones spill into the index. {@link #spilled} counts, per direct slot, its entries in the
 * index, so a lookup probes the index only for slots that have some (none in an ordered stream). The direct
 * slots are four times the index's: each process of a node numbers its own records (eight sequences at eight
 * places of the slots), and a larger table lets their regions meet, and keys spill, less often.
 * <p>
 * <b>Index</b> ({@code long[]}, capacity = the next power of two ≥ 2 × maxSteps, a quarter of the direct slots, linear
 * probing, at most half full, deletion by backward shift with no deleted markers):
 * <pre>
 *   63                               32 31 30                             0
 *  +-----------------------------------+--+--------------------------------+
 *  | tag: the key hash's high 32 bits  |T | row + 1, or tombstone + 1 (T)  |   (low word 0: empty slot)
 *  +-----------------------------------+--+--------------------------------+
 * </pre>
 * The home slot is the tag's high log2(capacity) bits, so the backward shift finds every entry's home without
 * reading its row, and a probe dereferences a row (or a tombstone's key) only on a tag match.
 * <p>
 * <b>Row</b> ({@link #t}, {@link #STRIDE} longs = 64 bytes a row, base = row × 8 + {@link #ALIGN}):
 * <pre>
 *   +0 KEY    the step / work request key
 *   +1 FLOW   flow id (low 32; a live step's flow is live: an evicted flow's steps are dropped with it)
 *   +2 FLAGS  seen bits 0-5 (8, 20, 9, 10, 11, 12) | POSTED 6 | COMPLETED 7 | FIRST 8 | SEND 9
 *             | OCCUPIED 10 | host index 11-31 | (32-63 unused)
 *   +3 START  start time
 *   +4 TA     t8 (send) / t10 (recv)
 *   +5 TB     t20 (send) / t11 (recv)
 *   +6 TC     t9 (send) / t12 (recv)
 *   +7 BYTES  transSize / WR length
 * </pre>
 * <b>Tombstone</b> (slot i): {@link #tombKey}[i], {@link #tombStamp}[i] (last record time), {@link #tombHost}[i]
 * (host index, -1 when the slot is free); slots from their own LIFO free stack.
 * <p>
 * <b>Sweep</b>: each row's stamp is in {@link #stamp}, indexed by row: its start time, a lower bound of its
 * last record time (state records write only their own field; {@link #lastRecordNs} takes the later of both). The
 * sweep scans the slab's used prefix ({@link #highWater}: the LIFO keeps it near the peak of live entries, a few
 * hundred rows in the benchmark) and reads a row only when its stamp is older than the step timeout (a free
 * row's flags are 0: its stamp is stale); a stop hands its last record time to the tombstone. Tombstones:
 * {@link #tombStamp} over {@link #tombHighWater}, then {@link #tombHost}. A removal pushes the row (slot) and
 * clears its index slot; no other entry moves.
 */
final class StepTable {
    // Flag bit positions. WindowEngine's branch-free state path computes with them (see
    // WindowEngine#onProxyStepState): a seen bit's position is its field's index in WindowEngine's STATE_FIELD,
    // SEND_BIT shifted down to RECV_STATE_BIT makes the STATE_BITS index, and the two transSize states' bits are
    // shifted to bit 0. Checked where they are used (WindowEngine's static initializer) and in StepTableTest.
    static final int SEEN_8_BIT = 0;
    static final int SEEN_20_BIT = 1;
    static final int SEEN_9_BIT = 2;
    static final int SEEN_10_BIT = 3;
    static final int SEEN_11_BIT = 4;
    static final int SEEN_12_BIT = 5;
    static final int POSTED_BIT = 6;
    static final int COMPLETED_BIT = 7;
    static final int FIRST_BIT = 8;
    static final int SEND_BIT = 9;
    static final int OCCUPIED_BIT = 10;

    static final int SEEN_8 = 1 << SEEN_8_BIT;
    static final int SEEN_20 = 1 << SEEN_20_BIT;
    static final int SEEN_9 = 1 << SEEN_9_BIT;
    static final int SEEN_10 = 1 << SEEN_10_BIT;
    static final int SEEN_11 = 1 << SEEN_11_BIT;
    static final int SEEN_12 = 1 << SEEN_12_BIT;
    static final int SEEN_MASK = SEEN_8 | SEEN_20 | SEEN_9 | SEEN_10 | SEEN_11 | SEEN_12;
    static final long POSTED = 1L << POSTED_BIT;
    static final long COMPLETED = 1L << COMPLETED_BIT;
    /** The step is its op's first (step index 0): its wait is the op's entry wait ({@code FlowSummary#firstStepWaits}). */
    static final long FIRST = 1L << FIRST_BIT;

    static final long SEND = 1L << SEND_BIT;
    /** Set in every occupied row's flags. */
    static final long OCCUPIED = 1L << OCCUPIED_BIT;

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
    /**
     * Longs before row 0, so that every row is one cache line: a {@code long[]}'s elements start 16 bytes after
     * the array (header, compressed class pointers), and the row slab is large enough to be a humongous object
     * (G1: it starts a region, line-aligned), so row r at {@code 8r + 6} starts at byte 16 + 48 + 64r. Unpadded,
     * each row straddled two lines (TC and BYTES in the second) and most records touched both.
     */
    static final int ALIGN = 6;

    /** {@link #find} results other than a row base. */
    static final int ABSENT = -1;

    static final int BURIED = -2;

    private static final long TAG_MASK = 0xFFFF_FFFF_0000_0000L;
    /** The index entry's bit that marks a tombstone reference. */
    private static final long TOMB = 1L << 31;

    /** The rows. */
    final long[] t;

    private final long[] index;
    private final int mask;
    private final int directMask;
    /** 64 − log2(capacity): an entry's (or a hash's) home slot is its value {@code >>> shift}. */
    private final int shift;

    private final int maxEntries;
    /** Free rows, a LIFO stack: the most recently freed row (hot in cache) is reused first. */
    private final int[] free;

    private int freeCount;
    /** Each row's start, or the last record time a sweep found (stale for a free row); read in place by the sweep. */
    final long[] stamp;
    /** 1 + the highest row ever used: rows at and above it were never occupied. */
    private int highWater;
    /** Tombstones: key, last record time, host index (-1: free slot); read in place by the sweep. */
    final long[] tombKey;

    final long[] tombStamp;
    final int[] tombHost;
    private final int[] tombFree;
    private int tombFreeCount;
    private int tombHighWater;
    /** Live entries and tombstones. */
    private int count;
    /**
     * The direct slots: the reference (as an index entry's low word) of the entry whose key's low bits are the
     * slot, 0 when none. Keys numbered in start order (the plugin's record ids) are then neighbours here as in
     * time, so the slots a stream's live steps and fresh tombstones use share a few cache lines.
     */
    private final int[] direct;
    /** Per direct slot: how many entries of that slot are in {@link #index} (the overflow). */
    private final int[] spilled;
    /** Whether the last {@link #probeInsert} returned a direct slot (else an index slot and {@link #probedTag}). */
    private boolean probedDirect;
    /** The tag of the key of the last {@link #probeInsert}, for {@link #occupy} (no second hash). */
    private long probedTag;
    /** The slot of the last row that {@link #find} returned, for {@link #bury} (no second probe). */
    private int foundSlot;

    private boolean foundDirect;

    StepTable(final int maxSteps) {
        int capacity = 16;
        while (capacity < 2L * maxSteps) {
            capacity <<= 1;
        }
        index = new long[capacity];
        direct = new int[4 * capacity];
        spilled = new int[4 * capacity];
        directMask = 4 * capacity - 1;
        mask = capacity - 1;
        shift = 64 - Integer.numberOfTrailingZeros(capacity);
        maxEntries = maxSteps;
        final int rows = Math.max(1, maxSteps);
        t = new long[ALIGN + rows * STRIDE + (STRIDE - ALIGN)];
        free = new int[rows];
        tombFree = new int[rows];
        for (int r = 0; r < rows; r++) {
            free[r] = rows - 1 - r;
            tombFree[r] = rows - 1 - r;
        }
        freeCount = rows;
        tombFreeCount = rows;
        stamp = new long[rows];
        tombKey = new long[rows];
        tombStamp = new long[rows];
        tombHost = new int[rows];
        java.util.Arrays.fill(tombHost, -1);
    }

    private static long hash(final long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return h * 0xBF58476D1CE4E5B9L;
    }

    /**
     * The row base (index into {@link #t}) of the live entry {@code key}; {@link #BURIED} when {@code key} is a
     * tombstone, {@link #ABSENT} when it is neither.
     */
    int find(final long key) {
        final int s = (int) key & directMask;
        final int ref = direct[s];
        if (ref > 0) {
            final int b = base(ref - 1);
            if (t[b + KEY] == key) {
                foundSlot = s;
                foundDirect = true;
                return b;
            }
        } else if (ref < 0 && tombKey[(ref & Integer.MAX_VALUE) - 1] == key) {
            return BURIED;
        }
        return spilled[s] == 0 ? ABSENT : findSpilled(key);
    }

    private int findSpilled(final long key) {
        final long[] index = this.index;
        final long h = hash(key);
        final long tag = h & TAG_MASK;
        int i = (int) (h >>> shift);
        while (true) {
            final long e = index[i];
            if (e == 0) {
                return ABSENT;
            }
            if ((e & TAG_MASK) == tag) {
                final int ref = (int) e;
                if (ref >= 0) {
                    final int b = base(ref - 1);
                    if (t[b + KEY] == key) {
                        foundSlot = i;
                        foundDirect = false;
                        return b;
                    }
                } else if (tombKey[(ref & Integer.MAX_VALUE) - 1] == key) {
                    return BURIED;
                }
            }
            i = i + 1 & mask;
        }
    }

    /**
     * One probe for a new key: its (empty) index slot as a non-negative number, or -1 when the key is present
     * (live or a tombstone), or {@link Integer#MIN_VALUE} when the table holds maxSteps entries.
     */
    int probeInsert(final long key) {
        final int s = (int) key & directMask;
        final int ref = direct[s];
        if (ref != 0 && keyOf(ref) == key) {
            return -1;
        }
        if (ref == 0 && spilled[s] == 0) {
            probedDirect = true;
            return count == maxEntries ? Integer.MIN_VALUE : s;
        }
        // The key may be in the overflow (its direct slot's entries there), or it goes there: the slot is taken.
        final long[] index = this.index;
        final long h = hash(key);
        final long tag = h & TAG_MASK;
        int i = (int) (h >>> shift);
        while (true) {
            final long e = index[i];
            if (e == 0) {
                if (count == maxEntries) {
                    return Integer.MIN_VALUE;
                }
                probedDirect = ref == 0;
                probedTag = tag;
                return ref == 0 ? s : i;
            }
            if ((e & TAG_MASK) == tag && keyOf((int) e) == key) {
                return -1;
            }
            i = i + 1 & mask;
        }
    }

    /** The key of a non-zero reference (a direct slot, or an index entry's low word): its row's or its tombstone's. */
    private long keyOf(final int ref) {
        return ref > 0 ? t[base(ref - 1)] : tombKey[(ref & Integer.MAX_VALUE) - 1];
    }

    /**
     * Occupies the empty slot {@code slot}, direct or index (from the last {@link #probeInsert}, of the same key,
     * nothing inserted or removed in between) with a free row; the caller sets the rest of the fields. @return the
     * row base.
     */
    int occupy(
            final int slot, final long key, final int flowId, final long flags, final int hostId, final long startNs) {
        final long[] t = this.t;
        final int row = free[--freeCount];
        if (probedDirect) {
            direct[slot] = row + 1;
        } else {
            index[slot] = probedTag | row + 1;
            spilled[(int) key & directMask]++;
        }
        count++;
        if (row >= highWater) {
            highWater = row + 1;
        }
        stamp[row] = startNs;
        final int b = base(row);
        t[b + KEY] = key;
        t[b + FLOW] = flowId & 0xFFFF_FFFFL;
        t[b + FLAGS] = flags | OCCUPIED | ((long) hostId & HOST_MASK) << HOST_SHIFT;
        t[b + START] = startNs;
        t[b + TA] = 0;
        t[b + TB] = 0;
        t[b + TC] = 0;
        t[b + BYTES] = 0;
        return b;
    }

    /**
     * Turns the live entry of row base {@code b} (the last row {@link #find} returned, nothing inserted or removed
     * in between) into a tombstone of its key, host and last record time {@code lastNs}, and frees its row.
     */
    void bury(final int b, final long lastNs) {
        final int row = b >>> SHIFT;
        // A tombstone slot is always free: live entries + tombstones ≤ maxSteps, and each slab has maxSteps.
        final int tomb = tombFree[--tombFreeCount];
        if (tomb >= tombHighWater) {
            tombHighWater = tomb + 1;
        }
        tombKey[tomb] = t[b + KEY];
        tombStamp[tomb] = lastNs;
        tombHost[tomb] = hostId(t[b + FLAGS]);
        if (foundDirect) {
            direct[foundSlot] = (int) TOMB | tomb + 1;
        } else {
            index[foundSlot] = index[foundSlot] & TAG_MASK | TOMB | tomb + 1;
        }
        t[b + FLAGS] = 0;
        free[freeCount++] = row;
    }

    /** The base (index of its first long in {@link #t}) of row {@code row}; {@code b >>> SHIFT} is the row again. */
    static int base(final int row) {
        return (row << SHIFT) + ALIGN;
    }

    static int hostId(final long flags) {
        return (int) (flags >>> HOST_SHIFT & HOST_MASK);
    }

    static int flowId(final long flow) {
        return (int) flow;
    }

    int count() {
        return count;
    }

    /** Rows {@code [0, highWater())} are all that were ever occupied. */
    int highWater() {
        return highWater;
    }

    /** Tombstone slots {@code [0, tombHighWater())} are all that were ever used. */
    int tombHighWater() {
        return tombHighWater;
    }

    /**
     * The last record time of the live entry at row base {@code b}: the later of its start and the times of the
     * states it has seen (a state record writes its time into its field, 8 / 10 TA, 20 / 11 TB, 9 / 12 TC, and
     * leaves the stamp alone). Signed differences, as every time comparison of the engine.
     */
    long lastRecordNs(final int b) {
        // The start, not the stamp: the row's line is at hand, and the stamp (start, or an earlier sweep's
        // lastRecordNs) is never later than start and state times.
        long last = t[b + START];
        final long flags = t[b + FLAGS];
        if ((flags & (SEEN_8 | SEEN_10)) != 0 && t[b + TA] - last > 0) {
            last = t[b + TA];
        }
        if ((flags & (SEEN_20 | SEEN_11)) != 0 && t[b + TB] - last > 0) {
            last = t[b + TB];
        }
        if ((flags & (SEEN_9 | SEEN_12)) != 0 && t[b + TC] - last > 0) {
            last = t[b + TC];
        }
        return last;
    }

    /** Removes the live entry of row base {@code b}: its row back on the free stack, backward shift in the index. */
    void remove(final int b) {
        count--;
        final int row = b >>> SHIFT;
        free[freeCount++] = row;
        unref(t[b + KEY], row + 1);
        t[b + FLAGS] = 0;
    }

    /** Removes tombstone {@code tomb}: its slot back on the free stack, backward shift in the index. */
    void removeTomb(final int tomb) {
        count--;
        tombHost[tomb] = -1;
        tombFree[tombFreeCount++] = tomb;
        unref(tombKey[tomb], (int) TOMB | tomb + 1);
    }

    /** Clears the slot of {@code key}, whose reference is {@code ref}: its direct slot or its overflow slot. */
    private void unref(final long key, final int ref) {
        final int s = (int) key & directMask;
        if (direct[s] == ref) {
            direct[s] = 0;
            return;
        }
        spilled[s]--;
        unindex(key, ref & 0xFFFF_FFFFL);
    }

    /** Clears the index slot of {@code key} (low word {@code ref}) and shifts back the entries of its chain. */
    private void unindex(final long key, final long ref) {
        final long[] index = this.index;
        int hole = (int) (hash(key) >>> shift);
        while ((index[hole] & 0xFFFF_FFFFL) != ref) {
            hole = hole + 1 & mask;
        }
        int j = hole;
        while (true) {
            j = j + 1 & mask;
            final long e = index[j];
            if (e == 0) {
                break;
            }
            final int k = (int) (e >>> shift);
            // The entry at j may move to the hole unless its home lies cyclically in (hole, j].
            final boolean stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
            if (!stays) {
                index[hole] = e;
                hole = j;
            }
        }
        index[hole] = 0;
    }
}
