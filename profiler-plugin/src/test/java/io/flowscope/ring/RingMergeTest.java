package io.flowscope.ring;

import static io.flowscope.ring.EventKind.PROXY_STEP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rings of one host drained as one stream in time order ({@link RingMerge}, {@link RingDirectory#poll}). */
class RingMergeTest {
    private static final long STALE_NS = TimeUnit.MILLISECONDS.toNanos(100);

    @TempDir
    Path dir;

    private final CachedNanoClock clock = new CachedNanoClock();
    private final TestRingWriter.Draft draft = new TestRingWriter.Draft();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private long serial;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private TestRingWriter ring(final int pid, final String host, final long bootNs, final int lanes)
            throws IOException {
        final TestRingWriter writer = TestRingWriter.builder(dir.resolve("flowscope-" + pid + "-0.ring"))
                .lanes(lanes)
                .capacity(lanes * 4096L)
                .pid(pid)
                .hostname(host)
                .anchors(bootNs + 1_000L, 1_000L)
                .create();
        resources.add(writer);
        return writer;
    }

    private RingReader reader(final TestRingWriter writer) throws IOException {
        final RingReader reader = RingReader.open(writer.path(), clock, STALE_NS);
        resources.add(reader);
        return reader;
    }

    /** An exact merge (skew 0) of these rings. */
    private RingMerge merge(final TestRingWriter... writers) throws IOException {
        return merge(0, writers);
    }

    private RingMerge merge(final long skewNs, final TestRingWriter... writers) throws IOException {
        final RingMerge merge = new RingMerge(skewNs);
        for (final TestRingWriter w : writers) {
            merge.add(reader(w));
        }
        return merge;
    }

    /** A record of {@code thread} (lane thread % lanes) at {@code timeNs}; its serial is its identity. */
    private long write(final TestRingWriter writer, final int thread, final long timeNs) {
        final long s = ++serial;
        writer.append(draft.start(PROXY_STEP, thread, timeNs, RecordLayout.id(PROXY_STEP.code(), 0, s), 0)
                .proxyStep((int) s));
        return s;
    }

    private static List<Long> times(final RingMerge merge, final int limit) {
        final List<Long> times = new ArrayList<>();
        while (merge.poll(r -> times.add(r.timeNs()), limit) > 0) {
            // drain
        }
        return times;
    }

    @Test
    void deliversEveryLaneOfEveryRingInTimeOrderWhereARingByRingDrainRunsOneLaneAhead() throws IOException {
        // two processes of a host, each an application thread (lane 0: a record every 1 ms) and a proxy thread
        // (lane 1: every 10 us), 20 ms of each in the rings
        final TestRingWriter a = ring(11, "h", 0, 2);
        final TestRingWriter b = ring(12, "h", 0, 2);
        final List<Long> written = new ArrayList<>();
        for (final TestRingWriter w : List.of(a, b)) {
            for (long t = 1_000_000; t <= 20_000_000; t += 1_000_000) {
                write(w, 0, t + (w == a ? 0 : 300));
                written.add(t + (w == a ? 0 : 300));
            }
            for (long t = 5_000; t <= 20_000_000; t += 10_000) {
                write(w, 1, t + (w == a ? 0 : 7));
                written.add(t + (w == a ? 0 : 7));
            }
        }
        written.sort(null);
        final RingMerge merge = merge(a, b);

        assertThat(times(merge, 64)).isEqualTo(written);
        assertThat(merge.reader(0).isDrained() && merge.reader(1).isDrained()).isTrue();

        // the same rings drained per ring and lane by counts: the application lanes run 14 ms ahead in one poll
        final TestRingWriter c = ring(13, "h", 0, 2);
        for (long t = 1_000_000; t <= 20_000_000; t += 1_000_000) {
            write(c, 0, t);
        }
        for (long t = 5_000; t <= 20_000_000; t += 10_000) {
            write(c, 1, t);
        }
        final long[] latest = {0};
        final long[] behind = {0};
        reader(c)
                .poll(
                        r -> {
                            latest[0] = Math.max(latest[0], r.timeNs());
                            behind[0] = Math.max(behind[0], latest[0] - r.timeNs());
                        },
                        32);
        assertThat(behind[0])
                .as("how far RingReader.poll read one lane behind the other")
                .isGreaterThan(10_000_000);
    }

    @Test
    void withASkewALaneRunsOnAtMostThatFarPastTheNextOldestHead() throws IOException {
        // two busy threads of two processes whose records alternate: a record every 2 us each, 1 us apart
        final TestRingWriter a = ring(91, "h", 0, 1);
        final TestRingWriter b = ring(92, "h", 0, 1);
        for (int i = 0; i < 2000; i++) {
            write(a, 0, 2_000L * i);
            write(b, 0, 2_000L * i + 1_000);
        }
        final List<Long> skewed = times(merge(RingMerge.DEFAULT_SKEW_NS, a, b), 1000);
        assertThat(skewed).hasSize(4000);
        long latest = Long.MIN_VALUE;
        long behind = 0;
        int switches = 0;
        for (int i = 0; i < skewed.size(); i++) {
            latest = Math.max(latest, skewed.get(i));
            behind = Math.max(behind, latest - skewed.get(i));
            if (i > 0 && (skewed.get(i) / 1_000 & 1) != (skewed.get(i - 1) / 1_000 & 1)) {
                switches++;
            }
        }
        assertThat(behind)
                .as("how far a record came behind the latest before it")
                .isBetween(1L, RingMerge.DEFAULT_SKEW_NS);
        assertThat(switches).as("runs of ~25 records, not 1").isLessThan(4000 / 20);
        assertThatThrownBy(() -> new RingMerge(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void deliversAtMostTheLimitAPollAndGoesOnInOrderWhileProducersWrite() throws IOException {
        final TestRingWriter a = ring(21, "h", 0, 4);
        final TestRingWriter b = ring(22, "h", 0, 1);
        final RingMerge merge = merge(a, b);
        final SplittableRandom random = new SplittableRandom(7);
        final List<Long> got = new ArrayList<>();
        long time = 0;
        int written = 0;
        for (int round = 0; round < 200; round++) {
            // time goes on; which thread writes next is random
            for (int i = 0; i < 8; i++) {
                time += random.nextInt(3);
                final int thread = random.nextInt(5);
                write(thread < 4 ? a : b, thread, time);
                written++;
            }
            final int n = merge.poll(r -> got.add(r.timeNs()), 5);
            assertThat(n).isLessThanOrEqualTo(5);
        }
        got.addAll(times(merge, 5));
        assertThat(got).hasSize(written);
        final List<Long> sorted = new ArrayList<>(got);
        sorted.sort(null);
        assertThat(got).isEqualTo(sorted);
    }

    @Test
    void aLaneWithNothingToReadDoesNotHoldTheOthersBackAndAStaleClaimIsSkippedAfterTheTimeout() throws IOException {
        final TestRingWriter a = ring(31, "h", 0, 2);
        final TestRingWriter b = ring(32, "h", 0, 1);
        final long claimed = b.tryClaim(0); // a producer that stopped between claim and publish
        write(b, 0, 50); // published behind the claim
        write(a, 0, 100);
        write(a, 1, 200);
        final RingMerge merge = merge(a, b);
        clock.update(1_000_000);

        assertThat(times(merge, 10))
                .as("ring b's head is claimed, not published: caught up")
                .containsExactly(100L, 200L);
        clock.advance(STALE_NS);
        assertThat(times(merge, 10)).as("claim seen: one more timeout").isEmpty();
        clock.advance(STALE_NS);
        assertThat(times(merge, 10)).containsExactly(50L);
        assertThat(merge.reader(1).skippedStale()).isEqualTo(1);
        assertThat(merge.reader(1).head(0)).isEqualTo(claimed + 2);
    }

    @Test
    void skipsAndCountsCorruptRecordsAtAndBehindTheHeadsAndDeliversTheRestInOrder() throws IOException {
        final TestRingWriter a = ring(41, "h", 0, 1);
        final TestRingWriter b = ring(42, "h", 0, 1);
        for (long t = 10; t <= 100; t += 10) {
            write(a, 0, t);
            write(b, 0, t + 5);
        }
        // a's head (time 10) and a record in b's middle (time 55) are torn: their checksums no longer match
        a.buffer().putLong(a.slotOffset(0, 0) + RecordLayout.TIME_NS_OFFSET, 1);
        b.buffer().putInt(b.slotOffset(0, 4) + RecordLayout.PROXY_STEP_STEP_OFFSET, 999);
        final RingMerge merge = merge(a, b);

        assertThat(times(merge, 3))
                .containsExactly(
                        15L, 20L, 25L, 30L, 35L, 40L, 45L, 50L, 60L, 65L, 70L, 75L, 80L, 85L, 90L, 95L, 100L, 105L);
        assertThat(merge.reader(0).corruptChecksum()).isEqualTo(1);
        assertThat(merge.reader(1).corruptChecksum()).isEqualTo(1);
        assertThat(merge.reader(0).header().consumerCorrupt()).isEqualTo(1);
    }

    @Test
    void aHandlerThatThrowsGetsTheSameRecordAgainAtTheNextPoll() throws IOException {
        final TestRingWriter a = ring(51, "h", 0, 1);
        final TestRingWriter b = ring(52, "h", 0, 1);
        write(a, 0, 10);
        write(b, 0, 20);
        write(a, 0, 30);
        final RingMerge merge = merge(a, b);
        final List<Long> got = new ArrayList<>();
        assertThatThrownBy(() -> merge.poll(
                        r -> {
                            if (r.timeNs() == 20) {
                                throw new IllegalStateException("handler");
                            }
                            got.add(r.timeNs());
                        },
                        10))
                .isInstanceOf(IllegalStateException.class);
        got.addAll(times(merge, 10));
        assertThat(got).containsExactly(10L, 20L, 30L);
    }

    @Test
    void writesEveryRingsHeartbeatAndRingsJoinAndLeave() throws IOException {
        final TestRingWriter a = ring(61, "h", 0, 1);
        final TestRingWriter b = ring(62, "h", 0, 8);
        final RingMerge merge = merge(a);
        final RingReader rb = reader(b);
        merge.add(rb);
        clock.update(123_456_789L);
        merge.poll(r -> {}, 10);
        assertThat(a.buffer().getLong(RingLayout.CONSUMER_HEARTBEAT_NS_OFFSET)).isEqualTo(123_456_789L);
        assertThat(b.buffer().getLong(RingLayout.CONSUMER_HEARTBEAT_NS_OFFSET)).isEqualTo(123_456_789L);
        write(b, 5, 7);
        assertThat(merge.remove(rb)).isTrue();
        assertThat(merge.remove(rb)).isFalse();
        assertThat(merge.size()).isEqualTo(1);
        assertThat(times(merge, 10)).isEmpty();
        merge.add(rb);
        assertThat(times(merge, 10)).containsExactly(7L);
    }

    @Test
    void pollAllocatesNothingPerRecord() throws IOException {
        final TestRingWriter a = ring(71, "h", 0, 4);
        final TestRingWriter b = ring(72, "h", 0, 4);
        final RingMerge merge = merge(a, b);
        final long[] sum = {0};
        final RecordHandler handler = r -> sum[0] += r.timeNs() + r.step();
        final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long quietest = Long.MAX_VALUE;
        long time = 0;
        for (int round = 0; round < 60; round++) {
            for (int i = 0; i < 1000; i++) {
                write(i % 2 == 0 ? a : b, i % 8, time++);
            }
            final long before = threads.getCurrentThreadAllocatedBytes();
            while (merge.poll(handler, 256) > 0) {
                // drain
            }
            final long after = threads.getCurrentThreadAllocatedBytes();
            if (round >= 40) {
                quietest = Math.min(quietest, after - before);
            }
        }
        assertThat(sum[0]).isNotZero();
        assertThat(quietest)
                .as("bytes allocated while merging 1000 records (quietest of 20 rounds)")
                .isLessThan(256);
    }

    // RingDirectory: one merge per host and clock.

    @Test
    void aDirectoryMergesTheRingsOfOneHostAndClockAndNoOthers() throws IOException {
        final long boot = 1_700_000_000_000_000_000L;
        final TestRingWriter h1 = ring(81, "h1", boot, 1);
        final TestRingWriter h1Again = ring(82, "h1", boot + 300_000_000L, 1); // same clock (NTP slew)
        final TestRingWriter h2 = ring(83, "h2", boot, 1);
        final TestRingWriter h1Rebooted = ring(84, "h1", boot + 3_600_000_000_000L, 1); // another boot: another clock
        for (int i = 1; i <= 20; i++) {
            write(h1, 0, 1_000 + i);
            write(h1Again, 0, 1_000 + 100 * i);
            write(h2, 0, 1_000_000 + i);
            write(h1Rebooted, 0, 9_000_000 + i);
        }
        try (RingDirectory directory = RingDirectory.builder(dir)
                .clock(clock)
                .batch(4)
                .localHostname("other")
                .staleTimeout(STALE_NS, TimeUnit.NANOSECONDS)
                .build()) {
            final List<String> order = new ArrayList<>();
            final List<Long> h1Times = new ArrayList<>();
            final RecordHandler handler = r -> {
                final String ring = r.header().hostname() + "/" + r.header().producerPid();
                order.add(ring);
                if (ring.equals("h1/81") || ring.equals("h1/82")) {
                    h1Times.add(r.timeNs());
                }
            };
            // the first poll: every host and clock a batch per ring of it; h1's two rings by time (h1/81's first)
            assertThat(directory.poll(handler)).isEqualTo(16);
            assertThat(order.stream().filter(s -> s.equals("h1/81")).count()).isEqualTo(8);
            assertThat(order.stream().filter(s -> s.equals("h2/83")).count()).isEqualTo(4);
            assertThat(order.stream().filter(s -> s.equals("h1/84")).count()).isEqualTo(4);
            while (directory.poll(handler) > 0) {
                // drain
            }
            assertThat(order).hasSize(80);
            final List<Long> sorted = new ArrayList<>(h1Times);
            sorted.sort(null);
            assertThat(h1Times).isEqualTo(sorted);
        }
    }
}
