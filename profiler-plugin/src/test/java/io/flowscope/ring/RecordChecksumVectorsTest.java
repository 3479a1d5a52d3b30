package io.flowscope.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checksum against the vectors the C side computes ({@code vectors/checksum.txt}: pos w1..w7 checksum, hex). */
class RecordChecksumVectorsTest {
    @Test
    void javaChecksumMatchesEveryVectorComputedByTheCProducer() throws IOException {
        final List<String> lines;
        try (InputStream in = RecordChecksumVectorsTest.class.getResourceAsStream("/vectors/checksum.txt")) {
            assertThat(in).as("vectors/checksum.txt on the test classpath").isNotNull();
            lines = new String(in.readAllBytes(), StandardCharsets.US_ASCII)
                    .lines()
                    .map(String::trim)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .toList();
        }
        assertThat(lines).isNotEmpty();
        for (final String line : lines) {
            final String[] f = line.split("\\s+");
            assertThat(f).as(line).hasSize(9);
            final long[] v = new long[8];
            for (int i = 0; i < 8; i++) {
                v[i] = Long.parseUnsignedLong(f[i], 16);
            }
            final int expected = (int) Long.parseLong(f[8], 16);

            assertThat(RecordChecksum.compute(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]))
                    .as(line)
                    .isEqualTo(expected);
        }
    }
}
