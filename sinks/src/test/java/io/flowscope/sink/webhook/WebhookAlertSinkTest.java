package io.flowscope.sink.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.SinkCounters;
import io.flowscope.sink.http.HttpAuth;
import io.flowscope.sink.testing.Anomalies;
import io.flowscope.sink.testing.Eventually;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The webhook sink against a real local HTTP receiver. */
class WebhookAlertSinkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SECRET = "correct horse battery staple";
    private static final long START = 1_763_800_000_000_000_000L;

    private static WebhookConfig.Builder builder(final URI url, final int maxAttempts, final Duration resend) {
        return WebhookConfig.builder(url)
                .secret(SECRET)
                .clock(EventClock.epoch())
                .resendInterval(resend)
                .processor(ProcessorConfig.builder()
                        .name("webhook-test")
                        .maxBatch(64)
                        .flushInterval(Duration.ofMillis(10))
                        .maxAttempts(maxAttempts)
                        .initialBackoff(Duration.ofMillis(20))
                        .maxBackoff(Duration.ofMillis(200))
                        .jitter(0.5)
                        .build());
    }

    /** No re-send within a test's time. */
    private static WebhookConfig config(final URI url, final int maxAttempts) {
        return builder(url, maxAttempts, Duration.ofMinutes(10)).build();
    }

    private static List<JsonNode> alerts(final Receiver receiver) throws Exception {
        final List<JsonNode> all = new ArrayList<>();
        for (final Receiver.Request r : receiver.accepted) {
            JSON.readTree(r.body()).forEach(all::add);
        }
        return all;
    }

    private static Instant endsAt(final JsonNode alert) {
        return Instant.parse(alert.path("endsAt").asText());
    }

    private static void assertSigned(final Receiver receiver) {
        assertThat(receiver.accepted).isNotEmpty().allSatisfy(r -> {
            assertThat(r.contentType()).isEqualTo("application/json");
            assertThat(HmacSigner.verify(SECRET.getBytes(StandardCharsets.UTF_8), r.body(), r.signature()))
                    .as("signature %s", r.signature())
                    .isTrue();
        });
    }

    @Test
    void anOpenedThenResolvedAnomalyArrivesFiringUntilAheadOfNowThenEndedAtItsResolutionEachSignedAndOnce()
            throws Exception {
        try (Receiver receiver = Receiver.start();
                WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 3))) {
            final Anomaly open = Anomalies.slowLink(0xabcL, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            final Instant before = Instant.now();
            sink.onOpened(open);
            sink.onUpdated(open);
            sink.onOpened(open);
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            sink.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
            sink.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();

            final List<JsonNode> alerts = alerts(receiver);
            assertThat(alerts).hasSize(2);
            // firing: ends four re-send intervals (40 min here) after it was sent
            assertThat(endsAt(alerts.get(0))).isAfterOrEqualTo(before.plus(Duration.ofMinutes(40)));
            assertThat(alerts.get(1).path("endsAt").asText()).isEqualTo("2025-11-22T08:26:42Z");
            assertThat(alerts).allSatisfy(a -> assertThat(
                            a.path("annotations").path("anomaly_id").asText())
                    .isEqualTo("0xabc"));
            assertThat(alerts.get(0).path("labels")).isEqualTo(alerts.get(1).path("labels"));
            assertSigned(receiver);
            final SinkCounters c = sink.counters();
            assertThat(c.exported()).isEqualTo(2);
            assertThat(c.refused()).isEqualTo(3);
            assertThat(sink.openAlerts()).isZero();
        }
    }

    @Test
    void anOpenAlertIsResentWithEndsAtMovingAheadUntilItResolvesThenNeverAgain() throws Exception {
        try (Receiver receiver = Receiver.start();
                WebhookAlertSink sink = new WebhookAlertSink(
                        builder(receiver.url(), 3, Duration.ofMillis(100)).build())) {
            final Anomaly open = Anomalies.slowLink(0xabeL, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            sink.onOpened(open);
            Eventually.await(() -> receiver.accepted.size() >= 5, () -> receiver.accepted.size() + " posts");
            sink.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            final int posts = receiver.accepted.size();
            Thread.sleep(500); // five re-send intervals: none may come for a resolved anomaly

            assertThat(receiver.accepted).hasSize(posts);
            final List<JsonNode> alerts = alerts(receiver);
            final JsonNode last = alerts.get(alerts.size() - 1);
            assertThat(last.path("endsAt").asText()).isEqualTo("2025-11-22T08:26:42Z");
            final List<JsonNode> firing = alerts.subList(0, alerts.size() - 1);
            assertThat(firing).hasSizeGreaterThanOrEqualTo(5);
            for (int i = 1; i < firing.size(); i++) {
                assertThat(firing.get(i).path("labels")).isEqualTo(firing.get(0).path("labels"));
                assertThat(endsAt(firing.get(i))).isAfter(endsAt(firing.get(i - 1)));
            }
            assertThat(sink.resends()).isEqualTo(firing.size() - 1);
            assertSigned(receiver);
        }
    }

    @Test
    void anEscalationEndsTheWarningAlertAndFiresACriticalOneWhileARepeatedUpdateSendsNothing() throws Exception {
        try (Receiver receiver = Receiver.start();
                WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 3))) {
            final Anomaly open = Anomalies.slowLink(0xabdL, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            sink.onOpened(open);
            sink.onUpdated(Anomalies.escalated(open));
            sink.onUpdated(Anomalies.escalated(open));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();

            final List<JsonNode> alerts = alerts(receiver);
            assertThat(alerts)
                    .extracting(a -> a.path("labels").path("severity").asText())
                    .containsExactly("warning", "warning", "critical");
            final Instant now = Instant.now();
            assertThat(endsAt(alerts.get(1))).isBefore(now); // the warning ended
            assertThat(endsAt(alerts.get(2))).isAfter(now.plus(Duration.ofMinutes(30)));
            assertThat(sink.counters().refused()).isEqualTo(1);
        }
    }

    @Test
    void anAlertAnEarlierRunFiredIsTakenUpAgainAfterARestartUnderItsLabelsResentAndEndedAtItsResolution()
            throws Exception {
        try (Receiver receiver = Receiver.start()) {
            final Anomaly open = Anomalies.slowLink(0xac1L, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            // the earlier run fires it and stops (closing resolves nothing)
            try (WebhookAlertSink earlier = new WebhookAlertSink(config(receiver.url(), 3))) {
                earlier.onOpened(open);
                assertThat(earlier.flush(Duration.ofSeconds(60))).isTrue();
            }
            assertThat(alerts(receiver)).hasSize(1);
            final JsonNode fired = alerts(receiver).get(0);

            final Instant before = Instant.now();
            final long resends;
            try (WebhookAlertSink restarted = new WebhookAlertSink(
                    builder(receiver.url(), 3, Duration.ofMillis(100)).build())) {
                restarted.onStillOpen(open);
                Eventually.await(() -> receiver.accepted.size() >= 5, () -> receiver.accepted.size() + " posts");
                restarted.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
                assertThat(restarted.flush(Duration.ofSeconds(60))).isTrue();
                assertThat(restarted.openAlerts()).isZero();
                resends = restarted.resends();
            }
            final List<JsonNode> alerts = alerts(receiver);
            final List<JsonNode> takenUp = alerts.subList(1, alerts.size() - 1);
            assertThat(takenUp).hasSizeGreaterThanOrEqualTo(4).allSatisfy(a -> {
                assertThat(a.path("labels")).isEqualTo(fired.path("labels"));
                assertThat(a.path("startsAt")).isEqualTo(fired.path("startsAt"));
                assertThat(endsAt(a)).isAfter(before);
            });
            // sent at once when taken up, then by the timer
            assertThat(resends).isEqualTo(takenUp.size() - 1);
            final JsonNode last = alerts.get(alerts.size() - 1);
            assertThat(last.path("labels")).isEqualTo(fired.path("labels"));
            assertThat(last.path("endsAt").asText()).isEqualTo("2025-11-22T08:26:42Z");
            assertSigned(receiver);
        }
    }

    @Test
    void theGenericFormatDoesNotNotifyAnAnomalyStillOpenAfterARestartAgainButItsResolution() throws Exception {
        try (Receiver receiver = Receiver.start();
                WebhookAlertSink sink = new WebhookAlertSink(builder(receiver.url(), 3, Duration.ofMillis(100))
                        .format(WebhookFormat.GENERIC)
                        .build())) {
            final Anomaly open = Anomalies.slowLink(0xac2L, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            sink.onStillOpen(open);
            Thread.sleep(300); // three re-send intervals: a generic webhook is never re-sent
            sink.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();

            final List<String> events = new ArrayList<>();
            for (final Receiver.Request r : receiver.accepted) {
                JSON.readTree(r.body())
                        .path("notifications")
                        .forEach(n -> events.add(n.path("event").asText()));
            }
            assertThat(events).containsExactly("resolved");
        }
    }

    @Test
    void twoOpenAnomaliesOfOneLabelSetAreOneAlertThatEndsWithTheLastOfThem() throws Exception {
        try (Receiver receiver = Receiver.start();
                WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 3))) {
            final Anomaly first = Anomalies.slowLink(0x101L, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            final Anomaly second = Anomalies.slowLink(0x102L, 7, 0x1a2bL, 3, 4, Severity.WARNING, START + 5, -1);
            sink.onOpened(first);
            sink.onOpened(second);
            sink.onResolved(Anomalies.resolved(first, START + 1_000_000_000L));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            assertThat(alerts(receiver)).allSatisfy(a -> assertThat(endsAt(a)).isAfter(Instant.now()));

            sink.onResolved(Anomalies.resolved(second, START + 2_000_000_000L));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            final List<JsonNode> alerts = alerts(receiver);
            assertThat(alerts.get(alerts.size() - 1).path("endsAt").asText()).isEqualTo("2025-11-22T08:26:42Z");
            assertThat(sink.openAlerts()).isZero();
        }
    }

    @Test
    void aBearerTokenOrBasicCredentialsGoInTheAuthorizationHeader() throws Exception {
        try (Receiver receiver = Receiver.start()) {
            try (WebhookAlertSink sink = new WebhookAlertSink(builder(receiver.url(), 3, Duration.ofMinutes(10))
                    .auth(HttpAuth.bearer("tok-3f9a1c"))
                    .build())) {
                sink.onOpened(Anomalies.nicStall(0x52L, 9, 1, START, -1));
                assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
                assertThat(sink.toString()).doesNotContain("tok-3f9a1c");
            }
            try (WebhookAlertSink sink = new WebhookAlertSink(builder(receiver.url(), 3, Duration.ofMinutes(10))
                    .auth(HttpAuth.basic("flowscope", "pa:ss-7d2e"))
                    .build())) {
                sink.onOpened(Anomalies.nicStall(0x53L, 9, 1, START, -1));
                assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
                assertThat(sink.toString()).contains("basic(flowscope, ****)").doesNotContain("pa:ss-7d2e");
            }
            assertThat(receiver.accepted)
                    .extracting(Receiver.Request::authorization)
                    .containsExactly(
                            "Bearer tok-3f9a1c",
                            "Basic "
                                    + Base64.getEncoder()
                                            .encodeToString("flowscope:pa:ss-7d2e".getBytes(StandardCharsets.UTF_8)));
        }
    }

    @Test
    void resendsDoNotPileUpWhileTheReceiverIsDown() throws Exception {
        try (Receiver receiver = Receiver.start().failFirst(Integer.MAX_VALUE);
                WebhookAlertSink sink = new WebhookAlertSink(
                        builder(receiver.url(), 4, Duration.ofMillis(100)).build())) {
            sink.onOpened(Anomalies.nicStall(0x54L, 9, 1, START, -1));
            sink.onOpened(Anomalies.slowLink(0x55L, 7, 0x1a2bL, 1, 2, Severity.WARNING, START, -1));
            final long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < deadline) {
                // at most one round queued (two alerts) behind the batch being retried
                assertThat(sink.counters().queued()).isLessThanOrEqualTo(2);
                Thread.sleep(20);
            }
            assertThat(sink.skippedResendRounds()).isPositive();
            assertThat(sink.lastFailure()).contains("answered 500");
        }
    }

    @Test
    void aReceiverAnswering500sGetsTheNotificationOnceAfterItRecovers() throws Exception {
        try (Receiver receiver = Receiver.start().failFirst(3);
                WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 6))) {
            sink.onOpened(Anomalies.nicStall(0x51L, 9, 1, START, -1));

            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            assertThat(receiver.attempts()).isEqualTo(4);
            assertThat(alerts(receiver)).hasSize(1);
            assertThat(alerts(receiver).get(0).path("labels").path("alertname").asText())
                    .isEqualTo("FlowscopeNicStall");
            assertSigned(receiver);
            assertThat(sink.counters().retries()).isEqualTo(3);
            assertThat(sink.counters().exported()).isEqualTo(1);
        }
    }

    @Test
    void aReceiverThatRefusesConnectionsGetsTheNotificationOnceWhenItStartsListening() throws Exception {
        final int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        final URI url = URI.create("http://127.0.0.1:" + port + "/api/v2/alerts");
        try (WebhookAlertSink sink = new WebhookAlertSink(config(url, 1_000))) {
            sink.onOpened(Anomalies.slowLink(0x77L, 7, 0x1a2bL, 1, 2, Severity.CRITICAL, START, -1));
            Eventually.await(() -> sink.counters().retries() >= 2, () -> "retries " + sink.counters());
            assertThat(sink.lastFailure()).contains("ConnectException");

            try (Receiver receiver = Receiver.start(port)) {
                assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
                assertThat(alerts(receiver)).hasSize(1);
                assertSigned(receiver);
                assertThat(sink.counters().exported()).isEqualTo(1);
                assertThat(sink.counters().droppedAfterRetries()).isZero();
            }
        }
    }

    @Test
    void aReceiverThatNeverRecoversCostsBoundedAttemptsThenACountedDrop() throws Exception {
        try (Receiver receiver = Receiver.start().failFirst(Integer.MAX_VALUE);
                WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 3))) {
            sink.onOpened(Anomalies.slowLink(0x78L, 7, 0x1a2bL, 1, 2, Severity.CRITICAL, START, -1));

            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            assertThat(receiver.attempts()).isEqualTo(3);
            assertThat(sink.counters().droppedAfterRetries()).isEqualTo(1);
            assertThat(sink.lastFailure()).contains("answered 500");
        }
    }

    @Test
    void theGenericFormatNotifiesStateChangesOnceAndIsNeverResent() throws Exception {
        try (Receiver receiver = Receiver.start();
                WebhookAlertSink sink = new WebhookAlertSink(builder(receiver.url(), 3, Duration.ofMillis(100))
                        .format(WebhookFormat.GENERIC)
                        .build())) {
            final Anomaly open = Anomalies.slowLink(0xac0L, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            sink.onOpened(open);
            sink.onUpdated(open);
            sink.onUpdated(Anomalies.escalated(open));
            Thread.sleep(400);
            sink.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();

            final List<String> events = new ArrayList<>();
            for (final Receiver.Request r : receiver.accepted) {
                JSON.readTree(r.body())
                        .path("notifications")
                        .forEach(n -> events.add(n.path("event").asText()));
            }
            assertThat(events).containsExactly("opened", "updated", "resolved");
            assertThat(sink.resends()).isZero();
        }
    }
}
