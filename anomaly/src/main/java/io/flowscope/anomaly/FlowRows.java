package io.flowscope.anomaly;

import java.util.Arrays;

/**
 * The wait-state detector's per-link accumulators: one row of 4 longs (half a cache line) per link summary (the
 * window engine's LINK aggregate of a rank's step flows to or from one peer), in one array; found per summary by
 * position: the window engine emits a host's aggregates in the same order every period, so each host keeps the row
 * of each position ({@link Cursor}) and a summary costs one comparison with its row's key, then four additions into
 * that row. A miss (a new link, a changed order) looks the key up ({@link WaitStateDetector}) and relearns the
 * position. Kept small: the row array shares the core's caches with the anomaly engine's own tables.
 * <pre>
 *   row r, base r * 4:  KEY_STEPS | NETWORK_NS | BYTES | FIRST
 *   KEY_STEPS = low 32 bits of the flow key << 32 | network steps (32 bits)
 *   FIRST     = first steps (16 bits) << 48 | their summed wait, ns (48 bits: 78 hours)
 * </pre>
 * Each row's communicator, link and direction are in {@link #meta}, its rank in {@link #rank}: read only when a
 * window ends. The sums are since the communicator's last window end ({@link CommWaits#fold}).
 */
final class FlowRows {
    static final int KEY_STEPS = 0;
    static final int NETWORK_NS = 1;
    static final int BYTES = 2;
    static final int FIRST = 3;
    static final int STRIDE = 4;
    static final long FIRST_ONE = 1L << 48;
    static final long FIRST_WAIT_MASK = FIRST_ONE - 1;
    static final long STEPS_MASK = 0xFFFF_FFFFL;

    /** A host's summary positions of the current period and their rows. */
    static final class Cursor {
        final long hostId;
        long periodEndNs = Long.MIN_VALUE;
        /** The host's latest time: its latest period end or {@code advanceTo}. */
        long latestNs = Long.MIN_VALUE;

        int position;
        int[] rowAt = new int[64];
        int positions;
        /** The communicators this host reports links of (indexes): the ones its periods close windows of. */
        final org.agrona.collections.IntArrayList comms = new org.agrona.collections.IntArrayList();

        Cursor(final long hostId) {
            this.hostId = hostId;
        }

        void advance(final long timeNs) {
            if (latestNs == Long.MIN_VALUE || timeNs - latestNs > 0) {
                latestNs = timeNs;
            }
        }

        /** Notes that this host reports links of communicator {@code comm}. */
        void reports(final int comm) {
            if (!comms.containsInt(comm)) {
                comms.addInt(comm);
            }
        }

        /** The row learnt for the current position, or -1. */
        int row() {
            return position < positions ? rowAt[position] : -1;
        }

        /**
         * Its times, its communicators and its positions' rows: the rows are more than a cache, since a row is
         * matched by the low 32 bits of its flow key only (two flows alike there would meet another row).
         */
        void writeTo(final CheckpointOut out) {
            out.writeLong(hostId);
            out.writeLong(periodEndNs);
            out.writeLong(latestNs);
            out.writeInt(position);
            out.writeInt(positions);
            for (int i = 0; i < positions; i++) {
                out.writeInt(rowAt[i]);
            }
            out.writeInt(comms.size());
            for (int i = 0; i < comms.size(); i++) {
                out.writeInt(comms.getInt(i));
            }
        }

        static Cursor readFrom(final CheckpointIn in, final int rows, final int commCount) {
            final Cursor h = new Cursor(in.readLong());
            h.periodEndNs = in.readLong();
            h.latestNs = in.readLong();
            h.position = in.readInt();
            CheckpointIn.check(h.position >= 0, "a cursor at position " + h.position);
            h.positions = in.readCount();
            h.rowAt = new int[Math.max(64, h.positions)];
            for (int i = 0; i < h.positions; i++) {
                final int row = in.readInt();
                CheckpointIn.check(row >= -1 && row < rows, "a cursor's row " + row + " of " + rows);
                h.rowAt[i] = row;
            }
            final int n = in.readCount();
            for (int i = 0; i < n; i++) {
                h.comms.addInt(in.readIndex(commCount));
            }
            return h;
        }

