package io.flowscope.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingDirectoryTest {
    private static final long STALE_MS = 100;

    @TempDir
    Path dir;

    private final CachedNanoClock clock = new CachedNanoClock();
    private final TestRingWriter.Draft draft = new TestRingWriter.Draft();
    private final List<String> log = new ArrayList<>();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final List<RingEvent> events = new ArrayList<>();

    private final RingDirectory.Listener listener = new RingDirectory.Listener() {
        public void onAttach(final RingReader reader) {
            log.add("attach " + reader.path().getFileName());
        }

        public void onDetach(final RingReader reader, final RingDirectory.DetachReason reason, final boolean deleted) {
            log.add("detach " + reader.path().getFileName() + " " + reason + (deleted ? " deleted" : " kept"));
        }

        public void onIgnored(final Path path, final String reason) {
            log.add("ignored " + path.getFileName());
        }
    };

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private RingDirectory.Builder directory() {
        return RingDirectory.builder(dir)
                .clock(clock)
                .scanInterval(0, TimeUnit.MILLISECONDS)
                .staleTimeout(STALE_MS, TimeUnit.MILLISECONDS)
                .listener(listener)
                .localHostname("test-host");
    }

    private RingDirectory open(final RingDirectory.Builder builder) {
        final RingDirectory directory = builder.build();
        resources.add(directory);
        return directory;
    }

    private TestRingWriter ring(final String name, final int pid) throws IOException {
        final TestRingWriter writer =
                TestRingWriter.builder(dir.resolve(name)).capacity(64).pid(pid).create();
        resources.add(writer);
        return writer;
    }

    private void write(final TestRingWriter writer, final int from, final int to) {
        for (int serial = from; serial <= to; serial++) {
            writer.append(draft.start(EventKind.GROUP, 0, serial, RecordLayout.id(0, 0, serial), 0));
        }
    }

    private int pollAll(final RingDirectory directory) {
        int total = 0;
        int n;
        while ((n = directory.poll(r -> events.add(r.toEvent()))) > 0) {
            total += n;
        }
        return total;
    }

    private static int deadPid() throws Exception {
        final Process process = new ProcessBuilder("true").start();
        process.waitFor();
        return (int) process.pid();
    }

    private static final int LIVE_PID = (int) ProcessHandle.current().pid();

    @Test
    void attachesRingsCreatedWhileRunningAndDrainsThemAll() throws IOException {
        final RingDirectory directory = open(directory());
        assertThat(pollAll(directory)).isZero();
        final TestRingWriter a = ring("flowscope-1-0.ring", LIVE_PID);
        write(a, 1, 5);

        assertThat(pollAll(directory)).isEqualTo(5);
        final TestRingWriter b = ring("flowscope-2-0.ring", LIVE_PID);
        write(b, 1, 7);
        write(a, 6, 8);

        assertThat(pollAll(directory)).isEqualTo(10);
        assertThat(directory.attachedCount()).isEqualTo(2);
        assertThat(log).containsExactly("attach flowscope-1-0.ring", "attach flowscope-2-0.ring");
    }

    @Test
    void scansOnlyOncePerScanInterval() throws IOException {
        final RingDirectory directory = open(directory().scanInterval(1, TimeUnit.SECONDS));
        directory.poll(r -> {});
        write(ring("flowscope-1-0.ring", LIVE_PID), 1, 1);

        directory.poll(r -> {});
        assertThat(directory.attachedCount()).isZero();
        clock.advance(TimeUnit.SECONDS.toNanos(1));
        directory.poll(r -> {});
        assertThat(directory.attachedCount()).isEqualTo(1);
    }

    @Test
    void retriesAHalfCreatedFileUntilItsHeaderIsPublished() throws IOException {
        final RingDirectory directory = open(directory());
        final Path path = dir.resolve("flowscope-3-0.ring");
        Files.createFile(path);
        pollAll(directory);
        Files.delete(path);
        final TestRingWriter writer = TestRingWriter.builder(path)
                .capacity(16)
                .pid(LIVE_PID)
                .publish(false)
                .create();
        resources.add(writer);
        write(writer, 1, 3);
        pollAll(directory);
        assertThat(directory.attachedCount()).isZero();

        writer.publishHeader(RingLayout.LAYOUT_VERSION);

        assertThat(pollAll(directory)).isEqualTo(3);
        assertThat(log).containsExactly("attach flowscope-3-0.ring");
    }

    @Test
    void reportsAFileThatIsNotARingOnceAndKeepsReadingTheOthers() throws IOException {
        final RingDirectory directory = open(directory());
        Files.writeString(dir.resolve("notes.ring"), "not a ring at all, just text");
        TestRingWriter.builder(dir.resolve("future.ring"))
                .capacity(16)
                .layoutVersion(0x00020000)
                .create()
                .close();
        Files.writeString(dir.resolve("other.txt"), "not even named like a ring");
        write(ring("flowscope-4-0.ring", LIVE_PID), 1, 2);

        for (int i = 0; i < 5; i++) {
            pollAll(directory);
        }

        assertThat(events).hasSize(2);
        assertThat(log)
                .containsExactlyInAnyOrder("ignored notes.ring", "ignored future.ring", "attach flowscope-4-0.ring");
    }

    @Test
    void deletesARingOnlyOnceItsProducerIsGoneAndEveryRecordWasRead() throws Exception {
        final RingDirectory directory = open(directory().batch(4));
        final TestRingWriter writer = ring("flowscope-5-0.ring", deadPid());
        write(writer, 1, 10);

        assertThat(directory.poll(r -> events.add(r.toEvent()))).isEqualTo(4);
        assertThat(Files.exists(writer.path())).as("not drained yet").isTrue();
        assertThat(directory.attachedCount()).isEqualTo(1);
        pollAll(directory);

        assertThat(events).hasSize(10);
        assertThat(Files.exists(writer.path())).isFalse();
        assertThat(directory.attachedCount()).isZero();
        assertThat(log).containsExactly("attach flowscope-5-0.ring", "detach flowscope-5-0.ring PRODUCER_GONE deleted");
    }

    @Test
    void waitsOutTheStaleTimeoutOfASlotTheDeadProducerClaimedBeforeDeleting() throws Exception {
        final RingDirectory directory = open(directory());
        final TestRingWriter writer = ring("flowscope-6-0.ring", deadPid());
        write(writer, 1, 2);
        writer.tryClaim();
        write(writer, 3, 3);

        pollAll(directory);
        assertThat(events).hasSize(2);
        assertThat(Files.exists(writer.path())).isTrue();
        clock.advance(TimeUnit.MILLISECONDS.toNanos(STALE_MS));
        pollAll(directory);
        assertThat(events).as("seen claimed after one timeout: one more").hasSize(2);
        assertThat(Files.exists(writer.path())).isTrue();
        clock.advance(TimeUnit.MILLISECONDS.toNanos(STALE_MS));
        pollAll(directory);

        assertThat(events).extracting(RingEvent::serial).containsExactly(1L, 2L, 3L);
        assertThat(Files.exists(writer.path())).isFalse();
    }

    @Test
    void keepsTheFileOfAGoneProducerWhenConfiguredTo() throws Exception {
        final RingDirectory directory = open(directory().deleteDrained(false));
        write(ring("flowscope-7-0.ring", deadPid()), 1, 1);

        pollAll(directory);

        assertThat(Files.exists(dir.resolve("flowscope-7-0.ring"))).isTrue();
        assertThat(log).containsExactly("attach flowscope-7-0.ring", "detach flowscope-7-0.ring PRODUCER_GONE kept");
        clock.advance(TimeUnit.SECONDS.toNanos(1));
        pollAll(directory);
        assertThat(log).as("a kept, finished ring is not attached again").hasSize(2);
    }

    @Test
    void detachesAClosedRingOfALiveProcessOnceDrained() throws IOException {
        final RingDirectory directory = open(directory());
        final TestRingWriter writer = ring("flowscope-8-0.ring", LIVE_PID);
        write(writer, 1, 3);
        pollAll(directory);
        assertThat(directory.attachedCount()).isEqualTo(1);

        write(writer, 4, 5);
        writer.markClosed(42);
        pollAll(directory);

        assertThat(events).hasSize(5);
        assertThat(log)
                .containsExactly("attach flowscope-8-0.ring", "detach flowscope-8-0.ring PRODUCER_CLOSED deleted");
    }

    @Test
    void doesNotJudgeThePidOfARingWrittenOnAnotherHost() throws Exception {
        final RingDirectory directory = open(directory());
        final TestRingWriter writer = TestRingWriter.builder(dir.resolve("flowscope-9-0.ring"))
                .capacity(16)
                .pid(deadPid())
                .hostname("another-host")
                .create();
        resources.add(writer);
        write(writer, 1, 1);

        pollAll(directory);

        assertThat(directory.attachedCount()).isEqualTo(1);
        assertThat(Files.exists(writer.path())).isTrue();
    }

    @Test
    void drainsARingWhoseFileWasRemovedAndDetachesIt() throws IOException {
        final RingDirectory directory = open(directory());
        final TestRingWriter writer = ring("flowscope-10-0.ring", LIVE_PID);
        write(writer, 1, 1);
        pollAll(directory);

        write(writer, 2, 3);
        Files.delete(writer.path());
        pollAll(directory);

        assertThat(events).hasSize(3);
        assertThat(log).containsExactly("attach flowscope-10-0.ring", "detach flowscope-10-0.ring FILE_REMOVED kept");
    }

    @Test
    void readsEveryHostABatchPerRingAtATimeTheRingsOfAHostInTimeOrder() throws IOException {
        final RingDirectory directory = open(directory().batch(5));
        final List<TestRingWriter> rings = new ArrayList<>();
        for (final String name : List.of("flowscope-11-0.ring", "flowscope-12-0.ring", "flowscope-14-0.ring")) {
            final TestRingWriter w = TestRingWriter.builder(dir.resolve(name))
                    .capacity(64)
                    .pid(LIVE_PID)
                    .hostname(name.contains("14") ? "other-host" : "test-host")
                    .create();
            resources.add(w);
            rings.add(w);
        }
        // test-host: two rings whose times alternate 100 us apart; other-host: one ring
        for (int i = 0; i < 30; i++) {
            rings.get(0).append(draft.start(EventKind.GROUP, 0, 200_000L * i, RecordLayout.id(0, 0, i + 1), 0));
            rings.get(1)
                    .append(draft.start(EventKind.GROUP, 0, 200_000L * i + 100_000, RecordLayout.id(0, 0, i + 1), 0));
            rings.get(2).append(draft.start(EventKind.GROUP, 0, i, RecordLayout.id(0, 0, i + 1), 0));
        }
        final List<String> hosts = new ArrayList<>();
        final List<Long> testHostTimes = new ArrayList<>();

        assertThat(directory.poll(r -> {
                    hosts.add(r.header().hostname());
                    if (r.header().hostname().equals("test-host")) {
                        testHostTimes.add(r.timeNs());
                    }
                }))
                .isEqualTo(15);
        assertThat(hosts.stream().filter("other-host"::equals).count()).isEqualTo(5);
        assertThat(testHostTimes)
                .containsExactly(
                        0L, 100_000L, 200_000L, 300_000L, 400_000L, 500_000L, 600_000L, 700_000L, 800_000L, 900_000L);
    }

    @Test
    void reportsARingHeldByAnotherConsumerOnceAndAttachesWhenItIsReleased() throws IOException {
        final TestRingWriter writer = ring("flowscope-13-0.ring", LIVE_PID);
        write(writer, 1, 2);
        final RingReader other = RingReader.open(writer.path());
        final RingDirectory directory = open(directory());
        pollAll(directory);
        pollAll(directory);
        assertThat(log).containsExactly("ignored flowscope-13-0.ring");

        other.close();
        pollAll(directory);

        assertThat(events).hasSize(2);
        assertThat(log).containsExactly("ignored flowscope-13-0.ring", "attach flowscope-13-0.ring");
    }

    @Test
    void survivesAMissingDirectoryAndPicksItUpWhenCreated() throws IOException {
        final Path missing = dir.resolve("later");
        final RingDirectory directory = open(RingDirectory.builder(missing)
                .clock(clock)
                .scanInterval(0, TimeUnit.MILLISECONDS)
                .listener(listener));
        pollAll(directory);
        Files.createDirectory(missing);
        final TestRingWriter writer = TestRingWriter.builder(missing.resolve("flowscope-1-0.ring"))
                .capacity(16)
                .create();
        resources.add(writer);
        write(writer, 1, 1);

        assertThat(pollAll(directory)).isEqualTo(1);
    }
}
