package io.flowscope.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.http.HttpRejections.Reason;
import io.flowscope.collector.pipeline.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Issue #16, acceptance 6 (HTTP hygiene), against the real server on 127.0.0.1 over raw sockets (so that requests
 * no client library would send can be sent): each class of bad request gets its 4xx with a one-line reason in the
 * API's JSON error shape, moves {@code flowscope_http_requests_rejected_total{reason}} in {@code /metrics} by
 * exactly its count, is logged at DEBUG and never at WARN or ERROR (log captured from logback's root);
 * 405 and OPTIONS carry {@code Allow}; every route refuses the parameters it does not take, as the README's table
 * documents them (read from the README); clients that reset connections or speak plain HTTP to the TLS port cost a
 * counter, not a log line; the exposition stays valid.
 */
class HttpHygieneTest {
    private static final String ALLOW = "GET, HEAD, OPTIONS";
    private static final String TOKEN = "hygiene-token-8c1f3a5e2b";

    @TempDir
    static Path dir;

    private static CollectorService service;

    private final ListAppender<ILoggingEvent> log = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final Logger rejectionsLogger = (Logger) LoggerFactory.getLogger(HttpRejections.class);
    private Level rejectionsLevel;

    @BeforeAll
    static void start() throws Exception {
        service = CollectorService.start(config(Map.of(), Map.of()), e -> {});
    }

    @AfterAll
    static void stop() throws Exception {
        if (service != null) {
            service.close();
        }
    }

    private static CollectorConfig config(final Map<String, String> env, final Map<String, String> extra) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.enabled", "false");
        o.put("publish.intervalMs", "50");
        o.put("security.maxBodyBytes", "1024");
        o.putAll(extra);
        return CollectorConfig.load(null, env, o);
    }

    @BeforeEach
    void captureLog() {
        rejectionsLevel = rejectionsLogger.getLevel();
        rejectionsLogger.setLevel(Level.DEBUG);
        log.start();
        root.addAppender(log);
    }

    @AfterEach
    void releaseLog() {
        root.detachAppender(log);
        rejectionsLogger.setLevel(rejectionsLevel);
    }

    // ---- the classes of bad requests -------------------------------------------------------------------------

    @Test
    void shouldRefuseABodyOnGetHeadOrOptionsWith400AndNeverReadItAsTheNextRequest() throws Exception {
        final int port = service.port();
        // the issue's request (curl -d: a form body on GET), which answered 500 and logged an ERROR
        refused(
                Reason.BODY_NOT_ALLOWED,
                "GET requests take no body",
                () -> raw(
                        port,
                        "GET /api/flows HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                + "Content-Length: 7\r\n\r\na=1&b=2"));
        refused(
                Reason.BODY_NOT_ALLOWED,
                "GET requests take no body",
                () -> raw(
                        port,
                        "GET /api/anomalies HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n"
                                + "{\"bad\":1"));
        refused(
                Reason.BODY_NOT_ALLOWED,
                "GET requests take no body",
                () -> raw(
                        port,
                        "GET /api/flows HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                                + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
        refused(
                Reason.BODY_NOT_ALLOWED,
                "HEAD requests take no body",
                () -> raw(port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"));
        refused(
                Reason.BODY_NOT_ALLOWED,
                "OPTIONS requests take no body",
                () -> raw(port, "OPTIONS / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"));
        // the body is not read: what follows it on the connection is not taken for a request (closed instead)
        final Answer smuggled = refused(
                Reason.BODY_NOT_ALLOWED,
                "GET requests take no body",
                () -> raw(
                        port,
                        "GET /api/flows HTTP/1.1\r\nHost: x\r\nContent-Length: 47\r\n\r\n"
                                + "GET /api/health/live HTTP/1.1\r\nHost: x\r\n\r\n"));
        assertThat(smuggled.header("Connection")).isEqualToIgnoringCase("close");
        assertThat(smuggled.rest()).as("no second response").isEmpty();
        // a declared body over security.maxBodyBytes (1024): 413 on any method, before the method is judged
        refused(
                Reason.BODY_TOO_LARGE,
                "request body too large: 5000 bytes (limit 1024)",
                () -> raw(
                        port, "POST /api/flows HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + "x".repeat(100)));
        refused(
                Reason.BODY_TOO_LARGE,
                "request body too large",
                () -> raw(port, "GET /api/flows HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n"));
        // and the server goes on serving
        assertThat(raw(port, "GET /api/flows HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        .status())
                .isEqualTo(200);
    }

    @Test
    void shouldAnswerWhatTheHttpDecoderRefusesWithItsStatusAndAReason() throws Exception {
        final int port = service.port();
        refused(Reason.MALFORMED, "malformed HTTP request", () -> raw(port, "\u0001\u0002 garbage\r\n\r\n"));
        refused(
                Reason.MALFORMED,
                "malformed HTTP request",
                () -> raw(port, "GET /api/flows HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n"));
        refused(
                Reason.MALFORMED,
                "Multiple Content-Length values",
                () -> raw(
                        port,
                        "GET /api/flows HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"));
        refused(
                Reason.MALFORMED,
                "Transfer-Encoding",
                () -> raw(
                        port,
                        "GET /api/flows HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"));
        refused(
                Reason.MALFORMED,
                "Content-Length value is not a number",
                () -> raw(port, "GET /api/flows HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"));
        refused(
                Reason.MALFORMED,
                "prohibited character",
                () -> raw(port, "GET /api/flows HTTP/1.1\r\nHost: x\r\nCookie: a=\u0001\r\n\r\n"));
        refused(
                Reason.MALFORMED,
                "the 'Host' header is required",
                () -> raw(port, "GET /api/flows HTTP/1.1\r\nConnection: close\r\n\r\n"));
        refused(
                Reason.URI_TOO_LONG,
                "request line longer than 4096 bytes (security.maxUriBytes)",
                () -> raw(port, "GET /api/flows?limit=" + "9".repeat(5000) + " HTTP/1.1\r\nHost: x\r\n\r\n"));
        refused(
                Reason.HEADERS_TOO_LARGE,
                "request headers larger than 8192 bytes (security.maxHeaderBytes)",
                () -> raw(port, "GET /api/flows HTTP/1.1\r\nHost: x\r\nX-Big: " + "y".repeat(10_000) + "\r\n\r\n"));
    }

    @Test
    void shouldRefuseATargetThatIsNoPathOrDoesNotDecodeWith400() throws Exception {
        final int port = service.port();
        // these logged "Unhandled exception in router" at ERROR, with a stack trace, per request
        refused(Reason.BAD_PATH, "malformed path: Invalid escape sequence: %zz", () -> get(port, "/api/fl%zzows"));
        refused(Reason.BAD_PATH, "malformed path", () -> get(port, "/%zz"));
        refused(Reason.BAD_PATH, "request target must be a path starting with '/'", () -> get(port, "api/flows"));
        refused(Reason.BAD_PATH, "request target '*' is for OPTIONS only", () -> get(port, "*"));
        refused(Reason.BAD_QUERY, "malformed query string", () -> get(port, "/api/flows?%zz=1"));
        refused(Reason.BAD_QUERY, "malformed query string", () -> get(port, "/api/flows?rank=1&rank=%z"));
        refused(Reason.BAD_QUERY, "malformed query string", () -> get(port, "/?x=%"));
    }

    @Test
    void shouldAnswerAnUnknownRouteOrFileWith404() throws Exception {
        final int port = service.port();
        refused(Reason.NOT_FOUND, "no such route: /api/nothing", () -> get(port, "/api/nothing"));
        refused(Reason.NOT_FOUND, "no such route: /api/flows/x", () -> get(port, "/api/flows/x"));
        refused(
                Reason.NOT_FOUND,
                "no such route",
                () -> raw(port, "POST /api/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        refused(Reason.NOT_FOUND, "no such route or file: /nothing.html", () -> get(port, "/nothing.html"));
        // vert.x's static handler threw on this one (StringIndexOutOfBoundsException: a 500 and an ERROR)
        refused(Reason.NOT_FOUND, "no such route or file", () -> get(port, "/%2e%2e%5c"));
        refused(Reason.NOT_FOUND, "no such route or file", () -> get(port, "/..%2f..%2fetc/passwd"));
        refused(Reason.NOT_FOUND, "no such route or file", () -> get(port, "/.hidden"));
        refused(Reason.NOT_FOUND, "no such route or file", () -> get(port, "/index.html%00"));
        assertThat(get(port, "/index.html").status()).isEqualTo(200);
    }

    @Test
    void shouldAnswer405WithAllowOptionsWith204AndHeadLikeGetOnEveryRoute() throws Exception {
        final int port = service.port();
        final List<String> paths = new ArrayList<>(documentedRoutes().keySet());
        paths.addAll(List.of("/", "/index.html"));
        for (final String path : paths) {
            for (final String method : List.of("POST", "PUT", "DELETE", "PATCH", "TRACE", "BREW")) {
                final Answer a = refused(
                        Reason.METHOD_NOT_ALLOWED,
                        "method " + method + " not allowed on " + path + ": the API is read-only (Allow: " + ALLOW
                                + ")",
                        () -> raw(port, method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
                assertThat(a.header("Allow")).as(method + " " + path).isEqualTo(ALLOW);
            }
            final Answer options = quiet(
                    () -> raw(port, "OPTIONS " + path + " HTTP/1.1\r\nHost: x\r\n" + "Connection: close\r\n\r\n"));
            assertThat(options.status()).as("OPTIONS " + path).isEqualTo(204);
            assertThat(options.header("Allow")).as("OPTIONS " + path).isEqualTo(ALLOW);
            if (path.equals("/api/stream")) {
                continue; // GET streams forever; HEAD below
            }
            final Answer get = get(port, path);
            final Answer head =
                    quiet(() -> raw(port, "HEAD " + path + " HTTP/1.1\r\nHost: x\r\n" + "Connection: close\r\n\r\n"));
            assertThat(head.status()).as("HEAD " + path).isEqualTo(get.status());
            if (!path.equals("/") && !path.equals("/index.html")) {
                // vert.x's static handler leaves Content-Type out of its HEAD answers
                assertThat(head.header("Content-Type")).as("HEAD " + path).isEqualTo(get.header("Content-Type"));
            }
            assertThat(head.body()).as("HEAD " + path).isEmpty();
        }
        final Answer stream =
                quiet(() -> raw(port, "HEAD /api/stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        assertThat(stream.status()).isEqualTo(200);
        assertThat(stream.header("Content-Type")).isEqualTo("text/event-stream");
        // the server's own methods
        final Answer star = quiet(() -> raw(port, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        assertThat(star.status()).isEqualTo(204);
        assertThat(star.header("Allow")).isEqualTo(ALLOW);
    }

    @Test
    void shouldRefuseEveryParameterARouteDoesNotTakeAsTheReadmeDocumentsThem() throws Exception {
        final int port = service.port();
        final Map<String, Set<String>> routes = documentedRoutes();
        assertThat(routes.keySet())
                .containsExactlyInAnyOrder(
                        "/api/health",
                        "/api/health/live",
                        "/api/health/ready",
                        "/api/flows",
                        "/api/ranks",
                        "/api/links",
                        "/api/comms",
                        "/api/qps",
                        "/api/anomalies",
                        "/api/heatmap",
                        "/api/series",
                        "/api/live",
                        "/api/stream",
                        "/metrics",
                        "/login");
        final Map<String, String> valid = Map.of(
                "from",
                "0",
                "to",
                "9000000000000000000",
                "comm",
                "0x1",
                "rank",
                "0",
                "peer",
                "1",
                "direction",
                "send",
                "state",
                "open",
                "limit",
                "5",
                "token",
                "whatever");
        final Set<String> every = new TreeSet<>(valid.keySet());
        for (final Map.Entry<String, Set<String>> route : routes.entrySet()) {
            final String path = route.getKey();
            // GET streams forever on /api/stream: HEAD runs the same checks
            final String method = path.equals("/api/stream") ? "HEAD" : "GET";
            final String takes = route.getValue().isEmpty()
                    ? " takes none)"
                    : " takes: " + String.join(", ", new TreeSet<>(route.getValue())) + ")";
            refused(
                    Reason.UNKNOWN_PARAMETER,
                    "unknown query parameter 'color' (" + path + takes,
                    () -> raw(
                            port, method + " " + path + "?color=red HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
            for (final String p : every) {
                final String target = path + "?" + p + "=" + valid.get(p);
                if (route.getValue().contains(p)) {
                    final Answer a = quiet(() -> raw(
                            port, method + " " + target + " HTTP/1.1\r\nHost: x\r\n" + "Connection: close\r\n\r\n"));
                    assertThat(a.status()).as(target + ": " + a.body()).isIn(200, 303);
                } else {
                    refused(
                            Reason.UNKNOWN_PARAMETER,
                            "unknown query parameter '" + p + "' (" + path,
                            () -> raw(
                                    port, method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
                }
            }
        }
        // the live page's files are no API: a query is the page's own state
        assertThat(get(port, "/?comm=0x1&anything=1").status()).isEqualTo(200);
    }

    @Test
    void shouldRefuseARepeatedParameterAndABadValueWith400() throws Exception {
        final int port = service.port();
        refused(
                Reason.REPEATED_PARAMETER,
                "query parameter 'rank' given more than once",
                () -> get(port, "/api/flows?rank=1&rank=2"));
        refused(
                Reason.REPEATED_PARAMETER,
                "query parameter 'token' given more than once",
                () -> get(port, "/login?token=a&token=b"));
        final Map<String, String> bad = Map.of(
                "/api/flows?rank=abc",
                "rank must be an integer (got 'abc')",
                "/api/links?from=5&to=1",
                "from (5) is after to (1)",
                "/api/anomalies?state=maybe",
                "state must be open, resolved or all",
                "/api/comms?comm=0xZZ",
                "comm must be a communicator hash",
                "/api/heatmap?comm=-1",
                "comm must be a communicator hash",
                "/api/ranks?limit=0",
                "limit must be in 1..100000",
                "/api/qps?limit=5000000000",
                "limit must be an integer",
                "/api/flows?peer=-3",
                "peer must be >= 0",
                "/api/links?direction=up",
                "direction must be send or recv",
                "/api/flows?rank=" + "7".repeat(300),
                "...");
        for (final Map.Entry<String, String> e : bad.entrySet()) {
            final Answer a = refused(Reason.BAD_PARAMETER, e.getValue(), () -> get(port, e.getKey()));
            assertThat(a.error().length()).as("a bounded reason").isLessThan(200);
        }
    }

    @Test
    void shouldCountA401AndNeverLogTheToken() throws Exception {
        try (CollectorService s =
                CollectorService.start(config(Map.of("FLOWSCOPE_SECURITY_TOKEN", TOKEN), Map.of()), e -> {})) {
            final int port = s.port();
            final String auth = "Authorization: Bearer " + TOKEN + "\r\n";
            final long before = counter(port, auth, Reason.UNAUTHORIZED);
            log.list.clear();
            final Answer none = raw(port, "GET /api/flows HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            final Answer wrong = raw(
                    port, "GET /api/stream?token=" + TOKEN + "x HTTP/1.1\r\nHost: x\r\n" + "Connection: close\r\n\r\n");
            final Answer login =
                    raw(port, "GET /login?token=" + TOKEN + "y HTTP/1.1\r\nHost: x\r\n" + "Connection: close\r\n\r\n");
            for (final Answer a : List.of(none, wrong, login)) {
                assertThat(a.status()).isEqualTo(401);
                assertThat(a.error()).startsWith("missing or wrong token");
            }
            assertThat(counter(port, auth, Reason.UNAUTHORIZED)).isEqualTo(before + 3);
            assertNoWarnOrError();
            assertThat(debugLines())
                    .filteredOn(l -> l.endsWith("(unauthorized)"))
                    .hasSize(3);
            assertThat(String.join("\n", debugLines())).doesNotContain(TOKEN);
            // a body on another method, refused by the token check without reading it: the connection is closed
            // after the answer (it waited for the body and stalled the next request on it)
            final Answer post = raw(
                    port,
                    "POST /api/flows HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                            + "GET /api/health/live HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(post.status()).isEqualTo(401);
            assertThat(post.header("Connection")).isEqualToIgnoringCase("close");
            // with the token, the refusals after it are the same
            final Answer bad =
                    raw(port, "GET /api/flows?color=red HTTP/1.1\r\nHost: x\r\n" + auth + "Connection: close\r\n\r\n");
            assertThat(bad.status()).isEqualTo(400);
        }
    }

    @Test
    void shouldTakeClientsThatResetOrDropTheLiveStreamOrARequestWithoutALogLine() throws Exception {
        // its own service: the half-sent requests are also refused (malformed) as their connections close, later
        // than this test's end perhaps, which would move the shared service's counters under another test
        try (CollectorService own = CollectorService.start(config(Map.of(), Map.of()), e -> {})) {
            resetsAndDrops(own.port());
        }
    }

    private void resetsAndDrops(final int port) throws Exception {
        log.list.clear(); // what the start logged
        final long before = connectionErrors(port);
        final List<Socket> streams = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            final Socket so = new Socket("127.0.0.1", port);
            so.setSoTimeout(10_000);
            so.getOutputStream()
                    .write("GET /api/stream HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            final String first = readUntil(so.getInputStream(), "event: snapshot\ndata: ");
            assertThat(first).startsWith("HTTP/1.1 200").contains("text/event-stream");
            streams.add(so);
        }
        Thread.sleep(200); // snapshots are pushed every 50 ms meanwhile
        for (int i = 0; i < streams.size(); i++) {
            final Socket so = streams.get(i);
            if (i % 2 == 0) {
                so.setSoLinger(true, 0); // RST
            }
            so.close();
        }
        // half a request, then reset; a request line, then gone
        for (final String partial :
                List.of("G", "GET /api/flows HTTP/1.1\r\nHost: x\r\n", "GET /api/live HTTP/1.1\r\n")) {
            try (Socket so = new Socket("127.0.0.1", port)) {
                so.getOutputStream().write(partial.getBytes(StandardCharsets.US_ASCII));
                Thread.sleep(100);
                so.setSoLinger(true, 0);
            }
        }
        // a reset the server reads is a counted exception; one it meets while writing a snapshot may end the
        // write instead (not every reset stream is counted): the three half-sent requests are, for sure
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (connectionErrors(port) < before + 3 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(connectionErrors(port)).as("the resets, counted").isGreaterThanOrEqualTo(before + 3);
        Thread.sleep(500); // pushes to the closed streams meanwhile
        assertNoWarnOrError();
        // the stream still serves a new client
        try (Socket so = new Socket("127.0.0.1", port)) {
            so.setSoTimeout(10_000);
            so.getOutputStream()
                    .write("GET /api/stream HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            final InputStream in = so.getInputStream();
            readUntil(in, "event: snapshot\ndata: ");
            assertThat(readUntil(in, "event: snapshot\ndata: ")).contains("event: snapshot");
        }
        assertThat(metric(port, "", "flowscope_http_internal_errors_total")).isZero();
    }

    @Test
    void shouldCountAPlainHttpClientOnTheTlsPortWithoutALogLine() throws Exception {
        final Path ks = dir.resolve("hygiene.p12");
        if (!Files.exists(ks)) {
            final Process p = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "keytool")
                                    .toString(),
                            "-genkeypair",
                            "-alias",
                            "flowscope",
                            "-keyalg",
                            "RSA",
                            "-keysize",
                            "2048",
                            "-dname",
                            "CN=localhost",
                            "-ext",
                            "SAN=ip:127.0.0.1,dns:localhost",
                            "-validity",
                            "2",
                            "-storetype",
                            "PKCS12",
                            "-keystore",
                            ks.toString(),
                            "-storepass",
                            "hygiene-pass-1",
                            "-keypass",
                            "hygiene-pass-1")
                    .redirectErrorStream(true)
                    .start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(out).isZero();
        }
        try (CollectorService s = CollectorService.start(
                config(
                        Map.of(
                                "FLOWSCOPE_SECURITY_TOKEN",
                                TOKEN,
                                "FLOWSCOPE_SECURITY_TLS_KEYSTORE_PASSWORD",
                                "hygiene-pass-1"),
                        Map.of("security.tls.keystoreFile", ks.toString())),
                e -> {})) {
            log.list.clear();
            for (int i = 0; i < 3; i++) {
                try (Socket so = new Socket("127.0.0.1", s.port())) {
                    so.setSoTimeout(10_000);
                    so.getOutputStream()
                            .write("GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    try {
                        so.getInputStream().readAllBytes(); // closed by the server, or reset
                    } catch (final IOException expected) {
                        // reset
                    }
                }
            }
            Thread.sleep(500);
            assertNoWarnOrError();
            final java.security.KeyStore k = java.security.KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(ks)) {
                k.load(in, "hygiene-pass-1".toCharArray());
            }
            final java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("flowscope", k.getCertificate("flowscope"));
            final javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                    javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            final javax.net.ssl.SSLContext tls = javax.net.ssl.SSLContext.getInstance("TLS");
            tls.init(null, tmf.getTrustManagers(), null);
            final java.net.http.HttpResponse<String> m = java.net.http.HttpClient.newBuilder()
                    .sslContext(tls)
                    .build()
                    .send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(s.url() + "metrics"))
                                    .header("Authorization", "Bearer " + TOKEN)
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(m.statusCode()).isEqualTo(200);
            final Matcher errors = Pattern.compile("(?m)^flowscope_http_connection_errors_total (\\S+)$")
                    .matcher(m.body());
            assertThat(errors.find()).isTrue();
            assertThat((long) Double.parseDouble(errors.group(1)))
                    .as("the refused handshakes, counted")
                    .isGreaterThanOrEqualTo(3);
        }
    }

    @Test
    void shouldKeepTheMetricsExpositionValidWithTheNewCounters() throws Exception {
        final Answer m = get(service.port(), "/metrics");
        assertThat(m.status()).isEqualTo(200);
        final Pattern sample =
                Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|"
                        + "\\\\[\\\\\"n])*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\")*)?})? "
                        + "(-?[0-9.eE+-]+|NaN|[+-]Inf)");
        final Map<String, String> types = new LinkedHashMap<>();
        final Set<String> series = new HashSet<>();
        final Set<String> sampled = new HashSet<>();
        for (final String line : m.body().split("\n")) {
            if (line.startsWith("# TYPE ")) {
                final String[] f = line.split(" ");
                assertThat(f).as(line).hasSize(4);
                assertThat(f[3]).isIn("counter", "gauge", "untyped", "histogram", "summary");
                assertThat(types.put(f[2], f[3])).as("one TYPE for " + f[2]).isNull();
                assertThat(sampled).as("TYPE before samples: " + f[2]).doesNotContain(f[2]);
                continue;
            }
            if (line.startsWith("#") || line.isEmpty()) {
                continue;
            }
            final Matcher x = sample.matcher(line);
            assertThat(x.matches()).as("a valid sample line: " + line).isTrue();
            sampled.add(x.group(1));
            assertThat(series.add(x.group(1) + (x.group(2) == null ? "" : x.group(2))))
                    .as("once: " + line)
                    .isTrue();
        }
        assertThat(types)
                .containsEntry("flowscope_http_requests_rejected_total", "counter")
                .containsEntry("flowscope_http_connection_errors_total", "counter")
                .containsEntry("flowscope_http_internal_errors_total", "counter");
        for (final Reason r : Reason.values()) {
            assertThat(series).contains("flowscope_http_requests_rejected_total{reason=\"" + r.label() + "\"}");
        }
        assertThat(series.stream().filter(x -> x.startsWith("flowscope_http_requests_rejected_total")))
                .as("bounded: one series per reason")
                .hasSize(Reason.values().length);
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface Request {
        Answer send() throws Exception;
    }

    /** A response: status, headers, body (up to Content-Length) and what came after it on the connection. */
    private record Answer(int status, Map<String, String> headers, String body, String rest, boolean head) {
        String header(final String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String error() throws IOException {
            final JsonNode n = Json.MAPPER.readTree(body);
            assertThat(n.get("status").asInt()).isEqualTo(status);
            return n.get("error").asText();
        }
    }

    /**
     * Sends {@code request}, asserts its status and reason, that the counter of {@code reason} moved by one,
     * that nothing was logged at WARN or ERROR and that the refusal was logged at DEBUG.
     */
    private Answer refused(final Reason reason, final String because, final Request request) throws Exception {
        final int port = service.port();
        final long before = counter(port, "", reason);
        log.list.clear();
        final Answer a = request.send();
        assertThat(a.status()).as(reason + ": " + a.body()).isEqualTo(reason.status());
        assertThat(a.header("Content-Type")).isEqualTo("application/json");
        if (!a.head()) {
            assertThat(a.error()).as(reason.label()).contains(because).doesNotContain("\n");
        }
        assertThat(counter(port, "", reason)).as(reason.label()).isEqualTo(before + 1);
        assertNoWarnOrError();
        assertThat(debugLines())
                .as("logged at DEBUG")
                .anyMatch(l -> l.endsWith("(" + reason.label() + ")") && l.contains(because));
        return a;
    }

    /** A request that is no refusal: nothing counted, nothing logged at WARN or above. */
    private Answer quiet(final Request request) throws Exception {
        log.list.clear();
        final Answer a = request.send();
        assertNoWarnOrError();
        assertThat(debugLines()).as("nothing refused").isEmpty();
        return a;
    }

    private void assertNoWarnOrError() {
        final List<String> loud = new ArrayList<>();
        for (final ILoggingEvent e : List.copyOf(log.list)) {
            if (e.getLevel().isGreaterOrEqual(Level.WARN)) {
                loud.add(e.getLevel() + " " + e.getLoggerName() + ": " + e.getFormattedMessage());
            }
        }
        assertThat(loud).as("nothing at WARN or ERROR").isEmpty();
    }

    private List<String> debugLines() {
        final List<String> out = new ArrayList<>();
        for (final ILoggingEvent e : List.copyOf(log.list)) {
            if (e.getLoggerName().equals(HttpRejections.class.getName())
                    && e.getLevel() == Level.DEBUG
                    && e.getFormattedMessage().startsWith("refused ")) {
                out.add(e.getFormattedMessage());
            }
        }
        return out;
    }

    private static Answer get(final int port, final String target) throws IOException {
        return raw(port, "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    }

    private static long counter(final int port, final String headers, final Reason reason) throws IOException {
        return metric(port, headers, "flowscope_http_requests_rejected_total{reason=\"" + reason.label() + "\"}");
    }

    private static long connectionErrors(final int port) throws IOException {
        return metric(port, "", "flowscope_http_connection_errors_total");
    }

    private static long metric(final int port, final String headers, final String series) throws IOException {
        final Answer m = raw(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n" + headers + "Connection: close\r\n\r\n");
        assertThat(m.status()).isEqualTo(200);
        for (final String line : m.body().split("\n")) {
            if (line.startsWith(series + " ")) {
                return (long)
                        Double.parseDouble(line.substring(series.length() + 1).strip());
            }
        }
        throw new AssertionError(series + " not in /metrics");
    }

    /** One exchange on a fresh connection: the request as bytes (ISO-8859-1), everything until the server closes. */
    static Answer raw(final int port, final String request) throws IOException {
        final byte[] all;
        try (Socket so = new Socket("127.0.0.1", port)) {
            so.setSoTimeout(15_000);
            so.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            so.getOutputStream().flush();
            final ByteArrayOutputStream b = new ByteArrayOutputStream();
            final InputStream in = so.getInputStream();
            final byte[] buf = new byte[8192];
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    b.write(buf, 0, n);
                }
            } catch (final SocketTimeoutException e) {
                throw new AssertionError(
                        "the server neither answered nor closed: "
                                + request.lines().findFirst().orElse("") + " -> "
                                + b.toString(StandardCharsets.ISO_8859_1),
                        e);
            } catch (final IOException reset) {
                // closed with a reset after its answer: what came is the answer
            }
            all = b.toByteArray();
        }
        final String text = new String(all, StandardCharsets.ISO_8859_1);
        final int end = text.indexOf("\r\n\r\n");
        assertThat(end)
                .as("a response to: " + request.lines().findFirst().orElse("") + " -> " + text)
                .isPositive();
        final String[] head = text.substring(0, end).split("\r\n");
        assertThat(head[0]).matches("HTTP/1\\.[01] \\d{3}.*");
        final int status = Integer.parseInt(head[0].substring(9, 12));
        final Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < head.length; i++) {
            final int c = head[i].indexOf(':');
            headers.put(
                    head[i].substring(0, c).strip().toLowerCase(Locale.ROOT),
                    head[i].substring(c + 1).strip());
        }
        final String after = text.substring(end + 4);
        final boolean headRequest = request.startsWith("HEAD ");
        final int length = headRequest || !headers.containsKey("content-length")
                ? (headRequest ? 0 : after.length())
                : Integer.parseInt(headers.get("content-length"));
        final String body = new String(
                after.substring(0, Math.min(length, after.length())).getBytes(StandardCharsets.ISO_8859_1),
                StandardCharsets.UTF_8);
        return new Answer(status, headers, body, after.substring(Math.min(length, after.length())), headRequest);
    }

    /** Reads until {@code marker} (line ends as "\n") has been read; the text read so far. */
    private static String readUntil(final InputStream in, final String marker) throws IOException {
        final StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            if (c != '\r') {
                sb.append((char) c);
            }
            if (sb.length() >= marker.length() && sb.indexOf(marker, sb.length() - marker.length()) >= 0) {
                break;
            }
        }
        return sb.toString();
    }

    /**
     * The README's REST API table: route → the query parameters it documents ({@code none}: none; the live page
     * {@code /} is no API route and is left out).
     */
    static Map<String, Set<String>> documentedRoutes() throws IOException {
        final String readme = Files.readString(Path.of("README.md"));
        final int start = readme.indexOf("## REST API");
        final String section = readme.substring(start, readme.indexOf("\n## ", start + 1));
        final Map<String, Set<String>> out = new LinkedHashMap<>();
        final Pattern code = Pattern.compile("`([^`]+)`");
        for (final String line : section.split("\n")) {
            if (!line.startsWith("| `/")) {
                continue;
            }
            final String[] cells = line.split("\\|");
            final Set<String> params = new TreeSet<>();
            final Matcher pm = code.matcher(cells[2]);
            while (pm.find()) {
                params.add(pm.group(1));
            }
            assertThat(params.isEmpty() ? cells[2].strip() : "listed").as(line).isIn("none", "listed", "any");
            if (cells[2].strip().equals("any")) {
                continue;
            }
            final Matcher rm = code.matcher(cells[1]);
            while (rm.find()) {
                out.put(rm.group(1), params);
            }
        }
        return out;
    }
}
