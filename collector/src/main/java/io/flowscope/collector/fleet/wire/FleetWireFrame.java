package io.flowscope.collector.fleet.wire;

import static io.flowscope.collector.fleet.wire.WireSchema.*;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Many summary records of one agent and one partition in one Kafka record (template {@value
 * WireSchema#FRAME_TEMPLATE_ID}, layout in {@link WireSchema}): Kafka's producer, broker and Streams each pay per
 * record, and a 16,384-GPU cluster sends millions of summaries a second (docs/fleet-wire.md, "Frames"). The records
 * inside are those {@link FleetWireEncoder} writes, unchanged, each with its own sequence number, so a reader
 * applies them one by one as if they had come alone. One writer per publishing thread and partition; it reuses its
 * buffer, and {@link #take} is the one allocation a frame needs (the exact-length array Kafka's serializer takes).
 */
public final class FleetWireFrame {
    private static final int FIRST_ENTRY = HEADER_LENGTH + FRAME_BLOCK_LENGTH_V1;

    private final FleetWireEncoder encoder;
    private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(16 * 1024);
    private int length = FIRST_ENTRY;
    private int count;

    public FleetWireFrame(final FleetWireEncoder encoder) {
        this.encoder = encoder;
    }

    /** Appends a flow summary's record. */
    public void addFlow(final long seq, final FlowSummary s, final String hostName) {
        entry(encoder.encodeFlow(buffer, length + FRAME_ENTRY_LENGTH_LENGTH, seq, s, hostName));
    }

    /** Appends a collective summary's record. */
    public void addCollective(final long seq, final CollectiveSummary s) {
        entry(encoder.encodeCollective(buffer, length + FRAME_ENTRY_LENGTH_LENGTH, seq, s));
    }

    /** The record of {@code n} bytes just encoded after the next entry's length field: its length, and on. */
    private void entry(final int n) {
        buffer.putInt(length, n, ORDER);
        length += FRAME_ENTRY_LENGTH_LENGTH + n;
        count++;
    }

    /** Records in the frame. */
    public int count() {
        return count;
    }

    /** The frame's length in bytes as it stands. */
    public int length() {
        return length;
    }

    /** The frame (header, count, entries) as an exact-length array; the writer starts a new one. */
    public byte[] take() {
        buffer.putShort(BLOCK_LENGTH_OFFSET, (short) FRAME_BLOCK_LENGTH_V1, ORDER);
        buffer.putShort(TEMPLATE_ID_OFFSET, (short) FRAME_TEMPLATE_ID, ORDER);
        buffer.putShort(SCHEMA_ID_OFFSET, (short) SCHEMA_ID, ORDER);
        buffer.putShort(VERSION_OFFSET, (short) VERSION, ORDER);
        buffer.putInt(HEADER_LENGTH + FRAME_COUNT, count, ORDER);
        final byte[] out = new byte[length];
        buffer.getBytes(0, out);
        length = FIRST_ENTRY;
        count = 0;
        return out;
    }

    /**
     * Walks a frame's records: {@link #wrap}, then {@link #next} until false, each record at {@link #offset} of
     * {@link #buffer} for {@link #length} bytes ({@link FleetWireDecoder#wrap(DirectBuffer, int, int)}). Reuses
     * itself; allocates nothing. A frame whose count or entry lengths do not fit its bytes throws at the entry
     * that does not fit: the records before it have been handed out.
     */
    public static final class Reader {
        private final UnsafeBuffer frame = new UnsafeBuffer(0, 0);
        private int size;
        private int remaining;
        private int count;
        private int next;
        private int offset;
        private int length;

        /** Wraps a frame's value; returns its record count. */
        public int wrap(final byte[] value) {
            if (!isFrame(value)) {
                throw new WireFormatException("fleet wire: not a frame");
            }
            frame.wrap(value);
            size = value.length;
            final int blockLength = frame.getShort(BLOCK_LENGTH_OFFSET, ORDER) & 0xFFFF;
            if (blockLength < FRAME_BLOCK_LENGTH_V1 || HEADER_LENGTH + blockLength > size) {
                throw new WireFormatException("fleet wire: frame of " + size + " bytes with a block of " + blockLength
                        + " (at least " + FRAME_BLOCK_LENGTH_V1 + "); frame skipped");
            }
            count = frame.getInt(HEADER_LENGTH + FRAME_COUNT, ORDER);
            if (count < 0) {
                throw new WireFormatException("fleet wire: frame with a count of " + count + "; frame skipped");
            }
            remaining = count;
            next = HEADER_LENGTH + blockLength;
            return count;
        }

        /** Moves to the next record; false after the last. */
        public boolean next() {
            if (remaining == 0) {
                return false;
            }
            final int at = next + FRAME_ENTRY_LENGTH_LENGTH;
            final int n = at <= size ? frame.getInt(next, ORDER) : -1;
            if (n < HEADER_LENGTH || at + n > size) {
                throw new WireFormatException("fleet wire: frame of " + size + " bytes: record "
                        + (count - remaining + 1) + " of " + count + " does not fit (length " + n + " at byte "
                        + next + "); the frame's rest skipped");
            }
            offset = at;
            length = n;
            next = at + n;
            remaining--;
            return true;
        }

        public DirectBuffer buffer() {
            return frame;
        }

        public int offset() {
            return offset;
        }

        public int length() {
            return length;
        }
    }
}
