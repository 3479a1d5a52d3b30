package io.flowscope.sink.influx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.SinkCounters;
import io.flowscope.sink.http.ClientTls;
import io.flowscope.sink.http.HttpAuth;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.testing.SelfSigned;
import io.flowscope.sink.testing.Summaries;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The InfluxDB sink against a real influxd (1.6.7) with {@code auth-enabled = true}, and one serving HTTPS only
 * with a certificate made here by the JDK's keytool.
 */
class InfluxAuthTlsIT {
    private static final long HOST = 0x5eedL;
    private static final long COMM = 0x1a2b3cL;
    private static final long T0 = System.currentTimeMillis() * 1_000_000L - 60_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final String ADMIN = "flowscope-admin";
    private static final String PASSWORD = "pw-9c41e7d2";

    private static InfluxConfig.Builder config(final URI url, final String db) {
        return InfluxConfig.builder(url, db)
                .clock(EventClock.epoch())
                .hostNames(id -> "node-" + id)
                .processor(ProcessorConfig.builder()
                        .name("influx-auth")
                        .flushInterval(Duration.ofMillis(5))
                        .maxAttempts(2)
                        .initialBackoff(Duration.ofMillis(20))
                        .maxBackoff(Duration.ofMillis(20))
                        .jitter(0)
                        .build());
    }

    /** {@code n} rank-flow points, one series, 1 ms apart; flushed. */
    private static SinkCounters write(final InfluxConfig config, final int n) {
        try (InfluxSink sink = new InfluxSink(config)) {
            for (int i = 0; i < n; i++) {
                sink.onSummary(Summaries.flow(
                        FlowSummary.KIND_RANK,
                        HOST,
                        COMM,
                        0,
                        -1,
                        -1,
                        true,
                        T0 + i * MS,
                        T0 + (i + 1) * MS,
                        1,
                        1_000,
                        0,
                        0));
            }
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            return sink.counters();
        }
    }

    private static String lastFailure(final InfluxConfig config) {
        try (InfluxSink sink = new InfluxSink(config)) {
            sink.onSummary(
                    Summaries.flow(FlowSummary.KIND_RANK, HOST, COMM, 0, -1, -1, true, T0, T0 + MS, 1, 1_000, 0, 0));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            return sink.lastFailure();
        }
    }

    @Test
    void withAuthEnabledAWrongPasswordIsACountedRejectionAndTheRightOneWrites() throws Exception {
        try (InfluxServer server = InfluxServer.withAuth(ADMIN, PASSWORD).start()) {
            final SinkCounters wrong = write(
                    config(server.url(), "authdb")
                            .auth(HttpAuth.basic(ADMIN, "not-the-password"))
                            .build(),
                    7);
            assertThat(wrong.rejected()).isEqualTo(7);
            assertThat(wrong.exported()).isZero();
            assertThat(wrong.retries()).as("a 401 is not retried").isZero();
            final InfluxConfig bad = config(server.url(), "authdb")
                    .auth(HttpAuth.basic(ADMIN, "not-the-password"))
                    .build();
            assertThat(lastFailure(bad))
                    .contains("/write?db=authdb")
                    .contains("answered 401")
                    .contains("authorization failed")
                    .doesNotContain("not-the-password");
            assertThat(bad.toString()).contains("basic(" + ADMIN + ", ****)").doesNotContain("not-the-password");
            assertThat(lastFailure(config(server.url(), "authdb").build())).contains("answered 401");

            final SinkCounters right = write(
                    config(server.url(), "authdb")
                            .auth(HttpAuth.basic(ADMIN, PASSWORD))
                            .build(),
                    7);
            assertThat(right.exported()).isEqualTo(7);
            assertThat(right.lost()).isZero();
            assertThat(server.count("authdb", "SELECT count(bytes) FROM flow WHERE kind='rank'"))
                    .isEqualTo(7);
            // the Token scheme is InfluxDB 1.8+ / 2.x / 3.x: 1.6 refuses it in one clear, counted line
            assertThat(lastFailure(config(server.url(), "authdb")
                            .auth(HttpAuth.token(ADMIN + ":" + PASSWORD))
                            .build()))
                    .contains("answered 401: unable to parse authentication credentials")
                    .doesNotContain(PASSWORD);
        }
    }

    @Test
    void aTokenIsSentAsInfluxDbsTokenSchemeOnEveryRequest() throws Exception {
        // no InfluxDB 2.x / 3.x can run here: a JDK HTTP server on 127.0.0.1 shows what the client sends
        final List<String> seen = new CopyOnWriteArrayList<>();
        final HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/", exchange -> {
            seen.add(
                    exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath() + " "
                            + exchange.getRequestHeaders().getFirst("Authorization"));
            exchange.getRequestBody().readAllBytes();
            final boolean query = exchange.getRequestURI().getPath().equals("/query");
            final byte[] body =
                    query ? "{\"results\":[{\"statement_id\":0}]}".getBytes(StandardCharsets.UTF_8) : new byte[0];
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(query ? 200 : 204, query ? body.length : -1);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        receiver.start();
        try {
            final URI url =
                    URI.create("http://127.0.0.1:" + receiver.getAddress().getPort());
            final SinkCounters c = write(
                    config(url, "tokendb").auth(HttpAuth.token("tok-5be0a1")).build(), 3);
            assertThat(c.exported()).isEqualTo(3);
            assertThat(seen)
                    .isNotEmpty()
                    .allMatch(r -> r.endsWith(" Token tok-5be0a1"), "carries the token")
                    .anyMatch(r -> r.startsWith("POST /query "))
                    .anyMatch(r -> r.startsWith("POST /write "));
        } finally {
            receiver.stop(0);
        }
    }

    @Test
    void overHttpsTheServersCaIsRequiredAndWithItPointsAreWritten(@TempDir final Path dir) throws Exception {
        final SelfSigned cert = SelfSigned.create(dir, "influxd");
        try (InfluxServer server = InfluxServer.overHttps(cert).start()) {
            assertThat(server.url().getScheme()).isEqualTo("https");

            final InfluxConfig jdkTrust = config(server.url(), "tlsdb").build();
            final SinkCounters untrusted = write(jdkTrust, 5);
            assertThat(untrusted.exported()).isZero();
            assertThat(untrusted.droppedAfterRetries()).isEqualTo(5);
            assertThat(lastFailure(jdkTrust)).contains("https://127.0.0.1:").contains("SSLHandshakeException");

            final SinkCounters trusted = write(
                    config(server.url(), "tlsdb")
                            .tls(new ClientTls(cert.certPem(), null, null, false))
                            .build(),
                    5);
            assertThat(trusted.exported()).isEqualTo(5);
            assertThat(trusted.lost()).isZero();

            final SinkCounters skipped = write(
                    config(server.url(), "tlsdb")
                            .tls(new ClientTls(null, null, null, true))
                            .build(),
                    5);
            assertThat(skipped.exported()).isEqualTo(5);
            assertThat(server.count("tlsdb", "SELECT count(bytes) FROM flow WHERE kind='rank'"))
                    .isEqualTo(5);
        }
    }

    @Test
    void tlsSettingsOnAnHttpUrlAreRefusedInOneLine() {
        assertThatThrownBy(() -> config(URI.create("http://127.0.0.1:8086"), "db")
                        .tls(new ClientTls(null, null, null, true))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("TLS settings need an https:// URL, not " + "http://127.0.0.1:8086");
    }
}
