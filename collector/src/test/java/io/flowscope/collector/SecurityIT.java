package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.flowscope.collector.config.CollectorConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side's security against the real server: the token (header, cookie from /login, ?token= on the stream),
 * the refusal of a non-loopback bind without a token, TLS with a keystore and with PEM files made by the JDK's
 * keytool, secrets absent from the log, request size limits and malformed requests.
 */
class SecurityIT {
    private static final String TOKEN = "test-token-5b8e1d2f9a";
    private static final HttpClient PLAIN =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @TempDir
    Path dir;

    private CollectorConfig config(final Map<String, String> env, final Map<String, String> extra) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.enabled", "false");
        o.put("publish.intervalMs", "50");
        o.putAll(extra);
        return CollectorConfig.load(null, env, o);
    }

    private CollectorService start(final Map<String, String> extra) throws Exception {
        return CollectorService.start(config(Map.of("FLOWSCOPE_SECURITY_TOKEN", TOKEN), extra), e -> {});
    }

    private static HttpResponse<String> get(final HttpClient client, final String url, final String... headers)
            throws Exception {
        final HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .GET();
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldAnswer401WithoutTheTokenAnd200WithItAsBearerHeaderOrLoginCookie() throws Exception {
        try (CollectorService s = start(Map.of())) {
            for (final String route : List.of("api/health", "api/flows", "api/anomalies", "api/live", "metrics", "")) {
                final HttpResponse<String> none = get(PLAIN, s.url() + route);
                assertThat(none.statusCode()).as(route).isEqualTo(401);
                assertThat(none.headers().firstValue("WWW-Authenticate")).contains("Bearer realm=\"flowscope\"");
                assertThat(get(PLAIN, s.url() + route, "Authorization", "Bearer wrong-token-0000000000")
                                .statusCode())
                        .as(route)
                        .isEqualTo(401);
                assertThat(get(PLAIN, s.url() + route, "Authorization", "Bearer " + TOKEN)
                                .statusCode())
                        .as(route)
                        .isEqualTo(200);
            }
            // the probes stay open for kubelets
            assertThat(get(PLAIN, s.url() + "api/health/live").statusCode()).isEqualTo(200);
            assertThat(get(PLAIN, s.url() + "api/health/ready").statusCode()).isEqualTo(200);
            // ?token= is for the live stream only
            assertThat(get(PLAIN, s.url() + "api/flows?token=" + TOKEN).statusCode())
                    .isEqualTo(401);

            // /login with the token sets an HttpOnly cookie that then opens the API and the page
            assertThat(get(PLAIN, s.url() + "login?token=nope-nope-nope-nope").statusCode())
                    .isEqualTo(401);
            final HttpResponse<String> login = get(PLAIN, s.url() + "login?token=" + TOKEN);
            assertThat(login.statusCode()).isEqualTo(303);
            assertThat(login.headers().firstValue("Location")).contains("/");
            final String setCookie = login.headers().firstValue("Set-Cookie").orElseThrow();
            assertThat(setCookie)
                    .startsWith("flowscope_token=")
                    .containsIgnoringCase("HttpOnly")
                    .contains("SameSite=Strict");
            final String cookie = setCookie.substring(0, setCookie.indexOf(';'));
            assertThat(get(PLAIN, s.url() + "api/live", "Cookie", cookie).statusCode())
                    .isEqualTo(200);
            assertThat(get(PLAIN, s.url(), "Cookie", cookie).body()).contains("<html");
            assertThat(get(PLAIN, s.url() + "api/live", "Cookie", "flowscope_token=forged-forged-forged")
                            .statusCode())
                    .isEqualTo(401);
        }
    }

    @Test
    void shouldShowTheLivePageInARealBrowserAfterLoginAndOnlyThe401Without() throws Exception {
        try (CollectorService s = start(Map.of(
                "simulate.scenario",
                "default",
                "journal.dir",
                dir.resolve("journal").toString()))) {
            final String refused = HeadlessChromium.chromium(dir, s.url(), "--dump-dom");
            assertThat(refused).contains("missing or wrong token").doesNotContain("id=\"heatmap\"");
            // /login sets the cookie and redirects to the page, whose own API calls then carry it
            final String dom = HeadlessChromium.chromium(dir, s.url() + "login?token=" + TOKEN, "--dump-dom");
            assertThat(dom).containsPattern("id=\"heatmap\"[^>]*data-ranks=\"[1-9]");
        }
    }

    @Test
    void shouldOpenTheLiveStreamWithTheTokenAsHeaderOrQueryAndRefuseItWithout() throws Exception {
        try (CollectorService s = start(Map.of())) {
            final String url = s.url() + "api/stream";
            assertThat(PLAIN.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(401);
            assertThat(firstEvent(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + TOKEN)))
                    .startsWith("retry: 1000")
                    .contains("event: snapshot");
            assertThat(firstEvent(HttpRequest.newBuilder(URI.create(url + "?token=" + TOKEN))))
                    .contains("event: snapshot");
        }
    }

    private static String firstEvent(final HttpRequest.Builder b) throws Exception {
        final HttpResponse<InputStream> r = PLAIN.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).contains("text/event-stream");
        try (InputStream in = r.body()) {
            final StringBuilder sb = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                sb.append((char) c);
                if (sb.toString().contains("event: snapshot\ndata: ")) {
                    return sb.toString();
                }
            }
            return sb.toString();
        }
    }

    @Test
    void shouldRefuseANonLoopbackBindWithoutATokenAndAllowItWithOne() {
        assertThatThrownBy(() -> config(Map.of(), Map.of("http.host", "0.0.0.0")))
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessageContaining("http.host = '0.0.0.0' (from the command line) is not a loopback address")
                .hasMessageContaining("FLOWSCOPE_SECURITY_TOKEN");
        assertThat(config(Map.of(), Map.of("http.host", "localhost")).security().authenticate())
                .isFalse();
        assertThat(config(Map.of("FLOWSCOPE_SECURITY_TOKEN", TOKEN), Map.of("http.host", "0.0.0.0"))
                        .httpHost())
                .isEqualTo("0.0.0.0");
        assertThatThrownBy(() -> config(Map.of("FLOWSCOPE_SECURITY_TOKEN", "short"), Map.of()))
                .hasMessageContaining("too short")
                .hasMessageNotContaining("'short'");
    }

    @Test
    void shouldExitWithCode2WhenRunIsAskedToServeOtherHostsWithoutAToken() {
        final java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        final int rc = Main.run(
                new java.io.PrintStream(new java.io.ByteArrayOutputStream()),
                new java.io.PrintStream(err),
                "run",
                "--host",
                "0.0.0.0",
                "--port",
                "0",
                "--no-journal",
                "--ring-dir",
                dir.toString());
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("is not a loopback address");
    }

    // ---- TLS -------------------------------------------------------------------------------------------------

    private Path keystore() throws Exception {
        final Path ks = dir.resolve("server.p12");
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
                        "keystore-pass-1",
                        "-keypass",
                        "keystore-pass-1")
                .redirectErrorStream(true)
                .start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return ks;
    }

    private static X509Certificate certificate(final Path ks) throws Exception {
        final KeyStore k = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(ks)) {
            k.load(in, "keystore-pass-1".toCharArray());
        }
        return (X509Certificate) k.getCertificate("flowscope");
    }

    private static HttpClient trusting(final X509Certificate cert) throws Exception {
        final KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("flowscope", cert);
        final TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        final SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return HttpClient.newBuilder()
                .sslContext(ctx)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    private static void assertServesOnlyTls(final CollectorService s, final X509Certificate cert) throws Exception {
        assertThat(s.url()).startsWith("https://127.0.0.1:");
        final HttpClient tls = trusting(cert);
        assertThat(get(tls, s.url() + "api/health", "Authorization", "Bearer " + TOKEN)
                        .statusCode())
                .isEqualTo(200);
        assertThat(get(tls, s.url() + "api/health").statusCode()).isEqualTo(401);
        // plain HTTP on the same port gets no answer; a client that does not trust the certificate neither
        final String plainUrl = s.url().replace("https://", "http://") + "api/health";
        assertThatThrownBy(() -> get(PLAIN, plainUrl, "Authorization", "Bearer " + TOKEN))
                .isInstanceOf(IOException.class);
        assertThatThrownBy(() -> get(PLAIN, s.url() + "api/health", "Authorization", "Bearer " + TOKEN))
                .isInstanceOf(IOException.class);
    }

    @Test
    void shouldServeHttpsFromAPkcs12KeystoreAndNotPlainHttp() throws Exception {
        final Path ks = keystore();
        final Path pw = dir.resolve("ks.password");
        Files.writeString(pw, "keystore-pass-1\n");
        try (CollectorService s = start(Map.of(
                "security.tls.keystoreFile", ks.toString(), "security.tls.keystorePasswordFile", pw.toString()))) {
            assertServesOnlyTls(s, certificate(ks));
        }
    }

    @Test
    void shouldServeHttpsFromPemCertificateAndKeyFiles() throws Exception {
        final Path ks = keystore();
        final KeyStore k = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(ks)) {
            k.load(in, "keystore-pass-1".toCharArray());
        }
        final PrivateKey key = (PrivateKey) k.getKey("flowscope", "keystore-pass-1".toCharArray());
        final X509Certificate cert = (X509Certificate) k.getCertificate("flowscope");
        final Base64.Encoder b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        final Path certPem = dir.resolve("cert.pem");
        final Path keyPem = dir.resolve("key.pem");
        Files.writeString(
                certPem,
                "-----BEGIN CERTIFICATE-----\n" + b64.encodeToString(cert.getEncoded())
                        + "\n-----END CERTIFICATE-----\n");
        Files.writeString(
                keyPem,
                "-----BEGIN PRIVATE KEY-----\n" + b64.encodeToString(key.getEncoded())
                        + "\n-----END PRIVATE KEY-----\n");
        // the PEM is what a client would be given: read it back as the trust anchor
        final X509Certificate fromPem = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(certPem)));
        try (CollectorService s =
                start(Map.of("security.tls.certFile", certPem.toString(), "security.tls.keyFile", keyPem.toString()))) {
            assertServesOnlyTls(s, fromPem);
        }
    }

    @Test
    void shouldRefuseHalfATlsConfiguration() {
        assertThatThrownBy(() -> config(Map.of(), Map.of("security.tls.certFile", dir.toString())))
                .hasMessageContaining("security.tls.keyFile")
                .hasMessageContaining("both");
    }

    // ---- secrets -----------------------------------------------------------------------------------------------

    @Test
    void shouldNeverLogTheTokenTheWebhookSecretOrTheKeystorePassword() throws Exception {
        final Path ks = keystore();
        final String webhookSecret = "hook-secret-31c9e0aa47";
        final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        final ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        root.addAppender(log);
        final List<String> lines = new ArrayList<>();
        try {
            final Map<String, String> env = Map.of(
                    "FLOWSCOPE_SECURITY_TOKEN",
                    TOKEN,
                    "FLOWSCOPE_SINKS_WEBHOOKS_0_SECRET",
                    webhookSecret,
                    "FLOWSCOPE_SECURITY_TLS_KEYSTORE_PASSWORD",
                    "keystore-pass-1");
            final CollectorConfig c = config(
                    env,
                    Map.of(
                            "sinks.webhooks.0.url",
                            "http://127.0.0.1:9/alerts",
                            "security.tls.keystoreFile",
                            ks.toString()));
            lines.add(c.toString());
            try (CollectorService s = CollectorService.start(c, e -> {})) {
                lines.add(get(trusting(certificate(ks)), s.url() + "api/health", "Authorization", "Bearer " + TOKEN)
                        .body());
            }
        } finally {
            root.detachAppender(log);
        }
        for (final ILoggingEvent e : log.list) {
            lines.add(e.getFormattedMessage());
            if (e.getThrowableProxy() != null) {
                lines.add(e.getThrowableProxy().getMessage());
            }
        }
        final String all = String.join("\n", lines);
        assertThat(all).contains("configuration: ", "token=****", "secret=****", "password=****");
        assertThat(all).doesNotContain(TOKEN, webhookSecret, "keystore-pass-1");
    }

    // ---- limits ------------------------------------------------------------------------------------------------

    @Test
    void shouldAnswer413ToAnOversizeBody431ToOversizeHeaders414ToAnOverlongUriAnd400ToGarbage() throws Exception {
        try (CollectorService s = start(Map.of("security.maxBodyBytes", "1024"))) {
            final HttpResponse<String> big = PLAIN.send(
                    HttpRequest.newBuilder(URI.create(s.url() + "api/flows"))
                            .header("Authorization", "Bearer " + TOKEN)
                            .POST(HttpRequest.BodyPublishers.ofString("x".repeat(4096)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(big.statusCode()).isEqualTo(413);
            final HttpResponse<String> small = PLAIN.send(
                    HttpRequest.newBuilder(URI.create(s.url() + "api/flows"))
                            .header("Authorization", "Bearer " + TOKEN)
                            .POST(HttpRequest.BodyPublishers.ofString("x".repeat(100)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(small.statusCode()).isEqualTo(405);

            assertThat(get(
                                    PLAIN,
                                    s.url() + "api/flows",
                                    "Authorization",
                                    "Bearer " + TOKEN,
                                    "X-Big",
                                    "y".repeat(10_000))
                            .statusCode())
                    .isEqualTo(431);
            assertThat(raw(s.port(), "GET /api/flows?limit=" + "9".repeat(5000) + " HTTP/1.1\r\nHost: x\r\n\r\n"))
                    .matches("(?s)HTTP/1\\.[01] 414 .*");
            assertThat(raw(s.port(), "\u0001\u0002 garbage\r\n\r\n")).matches("(?s)HTTP/1\\.[01] 400 .*");
            // a well-formed request on the same port still works
            assertThat(raw(
                            s.port(),
                            "GET /api/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                                    + "\r\nConnection: close\r\n\r\n"))
                    .startsWith("HTTP/1.1 200");
        }
    }

    private static String raw(final int port, final String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            final OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            final byte[] buf = new byte[64];
            final int n = socket.getInputStream().read(buf);
            return n <= 0 ? "" : new String(buf, 0, n, StandardCharsets.ISO_8859_1);
        }
    }
}
