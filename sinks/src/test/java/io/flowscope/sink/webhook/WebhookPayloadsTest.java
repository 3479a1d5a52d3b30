package io.flowscope.sink.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.anomaly.Anomaly;
import io.flowscope.anomaly.Severity;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.testing.Anomalies;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class WebhookPayloadsTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long START = 1_763_800_000_000_000_000L;
    private final Anomaly open = Anomalies.slowLink(0xfeedL, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);

    private JsonNode body(final WebhookFormat format, final Notification... n) throws Exception
    {
        return JSON.readTree(new WebhookPayloads(format, Map.of("cluster", "c1"), id -> "node" + id, EventClock.epoch())
            .body(List.of(n)));
    }

    @Test
    void anAlertmanagerFiringAlertHasIdentityLabelsAnnotationsAndStartsAtButNoEndsAt() throws Exception
    {
        final JsonNode alerts = body(WebhookFormat.ALERTMANAGER, new Notification(open, Notification.Event.OPENED));

        assertThat(alerts.isArray()).isTrue();
        final JsonNode a = alerts.get(0);
        assertThat(a.path("labels").path("alertname").asText()).isEqualTo("FlowscopeSlowLink");
        assertThat(a.path("labels").path("host").asText()).isEqualTo("node7");
        assertThat(a.path("labels").path("comm").asText()).isEqualTo("0x1a2b");
        assertThat(a.path("labels").path("rank").asText()).isEqualTo("3");
        assertThat(a.path("labels").path("peer").asText()).isEqualTo("4");
        assertThat(a.path("labels").path("anomaly_id").asText()).isEqualTo("0xfeed");
        assertThat(a.path("labels").path("cluster").asText()).isEqualTo("c1");
        assertThat(a.path("labels").has("channel")).isFalse();
        assertThat(a.path("annotations").path("summary").asText()).contains("rank 3 → 4");
        assertThat(a.path("annotations").path("severity").asText()).isEqualTo("warning");
        assertThat(a.path("startsAt").asText()).isEqualTo("2025-11-22T08:26:40Z");
        assertThat(a.has("endsAt")).isFalse();
    }

    @Test
    void anAlertmanagerResolveNotificationSetsEndsAtToTheResolutionTime() throws Exception
    {
        final JsonNode a = body(WebhookFormat.ALERTMANAGER,
            new Notification(Anomalies.resolved(open, START + 1_500_000_000L), Notification.Event.RESOLVED)).get(0);

        assertThat(a.path("endsAt").asText()).isEqualTo("2025-11-22T08:26:41.500Z");
        assertThat(a.path("annotations").path("event").asText()).isEqualTo("resolved");
    }

    @Test
    void theGenericBodyCarriesTheEventTheCulpritAndTheEvidence() throws Exception
    {
        final JsonNode root = body(WebhookFormat.GENERIC, new Notification(open, Notification.Event.OPENED));

        assertThat(root.path("schema").asText()).isEqualTo(WebhookPayloads.GENERIC_SCHEMA);
        final JsonNode n = root.path("notifications").get(0);
        assertThat(n.path("event").asText()).isEqualTo("opened");
        assertThat(n.path("kind").asText()).isEqualTo("SLOW_LINK");
        assertThat(n.path("culprit").path("rank").asInt()).isEqualTo(3);
        assertThat(n.path("evidence").path("medianPeerBandwidth").asDouble()).isEqualTo(1.0e10);
        assertThat(n.path("resolvedNs").asLong()).isEqualTo(-1);
    }

    @Test
    void theDedupKeyIsTheSameForARepeatedStateAndDiffersForAnEscalationOrAResolution()
    {
        final String opened = new Notification(open, Notification.Event.OPENED).dedupKey();

        assertThat(new Notification(open, Notification.Event.UPDATED).dedupKey()).isEqualTo(opened);
        assertThat(new Notification(Anomalies.escalated(open), Notification.Event.UPDATED).dedupKey()).isNotEqualTo(opened);
        assertThat(new Notification(Anomalies.resolved(open, START + 1), Notification.Event.RESOLVED).dedupKey())
            .isNotEqualTo(opened);
    }
}
