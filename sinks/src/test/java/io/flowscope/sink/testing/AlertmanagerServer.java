package io.flowscope.sink.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Alertmanager for tests (Debian package prometheus-alertmanager, 0.25): the given configuration (and
 * optional {@code --web.config.file}: TLS, basic auth) in a temp dir, its API on a free 127.0.0.1 port, clustering
 * off. {@link #start()} waits until it accepts connections; {@link #stop()} ends the process by its PID. Fails
 * (never skips) when the binary is missing.
 */
public final class AlertmanagerServer implements AutoCloseable {
    public static final String INSTALL_HINT = "prometheus-alertmanager not found on PATH (or at "
            + "-Dflowscope.alertmanager): the Alertmanager tests need a real Alertmanager; install it with "
            + "`apt-get install -y --no-install-recommends prometheus-alertmanager` (Debian 12: 0.25.0)";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final int port;
    private final boolean tls;
    private Process process;

    /**
     * @param config    alertmanager.yml
     * @param webConfig the web configuration (tls_server_config, basic_auth_users), or null: plain HTTP, no auth
     */
    public AlertmanagerServer(final String config, final String webConfig) throws IOException {
        this.dir = Files.createTempDirectory("flowscope-alertmanager-");
        this.port = freePort();
        this.tls = webConfig != null && webConfig.contains("tls_server_config");
        Files.writeString(dir.resolve("alertmanager.yml"), config);
        if (webConfig != null) {
            Files.writeString(dir.resolve("web.yml"), webConfig);
        }
    }

    /** A directory of this server's own, for files its configuration names (certificates). */
    public Path dir() {
        return dir;
    }

    public static String binary() {
        final String override = System.getProperty("flowscope.alertmanager");
        if (override != null && new File(override).canExecute()) {
            return override;
        }
        for (final String d : (System.getenv().getOrDefault("PATH", "") + ":/usr/bin:/usr/sbin").split(":")) {
            for (final String name : new String[] {"prometheus-alertmanager", "alertmanager"}) {
                final File f = new File(d, name);
                if (!d.isEmpty() && f.canExecute()) {
                    return f.getAbsolutePath();
                }
            }
        }
        throw new IllegalStateException(INSTALL_HINT);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public synchronized AlertmanagerServer start() throws IOException, InterruptedException {
        final List<String> cmd = new ArrayList<>(List.of(
                binary(),
                "--config.file=" + dir.resolve("alertmanager.yml"),
                "--storage.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--cluster.listen-address="));
        if (Files.exists(dir.resolve("web.yml"))) {
            cmd.add("--web.config.file=" + dir.resolve("web.yml"));
        }
        process = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("alertmanager.log").toFile()))
                .start();
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("alertmanager exited with " + process.exitValue() + "; log:\n" + log());
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                return this;
            } catch (final IOException notYet) {
                Thread.sleep(20);
            }
        }
        stop();
        throw new IllegalStateException(
                "alertmanager did not listen on 127.0.0.1:" + port + " within 30 s; log:\n" + log());
    }

    /** Ends the process (SIGTERM, then SIGKILL after 10 s) by its PID. */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        final ProcessHandle handle = process.toHandle();
        handle.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                handle.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (final InterruptedException e) {
            handle.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    public URI url() {
        return URI.create((tls ? "https" : "http") + "://127.0.0.1:" + port);
    }

    /** Where clients POST alerts. */
    public URI alertsUrl() {
        return url().resolve("/api/v2/alerts");
    }

    /** {@code GET /api/v2/alerts}: the alerts Alertmanager holds active (resolved ones are not listed). */
    public JsonNode alerts(final HttpClient client, final String authorization) {
        final HttpRequest.Builder b = HttpRequest.newBuilder(alertsUrl())
                .timeout(Duration.ofSeconds(10))
                .GET();
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        try {
            final HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("GET /api/v2/alerts answered " + r.statusCode() + ": " + r.body());
            }
            return JSON.readTree(r.body());
        } catch (final IOException e) {
            throw new UncheckedIOException("GET /api/v2/alerts failed", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    public String log() {
        try {
            final Path log = dir.resolve("alertmanager.log");
            return Files.exists(log) ? Files.readString(log) : "(no log)";
        } catch (final IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    @Override
    public void close() {
        stop();
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (final IOException ignored) {
            // temp dir left behind: harmless
        }
    }

    @Override
    public String toString() {
        return "AlertmanagerServer{" + url() + ", pid=" + (process == null ? -1 : process.pid()) + ", dir=" + dir + '}';
    }
}
