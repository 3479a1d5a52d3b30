package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.sink.webhook.WebhookConfig;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #18, acceptance 1: what an Alertmanager alert of the service links to, followed as a person would. Its
 * {@code generatorURL} opens the live page (a real headless chromium) with that anomaly's row selected; its
 * {@code runbook_url} is the service's copy of docs/runbooks.md, at the kind's section.
 */
class AlertLinksIT {
    @TempDir
    Path dir;

    @Test
    void shouldLinkAnAlertToItsAnomalyOnTheLivePageAndToItsKindsRunbook() throws Exception {
        final int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        try (WebhookReceiver receiver = new WebhookReceiver(WebhookConfig.DEFAULT_SIGNATURE_HEADER)) {
            final Map<String, String> o = new LinkedHashMap<>();
            o.put("http.port", Integer.toString(port));
            o.put("journal.enabled", "false");
            o.put("ring.dir", dir.resolve("rings").toString());
            o.put("publish.intervalMs", "100");
            o.put(
                    "simulate.scenario",
                    "nodes=2,gpus=4,channels=2,size=4M,seed=3,algo=ring,"
                            + "fault=slow-link,rank=3,peer=4,fraction=0.3,at=300ms,for=600ms");
            o.put("simulate.durationSeconds", "3");
            o.put("sinks.webhooks.0.url", receiver.url());
            o.put("sinks.webhooks.0.resendIntervalMs", "1000");
            final List<AnomalyEvent> console = new CopyOnWriteArrayList<>();
            try (CollectorService s = CollectorService.start(CollectorConfig.load(null, Map.of(), o), console::add)) {
                await().atMost(Duration.ofSeconds(90)).until(() -> !receiver.posts.isEmpty());
                final JsonNode alert =
                        Json.MAPPER.readTree(receiver.posts.get(0).body()).get(0);
                final String id = alert.get("annotations").get("anomaly_id").asText();
                assertThat(console).anyMatch(e -> FlowRow.hex(e.anomaly().id()).equals(id));
                assertThat(alert.get("generatorURL").asText())
                        .isEqualTo("http://127.0.0.1:" + port + "/#anomaly=" + id);
                assertThat(alert.get("labels").get("severity").asText()).isIn("warning", "critical");

                // the runbook: the service's page over its copy of docs/runbooks.md, opened at the kind's section
                final String runbook =
                        alert.get("annotations").get("runbook_url").asText();
                assertThat(runbook).isEqualTo("http://127.0.0.1:" + port + "/runbooks.html#slow_link");
                final var source = Http.get("http://127.0.0.1:" + port + "/runbooks.md");
                assertThat(source.statusCode()).isEqualTo(200);
                assertThat(source.body()).isEqualTo(java.nio.file.Files.readString(Path.of("../docs/runbooks.md")));
                final String shown = HeadlessChromium.chromium(dir, runbook, "--dump-dom");
                assertThat(shown)
                        .contains("data-section=\"slow_link\"", "<a id=\"hang\"></a>")
                        .contains("slow_link: one direction between two ranks");

                // the live page opened on the anomaly: its row selected, its communicator and link shown
                final String dom =
                        HeadlessChromium.chromium(dir, alert.get("generatorURL").asText(), "--dump-dom");
                assertThat(dom)
                        .containsPattern("class=\"tl anomaly [A-Z]+ (open|resolved) selected\" data-kind="
                                + "\"SLOW_LINK\"[^>]*data-anomaly=\"" + id + "\"");
                assertThat(dom).containsPattern("id=\"series\"[^>]*data-link=\"3-&gt;4\"");
                assertThat(dom).doesNotContain("id=\"anomalyMissing\"");

                // an id the page does not list is said so, not silently ignored
                final String missing =
                        HeadlessChromium.chromium(dir, "http://127.0.0.1:" + port + "/#anomaly=0xdead", "--dump-dom");
                assertThat(missing).contains("id=\"anomalyMissing\"").contains("anomaly 0xdead is not among");
                assertThat(missing).doesNotContainPattern("class=\"tl anomaly [^\"]* selected\"");
            }
        }
    }
}
