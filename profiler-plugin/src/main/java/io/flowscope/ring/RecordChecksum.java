package io.flowscope.ring;

import org.agrona.DirectBuffer;

/**
 * The record checksum of {@code RING.md}: words {@code w1..w7} are bytes 8..63 of the record as seven
 * little-endian u64, with the checksum bytes (12..15, the high half of {@code w1}) taken as zero;
 * {@code pos} is the record's position in its lane.
 *
 * <pre>
 * h = pos*M0 + w1*M1 + w2*M2 + w3*M3 + w4*M4 + w5*M5 + w6*M6 + w7*M7   (mod 2^64)
 * checksum = (u32)(h ^ (h &gt;&gt; 32))
 * </pre>
 */
public final class RecordChecksum {
    public static final long M0 = 0x9E3779B97F4A7C15L;
    public static final long M1 = 0xC2B2AE3D27D4EB4FL;
    public static final long M2 = 0x165667B19E3779F9L;
    public static final long M3 = 0xD6E8FEB86659FD93L;
    public static final long M4 = 0xFF51AFD7ED558CCDL;
    public static final long M5 = 0xC4CEB9FE1A85EC53L;
    public static final long M6 = 0x94D049BB133111EBL;
    public static final long M7 = 0xBF58476D1CE4E5B9L;

    private static final long W1_MASK = 0xFFFF_FFFFL;

    private RecordChecksum() {}

    /**
     * @param w1 bytes 8..15 as a little-endian u64; its high half (the checksum) is ignored.
     * @return the checksum as an unsigned 32-bit value in an int.
     */
    public static int compute(
            final long pos,
            final long w1,
            final long w2,
            final long w3,
            final long w4,
            final long w5,
            final long w6,
            final long w7) {
        final long h = pos * M0 + (w1 & W1_MASK) * M1 + w2 * M2 + w3 * M3 + w4 * M4 + w5 * M5 + w6 * M6 + w7 * M7;
        return (int) (h ^ (h >>> 32));
    }

    /** The checksum of the record at {@code recordOffset} in {@code buffer} for position {@code pos} in its lane. */
    public static int compute(final DirectBuffer buffer, final int recordOffset, final long pos) {
        return compute(
                pos,
                buffer.getLong(recordOffset + 8),
                buffer.getLong(recordOffset + 16),
                buffer.getLong(recordOffset + 24),
                buffer.getLong(recordOffset + 32),
                buffer.getLong(recordOffset + 40),
                buffer.getLong(recordOffset + 48),
                buffer.getLong(recordOffset + 56));
    }

    /** True when the checksum stored in the record matches its bytes and {@code pos}. */
    public static boolean isValid(final DirectBuffer buffer, final int recordOffset, final long pos) {
        return buffer.getInt(recordOffset + RecordLayout.CHECKSUM_OFFSET) == compute(buffer, recordOffset, pos);
    }
}
