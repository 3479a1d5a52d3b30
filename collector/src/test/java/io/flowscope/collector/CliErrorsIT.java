package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.Launcher.Ran;
import io.flowscope.collector.journal.JournalLock;
import io.flowscope.ring.cli.RingTool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every CLI error is one clear line and a non-zero exit (issue #16): bad invocations of every command of the real
 * launcher (the collector's, the ring tool's, its own) give exactly one line on stderr (no usage dump, no stack trace,
 * no log line), the documented exit status (collector README, "Command line") and the reason. ({@code inspect}
 * stopping on a closed pipe: MainTest, and {@code inspect ... | head} in DocsRunIT.)
 */
class CliErrorsIT {
    @TempDir
    static Path tmp;

    static Path journal;

    /** A bad invocation: its arguments (after ./flowscope), the exit status and what its one line says. */
    record Bad(String args, int rc, String says) {}

    @BeforeAll
    static void inputs() throws Exception {
        journal = tmp.resolve("journal");
        final Ran r = Launcher.run(
                Launcher.FLOWSCOPE + " simulate --scenario nodes=2,gpus=2,channels=1,duration=300ms "
                        + "--speed 20 --port 0 --quiet --journal-dir " + journal,
                tmp,
                Launcher.environment(tmp),
                Duration.ofSeconds(90),
                null);
        assertThat(r.rc()).as(r.both()).isZero();
        Files.createDirectories(tmp.resolve("empty"));
        Files.writeString(tmp.resolve("notes.txt"), "not a trace\n");
        final byte[] garbage = new byte[300_000];
        new java.util.Random(16).nextBytes(garbage);
        Files.write(tmp.resolve("garbage.ring"), garbage);
    }

    static List<Bad> table() {
        final String j = journal.toString();
        final String missing = tmp.resolve("missing").toString();
        final String empty = tmp.resolve("empty").toString();
        final String garbage = tmp.resolve("garbage.ring").toString();
        final int config = Main.EXIT_CONFIG;
        final int input = Main.EXIT_INPUT;
        final int ring = RingTool.EXIT_BAD_RING;
        return List.of(
                new Bad("bogus", config, "flowscope: Unmatched argument at index 0: 'bogus'"),
                new Bad(
                        "run --bogus",
                        config,
                        "flowscope run: Unknown option: '--bogus'; usage: ./flowscope run --help"),
                new Bad("run --port abc", config, "Invalid value for option '--port': 'abc' is not an int"),
                new Bad("run --port 99999", config, "http.port = '99999' (from the command line): expected an integer"),
                new Bad("run --set http.port", config, "should be in KEY=VALUE format but was http.port"),
                new Bad("run --set foo.bar=1", config, "unknown key 'foo.bar' in the command line"),
                new Bad(
                        "run --config " + missing + ".yaml",
                        config,
                        "no such configuration file: " + missing + ".yaml"),
                new Bad("run --duraton 5", config, "Unknown options: '--duraton', '5' (did you mean --duration?)"),
                new Bad("simulate --fault bogus", config, "unknown fault 'bogus'"),
                new Bad("simulate --fault slow-link:rank=x", config, "bad value for rank: 'x'"),
                new Bad("simulate --speed 0", config, "simulate.speed = '0.0'"),
                new Bad("simulate --scenario nodes=x", config, "simulate.scenario"),
                new Bad("replay", config, "flowscope replay: Missing required parameter: 'JOURNAL'"),
                new Bad("replay " + j + " extra", config, "Unmatched argument at index 2: 'extra'"),
                new Bad("replay " + missing, input, "no such journal directory or trace file: " + missing),
                new Bad("replay " + empty, input, "not a journal (no .cq4 cycle files): " + empty),
                new Bad("replay " + tmp.resolve("notes.txt"), input, "is a file but not a trace"),
                new Bad("replay " + j + " --from 10 --to 5", config, "--from 10 is after --to 5: an empty range"),
                new Bad("replay " + j + " --from x", config, "Invalid value for option '--from': 'x' is not a long"),
                new Bad("replay " + j + " --set window.periodMs=0", config, "window.periodMs = '0'"),
                new Bad("replay " + j + " --set nope=1", config, "unknown key 'nope'"),
                new Bad("replay " + j + " --jsno", config, "Unknown option: '--jsno' (did you mean --json?)"),
                new Bad("inspect", config, "Missing required parameter: 'RING|JOURNAL|TRACE'"),
                new Bad(
                        "inspect " + missing,
                        input,
                        "no such ring file or journal directory (or trace file): " + missing),
                new Bad("inspect " + garbage, input, "not a flowscope ring"),
                new Bad("inspect " + j + " --from 5 --to 1", config, "--from 5 is after --to 1"),
                new Bad("inspect " + j + " --limit x", config, "Invalid value for option '--limit'"),
                new Bad("stat", ring, "ring-tool stat: Missing required parameter: 'RING'"),
                new Bad("stat " + garbage + " extra", ring, "Unmatched argument at index 2: 'extra'"),
                new Bad("stat " + missing, ring, "ring-tool stat: no such file: " + missing),
                new Bad("stat " + garbage, ring, "not a flowscope ring (magic"),
                new Bad("stat " + empty, ring, "a directory, not a ring file"),
                new Bad(
                        "tail " + missing + " --duration 1",
                        ring,
                        "ring-tool tail: no such ring directory: " + missing),
                new Bad("tail " + empty + " --duration x", ring, "Invalid value for option '--duration': 'x'"),
                new Bad("capture " + missing + " --duration 1", ring, "ring-tool capture: no such ring directory"),
                new Bad("capture " + empty + " --sample x", ring, "Invalid value for option '--sample'"),
                new Bad("harness-demo abc", 2, "SECONDS must be a positive whole number, not 'abc'"),
                new Bad("harness-demo 0", 2, "SECONDS must be a positive whole number, not '0'"),
                new Bad("harness-demo 1 2", 2, "one argument (SECONDS) at most"));
    }

    @Test
    void shouldSayEveryErrorInOneLineWithItsExitStatus() throws Exception {
        final List<String> failures = new ArrayList<>();
        for (final Bad b : table()) {
            final Ran r = Launcher.run(
                    Launcher.FLOWSCOPE + " " + b.args(), tmp, Launcher.environment(tmp), Duration.ofSeconds(60), null);
            final List<String> lines = r.err().lines().toList();
            if (r.rc() != b.rc()
                    || lines.size() != 1
                    || !lines.get(0).contains(b.says())
                    || r.err().contains("Exception") && !b.says().contains("Exception")
                    || r.err().contains("\tat ")) {
                failures.add("expected exit " + b.rc() + " and one line with '" + b.says() + "'\n" + r.both());
            }
        }
        assertThat(failures).as(String.join("\n\n", failures)).isEmpty();
    }

    /** {@code ./flowscope COMMAND --help} of every command: usage on stdout, exit 0 (harness-demo's crashed once). */
    @Test
    void shouldShowTheHelpOfEveryCommandThroughTheLauncher() throws Exception {
        final List<String> failures = new ArrayList<>();
        for (final String command : List.of(
                "",
                "help",
                "demo",
                "run",
                "simulate",
                "replay",
                "inspect",
                "harness-demo",
                "stat",
                "tail",
                "capture")) {
            final String args = command.equals("help") ? "help" : (command + " --help").strip();
            final Ran r = Launcher.run(
                    Launcher.FLOWSCOPE + " " + args, tmp, Launcher.environment(tmp), Duration.ofSeconds(60), null);
            if (r.rc() != 0
                    || !r.err().isEmpty()
                    || !r.out()
                            .contains(
                                    command.isEmpty() || command.equals("help")
                                            ? "harness-demo [SECONDS]"
                                            : command.equals("demo") ? "--simulate" : command)) {
                failures.add(r.both());
            }
        }
        assertThat(failures).as(String.join("\n\n", failures)).isEmpty();
    }

    @Test
    void shouldSayInOneLineThatAnotherServiceHoldsTheJournal() throws Exception {
        final Path held = tmp.resolve("held");
        try (JournalLock lock = JournalLock.acquire(held)) {
            final Ran r = Launcher.run(
                    Launcher.FLOWSCOPE + " run --simulate --port 0 --duration 5 --journal-dir " + held,
                    tmp,
                    Launcher.environment(tmp),
                    Duration.ofSeconds(60),
                    null);
            assertThat(r.rc()).as(r.both()).isEqualTo(Main.EXIT_IN_USE);
            assertThat(r.err().lines().toList()).as(r.both()).hasSize(1);
            assertThat(r.err()).contains("the journal directory " + held + " is in use by another flowscope service");
        }
    }
}
