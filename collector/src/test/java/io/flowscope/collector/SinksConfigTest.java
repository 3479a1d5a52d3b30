package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import io.flowscope.sink.webhook.WebhookFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code sinks} and {@code security} sections: file lists, environment, validation messages, masking. */
class SinksConfigTest
{
    @TempDir
    Path dir;

    @Test
    void shouldKeepTheSinksOffByDefault()
    {
        final CollectorConfig c = CollectorConfig.defaults();
        assertThat(c.sinks().any()).isFalse();
        assertThat(c.security().authenticate()).isFalse();
        assertThat(c.security().tls()).isNull();
    }

    @Test
    void shouldReadAWebhookListFromAFileAndItsSecretFromTheEnvironmentMaskedInTheDump() throws Exception
    {
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
        final CollectorConfig c = CollectorConfig.load(f, Map.of("FLOWSCOPE_SINKS_WEBHOOKS_1_SECRET",
            "env-secret-abcdef123456"), Map.of());
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
    void shouldNameTheKeyTheOriginAndTheExpectationOfABadSinkValue() throws Exception
    {
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("sinks.webhooks.0.url", "http://x:1/a",
            "sinks.webhooks.0.format", "slack")))
            .hasMessage("config: sinks.webhooks.0.format = 'slack' (from the command line): expected generic or alertmanager");
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of("FLOWSCOPE_SINKS_INFLUXDB_URL", "db:8086"),
            Map.of("sinks.influxdb.enabled", "true")))
            .hasMessageContaining("sinks.influxdb.url = 'db:8086' (from env FLOWSCOPE_SINKS_INFLUXDB_URL)");
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("sinks.webhooks.2.secret", "s3cret-value")))
            .hasMessageContaining("sinks.webhooks.2.url").hasMessageNotContaining("s3cret-value");
        final Path secret = dir.resolve("s");
        Files.writeString(secret, "from-file-1234567890");
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of("FLOWSCOPE_SECURITY_TOKEN", "inline-1234567890abc"),
            Map.of("security.tokenFile", secret.toString())))
            .hasMessageContaining("security.token (from env FLOWSCOPE_SECURITY_TOKEN) and security.tokenFile")
            .hasMessageNotContaining("inline-1234567890abc").hasMessageNotContaining("from-file-1234567890");
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(),
            Map.of("security.tokenFile", dir.resolve("missing").toString())))
            .hasMessageContaining("security.tokenFile").hasMessageContaining("expected a readable file");
        final Path f = dir.resolve("bad.yaml");
        Files.writeString(f, "sinks:\n  webhooks:\n    - http://x/\n");
        assertThatThrownBy(() -> CollectorConfig.load(f, Map.of(), Map.of()))
            .hasMessageContaining("'sinks.webhooks' item 0").hasMessageContaining("must be an object");
    }
}
