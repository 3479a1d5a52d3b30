package io.flowscope.sink.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A real {@code influxd} (Debian package influxdb, 1.6.7) for tests: its own config in a temp dir (data, meta,
 * WAL), HTTP and RPC on free 127.0.0.1 ports, reporting and self-monitoring off. {@link #start()} waits for
 * {@code GET /ping} = 204; {@link #stop()} ends the process by its PID. Restartable on the same port and data.
 * Fails (never skips) when influxd is missing. {@link #withAuth} turns on {@code auth-enabled} (an admin user is
 * created through {@code /query} at the first start, as InfluxDB allows while it has no user), {@link #overHttps}
 * serves HTTPS with the given certificate; the helper's own queries use both.
 */
public final class InfluxServer implements AutoCloseable {
    public static final String INSTALL_HINT =
            "influxd not found on PATH (or at -Dflowscope.influxd): the sink and dashboard tests need a real InfluxDB 1.x; "
                    + "install it with `apt-get install -y --no-install-recommends influxdb` (Debian 12: influxdb 1.6.7)";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final int httpPort;
    private final int rpcPort;
    private final Path config;
    private final String adminUser;
    private final String adminPassword;
    private final SelfSigned https;
    private final HttpClient client;
    private boolean adminCreated;
    private Process process;

    public InfluxServer() throws IOException {
        this(null, null, null);
    }

    private InfluxServer(final String adminUser, final String adminPassword, final SelfSigned https)
            throws IOException {
        this.dir = Files.createTempDirectory("flowscope-influxd-");
        this.httpPort = freePort();
        this.rpcPort = freePort();
        this.config = dir.resolve("influxdb.conf");
        this.adminUser = adminUser;
        this.adminPassword = adminPassword;
        this.https = https;
        final HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2));
        if (https != null) {
            b.sslContext(new io.flowscope.sink.http.ClientTls(https.certPem(), null, null, false).sslContext());
        }
        this.client = b.build();
        String text = configText(dir, httpPort, rpcPort);
        if (adminUser != null) {
            text = text.replace("auth-enabled = false", "auth-enabled = true");
        }
        if (https != null) {
            text = text.replace(
                    "  log-enabled = false\n",
                    "  log-enabled = false\n  https-enabled = true\n" + "  https-certificate = \"" + https.certPem()
                            + "\"\n  https-private-key = \"" + https.keyPem() + "\"\n");
        }
        Files.writeString(config, text);
    }

    /** {@code auth-enabled = true} with an admin user of this name and password (the helper's queries use it). */
    public static InfluxServer withAuth(final String adminUser, final String adminPassword) throws IOException {
        return new InfluxServer(adminUser, adminPassword, null);
    }

    /** HTTPS only ({@code https-enabled}) with this certificate and key (PEM), trusted by the helper's queries. */
    public static InfluxServer overHttps(final SelfSigned certificate) throws IOException {
        return new InfluxServer(null, null, certificate);
    }

    /** The config used (also the template of deploy/influxdb/influxdb.conf.template). */
    public static String configText(final Path dir, final int httpPort, final int rpcPort) {
        return "reporting-enabled = false\n"
                + "bind-address = \"127.0.0.1:" + rpcPort + "\"\n"
                + "[meta]\n  dir = \"" + dir.resolve("meta") + "\"\n"
                + "[data]\n  dir = \"" + dir.resolve("data") + "\"\n  wal-dir = \"" + dir.resolve("wal") + "\"\n"
                + "  query-log-enabled = false\n"
                + "[http]\n  enabled = true\n  bind-address = \"127.0.0.1:" + httpPort + "\"\n  auth-enabled = false\n"
                + "  log-enabled = false\n"
                + "[monitor]\n  store-enabled = false\n"
                + "[continuous_queries]\n  enabled = false\n";
    }

    public static String influxdBinary() {
        return influxdBinary(
                System.getProperty("flowscope.influxd"),
                System.getenv().getOrDefault("PATH", "/usr/bin:/bin") + ":/usr/bin:/usr/sbin");
    }

    /** The override when executable, else {@code influxd} in {@code searchPath}; else fails with the install command. */
    static String influxdBinary(final String override, final String searchPath) {
        if (override != null && new File(override).canExecute()) {
            return override;
        }
        for (final String d : searchPath.split(File.pathSeparator)) {
            final File f = new File(d, "influxd");
            if (!d.isEmpty() && f.canExecute()) {
                return f.getAbsolutePath();
            }
        }
        throw new IllegalStateException(INSTALL_HINT);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public synchronized InfluxServer start() throws IOException, InterruptedException {
        if (process != null && process.isAlive()) {
            return this;
        }
        final ProcessBuilder pb = new ProcessBuilder(influxdBinary(), "-config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("influxd.log").toFile()));
        process = pb.start();
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("influxd exited with " + process.exitValue() + "; log:\n" + log());
            }
            if (pingStatus() == 204) {
                if (adminUser != null && !adminCreated) {
                    // allowed without credentials while the server has no user at all
                    execute("CREATE USER \"" + adminUser + "\" WITH PASSWORD '" + adminPassword
                            + "' WITH ALL PRIVILEGES");
                    adminCreated = true;
                }
                return this;
            }
            Thread.sleep(20);
        }
        stop();
        throw new IllegalStateException("influxd did not answer /ping with 204 within 30 s; log:\n" + log());
    }

    /** Ends the process (SIGTERM, then SIGKILL after 10 s) by its PID. */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        final ProcessHandle handle = process.toHandle();
        handle.destroy();
        try {
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                handle.destroyForcibly();
                process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
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

    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    public URI url() {
        return URI.create((https == null ? "http" : "https") + "://127.0.0.1:" + httpPort);
    }

    public int pingStatus() {
        try {
            return client.send(
                            HttpRequest.newBuilder(url().resolve("/ping"))
                                    .timeout(Duration.ofSeconds(2))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (final IOException e) {
            return -1;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** POST /query (statements that change things: CREATE DATABASE, DROP ...). */
    public JsonNode execute(final String statement) {
        return query(null, statement, true);
    }

    /** GET /query?db=..&q=.. and the JSON answer; throws with the server's message on an error. */
    public JsonNode query(final String db, final String q) {
        return query(db, q, false);
    }

    private JsonNode query(final String db, final String q, final boolean post) {
        final String params = (db == null ? "" : "db=" + URLEncoder.encode(db, StandardCharsets.UTF_8) + "&")
                + "epoch=ns&q=" + URLEncoder.encode(q, StandardCharsets.UTF_8);
        final HttpRequest.Builder b = post
                ? HttpRequest.newBuilder(url().resolve("/query"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString(params))
                : HttpRequest.newBuilder(url().resolve("/query?" + params)).GET();
        if (adminUser != null && adminCreated) {
            b.header(
                    "Authorization",
                    io.flowscope.sink.http.HttpAuth.basic(adminUser, adminPassword)
                            .header());
        }
        try {
            final HttpResponse<String> r =
                    client.send(b.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            final JsonNode json = JSON.readTree(r.body());
            final JsonNode error = json.path("error").isMissingNode()
                    ? json.path("results").path(0).path("error")
                    : json.path("error");
            if (r.statusCode() != 200 || !error.isMissingNode()) {
                throw new IllegalStateException("query `" + q + "` answered " + r.statusCode() + ": " + r.body());
            }
            return json;
        } catch (final IOException e) {
            throw new UncheckedIOException("query `" + q + "` failed", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The rows of every series of the first statement's result, each as its values array. */
    public List<JsonNode> rows(final String db, final String q) {
        final List<JsonNode> rows = new ArrayList<>();
        for (final JsonNode series : query(db, q).path("results").path(0).path("series")) {
            series.path("values").forEach(rows::add);
        }
        return rows;
    }

    /** The single value of a one-row, one-column answer (e.g. {@code SELECT count(x)}), or 0 when no rows. */
    public long count(final String db, final String q) {
        final List<JsonNode> rows = rows(db, q);
        return rows.isEmpty() ? 0 : rows.get(0).path(1).asLong();
    }

    public String log() {
        try {
            final Path log = dir.resolve("influxd.log");
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
        return "InfluxServer{" + url() + ", pid=" + pid() + ", dir=" + dir + '}';
    }
}
