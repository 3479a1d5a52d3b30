package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.openhft.chronicle.queue.rollcycles.LegacyRollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, acceptance 2: the journal on a real, small, full file system. Each test mounts a tmpfs of a few MiB
 * (as root; CI runs as root on Debian) and unmounts it afterwards; without root, or where mount is refused (a
 * container without CAP_SYS_ADMIN), the tests are skipped and say why.
 * <p>
 * A full disk used to kill the service with exit status 0: Chronicle's mapped cycle file took a SIGBUS
 * ({@code InternalError: a fault occurred in a recent unsafe memory access operation}). Here the journal keeps a
 * reserve free, retires old cycles for it, backs the pages it is about to write through write(2) (so no space is an
 * {@code IOException}, not a SIGBUS), and pauses, DEGRADED, while the rest of the service goes on.
 */
class JournalDiskIT {
    @TempDir
    Path tmp;

    private Path mount;

    @BeforeEach
    void mountPoint() throws Exception {
        mount = tmp.resolve("tmpfs");
        Files.createDirectories(mount);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mounted) {
            run("umount", "-l", mount.toString());
        }
    }

    private boolean mounted;

    /** Mounts a tmpfs of {@code size} (e.g. "8m") on {@link #mount}, or skips the test with the reason. */
    private void tmpfs(final String size) throws Exception {
        Assumptions.assumeTrue(
                "root".equals(System.getProperty("user.name")),
                "needs root to mount a small tmpfs (mount -t tmpfs); runs as " + System.getProperty("user.name"));
        final String out = run("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", mount.toString());
        Assumptions.assumeTrue(out == null, "mount -t tmpfs refused (a container without CAP_SYS_ADMIN?): " + out);
        mounted = true;
    }

    /** Runs a command; null when it exits 0, else what it said. */
    private static String run(final String... cmd) throws Exception {
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? null : "exit " + p.exitValue() + ": " + out;
    }

    private long free() throws IOException {
        return Files.getFileStore(mount).getUsableSpace();
    }

    /** Fills the file system with {@code file} until it is full (ENOSPC); returns the bytes written. */
    private static long fill(final Path file) throws IOException {
        long n = 0;
        final ByteBuffer b = ByteBuffer.allocateDirect(64 << 10);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            while (true) {
                b.clear();
                n += ch.write(b);
            }
        } catch (final IOException e) {
            assertThat(e.getMessage()).contains("No space left on device");
            return n;
        }
    }

    /** One batch: a host and 200 step states (~6 KiB). */
    private static void batch(final JournalWriter w, final long b) {
        w.onHost(b);
        for (int i = 0; i < 200; i++) {
            w.onProxyStepState(b * 1000 + i, 9, 4096, b * 1_000_000L + i);
        }
        w.flush(System.currentTimeMillis() * 1_000_000L);
    }

    private static long[] readBack(final Path dir) {
        try (JournalReader r = new JournalReader(dir)) {
            while (r.read(new NoopListener(), new JournalReader.Meta() {}, 100) > 0) {
                // all
            }
            return new long[] {r.documents(), r.corruptDocuments()};
        }
    }

    /**
     * Writing on until the file system has only its reserve left: journaling pauses (said, counted), the disk
     * never fills, and what was written reads back whole; once room is made, journaling resumes by itself.
     */
    @Test
    void shouldPauseAtTheReserveWithoutFillingTheDiskAndResumeWhenThereIsRoom() throws Exception {
        tmpfs("8m");
        final Path filler = mount.resolve("filler");
        Files.write(filler, new byte[3 << 20]);
        final Path dir = mount.resolve("journal");
        long written;
        try (JournalWriter w = new JournalWriter(dir, LegacyRollCycles.MINUTELY, 0, 0)) {
            assertThat(w.reserveBytes()).isEqualTo(1 << 20); // 5 % of 8 MiB is less than the 1 MiB floor
            long b = 0;
            while (w.failure() == null && b < 100_000) {
                batch(w, b++);
            }
            assertThat(w.failure())
                    .startsWith("journal paused: ")
                    .contains("B free on", "kept free", "live data is still served");
            assertThat(free()).as("the reserve stays free").isGreaterThanOrEqualTo(w.reserveBytes());
            written = w.batchesWritten();
            assertThat(written).isPositive();
            batch(w, b++);
            assertThat(w.batchesWritten()).isEqualTo(written);
            assertThat(w.entriesDropped()).isGreaterThan(0);

            Files.delete(filler);
            Thread.sleep(1100); // the check runs once a second of wall time
            batch(w, b++);
            batch(w, b++);
            assertThat(w.failure()).isNull();
            assertThat(w.batchesWritten()).isGreaterThan(written);
            written = w.batchesWritten();
        }
        final long[] back = readBack(dir);
        assertThat(back[0]).isEqualTo(written);
        assertThat(back[1]).isZero();
    }

    /**
     * Another process fills the disk while the journal writes (no reserve kept): the next pages are checked for and
     * backed by write(2) before the mapping touches them, so the full disk pauses journaling there; no SIGBUS, no
     * InternalError, and the journal reads back whole.
     */
    @Test
    void shouldPauseOnEnospcWhenAnotherProcessFillsTheDiskAndNeverFaultOnTheMapping() throws Exception {
        tmpfs("8m");
        final Path dir = mount.resolve("journal");
        long written;
        try (JournalWriter w = new JournalWriter(dir, LegacyRollCycles.MINUTELY, 0, 0, 0)) {
            long b = 0;
            for (; b < 100; b++) {
                batch(w, b);
            }
            assertThat(w.failure()).isNull();
            assertThat(fill(mount.resolve("filler"))).isPositive();
            assertThat(free()).isZero();
            while (w.failure() == null && b < 100_000) {
                batch(w, b++);
            }
            // said by the free-space check before the next piece is backed, or, had the disk filled between that
            // check and the write, by the write's ENOSPC: either way before the mapping is touched
            assertThat(w.failure())
                    .startsWith("journal paused: ")
                    .containsAnyOf("0 B free on", "No space left on device");
            written = w.batchesWritten();
            assertThat(written).isGreaterThanOrEqualTo(100);
            for (int i = 0; i < 50; i++) {
                batch(w, b++); // dropped, counted, no fault
            }
            assertThat(w.batchesWritten()).isEqualTo(written);
        }
        final long[] back = readBack(dir);
        assertThat(back[0]).isEqualTo(written);
        assertThat(back[1]).isZero();
    }

    /**
     * No size bound, one-second cycles on a 16 MiB file system: the reserve is kept by retiring the oldest cycles,
     * never by stopping; what is left reads back whole, the newest batch last.
     */
    @Test
    void shouldKeepTheReserveByRetiringOldCyclesNotByStopping() throws Exception {
        tmpfs("16m");
        final Path dir = mount.resolve("journal");
        long last = -1;
        try (JournalWriter w = new JournalWriter(dir, TestRollCycles.TEST_SECONDLY, 0, 0)) {
            final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            long b = 0;
            while (System.nanoTime() - end < 0) {
                batch(w, b++);
                assertThat(w.failure()).as("batch " + b).isNull();
                Thread.sleep(0, 200_000);
                last = b - 1;
            }
            assertThat(w.retiredCycles()).isPositive();
            assertThat(free()).isGreaterThanOrEqualTo(w.reserveBytes());
        }
        final long[] lastSeen = {-1};
        try (JournalReader r = new JournalReader(dir)) {
            while (r.read(
                            new NoopListener() {
                                @Override
                                public void onHost(final long hostId) {
                                    lastSeen[0] = hostId;
                                }
                            },
                            new JournalReader.Meta() {},
                            100)
                    > 0) {
                // all
            }
            assertThat(r.corruptDocuments()).isZero();
            assertThat(r.documents()).isPositive();
        }
        assertThat(lastSeen[0]).isEqualTo(last);
    }

    /**
     * The service (`flowscope run --simulate`, through Main) with its journal on an 8 MiB tmpfs: the journal fills
     * its share within a second and pauses; /api/health says DEGRADED with journal.failure, /metrics
     * flowscope_journal_up 0, the console says it once; ingest, detection (the simulated slow link is named) and the
     * API go on; the service stops cleanly with exit status 0.
     */
    @Test
    void shouldTurnTheServiceDegradedWhileDetectionAndTheApiGoOnWhenTheJournalsDiskIsFull() throws Exception {
        tmpfs("8m");
        final Path dir = mount.resolve("journal");
        final CountDownLatch stop = new CountDownLatch(1);
        final AtomicReference<Throwable> failed = new AtomicReference<>();
        final AtomicReference<JsonNode> health = new AtomicReference<>();
        Main.stopSignal = stop;
        Main.onStarted = s -> new Thread(() -> {
                    try {
                        await().atMost(Duration.ofSeconds(60))
                                .until(() -> "DEGRADED"
                                                .equals(Http.json(s.url() + "api/health")
                                                        .get("status")
                                                        .asText())
                                        && !Http.json(s.url() + "api/health")
                                                .get("journal")
                                                .get("failure")
                                                .isNull());
                        final JsonNode h = Http.json(s.url() + "api/health");
                        health.set(h);
                        assertThat(Http.get(s.url() + "metrics").body()).contains("flowscope_journal_up 0");
                        final long events = h.get("eventsTotal").asLong();
                        // ingest and detection go on: more events, and the slow link 3 -> 4 is named
                        await().atMost(Duration.ofSeconds(90))
                                .until(() -> Http.json(s.url() + "api/health")
                                                        .get("eventsTotal")
                                                        .asLong()
                                                > events
                                        && Http.get(s.url() + "api/anomalies")
                                                .body()
                                                .contains("SLOW_LINK"));
                        assertThat(Http.json(s.url() + "api/health")
                                        .get("status")
                                        .asText())
                                .isNotEqualTo("DOWN");
                    } catch (final Throwable t) {
                        failed.set(t);
                    } finally {
                        stop.countDown();
                    }
                })
                .start();
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int rc;
        try {
            rc = Main.run(
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(new ByteArrayOutputStream()),
                    "run",
                    "--simulate",
                    "--port",
                    "0",
                    "--journal-dir",
                    dir.toString(),
                    "--quiet",
                    "--ring-dir",
                    tmp.resolve("rings").toString());
        } finally {
            Main.stopSignal = null;
            Main.onStarted = null;
        }
        if (failed.get() != null) {
            throw new AssertionError("console:\n" + out, failed.get());
        }
        assertThat(rc).isZero();
        assertThat(health.get().get("journal").get("failure").asText()).startsWith("journal paused: ");
        assertThat(health.get().get("reasons").toString()).contains("journal: journal paused");
        final String console = out.toString(StandardCharsets.UTF_8);
        assertThat(console).contains("flowscope: health DEGRADED: journal: journal paused");
        assertThat(free()).isPositive();
        final long[] back = readBack(dir);
        assertThat(back[0]).isPositive();
        assertThat(back[1]).isZero();
    }
}
