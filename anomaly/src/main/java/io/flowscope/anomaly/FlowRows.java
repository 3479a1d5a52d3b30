package io.flowscope.anomaly;

import java.util.Arrays;

/**
 * The wait-state detector's per-flow accumulators, one row of 8 longs (a cache line's worth) per step flow, in one
 * array; found per summary by position: the window engine emits a host's flows in the same order every period, so
 * each host keeps the row of each position ({@link Cursor}) and a summary costs one comparison of its flow key with
 * its row's, then a few additions into that row. A miss (a new flow, a changed order) looks the key up
 * ({@link WaitStateDetector}) and relearns the position.
 * <pre>
 *   row r, base r * 8:  KEY | META | RANK | SEND_STEPS | SEND_NETWORK_NS | SEND_BYTES | FIRST_STEPS | FIRST_WAIT_NS
 *   META = communicator index << 32 | link index << 1 | isSend
 * </pre>
 * The sums are since the communicator's last window end ({@link CommWaits#fold}).
 */
final class FlowRows
{
    static final int KEY = 0;
    static final int META = 1;
    static final int RANK = 2;
    static final int SEND_STEPS = 3;
    static final int SEND_NETWORK_NS = 4;
    static final int SEND_BYTES = 5;
    static final int FIRST_STEPS = 6;
    static final int FIRST_WAIT_NS = 7;
    static final int STRIDE = 8;

    /** A host's summary positions of the current period and their rows. */
    static final class Cursor
    {
        final long hostId;
        long periodEndNs = Long.MIN_VALUE;
        int position;
        int[] rowAt = new int[64];
        int positions;

        Cursor(final long hostId)
        {
            this.hostId = hostId;
        }

        /** The row learnt for the current position, or -1. */
        int row()
        {
            return position < positions ? rowAt[position] : -1;
        }

        void learn(final int row)
        {
            if (position >= rowAt.length)
            {
                rowAt = Arrays.copyOf(rowAt, Math.max(position + 1, rowAt.length * 2));
            }
            if (position >= positions)
            {
                Arrays.fill(rowAt, positions, position, -1);
                positions = position + 1;
            }
            rowAt[position] = row;
        }
    }

    long[] t = new long[64 * STRIDE];
    int rows;

    static int base(final int row)
    {
        return row * STRIDE;
    }

    static long meta(final int comm, final int link, final boolean isSend)
    {
        return (long)comm << 32 | (long)link << 1 | (isSend ? 1 : 0);
    }

    static int comm(final long meta)
    {
        return (int)(meta >>> 32);
    }

    static int link(final long meta)
    {
        return (int)meta >>> 1;
    }

    static boolean isSend(final long meta)
    {
        return (meta & 1) != 0;
    }

    int add(final long key, final long meta, final int rank)
    {
        if ((rows + 1) * STRIDE > t.length)
        {
            t = Arrays.copyOf(t, t.length * 2);
        }
        final int b = base(rows);
        t[b + KEY] = key;
        t[b + META] = meta;
        t[b + RANK] = rank;
        clearSums(t, b);
        return rows++;
    }

    static void clearSums(final long[] t, final int b)
    {
        t[b + SEND_STEPS] = 0;
        t[b + SEND_NETWORK_NS] = 0;
        t[b + SEND_BYTES] = 0;
        t[b + FIRST_STEPS] = 0;
        t[b + FIRST_WAIT_NS] = 0;
    }
}
