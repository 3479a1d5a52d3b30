package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalLock;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, acceptance 4 and the demo's journal (acceptance 1): one service per journal directory, a default
 * directory per user and instance, and a simulated run's own journal removed when it ends.
 */
class JournalOwnerTest {
    @TempDir
    Path dir;

    private CollectorConfig config(final Path journal, final int port) {
        return config(journal, port, "");
    }

    private CollectorConfig config(final Path journal, final int port, final String scenario) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("simulate.scenario", scenario);
        o.put("http.port", Integer.toString(port));
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.dir", journal.toString());
        return CollectorConfig.load(null, Map.of(), o);
    }

    /**
     * A second service on the journal directory of a running one refuses to start: in the same JVM, and as a
     * process of its own through {@code flowscope run} (one line on stderr naming the directory and the first
     * service's pid, exit status 5, no stack trace). Readers need no lock: the running service's journal replays.
     * Once the first service stopped, the directory is free again.
     */
    @Test
    void shouldRefuseASecondServiceOnTheSameJournalWithOneLineNamingTheDirectoryAndThePid() throws Exception {
        final Path journal = dir.resolve("journal");
        final long pid = ProcessHandle.current().pid();
        try (CollectorService first = CollectorService.start(config(journal, 0, "default"), e -> {})) {
            // read by another process: this one must not open the file it holds a lock on (closing any of its
            // descriptors of the file would release the lock; JournalLock's comment)
            final Process cat =
                    new ProcessBuilder("cat", journal.resolve(JournalLock.FILE).toString()).start();
            assertThat(new String(cat.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .startsWith("pid " + pid + " host ");

            final Throwable t = catchThrowable(() -> CollectorService.start(config(journal, 0), e -> {}));
            assertThat(t)
                    .isInstanceOf(JournalLock.InUseException.class)
                    .hasMessageContaining(
                            "the journal directory " + journal + " is in use by another flowscope service")
                    .hasMessageContaining("pid " + pid);

            final List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            for (final String a :
                    java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (a.startsWith("--add-") || a.startsWith("-Dchronicle.")) {
                    cmd.add(a);
                }
            }
            cmd.addAll(List.of(
                    "-cp",
                    System.getProperty("java.class.path"),
                    Main.class.getName(),
                    "run",
                    "--port",
                    "0",
                    "--ring-dir",
                    dir.resolve("rings").toString(),
                    "--journal-dir",
                    journal.toString()));
            final Path errFile = dir.resolve("second.err");
            final Process second = new ProcessBuilder(cmd)
                    .redirectError(errFile.toFile())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            final boolean exited = second.waitFor(60, TimeUnit.SECONDS);
            if (!exited) {
                second.destroyForcibly().waitFor();
            }
            final String err = Files.readString(errFile);
            assertThat(exited).as("the second service exited: " + err).isTrue();
            assertThat(second.exitValue()).as(err).isEqualTo(Main.EXIT_IN_USE);
            final List<String> lines =
                    err.lines().filter(l -> l.startsWith("flowscope run: ")).toList();
            assertThat(lines)
                    .singleElement()
                    .asString()
                    .contains(
                            "the journal directory " + journal,
                            "in use by another flowscope service (pid " + pid + " host ",
                            "--journal-dir");
            assertThat(err).doesNotContain("Exception", "\tat ");

            // a reader takes no lock: the running service's journal reads
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> !io.flowscope.collector.journal.JournalWriter.cycleFiles(journal)
                            .isEmpty());
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertThat(Main.run(
                            new PrintStream(out),
                            new PrintStream(new ByteArrayOutputStream()),
                            "inspect",
                            journal.toString(),
                            "--limit",
                            "1"))
                    .isZero();
        }
        try (CollectorService again = CollectorService.start(config(journal, 0), e -> {})) {
            assertThat(again.health().get("status")).isNotEqualTo("DOWN");
        }
    }

    /**
     * Without journal.dir the journal goes to the user's state directory, one per port:
     * {@code $XDG_STATE_HOME/flowscope/journal-<port>} (else ~/.local/state/...); two services on two ports never
     * share one by default.
     */
    @Test
    void shouldDefaultToAJournalPerUserAndPort() {
        final CollectorConfig a =
                CollectorConfig.load(null, Map.of("XDG_STATE_HOME", dir.toString()), Map.of("http.port", "7070"));
        final CollectorConfig b =
                CollectorConfig.load(null, Map.of("XDG_STATE_HOME", dir.toString()), Map.of("http.port", "7071"));
        assertThat(a.journalDir()).isEqualTo(dir.resolve("flowscope/journal-7070"));
        assertThat(b.journalDir()).isEqualTo(dir.resolve("flowscope/journal-7071"));
        assertThat(a.journalTemporary()).isFalse();
        final CollectorConfig home = CollectorConfig.load(null, Map.of(), Map.of());
        assertThat(home.journalDir())
                .isEqualTo(Path.of(System.getProperty("user.home"), ".local/state/flowscope/journal-7070"));
        final CollectorConfig named = CollectorConfig.load(null, Map.of(), Map.of("journal.dir", "/srv/j"));
        assertThat(named.journalDir()).isEqualTo(Path.of("/srv/j"));
        // a simulated run without one named: its own, under $TMPDIR/flowscope-<user>, removed when it ends
        final CollectorConfig sim = CollectorConfig.load(null, Map.of(), Map.of("simulate.scenario", "default"));
        assertThat(sim.journalTemporary()).isTrue();
        assertThat(sim.journalDir().getParent()).isEqualTo(CollectorConfig.temporaryRoot());
        assertThat(sim.journalDir().getFileName().toString()).matches(CollectorConfig.TEMPORARY_JOURNAL.pattern());
        assertThat(CollectorConfig.load(null, Map.of(), Map.of("simulate.scenario", "default", "journal.dir", "/srv/j"))
                        .journalTemporary())
                .isFalse();
        // bounds: 4 GiB on rings (read back whole at start), 40 GiB for a simulated run (ten minutes of the demo and
        // more), what is set otherwise
        assertThat(home.journalMaxBytes()).isEqualTo(4L << 30);
        assertThat(sim.journalMaxBytes()).isEqualTo(40L << 30).isEqualTo(CollectorConfig.SIMULATED_JOURNAL_MAX_BYTES);
        assertThat(CollectorConfig.load(
                                null, Map.of(), Map.of("simulate.scenario", "default", "journal.maxBytes", "1000"))
                        .journalMaxBytes())
                .isEqualTo(1000);
        assertThat(home.journalRollCycle().toString()).isEqualTo("MINUTELY");
    }

    /**
     * The demo ({@code run --simulate}) journals into a directory of its own and removes it when it stops, and
     * removes what a killed demo left (a journal whose process is gone); a journal the user named stays.
     */
    @Test
    void shouldRemoveTheDemosOwnJournalWhenItStopsAndWhatAKilledDemoLeft() throws Exception {
        // what a demo killed with SIGKILL left: a journal named for a process that is gone
        final Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        final Path stale = CollectorConfig.temporaryRoot().resolve("sim-journal-20260101-000000-" + gone.pid());
        Files.createDirectories(stale);
        Files.writeString(stale.resolve("20260101-0000.cq4"), "x");

        final AtomicReference<Path> journal = new AtomicReference<>();
        final CountDownLatch stop = new CountDownLatch(1);
        Main.stopSignal = stop;
        Main.onStarted = s -> {
            journal.set(Path.of(String.valueOf(s.health().get("journal") instanceof Map<?, ?> m ? m.get("dir") : "")));
            new Thread(() -> {
                        try {
                            Thread.sleep(1500);
                        } catch (final InterruptedException ignored) {
                            Thread.currentThread().interrupt();
                        }
                        stop.countDown();
                    })
                    .start();
        };
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
                    "--quiet",
                    "--ring-dir",
                    dir.resolve("rings").toString());
        } finally {
            Main.stopSignal = null;
            Main.onStarted = null;
        }
        final String console = out.toString(StandardCharsets.UTF_8);
        assertThat(rc).as(console).isZero();
        assertThat(stale).doesNotExist();
        assertThat(console).contains("flowscope: removed " + stale + ", the journal of an earlier simulated run");
        assertThat(journal.get().getParent()).isEqualTo(CollectorConfig.temporaryRoot());
        assertThat(console)
                .contains(
                        "; journal: " + journal.get() + " (bounded at 40.0 GiB",
                        "this run's journal " + journal.get() + " is removed (name one with --journal-dir to keep it)");
        assertThat(journal.get()).doesNotExist();

        // named by the user: kept
        final Path named = dir.resolve("kept");
        final CountDownLatch stop2 = new CountDownLatch(1);
        Main.stopSignal = stop2;
        Main.onStarted = s -> stop2.countDown();
        try {
            assertThat(Main.run(
                            new PrintStream(new ByteArrayOutputStream()),
                            new PrintStream(new ByteArrayOutputStream()),
                            "run",
                            "--simulate",
                            "--port",
                            "0",
                            "--quiet",
                            "--journal-dir",
                            named.toString(),
                            "--ring-dir",
                            dir.resolve("rings").toString()))
                    .isZero();
        } finally {
            Main.stopSignal = null;
            Main.onStarted = null;
        }
        assertThat(io.flowscope.collector.journal.JournalWriter.cycleFiles(named))
                .isNotEmpty();
    }
}
