package io.flowscope.collector.fleet;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.Main;
import io.flowscope.collector.config.FleetConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * {@code flowscope run --role aggregator} in its own JVM (this JVM's class path and module flags), its output
 * collected line by line; stopped by its PID: {@link #kill()} (SIGKILL) or {@link #close()} (SIGTERM, then SIGKILL
 * after 30 s), which is safe to call on any path, failed tests included.
 */
final class AggregatorProcess implements AutoCloseable {
    private final String name;
    private final int port;
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private AggregatorProcess(final String name, final int port, final Process process) {
        this.name = name;
        this.port = port;
        this.process = process;
        this.reader = new Thread(this::read, "aggregator-output-" + name);
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** Starts it; {@code holdFile}: the fault injection of {@link Aggregator#HOLD_PROPERTY} (armed when it exists). */
    static AggregatorProcess start(final String name, final FleetConfig fleet, final Path holdFile) throws IOException {
        return start(name, fleet, holdFile, Map.of(), Map.of());
    }

    /**
     * The same with more {@code --set} keys ({@code settings}) and system properties ({@code properties}).
     */
    static AggregatorProcess start(
            final String name,
            final FleetConfig fleet,
            final Path holdFile,
            final Map<String, String> settings,
            final Map<String, String> properties)
            throws IOException {
        final int port = freePort();
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-XX:TieredStopAtLevel=1"); // starts faster; two of these share 2 vCPUs with the broker
        for (final String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("-Dchronicle.")) {
                cmd.add(a);
            }
        }
        cmd.add("-D" + Aggregator.HOLD_PROPERTY + "=" + holdFile);
        properties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "run",
                "--role",
                "aggregator",
                "--no-journal",
                "--port",
                Integer.toString(port),
                "--set",
                "fleet.bootstrap=" + fleet.bootstrap(),
                "--set",
                "fleet.topicPrefix=" + fleet.topicPrefix(),
                "--set",
                "fleet.group=" + fleet.group(),
                "--set",
                "fleet.partitions=" + fleet.partitions(),
                "--set",
                "fleet.agentId=" + name,
                "--quiet"));
        settings.forEach((k, v) -> cmd.addAll(List.of("--set", k + "=" + v)));
        return new AggregatorProcess(
                name, port, new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    private void read() {
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (final IOException ignored) {
            // the process is gone
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    List<String> lines() {
        return lines;
    }

    /** Its last lines, for a failure message. */
    String tail() {
        final List<String> l = List.copyOf(lines);
        return name + " (pid " + pid() + "):\n  "
                + String.join("\n  ", l.subList(Math.max(0, l.size() - 60), l.size()));
    }

    private String get(final String path) throws IOException, InterruptedException {
        return http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    JsonNode health() throws IOException, InterruptedException {
        return FleetCodec.MAPPER.readTree(get("/api/health"));
    }

    /** The partitions it owns now, by number (from its /api/health). */
    List<Integer> partitions() throws IOException, InterruptedException {
        final List<Integer> out = new ArrayList<>();
        for (final JsonNode p : health().path("partitions")) {
            final String s = p.asText();
            out.add(Integer.parseInt(s.substring(s.lastIndexOf('-') + 1)));
        }
        return out;
    }

    /** Waits until {@code a} and {@code b} share four partitions two each (a group that has settled); fails fast if one dies. */
    static void awaitTwoPartitionsEach(final AggregatorProcess a, final AggregatorProcess b) {
        await("both aggregators own two partitions")
                .atMost(Duration.ofSeconds(180))
                .pollInterval(Duration.ofMillis(500))
                .ignoreExceptions()
                .failFast(() -> !a.isAlive() || !b.isAlive())
                .until(() -> a.partitions().size() == 2 && b.partitions().size() == 2);
    }

    /** A JSON resource of its HTTP API, e.g. {@code /api/anomalies?state=open}. */
    JsonNode api(final String path) throws IOException, InterruptedException {
        return FleetCodec.MAPPER.readTree(get(path));
    }

    String metrics() throws IOException, InterruptedException {
        return get("/metrics");
    }

    /** SIGKILL to its PID; its exit status (137). */
    int kill() throws InterruptedException {
        ProcessHandle.of(pid()).ifPresent(ProcessHandle::destroyForcibly);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + pid() + ") still alive 60 s after SIGKILL");
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            ProcessHandle.of(pid()).ifPresent(ProcessHandle::destroy);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                ProcessHandle.of(pid()).ifPresent(ProcessHandle::destroyForcibly);
                process.waitFor(30, TimeUnit.SECONDS);
            }
        }
        reader.join(10_000);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
