package io.flowscope.anomaly;

/**
 * The last {@code window} periods' values of a few series per owner (by dense index), in one flat array,
 * accumulated in place: a period's first summary opens the next slot (clearing it) and every summary adds into
 * it, so that a period end has nothing to push. No running sums are kept: for series read only as evidence,
 * when an anomaly is published, a scan of the ring on that rare read is cheaper than maintaining a sum on every
 * period. Slots never written hold 0, so a scan equals the sum or maximum of the periods written.
 * <p>
 * Laid out block by block, block j holding every owner's slot j (owner {@code o}'s {@code series} values at
 * {@code o * series} in it):
 * <pre>
 *   [ slot 0: owner 0 | owner 1 | … ][ slot 1: owner 0 | owner 1 | … ] … [ slot window − 1: … ]
 * </pre>
 * Owners created one after another (a host's ranks) lie side by side in every block and open their slots
 * together (their host's period), so that a period's slots of them share cache lines. Allocates only when the
 * table grows (the blocks are re-laid for the new capacity).
 */
final class PeriodRing {
    private final int series;
    private final int window;
    /** Owners the blocks have room for, and the length of a block (capacity × series). */
    private int capacity;

    private int block;
    /** The end of the last block (window × block): where a ring wraps. */
    private int end;

    private long[] data;
    /** Per owner: the start (in {@link #data}) of its current slot (the period being accumulated, else the last one). */
    private int[] slot;

    PeriodRing(final int series, final int window, final int capacity) {
        this.series = series;
        this.window = window;
        this.capacity = capacity;
        block = capacity * series;
        end = block * window;
        data = new long[end];
        slot = new int[capacity];
    }

    /** Makes room for owner {@code o} (owners are added in index order). */
    void add(final int o) {
        if (o >= capacity) {
            grow(Math.max(o + 1, capacity * 2));
        }
        // The last slot, so that the first period opens slot 0.
        slot[o] = (window - 1) * block + o * series;
    }

    private void grow(final int n) {
        final int nblock = n * series;
        data = RingTable.widenBlocks(data, window, block, nblock);
        slot = RingTable.widenSlots(slot, n, capacity, block, nblock, series);
        capacity = n;
        block = nblock;
        end = nblock * window;
    }

    /**
     * Starts owner {@code o}'s next period: its oldest slot is cleared and becomes the current one. {@code series}
     * is the table's series count, passed by the caller as a constant: the clearing loop then unrolls into as many
     * stores (over the field, C2 compiled a general loop of a few iterations: some 27 instructions an open).
     */
    void open(final int o, final int series) {
        assert series == this.series;
        final int next = slot[o] + block;
        final int s = next >= end ? next - end : next;
        slot[o] = s;
        for (int k = 0; k < series; k++) {
            data[s + k] = 0;
        }
    }

    /** Where owner {@code o}'s current slot starts (for {@link #add(int, int, long)} and {@link #max}). */
    int current(final int o) {
        return slot[o];
    }

    void add(final int at, final int k, final long v) {
        data[at + k] += v;
    }

    void max(final int at, final int k, final long v) {
        final int i = at + k;
        data[i] = Math.max(data[i], v);
    }

    /** The sum of series {@code k} of owner {@code o} over its ring. */
    long sum(final int o, final int k) {
        long s = 0;
        for (int i = o * series + k; i < end; i += block) {
            s += data[i];
        }
        return s;
    }

    /** The largest value of series {@code k} of owner {@code o} over its ring, ≥ 0. */
    long max(final int o, final int k) {
        long m = 0;
        for (int i = o * series + k; i < end; i += block) {
            m = Math.max(m, data[i]);
        }
        return m;
    }

    /** Owners 0 … {@code owners} − 1: per owner its current slot (as a slot number) and every slot's values. */
    void writeTo(final CheckpointOut out, final int owners) {
        for (int o = 0; o < owners; o++) {
            out.writeInt((slot[o] - o * series) / block);
            for (int j = 0; j < window; j++) {
                final int at = block * j + o * series;
                for (int k = 0; k < series; k++) {
                    out.writeLong(data[at + k]);
                }
            }
        }
    }

    /** What {@link #writeTo} wrote, into owners already {@link #add added}. */
    void readFrom(final CheckpointIn in, final int owners) {
        for (int o = 0; o < owners; o++) {
            slot[o] = block * in.readIndex(window) + o * series;
            for (int j = 0; j < window; j++) {
                final int at = block * j + o * series;
                for (int k = 0; k < series; k++) {
                    data[at + k] = in.readLong();
                }
            }
        }
    }
}
