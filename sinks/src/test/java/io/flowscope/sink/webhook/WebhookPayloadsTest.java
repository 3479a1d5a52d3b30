package io.flowscope.sink.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.testing.Anomalies;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class WebhookPayloadsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long START = 1_763_800_000_000_000_000L;
    /** Wall clock 10 s after the anomaly's onset (2025-11-22T08:26:40Z). */
    private static final Instant NOW = Instant.parse("2025-11-22T08:26:50Z");

    private final Anomaly open = Anomalies.slowLink(0xfeedL, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);

    private static WebhookConfig config(final WebhookFormat format) {
        return WebhookConfig.builder(URI.create("http://127.0.0.1:9093/api/v2/alerts"))
                .format(format)
                .staticLabels(Map.of("cluster", "c1"))
                .hostNames(id -> "node" + id)
                .clock(EventClock.epoch())
                .resendInterval(Duration.ofSeconds(60))
                .liveUrl(URI.create("http://flowscope.example:7070/"))
                .runbookUrl(URI.create("http://flowscope.example:7070/runbooks.md"))
                .wallClock(Clock.fixed(NOW, ZoneOffset.UTC))
                .build();
    }

    private JsonNode body(final WebhookFormat format, final Notification... n) throws Exception {
        return JSON.readTree(new WebhookPayloads(config(format)).body(List.of(n)));
    }

    @Test
    void aFiringAlertCarriesSeverityAndTheCulpritAsLabelsAndTextAsAnnotations() throws Exception {
        final JsonNode alerts = body(WebhookFormat.ALERTMANAGER, new Notification(open, Notification.Event.OPENED));

        assertThat(alerts.isArray()).isTrue();
        final JsonNode a = alerts.get(0);
        final Map<String, String> labels = new TreeMap<>();
        a.path("labels")
                .fields()
                .forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
        assertThat(labels)
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        "alertname",
                        "FlowscopeSlowLink",
                        "source",
                        "flowscope",
                        "severity",
                        "warning",
                        "kind",
                        "slow_link",
                        "host",
                        "node7",
                        "comm",
                        "0x1a2b",
                        "rank",
                        "3",
                        "peer",
                        "4",
                        "cluster",
                        "c1"));
        assertThat(a.path("annotations").path("summary").asText()).contains("rank 3 → 4");
        assertThat(a.path("annotations").path("description").asText())
                .isEqualTo("evidence: bandwidthBytesPerSecond=3.1E9, medianPeerBandwidth=1.0E10");
        assertThat(a.path("annotations").path("runbook_url").asText())
                .isEqualTo("http://flowscope.example:7070/runbooks.md#slow_link");
        assertThat(a.path("annotations").path("anomaly_id").asText()).isEqualTo("0xfeed");
        assertThat(a.path("generatorURL").asText()).isEqualTo("http://flowscope.example:7070/#anomaly=0xfeed");
        assertThat(a.path("startsAt").asText()).isEqualTo("2025-11-22T08:26:40Z");
    }

    @Test
    void aFiringOrResentAlertEndsFourResendIntervalsAfterNow() throws Exception {
        for (final Notification.Event e : new Notification.Event[] {
            Notification.Event.OPENED, Notification.Event.UPDATED, Notification.Event.RESENT
        }) {
            assertThat(body(WebhookFormat.ALERTMANAGER, new Notification(open, e))
                            .get(0)
                            .path("endsAt")
                            .asText())
                    .as(e.label())
                    .isEqualTo("2025-11-22T08:30:50Z");
        }
    }

    @Test
    void aResolvedAlertEndsAtTheResolutionTime() throws Exception {
        final JsonNode a = body(
                        WebhookFormat.ALERTMANAGER,
                        new Notification(Anomalies.resolved(open, START + 1_500_000_000L), Notification.Event.RESOLVED))
                .get(0);

        assertThat(a.path("endsAt").asText()).isEqualTo("2025-11-22T08:26:41.500Z");
        assertThat(a.path("labels").path("severity").asText()).isEqualTo("warning");
    }

    @Test
    void timesAheadOfTheWallClockAreHeldAtNowSoAlertmanagerNeverSeesAnEndBeforeAStart() throws Exception {
        final long future = START + 60_000_000_000L; // a host clock a minute ahead of this one
        final Anomaly early = Anomalies.resolved(
                Anomalies.slowLink(0xbeefL, 7, 0x1a2bL, 3, 4, Severity.WARNING, future, -1), future + 1_000_000_000L);

        final JsonNode resolved = body(WebhookFormat.ALERTMANAGER, new Notification(early, Notification.Event.RESOLVED))
                .get(0);
        assertThat(resolved.path("startsAt").asText()).isEqualTo("2025-11-22T08:26:50Z");
        assertThat(resolved.path("endsAt").asText()).isEqualTo("2025-11-22T08:26:50Z");
    }

    @Test
    void identityLabelsFollowWhatTheAnomalyStageTellsApartAndNeverTheAnomalyId() throws Exception {
        final WebhookPayloads p = new WebhookPayloads(config(WebhookFormat.ALERTMANAGER));
        final Anomaly nic = Anomalies.nicStall(0x51L, 9, 2, START, -1);
        assertThat(p.labels(nic))
                .containsEntry("device", "2")
                .containsEntry("severity", "critical")
                .doesNotContainKeys("comm", "rank", "peer");
        // a hang's peer is one of the ranks waiting on it: in the description, not in the identity
        final Anomaly hang = new Anomaly(
                0x99L,
                AnomalyKind.HANG,
                new Culprit(7, 0x1a2bL, 2, 5, 3, -1, -1),
                Severity.WARNING,
                START,
                START,
                -1,
                new TreeMap<>(Map.of("noProgressNs", 6.0e8)),
                START,
                START,
                "hang");
        assertThat(p.labels(hang)).containsEntry("rank", "2").doesNotContainKeys("peer", "anomaly_id");
        assertThat(WebhookPayloads.description(hang))
                .isEqualTo("rank 5 waits on it (channel 3); evidence: noProgressNs=6.0E8");
        // the same anomaly later, or another episode of the same culprit: the same alert; escalated: another
        assertThat(p.identity(Anomalies.resolved(open, START + 1))).isEqualTo(p.identity(open));
        assertThat(p.identity(Anomalies.slowLink(0x1234L, 7, 0x1a2bL, 3, 4, Severity.WARNING, START + 9, -1)))
                .isEqualTo(p.identity(open));
        assertThat(p.identity(Anomalies.escalated(open))).isNotEqualTo(p.identity(open));
    }

    @Test
    void aStaticLabelMayNotTakeTheNameOfOneOfFlowscopesOwn() {
        assertThatThrownBy(() -> WebhookConfig.builder(URI.create("http://x:1/"))
                        .staticLabels(Map.of("severity", "x"))
                        .build())
                .hasMessageContaining("static label 'severity'");
        assertThatThrownBy(() -> WebhookConfig.builder(URI.create("http://x:1/"))
                        .staticLabels(Map.of("a-b", "x"))
                        .build())
                .hasMessageContaining("static label 'a-b'");
    }

    @Test
    void theGenericBodyCarriesTheEventTheCulpritTheEvidenceAndTheLink() throws Exception {
        final JsonNode root = body(WebhookFormat.GENERIC, new Notification(open, Notification.Event.OPENED));

        assertThat(root.path("schema").asText()).isEqualTo(WebhookPayloads.GENERIC_SCHEMA);
        final JsonNode n = root.path("notifications").get(0);
        assertThat(n.path("event").asText()).isEqualTo("opened");
        assertThat(n.path("kind").asText()).isEqualTo("SLOW_LINK");
        assertThat(n.path("culprit").path("rank").asInt()).isEqualTo(3);
        assertThat(n.path("evidence").path("medianPeerBandwidth").asDouble()).isEqualTo(1.0e10);
        assertThat(n.path("resolvedNs").asLong()).isEqualTo(-1);
        assertThat(n.has("endsAt")).isFalse();
        assertThat(n.path("url").asText()).isEqualTo("http://flowscope.example:7070/#anomaly=0xfeed");
    }

    @Test
    void theDedupKeyIsTheSameForARepeatedStateAndDiffersForAnEscalationOrAResolution() {
        final String opened = new Notification(open, Notification.Event.OPENED).dedupKey();

        assertThat(new Notification(open, Notification.Event.UPDATED).dedupKey())
                .isEqualTo(opened);
        assertThat(new Notification(Anomalies.escalated(open), Notification.Event.UPDATED).dedupKey())
                .isNotEqualTo(opened);
        assertThat(new Notification(Anomalies.resolved(open, START + 1), Notification.Event.RESOLVED).dedupKey())
                .isNotEqualTo(opened);
    }

    @Test
    void everyKindHasARunbookSectionWhereItsRunbookUrlPoints() throws Exception {
        final String runbooks = java.nio.file.Files.readString(java.nio.file.Path.of("../docs/runbooks.md"));
        for (final AnomalyKind kind : AnomalyKind.values()) {
            final String anchor = WebhookPayloads.kindName(kind);
            assertThat(runbooks).as(kind.name()).contains("<a id=\"" + anchor + "\"></a>\n## " + anchor + ": ");
        }
    }

    /** Rank 3 of comm 0x1a2b on host 7: pid 48213 on GPU 1. */
    private static WebhookConfig named(final WebhookFormat format) {
        return WebhookConfig.builder(URI.create("http://127.0.0.1:9093/api/v2/alerts"))
                .format(format)
                .hostNames(id -> "gpu-node-" + id)
                .clock(EventClock.epoch())
                .rankNames((hostId, commHash, rank) -> hostId == 7 && commHash == 0x1a2bL && rank == 3
                        ? new RankNames.Name(48213, 1, "0000:19:00.0", "GPU-1a2b3c4d-0000-1111-2222-333344445555")
                        : null)
                .wallClock(Clock.fixed(NOW, ZoneOffset.UTC))
                .build();
    }

    @Test
    void aRankCulpritIsNamedByHostPidAndGpuWithTheHexHostIdOnlyBesideThem() throws Exception {
        final JsonNode a = JSON.readTree(new WebhookPayloads(named(WebhookFormat.ALERTMANAGER))
                        .body(List.of(new Notification(open, Notification.Event.OPENED))))
                .get(0);
        assertThat(a.path("labels").path("host").asText()).isEqualTo("gpu-node-7");
        final JsonNode ann = a.path("annotations");
        assertThat(ann.path("host_id").asText()).isEqualTo("0x7");
        assertThat(ann.path("pid").asText()).isEqualTo("48213");
        assertThat(ann.path("gpu").asText()).isEqualTo("1");
        assertThat(ann.path("pci_bus_id").asText()).isEqualTo("0000:19:00.0");
        assertThat(ann.path("gpu_uuid").asText()).isEqualTo("GPU-1a2b3c4d-0000-1111-2222-333344445555");
        // the names are annotations: the alert's identity (its labels) stays what the anomaly stage tells apart
        assertThat(a.path("labels").has("pid")).isFalse();
        assertThat(a.path("labels").has("gpu")).isFalse();

        final JsonNode c = JSON.readTree(new WebhookPayloads(named(WebhookFormat.GENERIC))
                        .body(List.of(new Notification(open, Notification.Event.OPENED))))
                .path("notifications")
                .get(0)
                .path("culprit");
        assertThat(c.path("host").asText()).isEqualTo("gpu-node-7");
        assertThat(c.path("pid").asInt()).isEqualTo(48213);
        assertThat(c.path("gpu").asInt()).isEqualTo(1);
        assertThat(c.path("gpuBusId").asText()).isEqualTo("0000:19:00.0");
        assertThat(c.path("gpuUuid").asText()).isEqualTo("GPU-1a2b3c4d-0000-1111-2222-333344445555");

        // a NIC culprit is a host's: no rank names
        final JsonNode nic = JSON.readTree(new WebhookPayloads(named(WebhookFormat.ALERTMANAGER))
                        .body(List.of(new Notification(
                                Anomalies.nicStall(0xbeefL, 7, 2, START, -1), Notification.Event.OPENED))))
                .get(0);
        assertThat(nic.path("labels").path("host").asText()).isEqualTo("gpu-node-7");
        assertThat(nic.path("annotations").has("pid")).isFalse();
        assertThat(nic.path("annotations").path("host_id").asText()).isEqualTo("0x7");
    }
}
