package io.flowscope.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingHeaderTest {
    @TempDir
    Path dir;

    @Test
    void readsEveryHeaderFieldWrittenByTheProducer() throws IOException {
        final Path path = dir.resolve("flowscope-4242-0.ring");
        try (TestRingWriter writer = TestRingWriter.builder(path)
                .capacity(64)
                .pid(4242)
                .abiVersion(6)
                .hostname("gpu-node-7")
                .anchors(1_700_000_000_123_000_000L, 5_000_000_000L)
                .create()) {
            final int allReduce = writer.string("AllReduce");
            final int comm = writer.comm(0xFEEDFACECAFEBEEFL, 3, 8, 2, "trainer");
            writer.markClosed(9_000_000_000L);

            try (RingReader reader = RingReader.open(path)) {
                final RingHeader header = reader.header();
                assertThat(header.layoutVersion()).isEqualTo(0x00010003);
                assertThat(header.capacity()).isEqualTo(64);
                assertThat(header.laneCount()).isEqualTo(1);
                assertThat(header.laneCapacity()).isEqualTo(64);
                assertThat(header.laneMask()).isEqualTo(63);
                assertThat(header.headerSize()).isEqualTo(262144);
                assertThat(header.producerPid()).isEqualTo(4242);
                assertThat(header.abiVersion()).isEqualTo(6);
                assertThat(header.ncclVersion()).isEqualTo(22809);
                assertThat(header.eventMask()).isEqualTo(4095);
                assertThat(header.hostname()).isEqualTo("gpu-node-7");
                assertThat(header.pluginVersion()).isEqualTo("test-writer");
                assertThat(header.clockSource()).isEqualTo(RingLayout.CLOCK_SOURCE_CLOCK_GETTIME);
                assertThat(header.toWallClockNs(5_000_000_001L)).isEqualTo(1_700_000_000_123_000_001L);
                assertThat(header.isProducerClosed()).isTrue();
                assertThat(header.closedMonotonicNs()).isEqualTo(9_000_000_000L);
                assertThat(header.stringCount()).isEqualTo(2);
                assertThat(header.string(allReduce)).isEqualTo("AllReduce");
                assertThat(header.string(0)).isNull();
                assertThat(header.commCount()).isEqualTo(1);
                assertThat(header.comm(comm)).satisfies(c -> {
                    assertThat(c.commHash()).isEqualTo(0xFEEDFACECAFEBEEFL);
                    assertThat(c.rank()).isEqualTo(3);
                    assertThat(c.nranks()).isEqualTo(8);
                    assertThat(c.nnodes()).isEqualTo(2);
                    assertThat(c.name()).isEqualTo("trainer");
                    assertThat(c.state()).isEqualTo(RingLayout.COMM_STATE_ACTIVE);
                    assertThat(c.cudaDevice()).isEqualTo(RingHeader.CommInfo.NO_DEVICE);
                    assertThat(c.pciBusId()).isEmpty();
                    assertThat(c.hasDevice()).isFalse();
                });
                assertThat(header.comm(comm + 1)).isNull();
            }
        }
    }

    @Test
    void readsTheCudaDeviceAndBusIdOfEachCommunicatorsRank() throws IOException {
        final Path path = dir.resolve("flowscope-48213-0.ring");
        try (TestRingWriter writer = TestRingWriter.builder(path)
                .capacity(16)
                .pid(48213)
                .hostname("gpu-node-17")
                .create()) {
            final String longName = "n".repeat(80);
            final int world = writer.comm(0x1111L, 1, 2, 1, "world", 1, "0000:19:00.0");
            final int split = writer.comm(0x2222L, 0, 1, 1, longName, 1, "0000:19:00.0");
            final int unknown = writer.comm(0x3333L, 0, 1, 1, "no-context", -1, "");
            final byte[] uuid = new byte[16];
            for (int i = 0; i < 16; i++) {
                uuid[i] = (byte) (0xa0 + i);
            }
            final int withUuid = writer.comm(0x4444L, 2, 4, 1, "uuid", 2, "0000:1A:00.0", uuid);
            try (RingReader reader = RingReader.open(path)) {
                final RingHeader h = reader.header();
                assertThat(h.comm(world)).satisfies(c -> {
                    assertThat(c.rank()).isEqualTo(1);
                    assertThat(c.cudaDevice()).isEqualTo(1);
                    assertThat(c.pciBusId()).isEqualTo("0000:19:00.0");
                    assertThat(c.hasDevice()).isTrue();
                });
                // 1.1: a name ends inside its 56 bytes, before the device
                assertThat(h.comm(split).name()).isEqualTo(longName.substring(0, RingLayout.COMM_NAME_LENGTH - 1));
                assertThat(h.comm(split).cudaDevice()).isEqualTo(1);
                assertThat(h.comm(unknown).cudaDevice()).isEqualTo(-1);
                assertThat(h.comm(unknown).pciBusId()).isEmpty();
                // 1.2: the UUID beside the entry, as nvidia-smi prints it; none written: unknown
                assertThat(h.comm(withUuid).gpuUuid()).isEqualTo("GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
                assertThat(h.comm(withUuid).cudaDevice()).isEqualTo(2);
                assertThat(h.comm(world).gpuUuid()).isEmpty();
                assertThat(h.comm(unknown).gpuUuid()).isEmpty();
            }
        }
    }

    /** Rings the 1.0 plugin wrote stay readable: the 88-byte name, the device unknown (its bytes are the name's). */
    @Test
    void readsALayout10RingsNameWholeAndItsDeviceAsUnknown() throws IOException {
        final Path path = dir.resolve("v1_0.ring");
        try (TestRingWriter writer = TestRingWriter.builder(path)
                .capacity(16)
                .layoutVersion(0x00010000)
                .create()) {
            final String name = "a-communicator-name-longer-than-the-56-bytes-of-layout-1.1-entries-x";
            final int comm = writer.comm(0xABCDL, 2, 4, 1, name, 3, "0000:3B:00.0");
            try (RingReader reader = RingReader.open(path)) {
                final RingHeader.CommInfo c = reader.header().comm(comm);
                assertThat(reader.header().layoutVersion()).isEqualTo(0x00010000);
                assertThat(c.name()).isEqualTo(name);
                assertThat(c.rank()).isEqualTo(2);
                assertThat(c.cudaDevice()).isEqualTo(RingHeader.CommInfo.NO_DEVICE);
                assertThat(c.pciBusId()).isEmpty();
            }
        }
    }

    @Test
    void truncatesStringsLongerThan28Bytes() throws IOException {
        final Path path = dir.resolve("r.ring");
        try (TestRingWriter writer = TestRingWriter.create(path, 16)) {
            final int index = writer.string("a-very-long-string-name-of-40-characters");
            try (RingReader reader = RingReader.open(path)) {
                assertThat(reader.header().string(index)).isEqualTo("a-very-long-string-name-of-4");
            }
        }
    }

    @Test
    void refusesAFileWithBadMagicAsNotAFlowscopeRing() throws IOException {
        final Path path = dir.resolve("bad.ring");
        TestRingWriter.builder(path)
                .capacity(16)
                .magic(0x1122334455667788L)
                .create()
                .close();

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.NotARing.class)
                .hasMessageContaining("not a flowscope ring")
                .hasMessageContaining("0x1122334455667788");
    }

    @Test
    void refusesATextFileAsNotAFlowscopeRing() throws IOException {
        final Path path = dir.resolve("notes.ring");
        Files.writeString(path, "hello, this is not a ring\n");

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.NotARing.class)
                .satisfies(ex ->
                        assertThat(((RingFormatException) ex).isTransient()).isFalse());
    }

    @Test
    void refusesAnotherMajorVersionNamingBothVersions() throws IOException {
        final Path path = dir.resolve("v2.ring");
        TestRingWriter.builder(path)
                .capacity(16)
                .layoutVersion(0x00020000)
                .create()
                .close();

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.UnsupportedVersion.class)
                .hasMessageContaining("ring layout 2.0 is not supported by this reader (1.x)");
    }

    @Test
    void acceptsANewerMinorVersionOfTheSameMajor() throws IOException {
        final Path path = dir.resolve("v1_3.ring");
        TestRingWriter.builder(path)
                .capacity(16)
                .layoutVersion(0x00010003)
                .create()
                .close();

        try (RingReader reader = RingReader.open(path)) {
            assertThat(reader.header().layoutVersion()).isEqualTo(0x00010003);
        }
    }

    @Test
    void reportsAnUnpublishedHeaderAsTransientUntilTheVersionIsWritten() throws IOException {
        final Path path = dir.resolve("new.ring");
        try (TestRingWriter writer =
                TestRingWriter.builder(path).capacity(16).publish(false).create()) {
            assertThatThrownBy(() -> RingReader.open(path))
                    .isInstanceOf(RingFormatException.NotPublished.class)
                    .hasMessageContaining("not yet published")
                    .satisfies(ex ->
                            assertThat(((RingFormatException) ex).isTransient()).isTrue());

            writer.publishHeader(RingLayout.LAYOUT_VERSION);

            try (RingReader reader = RingReader.open(path)) {
                assertThat(reader.header().capacity()).isEqualTo(16);
            }
        }
    }

    @Test
    void reportsAnEmptyFileAsTruncatedAndTransient() throws IOException {
        final Path path = dir.resolve("empty.ring");
        Files.createFile(path);

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.Truncated.class)
                .satisfies(ex ->
                        assertThat(((RingFormatException) ex).isTransient()).isTrue());
    }

    @Test
    void reportsAFileShorterThanItsHeaderSaysAsTruncated() throws IOException {
        final Path path = dir.resolve("short.ring");
        TestRingWriter.create(path, 1024).close();
        try (var channel = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.WRITE)) {
            channel.truncate(RingLayout.HEADER_SIZE + 64 * 10);
        }

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.Truncated.class)
                .hasMessageContaining("header says " + (RingLayout.HEADER_SIZE + 64 * 1024));
    }

    @Test
    void refusesACapacityThatIsNotAPowerOfTwo() throws IOException {
        final Path path = dir.resolve("odd.ring");
        try (TestRingWriter writer = TestRingWriter.create(path, 16)) {
            writer.buffer().putLong(RingLayout.CAPACITY_OFFSET, 12);
        }

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.NotARing.class)
                .hasMessageContaining("capacity 12 is not lane_count * lane_capacity (1 * 16)");
    }

    @Test
    void readsLaneCountAndLaneCapacityAndEachLanesTailAndHead() throws IOException {
        final Path path = dir.resolve("lanes.ring");
        try (TestRingWriter writer = TestRingWriter.create(path, 8, 16)) {
            final TestRingWriter.Draft draft = new TestRingWriter.Draft();
            for (int thread = 0; thread < 11; thread++) {
                writer.append(draft.start(EventKind.GROUP, thread, 1, RecordLayout.id(0, 0, thread + 1), 0));
            }
            try (RingReader reader = RingReader.open(path)) {
                final RingHeader header = reader.header();
                assertThat(header.capacity()).isEqualTo(128);
                assertThat(header.laneCount()).isEqualTo(8);
                assertThat(header.laneCapacity()).isEqualTo(16);
                assertThat(header.laneMask()).isEqualTo(15);
                assertThat(header.tail(0)).isEqualTo(2);
                assertThat(header.tail(2)).isEqualTo(2);
                assertThat(header.tail(3)).isEqualTo(1);
                assertThat(header.head(0)).isZero();
                assertThat(header.lag()).isEqualTo(11);
                assertThatThrownBy(() -> header.tail(8)).isInstanceOf(IndexOutOfBoundsException.class);
            }
        }
    }

    private void assertRefused(final TestRingWriter.Builder builder, final String message) throws IOException {
        final Path path = builder.create().path();
        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.NotARing.class)
                .hasMessageContaining(message)
                .satisfies(ex ->
                        assertThat(((RingFormatException) ex).isTransient()).isFalse());
    }

    @Test
    void refusesALaneCountThatIsNotAPowerOfTwoFrom1To64() throws IOException {
        assertRefused(
                TestRingWriter.builder(dir.resolve("a.ring")).capacity(16).laneFields(0, 16),
                "lane_count 0 is not a power of two in [1, 64]");
        assertRefused(
                TestRingWriter.builder(dir.resolve("b.ring")).capacity(48).laneFields(3, 16),
                "lane_count 3 is not a power of two in [1, 64]");
        assertRefused(
                TestRingWriter.builder(dir.resolve("c.ring")).capacity(256).laneFields(128, 2),
                "lane_count 128 is not a power of two in [1, 64]");
    }

    @Test
    void refusesALaneCapacityThatIsNotAPowerOfTwoOfAtLeastTwo() throws IOException {
        assertRefused(
                TestRingWriter.builder(dir.resolve("a.ring")).capacity(16).laneFields(1, 12),
                "lane_capacity 12 is not a power of two >= 2");
        assertRefused(
                TestRingWriter.builder(dir.resolve("b.ring")).capacity(16).laneFields(16, 1),
                "lane_capacity 1 is not a power of two >= 2");
    }

    @Test
    void refusesACapacityThatIsNotLaneCountTimesLaneCapacity() throws IOException {
        assertRefused(
                TestRingWriter.builder(dir.resolve("a.ring")).capacity(64).laneFields(2, 16),
                "capacity 64 is not lane_count * lane_capacity (2 * 16)");
    }

    @Test
    void reportsAMultiLaneFileShorterThanItsLanesAsTruncated() throws IOException {
        final Path path = dir.resolve("short-lanes.ring");
        TestRingWriter.create(path, 4, 64).close();
        try (var channel = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.WRITE)) {
            channel.truncate(RingLayout.HEADER_SIZE + 64 * (3 * 64));
        }

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingFormatException.Truncated.class)
                .hasMessageContaining("header says " + (RingLayout.HEADER_SIZE + 64 * 256));
    }
}
