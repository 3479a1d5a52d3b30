package io.flowscope.collector.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.sink.webhook.WebhookFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code sinks} and {@code security} sections: file lists, environment, validation messages, masking. */
class SinksConfigTest {
    @TempDir
    Path dir;

    @Test
    void shouldKeepTheSinksOffByDefault() {
        final CollectorConfig c = CollectorConfig.defaults();
        assertThat(c.sinks().any()).isFalse();
        assertThat(c.security().authenticate()).isFalse();
        assertThat(c.security().tls()).isNull();
    }

    @Test
    void shouldReadAWebhookListFromAFileAndItsSecretFromTheEnvironmentMaskedInTheDump() throws Exception {
        final Path f = dir.resolve("c.yaml");
        Files.writeString(f, """
            sinks:
              influxdb:
                enabled: true
                url: http://db.example:8086
                batchSize: 100
              webhooks:
                - url: http://am.example:9093/api/v2/alerts
                - url: https://hooks.example/flowscope
                  format: generic
                  maxAttempts: 3
            """);
        final CollectorConfig c = CollectorConfig.load(
                f, Map.of("FLOWSCOPE_SINKS_WEBHOOKS_1_SECRET", "env-secret-abcdef123456"), Map.of());
        assertThat(c.sinks().influx().url().toString()).isEqualTo("http://db.example:8086");
        assertThat(c.sinks().influx().batchSize()).isEqualTo(100);
        assertThat(c.sinks().influx().database()).isEqualTo("flowscope");
        assertThat(c.sinks().webhooks()).hasSize(2);
        assertThat(c.sinks().webhooks().get(0).format()).isEqualTo(WebhookFormat.ALERTMANAGER);
        assertThat(c.sinks().webhooks().get(0).secret()).isEmpty();
        assertThat(c.sinks().webhooks().get(1).format()).isEqualTo(WebhookFormat.GENERIC);
        assertThat(c.sinks().webhooks().get(1).maxAttempts()).isEqualTo(3);
        assertThat(c.sinks().webhooks().get(1).secret()).isEqualTo("env-secret-abcdef123456");
        assertThat(c.toString()).contains("secret=****", "secret=none").doesNotContain("env-secret-abcdef123456");
    }

