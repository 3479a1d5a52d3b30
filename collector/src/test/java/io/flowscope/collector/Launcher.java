package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Runs shell command lines as a user types them (bash -c) with the repository's real launcher {@code ./flowscope} on
 * the test JVM's classpath ({@code FLOWSCOPE_CLASSPATH}: the launcher builds nothing, so no Maven inside Maven) and
 * this JVM's {@code java} first on the PATH. Output goes to files (no pipe to fill); a long-running command is stopped
 * with SIGTERM (its process tree) once the output it must show has appeared.
 */
final class Launcher {
    /** The repository root: the tests run in the module directory. */
    static final Path ROOT = findRoot();
    /** The launcher script. */
    static final Path FLOWSCOPE = ROOT.resolve("flowscope");
    /** The C harness and the plugin, built by profiler-plugin in the reactor before this module's tests. */
    static final Path NATIVE = Path.of(System.getProperty(
            "flowscope.native.dir", ROOT.resolve("profiler-plugin/build").toString()));

    private Launcher() {}

    /** What a command did: its exit status, its stdout and stderr, whether it was stopped, its wall time. */
    record Ran(String command, int rc, String out, String err, boolean stopped, double seconds) {
        /** Stdout and stderr, for a failing assertion's message. */
        String both() {
            return "$ " + command + "\n--- exit " + rc + (stopped ? " (stopped by the test)" : "") + " after "
                    + String.format(java.util.Locale.ROOT, "%.1f", seconds)
                    + " s\n--- stdout:\n" + tail(out) + "\n--- stderr:\n"
                    + tail(err);
        }

        private static String tail(final String s) {
            return s.length() <= 6000 ? s : "...\n" + s.substring(s.length() - 6000);
        }
    }

    private static Path findRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("flowscope")) && Files.isRegularFile(p.resolve("collector/pom.xml"))) {
                return p;
            }
        }
        throw new IllegalStateException(
                "no repository root (with ./flowscope) above " + Path.of("").toAbsolutePath());
    }

    /** The environment every command gets: the launcher on this JVM's classpath, temporary files under {@code tmp}. */
    static Map<String, String> environment(final Path tmp) {
        final Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + System.getenv("PATH"));
        env.put("FLOWSCOPE_CLASSPATH", System.getProperty("java.class.path"));
        env.put("FLOWSCOPE_JAVA_OPTS", "-Djava.io.tmpdir=" + tmp);
        env.put("TMPDIR", tmp.toString());
        env.put("XDG_STATE_HOME", tmp.resolve("state").toString());
        return env;
    }

    /**
     * Runs {@code command} in {@code cwd}; stops it (SIGTERM to its process tree) once {@code stopWhen} matches its
     * stdout or stderr (null: runs to its end); fails when it neither ended nor showed it within {@code limit}.
     */
    static Ran run(
            final String command,
            final Path cwd,
            final Map<String, String> env,
            final Duration limit,
            final Pattern stopWhen)
            throws IOException, InterruptedException {
        final Path logs = Files.createTempDirectory(Path.of(env.get("TMPDIR")), "cmd");
        final Path out = logs.resolve("stdout");
        final Path err = logs.resolve("stderr");
        final ProcessBuilder pb = new ProcessBuilder("bash", "-c", command)
                .directory(cwd.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.PIPE);
        pb.environment().putAll(env);
        final long start = System.nanoTime();
        final Process p = pb.start();
        p.getOutputStream().close();
        boolean stopped = false;
        final long deadline = start + limit.toNanos();
        while (!p.waitFor(100, TimeUnit.MILLISECONDS)) {
            if (stopWhen != null
                    && (stopWhen.matcher(read(out)).find()
                            || stopWhen.matcher(read(err)).find())) {
                stopped = true;
                stop(p);
                break;
            }
            if (System.nanoTime() - deadline > 0) {
                kill(p);
                throw new AssertionError("did not " + (stopWhen == null ? "end" : "show /" + stopWhen + "/")
                        + " within "
                        + limit.toSeconds() + " s:\n"
                        + new Ran(command, -1, read(out), read(err), false, (System.nanoTime() - start) / 1e9).both());
            }
        }
        if (!p.waitFor(45, TimeUnit.SECONDS)) {
            kill(p);
            throw new AssertionError("did not stop within 45 s of SIGTERM: " + command);
        }
        return new Ran(command, p.exitValue(), read(out), read(err), stopped, (System.nanoTime() - start) / 1e9);
    }

    /** SIGTERM to the command's processes, innermost first (the JVM's shutdown hook closes the service). */
    static void stop(final Process p) {
        final List<ProcessHandle> tree = p.descendants().toList();
        for (int i = tree.size() - 1; i >= 0; i--) {
            tree.get(i).destroy();
        }
        p.destroy();
    }

    static void kill(final Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    static String read(final Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (final IOException e) {
            return "";
        }
    }

    /** A port nothing listens on now. */
    static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A ring written by the C harness driving the real plugin ({@code ops} operations; the producer closed it). */
    static Path harnessRing(final Path dir, final int ops) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        final Process h = new ProcessBuilder(
                        NATIVE.resolve("fs_harness").toString(),
                        "--plugin",
                        NATIVE.resolve("libnccl-profiler-flowscope.so").toString(),
                        "--ring-dir",
                        dir.toString(),
                        "--ops",
                        Integer.toString(ops))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("harness.log").toFile())
                .start();
        assertThat(h.waitFor(60, TimeUnit.SECONDS)).as("harness ended").isTrue();
        assertThat(h.exitValue()).as(read(dir.resolve("harness.log"))).isZero();
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".ring"))
                    .findFirst()
                    .orElseThrow();
        }
    }

    /** The C harness streaming into a ring of {@code dir} for {@code seconds} (stop it with {@link #kill}). */
    static Process liveHarness(final Path dir, final int seconds) throws IOException {
        Files.createDirectories(dir);
        return new ProcessBuilder(
                        NATIVE.resolve("fs_harness").toString(),
                        "--plugin",
                        NATIVE.resolve("libnccl-profiler-flowscope.so").toString(),
                        "--ring-dir",
                        dir.toString(),
                        "--live",
                        Integer.toString(seconds),
                        "--rate",
                        "20000")
                .redirectErrorStream(true)
                .redirectOutput(
                        dir.resolveSibling(dir.getFileName() + "-harness.log").toFile())
                .start();
    }
}
