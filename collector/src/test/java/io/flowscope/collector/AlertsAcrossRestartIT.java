package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.sink.webhook.WebhookConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An anomaly open across a restart of the service on its journal (issue #18): the first run announces a simulated
 * slow link that lasts past its end; the second catches up on the journal and takes the alert up again at the
 * Alertmanager-format webhook (same labels, sent at once and re-sent), without announcing it again to the generic
 * webhook or the console; when the fault ends in the second run, both get its resolution.
 */
class AlertsAcrossRestartIT {
    private static final String CLUSTER = "nodes=2,gpus=4,channels=2,size=4M,seed=3,algo=ring";
    private static final long RESEND_MS = 3000;

    @TempDir
    Path dir;

    /** One alert as Alertmanager received it, with the time its POST arrived. */
    private record Alert(JsonNode json, Instant received) {
        Instant endsAt() {
            return Instant.parse(json.get("endsAt").asText());
        }

        boolean firing() {
            return endsAt().isAfter(received);
        }
    }

    private CollectorConfig config(
            final String scenario,
            final long seconds,
            final WebhookReceiver alertmanager,
            final WebhookReceiver generic) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        o.put("simulate.scenario", scenario);
        o.put("simulate.durationSeconds", Long.toString(seconds));
        o.put("simulate.speed", "1.0");
        o.put("sinks.webhooks.0.url", alertmanager.url());
        o.put("sinks.webhooks.0.format", "alertmanager");
        o.put("sinks.webhooks.0.resendIntervalMs", Long.toString(RESEND_MS));
        o.put("sinks.webhooks.1.url", generic.url());
        o.put("sinks.webhooks.1.format", "generic");
        return CollectorConfig.load(null, Map.of(), o);
    }

    private static List<Alert> alerts(final List<WebhookReceiver.Post> posts) throws Exception {
        final List<Alert> out = new ArrayList<>();
        for (final WebhookReceiver.Post p : posts) {
            for (final JsonNode alert : Json.MAPPER.readTree(p.body())) {
                out.add(new Alert(alert, p.received()));
            }
        }
        return out;
    }

    /** The generic webhook's notifications as "event id". */
    private static List<String> notifications(final List<WebhookReceiver.Post> posts) throws Exception {
        final List<String> out = new ArrayList<>();
        for (final WebhookReceiver.Post p : posts) {
            for (final JsonNode n : Json.MAPPER.readTree(p.body()).get("notifications")) {
                out.add(n.get("event").asText() + " " + n.get("id").asText());
            }
        }
        return out;
    }

    @Test
    void anAlertStillOpenAfterARestartKeepsFiringWithoutBeingAnnouncedAgainAndEndsWhenTheFaultEnds() throws Exception {
        try (WebhookReceiver alertmanager = new WebhookReceiver(WebhookConfig.DEFAULT_SIGNATURE_HEADER);
                WebhookReceiver generic = new WebhookReceiver(WebhookConfig.DEFAULT_SIGNATURE_HEADER)) {
            // run 1: the link slows down at 300 ms and stays slow past the end of the run
            final List<AnomalyEvent> first = new CopyOnWriteArrayList<>();
            try (CollectorService s = CollectorService.start(
                    config(CLUSTER + ",fault=slow-link,rank=3,peer=4,fraction=0.3,at=300ms", 2, alertmanager, generic),
                    first::add)) {
                await().atMost(Duration.ofSeconds(90)).until(() -> s.finished());
                s.sinks().flush(Duration.ofSeconds(30));
            }
            assertThat(first).extracting(AnomalyEvent::type).containsExactly("opened");
            final AnomalyEvent opened = first.get(0);
            assertThat(opened.anomaly().kind()).isEqualTo(AnomalyKind.SLOW_LINK);
            final String id = FlowRow.hex(opened.anomaly().id());
            final List<Alert> firstAlerts = alerts(alertmanager.posts);
            assertThat(firstAlerts).isNotEmpty().allSatisfy(a -> assertThat(a.firing())
                    .isTrue());
            final JsonNode labels = firstAlerts.get(0).json().get("labels");
            assertThat(notifications(generic.posts)).containsExactly("opened " + id);
            final int alertmanagerBefore = alertmanager.posts.size();
            final int genericBefore = generic.posts.size();

            // run 2 on the same journal, its clock going on where run 1's ended (2 s): the link stays slow for 7 s
            // more, then heals
            final List<AnomalyEvent> second = new CopyOnWriteArrayList<>();
            final Instant restarted = Instant.now();
            try (CollectorService s = CollectorService.start(
                    config(
                            CLUSTER + ",epoch=2s,fault=slow-link,rank=3,peer=4,fraction=0.3,at=0ms,for=7s",
                            9,
                            alertmanager,
                            generic),
                    second::add)) {
                await().atMost(Duration.ofSeconds(90)).until(() -> !second.isEmpty());
                s.sinks().flush(Duration.ofSeconds(30));
            }
            // the console: its resolution only, after the fault ended in run 2 (open all along, not re-opened)
            assertThat(second).extracting(AnomalyEvent::type).containsExactly("resolved");
            assertThat(FlowRow.hex(second.get(0).anomaly().id())).isEqualTo(id);
            assertThat(second.get(0).anomaly().resolvedNs()).isGreaterThan(9_000_000_000L);
            // the generic webhook: its resolution only
            assertThat(notifications(generic.posts.subList(genericBefore, generic.posts.size())))
                    .containsExactly("resolved " + id);

            // Alertmanager: the same alert taken up again at once, re-sent while open, then ended
            final List<Alert> secondAlerts =
                    alerts(alertmanager.posts.subList(alertmanagerBefore, alertmanager.posts.size()));
            assertThat(secondAlerts).allSatisfy(a -> {
                assertThat(a.json().get("labels")).isEqualTo(labels);
                assertThat(a.json().get("annotations").get("anomaly_id").asText())
                        .isEqualTo(id);
            });
            final List<Alert> firing = secondAlerts.subList(0, secondAlerts.size() - 1);
            final Alert resolved = secondAlerts.get(secondAlerts.size() - 1);
            // taken up before the alert run 1 sent last expired (4 re-send intervals: the restart and its catch-up
            // of the journal take less), then re-sent while the fault lasts its 7 s
            assertThat(firing).hasSizeGreaterThanOrEqualTo(2).allSatisfy(a -> assertThat(a.firing())
                    .isTrue());
            assertThat(firing.get(0).received())
                    .isBefore(firstAlerts.get(firstAlerts.size() - 1).endsAt())
                    .isBefore(resolved.received().minusMillis(RESEND_MS));
            for (int i = 1; i < firing.size(); i++) {
                // while open, no gap in which Alertmanager could let it expire (endsAt = 4 re-send intervals ahead)
                assertThat(firing.get(i).received()).isBefore(firing.get(i - 1).endsAt());
            }
            assertThat(resolved.firing()).isFalse();
            assertThat(resolved.endsAt())
                    .isAfter(restarted)
                    .isBefore(firing.get(firing.size() - 1).endsAt());
        }
    }
}