    @Test
    void shouldGiveEachWebhookItsOwnDeliveryTuningWithTheFormerFixedValuesAsDefaults() throws Exception {
        final Path f = dir.resolve("d.yaml");
        Files.writeString(f, """
            sinks:
              webhooks:
                - url: http://am.example:9093/api/v2/alerts
                - url: https://hooks.example/flowscope
                  format: generic
                  queueCapacity: 100
                  maxBatch: 8
                  flushIntervalMs: 250
            """);
        final CollectorConfig c = CollectorConfig.load(
                f,
                Map.of("FLOWSCOPE_SINKS_WEBHOOKS_1_MAX_BACKOFF_MS", "30000", "FLOWSCOPE_SINKS_WEBHOOKS_1_JITTER", "0"),
                Map.of("sinks.webhooks.1.initialBackoffMs", "1000"));
        assertThat(c.sinks().webhooks().get(0).delivery())
                .isEqualTo(new SinksConfig.Delivery(4096, 64, 100, 200, 10_000, 0.5));
        assertThat(c.sinks().webhooks().get(1).delivery())
                .isEqualTo(new SinksConfig.Delivery(100, 8, 250, 1000, 30_000, 0.0));
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                "sinks.webhooks.0.url",
                                "http://am.example:9093/api/v2/alerts",
                                "sinks.webhooks.0.initialBackoffMs",
                                "20000")))
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessage("config: sinks.webhooks.0.maxBackoffMs = '10000' (from default): expected at least "
                        + "sinks.webhooks.0.initialBackoffMs (20000)");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                "sinks.webhooks.0.url",
                                "http://am.example:9093/api/v2/alerts",
                                "sinks.webhooks.0.jitter",
                                "2")))
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessageContaining("sinks.webhooks.0.jitter = '2' (from the command line): expected a number in 0");
    }

    @Test
    void shouldTakeInfluxDbCredentialsAndTlsForHttpsOnlyNeverPrintingTheSecret() throws Exception {
        final Path pw = dir.resolve("influx-pw");
        Files.writeString(pw, "influx-pass-42ab\n");
        final CollectorConfig basic = CollectorConfig.load(
                null,
                Map.of("FLOWSCOPE_SINKS_INFLUXDB_PASSWORD_FILE", pw.toString()),
                Map.of(
                        "sinks.influxdb.enabled",
                        "true",
                        "sinks.influxdb.url",
                        "https://db.example:8086",
                        "sinks.influxdb.username",
                        "flowscope",
                        "sinks.influxdb.insecureSkipVerify",
                        "true"));
        assertThat(basic.sinks().influx().auth().header())
                .isEqualTo(io.flowscope.sink.http.HttpAuth.basic("flowscope", "influx-pass-42ab")
                        .header());
        assertThat(basic.sinks().influx().tls().insecureSkipVerify()).isTrue();
        assertThat(basic.toString()).contains("basic(flowscope, ****)").doesNotContain("influx-pass-42ab");

        final CollectorConfig token = CollectorConfig.load(
                null,
                Map.of("FLOWSCOPE_SINKS_INFLUXDB_TOKEN", "influx-token-77c1"),
                Map.of("sinks.influxdb.enabled", "true"));
        assertThat(token.sinks().influx().auth().header()).isEqualTo("Token influx-token-77c1");
        assertThat(token.sinks().influx().tls().isDefault()).isTrue();
        assertThat(token.toString()).doesNotContain("influx-token-77c1");

        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of("FLOWSCOPE_SINKS_INFLUXDB_PASSWORD", "influx-pass-42ab"),
                        Map.of("sinks.influxdb.enabled", "true")))
                .hasMessageContaining("sinks.influxdb.username")
                .hasMessageContaining("needs both username and password")
                .hasMessageNotContaining("influx-pass-42ab");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of("FLOWSCOPE_SINKS_INFLUXDB_TOKEN", "influx-token-77c1"),
                        Map.of("sinks.influxdb.enabled", "true", "sinks.influxdb.username", "flowscope")))
                .hasMessageContaining("sinks.influxdb.token and sinks.influxdb.username are both set")
                .hasMessageNotContaining("influx-token-77c1");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of("sinks.influxdb.enabled", "true", "sinks.influxdb.caFile", pw.toString())))
                .hasMessageContaining("sinks.influxdb.url")
                .hasMessageContaining("an https:// URL");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                "sinks.influxdb.enabled",
                                "true",
                                "sinks.influxdb.url",
                                "https://db.example:8086",
                                "sinks.influxdb.caFile",
                                pw.toString())))
                .hasMessageContaining("sinks.influxdb")
                .hasMessageContaining("no PEM CERTIFICATE block");
    }

    @Test
    void shouldNameTheKeyTheOriginAndTheExpectationOfABadSinkValue() throws Exception {
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of("sinks.webhooks.0.url", "http://x:1/a", "sinks.webhooks.0.format", "slack")))
                .hasMessage(
                        "config: sinks.webhooks.0.format = 'slack' (from the command line): expected generic or alertmanager");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of("FLOWSCOPE_SINKS_INFLUXDB_URL", "db:8086"),
                        Map.of("sinks.influxdb.enabled", "true")))
                .hasMessageContaining("sinks.influxdb.url = 'db:8086' (from env FLOWSCOPE_SINKS_INFLUXDB_URL)");
        assertThatThrownBy(
                        () -> CollectorConfig.load(null, Map.of(), Map.of("sinks.webhooks.2.secret", "s3cret-value")))
                .hasMessageContaining("sinks.webhooks.2.url")
                .hasMessageNotContaining("s3cret-value");
        final Path secret = dir.resolve("s");
        Files.writeString(secret, "from-file-1234567890");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of("FLOWSCOPE_SECURITY_TOKEN", "inline-1234567890abc"),
                        Map.of("security.tokenFile", secret.toString())))
                .hasMessageContaining("security.token (from env FLOWSCOPE_SECURITY_TOKEN) and security.tokenFile")
                .hasMessageNotContaining("inline-1234567890abc")
                .hasMessageNotContaining("from-file-1234567890");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of("security.tokenFile", dir.resolve("missing").toString())))
                .hasMessageContaining("security.tokenFile")
                .hasMessageContaining("expected a readable file");
        final Path f = dir.resolve("bad.yaml");
        Files.writeString(f, "sinks:\n  webhooks:\n    - http://x/\n");
        assertThatThrownBy(() -> CollectorConfig.load(f, Map.of(), Map.of()))
                .hasMessageContaining("'sinks.webhooks' item 0")
                .hasMessageContaining("must be an object");
    }

    /** A PEM certificate made by the JDK's keytool (what a CA file holds). */
    private Path pemCertificate() throws Exception {
        final Path ks = dir.resolve("ca.p12");
        final String keytool =
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        for (final String[] args : new String[][] {
            {
                keytool,
                "-genkeypair",
                "-alias",
                "ca",
                "-keyalg",
                "EC",
                "-dname",
                "CN=ca",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                ks.toString(),
                "-storepass",
                "ca-pass-123"
            },
            {
                keytool,
                "-exportcert",
                "-rfc",
                "-alias",
                "ca",
                "-keystore",
                ks.toString(),
                "-storepass",
                "ca-pass-123",
                "-file",
                dir.resolve("ca.pem").toString()
            }
        }) {
            final Process p = new ProcessBuilder(args).redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor()).as(out).isZero();
        }
        return dir.resolve("ca.pem");
    }

    @Test
    void shouldReadAnAlertmanagersResendIntervalBasicAuthAndCaFileWithThePasswordFromAFileMasked() throws Exception {
        final Path password = dir.resolve("am.password");
        Files.writeString(password, "am-password-9c1e\n");
        final Path f = dir.resolve("c.yaml");
        Files.writeString(f, """
            http:
              publicUrl: https://flowscope.example/live
            sinks:
              webhooks:
                - url: https://am.example:9093/api/v2/alerts
                  resendIntervalMs: 15000
                  basicAuthUser: flowscope
                  basicAuthPasswordFile: %s
                  caFile: %s
                - url: http://am2.example:9093/api/v2/alerts
                  runbookUrl: https://wiki.example/flowscope/runbooks
            """.formatted(password, pemCertificate()));
        final CollectorConfig c = CollectorConfig.load(
                f, Map.of("FLOWSCOPE_SINKS_WEBHOOKS_1_BEARER_TOKEN", "bearer-token-5a7b"), Map.of());
        final SinksConfig.Webhook am = c.sinks().webhooks().get(0);
        assertThat(am.resendIntervalMs()).isEqualTo(15_000);
        assertThat(am.auth().header())
                .isEqualTo("Basic "
                        + java.util.Base64.getEncoder()
                                .encodeToString("flowscope:am-password-9c1e"
                                        .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertThat(am.tls().caFile()).isEqualTo(dir.resolve("ca.pem"));
        assertThat(am.runbookUrl()).isNull();
        final SinksConfig.Webhook second = c.sinks().webhooks().get(1);
        assertThat(second.resendIntervalMs()).isEqualTo(60_000);
        assertThat(second.auth().header()).isEqualTo("Bearer bearer-token-5a7b");
        assertThat(second.runbookUrl().toString()).isEqualTo("https://wiki.example/flowscope/runbooks");
        assertThat(c.sinks().liveUrl().toString()).isEqualTo("https://flowscope.example/live/");
        assertThat(c.toString())
                .doesNotContain("am-password-9c1e")
                .doesNotContain("bearer-token-5a7b")
                .contains("basic(flowscope, ****)");
        assertThat(CollectorConfig.isSecret("sinks.webhooks.3.bearerToken")).isTrue();
        assertThat(CollectorConfig.isSecret("sinks.webhooks.3.basicAuthPassword"))
                .isTrue();
    }

    @Test
    void shouldDeriveTheLivePagesAddressFromTheBindUnlessThePortIsChosenAtStart() {
        assertThat(CollectorConfig.load(null, Map.of(), Map.of("http.port", "7171"))
                        .sinks()
                        .liveUrl()
                        .toString())
                .isEqualTo("http://127.0.0.1:7171/");
        assertThat(CollectorConfig.load(null, Map.of(), Map.of("http.port", "0"))
                        .sinks()
                        .liveUrl())
                .isNull();
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("http.publicUrl", "flowscope:7070")))
                .hasMessage("config: http.publicUrl = 'flowscope:7070' (from the command line): expected an http:// or "
                        + "https:// URL with a host");
    }

    @Test
    void shouldRefuseContradictoryOrIncompleteWebhookAuthAndTlsInOneLineWithoutTheSecret() throws Exception {
        final String url = "sinks.webhooks.0.url";
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of("FLOWSCOPE_SINKS_WEBHOOKS_0_BEARER_TOKEN", "tok-1234567"),
                        Map.of(
                                url,
                                "http://am:9093/",
                                "sinks.webhooks.0.basicAuthUser",
                                "u",
                                "sinks.webhooks.0.basicAuthPassword",
                                "pw-7777777")))
                .hasMessageContaining("give a bearer token or basic auth, not both")
                .hasMessageNotContaining("tok-1234567")
                .hasMessageNotContaining("pw-7777777");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null, Map.of(), Map.of(url, "http://am:9093/", "sinks.webhooks.0.basicAuthUser", "u")))
                .hasMessageContaining("sinks.webhooks.0.basicAuthPassword")
                .hasMessageContaining("needs both");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null, Map.of(), Map.of(url, "http://am:9093/", "sinks.webhooks.0.insecureSkipVerify", "true")))
                .hasMessageContaining("sinks.webhooks.0.url")
                .hasMessageContaining("expected an https:// URL");
        final Path ca = pemCertificate();
        assertThatThrownBy(() -> CollectorConfig.load(
                        null, Map.of(), Map.of(url, "https://am:9093/", "sinks.webhooks.0.certFile", ca.toString())))
                .hasMessageContaining("sinks.webhooks.0.keyFile")
                .hasMessageContaining("needs both certFile and keyFile");
        final Path notPem = dir.resolve("not.pem");
        Files.writeString(notPem, "hello\n");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null, Map.of(), Map.of(url, "https://am:9093/", "sinks.webhooks.0.caFile", notPem.toString())))
                .hasMessageContaining("webhook 0: TLS setup failed")
                .hasMessageContaining("holds no PEM CERTIFICATE");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                url,
                                "https://am:9093/",
                                "sinks.webhooks.0.format",
                                "generic",
                                "sinks.webhooks.0.resendIntervalMs",
                                "1000")))
                .hasMessageContaining("sinks.webhooks.0.resendIntervalMs")
                .hasMessageContaining("only the alertmanager");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null, Map.of(), Map.of(url, "https://am:9093/", "sinks.webhooks.0.resendIntervalMs", "10")))
                .hasMessage("config: sinks.webhooks.0.resendIntervalMs = '10' (from the command line): expected an "
                        + "integer in 100..3600000");
    }
}