        void learn(final int row) {
            if (position >= rowAt.length) {
                rowAt = Arrays.copyOf(rowAt, Math.max(position + 1, rowAt.length * 2));
            }
            if (position >= positions) {
                Arrays.fill(rowAt, positions, position, -1);
                positions = position + 1;
            }
            rowAt[position] = row;
        }
    }

    long[] t = new long[64 * STRIDE];
    long[] meta = new long[64];
    int[] rank = new int[64];
    int rows;

    static int base(final int row) {
        return row * STRIDE;
    }

    /** The part of a flow key a row keeps (with its steps in the same long). */
    static long keyBits(final long flowKey) {
        return flowKey << 32;
    }

    static boolean keyMatches(final long keySteps, final long flowKey) {
        return (keySteps ^ flowKey << 32) >>> 32 == 0;
    }

    static long meta(final int comm, final int link, final boolean isSend) {
        return (long) comm << 32 | (long) link << 1 | (isSend ? 1 : 0);
    }

    static int link(final long meta) {
        return (int) meta >>> 1;
    }

    static boolean isSend(final long meta) {
        return (meta & 1) != 0;
    }

    static long steps(final long[] t, final int b) {
        return t[b + KEY_STEPS] & STEPS_MASK;
    }

    static long firstSteps(final long[] t, final int b) {
        return t[b + FIRST] >>> 48;
    }

    static long firstWaitNs(final long[] t, final int b) {
        return t[b + FIRST] & FIRST_WAIT_MASK;
    }

    int add(final long flowKey, final long meta, final int rank) {
        if ((rows + 1) * STRIDE > t.length) {
            t = Arrays.copyOf(t, t.length * 2);
        }
        if (rows == this.meta.length) {
            this.meta = Arrays.copyOf(this.meta, rows * 2);
            this.rank = Arrays.copyOf(this.rank, rows * 2);
        }
        final int b = base(rows);
        t[b + KEY_STEPS] = keyBits(flowKey);
        this.meta[rows] = meta;
        this.rank[rows] = rank;
        clearSums(t, b);
        return rows++;
    }

    static void clearSums(final long[] t, final int b) {
        t[b + KEY_STEPS] &= ~STEPS_MASK;
        t[b + NETWORK_NS] = 0;
        t[b + BYTES] = 0;
        t[b + FIRST] = 0;
    }

    /**
     * Every row: its full flow key ({@code keys}, by row: the row keeps its low 32 bits only), its sums, its
     * communicator, link and direction, its rank. The steps are written as what the key's bits leave of the first
     * long, so that the row reads back bit for bit.
     */
    void writeTo(final CheckpointOut out, final long[] keys) {
        out.writeInt(rows);
        for (int r = 0; r < rows; r++) {
            final int b = base(r);
            out.writeLong(keys[r]);
            out.writeLong(t[b + KEY_STEPS] - keyBits(keys[r]));
            out.writeLong(t[b + NETWORK_NS]);
            out.writeLong(t[b + BYTES]);
            out.writeLong(t[b + FIRST]);
            out.writeLong(meta[r]);
            out.writeInt(rank[r]);
        }
    }

    /** Into fresh rows; returns each row's full flow key. */
    long[] readFrom(final CheckpointIn in) {
        final int n = in.readCount();
        final long[] keys = new long[n];
        for (int r = 0; r < n; r++) {
            keys[r] = in.readLong();
            final int row = add(keys[r], 0, 0);
            final int b = base(row);
            t[b + KEY_STEPS] += in.readLong();
            t[b + NETWORK_NS] = in.readLong();
            t[b + BYTES] = in.readLong();
            t[b + FIRST] = in.readLong();
            meta[row] = in.readLong();
            rank[row] = in.readInt();
        }
        return keys;
    }
}
