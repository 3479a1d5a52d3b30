package io.flowscope.anomaly;

/**
 * Sliding-window sums of many owners (the links, ranks or NICs of a table, by dense index) in one flat array,
 * laid out block by block: block 0 holds every owner's sums, block 1 + j every owner's slot j of its ring (a slot
 * holds every series' value of one push). Within a block owner {@code o}'s {@code series} values lie at
 * {@code o * series}:
 * <pre>
 *   [ sums: owner 0 | owner 1 | … ][ slot 0: owner 0 | owner 1 | … ] … [ slot window − 1: owner 0 | … ]
 * </pre>
 * Owners created one after another (a host's links or NICs) lie side by side in every block, and they push
 * together (their host's period end), so that a push of all of them touches their sums and one slot each in two
 * short runs of adjacent cache lines (with a row of its own per owner, sums then slots, every owner's push
 * touched two or three lines of its own). Allocates only when the table grows (the blocks are re-laid for the new capacity).
 */
final class RingTable {
    private final int series;
    private final int window;
    /** Owners the blocks have room for, and the length of a block (capacity × series). */
    private int capacity;

    private int block;
    /** The end of the last block, and the span of the slot blocks (window × block): where a ring wraps. */
    private int end;

    private int span;
    private long[] data;
    /** Per owner: the start (in {@link #data}) of its slot under way, and how many pushes its ring holds. */
    private int[] slot;

    private int[] filled;

    RingTable(final int series, final int window, final int capacity) {
        this.series = series;
        this.window = window;
        this.capacity = capacity;
        block = capacity * series;
        end = block * (window + 1);
        span = block * window;
        data = new long[end];
        slot = new int[capacity];
        filled = new int[capacity];
    }

    /** Makes room for owner {@code o} (owners are added in index order). */
    void add(final int o) {
        if (o >= capacity) {
            grow(Math.max(o + 1, capacity * 2));
        }
        slot[o] = block + o * series;
    }

    private void grow(final int n) {
        final int nblock = n * series;
        data = widenBlocks(data, window + 1, block, nblock);
        slot = widenSlots(slot, n, capacity, block, nblock, series);
        filled = java.util.Arrays.copyOf(filled, n);
        capacity = n;
        block = nblock;
        end = nblock * (window + 1);
        span = nblock * window;
    }

    /** A slot-major array of {@code blocks} blocks of {@code block} longs, each widened to {@code nblock} longs. */
    static long[] widenBlocks(final long[] data, final int blocks, final int block, final int nblock) {
        final long[] d = new long[nblock * blocks];
        for (int b = 0; b < blocks; b++) {
            System.arraycopy(data, b * block, d, b * nblock, block);
        }
        return d;
    }

    /**
     * The slot offsets of the first {@code owners} owners after {@link #widenBlocks}: same block, same place in it;
     * room for {@code n} owners.
     */
    static int[] widenSlots(
            final int[] slot, final int n, final int owners, final int block, final int nblock, final int series) {
        final int[] s = java.util.Arrays.copyOf(slot, n);
        for (int o = 0; o < owners; o++) {
            s[o] = slot[o] / block * nblock + o * series;
        }
        return s;
    }

    /** Where owner {@code o}'s slot under way starts: pass it to {@link #set} for every series of the push. */
    int slot(final int o) {
        return slot[o];
    }

    /** The value of series {@code k} of owner {@code o} for the push under way at {@code slot}. */
    void set(final int o, final int slot, final int k, final long v) {
        final int s = o * series + k;
        final int i = slot + k;
        data[s] += v - data[i];
        data[i] = v;
    }

    /**
     * The push under way at {@code slot} of owner {@code o} for series 0 … {@code n} − 1 at once: their values
     * from {@code src[from …]}, which are cleared (a period's accumulators), their window sums kept. The same as
     * {@link #set} per series, with the offsets computed once.
     */
    void setAll(final int o, final int slot, final long[] src, final int from, final int n) {
        final long[] d = data;
        final int s = o * series;
        for (int k = 0; k < n; k++) {
            final long v = src[from + k];
            d[s + k] += v - d[slot + k];
            d[slot + k] = v;
            src[from + k] = 0;
        }
    }

    /**
     * Like {@link #set}, for a series whose window maximum is wanted rather than its sum: returns the value the
     * push replaces (so that the owner can keep its maximum without rescanning the ring on every push).
     */
    long replace(final int slot, final int k, final long v) {
        final int i = slot + k;
        final long old = data[i];
        data[i] = v;
        return old;
    }

    /** Ends owner {@code o}'s push. */
    void advance(final int o) {
        final int next = slot[o] + block;
        slot[o] = next >= end ? next - span : next;
        if (filled[o] < window) {
            filled[o]++;
        }
    }

    long sum(final int o, final int k) {
        return data[o * series + k];
    }

    /** The largest value of series {@code k} of owner {@code o} over its ring (slots never pushed hold 0), ≥ 0. */
    long max(final int o, final int k) {
        long m = 0;
        for (int i = block + o * series + k; i < end; i += block) {
            m = Math.max(m, data[i]);
        }
        return m;
    }

    int filled(final int o) {
        return filled[o];
    }

    /** The latest value of series {@code k} of owner {@code o}, or 0. */
    long latest(final int o, final int k) {
        if (filled[o] == 0) {
            return 0;
        }
        final int prev = slot[o] - block;
        final int i = prev < block ? prev + span : prev;
        return data[i + k];
    }

    /**
     * Owners 0 … {@code owners} − 1: per owner its slot under way (as a slot number), its fill and every slot's
     * values. The sums are not written: they are the sums of the slots (every push keeps them so).
     */
    void writeTo(final CheckpointOut out, final int owners) {
        for (int o = 0; o < owners; o++) {
            out.writeInt((slot[o] - block - o * series) / block);
            out.writeInt(filled[o]);
            for (int j = 0; j < window; j++) {
                final int at = block * (1 + j) + o * series;
                for (int k = 0; k < series; k++) {
                    out.writeLong(data[at + k]);
                }
            }
        }
    }

    /** What {@link #writeTo} wrote, into owners already {@link #add added}. */
    void readFrom(final CheckpointIn in, final int owners) {
        for (int o = 0; o < owners; o++) {
            slot[o] = block * (1 + in.readIndex(window)) + o * series;
            final int f = in.readInt();
            CheckpointIn.check(f >= 0 && f <= window, "a window filled " + f + " of " + window);
            filled[o] = f;
            for (int k = 0; k < series; k++) {
                data[o * series + k] = 0;
            }
            for (int j = 0; j < window; j++) {
                final int at = block * (1 + j) + o * series;
                for (int k = 0; k < series; k++) {
                    final long v = in.readLong();
                    data[at + k] = v;
                    data[o * series + k] += v;
                }
            }
        }
    }
}
