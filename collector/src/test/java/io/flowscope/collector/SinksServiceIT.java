package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.webhook.HmacSigner;
import io.flowscope.sink.webhook.WebhookConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service with its sinks configured, against a real influxd (auth-enabled, the password from a file) and a real
 * webhook receiver: a simulated slow link that heals; the points are queried back from InfluxDB, the receiver gets
 * the opening and the resolution, signed with the secret of the configured file; the counters are in /metrics and
 * /api/health.
 */
class SinksServiceIT {
    private static final String SECRET = "webhook-secret-7f3a9c21e5";
    private static final String INFLUX_PASSWORD = "influx-pass-3d9b0e";

    @TempDir
    Path dir;

    @Test
    void shouldWriteTheSimulatedRunToInfluxDbAndNotifyTheWebhookOfTheOpeningAndTheResolutionSigned() throws Exception {
        final Path secretFile = dir.resolve("webhook.secret");
        Files.writeString(secretFile, SECRET + "\n");
        final Path influxPasswordFile = dir.resolve("influx.password");
        Files.writeString(influxPasswordFile, INFLUX_PASSWORD + "\n");
        try (InfluxServer influx =
                        InfluxServer.withAuth("flowscope", INFLUX_PASSWORD).start();
                WebhookReceiver receiver = new WebhookReceiver(WebhookConfig.DEFAULT_SIGNATURE_HEADER)) {
            final Map<String, String> o = new LinkedHashMap<>();
            o.put("http.port", "0");
            o.put("journal.dir", dir.resolve("journal").toString());
            o.put("publish.intervalMs", "50");
            o.put(
                    "simulate.scenario",
                    "nodes=2,gpus=4,channels=2,size=4M,seed=3,algo=ring,"
                            + "fault=slow-link,rank=3,peer=4,fraction=0.3,at=300ms,for=600ms");
            o.put("simulate.durationSeconds", "3");
            o.put("sinks.influxdb.enabled", "true");
            o.put("sinks.influxdb.url", influx.url().toString());
            o.put("sinks.influxdb.database", "fs_service");
            o.put("sinks.influxdb.username", "flowscope"); // auth-enabled: nothing is written without it
            o.put("sinks.influxdb.passwordFile", influxPasswordFile.toString());
            o.put("sinks.webhooks.0.url", receiver.url());
            o.put("sinks.webhooks.0.format", "alertmanager");
            o.put("sinks.webhooks.0.secretFile", secretFile.toString());
            final List<AnomalyEvent> console = new CopyOnWriteArrayList<>();
            try (CollectorService s = CollectorService.start(CollectorConfig.load(null, Map.of(), o), console::add)) {
                await().atMost(Duration.ofSeconds(90))
                        .until(() -> console.stream().anyMatch(e -> e.type().equals("resolved")));
                s.sinks().flush(Duration.ofSeconds(30));

                // InfluxDB: flows, collectives and the anomaly's opening and resolution, queried back
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> influx.count(
                                                "fs_service",
                                                "SELECT count(\"bytes\") FROM \"flow\" WHERE \"kind\" = 'link'")
                                        > 0
                                && influx.count("fs_service", "SELECT count(\"bytes\") FROM \"collective\"") > 0
                                && influx.rows(
                                                        "fs_service",
                                                        "SELECT \"summary\" FROM \"anomaly\" WHERE \"state\" = 'resolved'")
                                                .size()
                                        == 1);
                final List<JsonNode> opened = influx.rows(
                        "fs_service",
                        "SELECT \"summary\", \"kind\", \"rank\", \"peer\" FROM \"anomaly\" WHERE \"state\" = 'opened'");
                assertThat(opened).hasSize(1);
                assertThat(opened.get(0).get(2).asText()).isEqualTo("slow_link");
                assertThat(opened.get(0).get(3).asText()).isEqualTo("3");
                assertThat(opened.get(0).get(4).asText()).isEqualTo("4");
                // hosts by the source's names (what Grafana's host variable lists), not by their 64-bit ids
                assertThat(influx.rows("fs_service", "SELECT \"summary\", \"host\" FROM \"anomaly\"")
                                .get(0)
                                .get(2)
                                .asText())
                        .matches("sim-node-[01]");
                assertThat(influx.count(
                                "fs_service", "SELECT count(\"bytes\") FROM \"flow\" WHERE \"host\" = 'sim-node-1'"))
                        .isPositive();

                // the webhook: opened then resolved, each POST signed with the file's secret
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> events(receiver).contains("resolved"));
                assertThat(events(receiver)).containsSubsequence("opened", "resolved");
                for (final WebhookReceiver.Post p : receiver.posts) {
                    assertThat(HmacSigner.verify(SECRET.getBytes(StandardCharsets.UTF_8), p.body(), p.signature()))
                            .as("signature %s", p.signature())
                            .isTrue();
                    assertThat(HmacSigner.verify(
                                    "wrong-secret".getBytes(StandardCharsets.UTF_8), p.body(), p.signature()))
                            .isFalse();
                }
                final JsonNode alert =
                        Json.MAPPER.readTree(receiver.posts.get(0).body()).get(0);
                assertThat(alert.get("labels").get("alertname").asText()).isEqualTo("FlowscopeSlowLink");
                assertThat(alert.get("labels").get("host").asText()).matches("sim-node-[01]");

                // counters in /metrics and /api/health
                final String metrics = Http.get(s.url() + "metrics").body();
                assertThat(metrics)
                        .containsPattern("flowscope_sink_exported_total\\{kind=\"influxdb\",sink=\"influxdb\"} [1-9]")
                        .containsPattern("flowscope_sink_exported_total\\{kind=\"webhook\",sink=\"webhook0\"} [1-9]");
                final JsonNode health = Http.json(s.url() + "api/health").get("sinks");
                assertThat(health.get("influxdb")
                                .get("counters")
                                .get("exported")
                                .asLong())
                        .isPositive();
                assertThat(health.get("influxdb")
                                .get("counters")
                                .get("droppedAfterRetries")
                                .asLong())
                        .isZero();
                assertThat(health.get("webhook0")
                                .get("counters")
                                .get("exported")
                                .asLong())
                        .isGreaterThanOrEqualTo(2);
                assertThat(health.toString()).doesNotContain(SECRET).doesNotContain(INFLUX_PASSWORD);
                assertThat(health.get("influxdb")
                                .get("counters")
                                .get("rejected")
                                .asLong())
                        .isZero();
            }
        }
    }

    private static List<String> events(final WebhookReceiver receiver) throws Exception {
        final List<String> out = new ArrayList<>();
        for (final WebhookReceiver.Post p : receiver.posts) {
            for (final JsonNode alert : Json.MAPPER.readTree(p.body())) {
                // Alertmanager's contract: firing until endsAt, which a firing alert sets minutes ahead of now
                out.add(
                        java.time.Instant.parse(alert.get("endsAt").asText()).isAfter(java.time.Instant.now())
                                ? "opened"
                                : "resolved");
            }
        }
        return out;
    }
}
