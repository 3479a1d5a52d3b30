package io.flowscope.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.SplittableRandom;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class RecordChecksumTest {
    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);
    private static final long[] M = {
        RecordChecksum.M0,
        RecordChecksum.M1,
        RecordChecksum.M2,
        RecordChecksum.M3,
        RecordChecksum.M4,
        RecordChecksum.M5,
        RecordChecksum.M6,
        RecordChecksum.M7
    };

    /** RING.md's formula with arbitrary-precision arithmetic, reduced mod 2^64 at the end. */
    private static long reference(final long pos, final long[] w) {
        BigInteger h = unsigned(pos).multiply(unsigned(M[0]));
        for (int i = 1; i <= 7; i++) {
            final long word = i == 1 ? w[0] & 0xFFFF_FFFFL : w[i - 1];
            h = h.add(unsigned(word).multiply(unsigned(M[i])));
        }
        final long h64 = h.mod(TWO_64).longValue();
        return (h64 ^ (h64 >>> 32)) & 0xFFFF_FFFFL;
    }

    private static BigInteger unsigned(final long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }

    @Test
    void matchesRingMdFormulaComputedWithArbitraryPrecision() {
        final SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 1000; i++) {
            final long pos = random.nextLong();
            final long[] w = new long[7];
            for (int j = 0; j < 7; j++) {
                w[j] = random.nextLong();
            }

            final int checksum = RecordChecksum.compute(pos, w[0], w[1], w[2], w[3], w[4], w[5], w[6]);

            assertThat(checksum & 0xFFFF_FFFFL).isEqualTo(reference(pos, w));
        }
    }

    @Test
    void ignoresTheChecksumBytesThemselves() {
        final UnsafeBuffer record = new UnsafeBuffer(new byte[64]);
        record.putLong(16, 123456789L);
        final int before = RecordChecksum.compute(record, 0, 7);

        record.putInt(RecordLayout.CHECKSUM_OFFSET, before);

        assertThat(RecordChecksum.compute(record, 0, 7)).isEqualTo(before);
        assertThat(RecordChecksum.isValid(record, 0, 7)).isTrue();
        assertThat(RecordChecksum.isValid(record, 0, 7 + 1024)).isFalse();
    }

    @Test
    void changesWhenAnySingleWordOrThePositionChanges() {
        final SplittableRandom random = new SplittableRandom(7);
        final UnsafeBuffer record = new UnsafeBuffer(new byte[64]);
        for (int offset = 8; offset < 64; offset += 8) {
            record.putLong(offset, random.nextLong());
        }
        final int base = RecordChecksum.compute(record, 0, 100);
        assertThat(RecordChecksum.compute(record, 0, 101)).isNotEqualTo(base);
        for (int byteOffset = 8; byteOffset < 64; byteOffset++) {
            if (byteOffset >= 12 && byteOffset < 16) {
                continue;
            }
            final byte old = record.getByte(byteOffset);
            record.putByte(byteOffset, (byte) (old ^ 0x01));
            assertThat(RecordChecksum.compute(record, 0, 100))
                    .as("flip at byte %d", byteOffset)
                    .isNotEqualTo(base);
            record.putByte(byteOffset, old);
        }
    }
}
