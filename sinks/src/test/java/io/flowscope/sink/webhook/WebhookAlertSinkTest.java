package io.flowscope.sink.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.anomaly.Anomaly;
import io.flowscope.anomaly.Severity;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.SinkCounters;
import io.flowscope.sink.testing.Anomalies;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The webhook sink against a real local HTTP receiver. */
class WebhookAlertSinkTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SECRET = "correct horse battery staple";
    private static final long START = 1_763_800_000_000_000_000L;

    private static WebhookConfig config(final URI url, final int maxAttempts)
    {
        return WebhookConfig.builder(url).secret(SECRET).clock(EventClock.epoch())
            .processor(ProcessorConfig.builder().name("webhook-test").maxBatch(64).flushInterval(Duration.ofMillis(10))
                .maxAttempts(maxAttempts).initialBackoff(Duration.ofMillis(20)).maxBackoff(Duration.ofMillis(200))
                .jitter(0.5).build())
            .build();
    }

    private static List<JsonNode> alerts(final Receiver receiver) throws Exception
    {
        final List<JsonNode> all = new ArrayList<>();
        for (final Receiver.Request r : receiver.accepted)
        {
            JSON.readTree(r.body()).forEach(all::add);
        }
        return all;
    }

    private static void assertSigned(final Receiver receiver)
    {
        assertThat(receiver.accepted).isNotEmpty().allSatisfy(r ->
        {
            assertThat(r.contentType()).isEqualTo("application/json");
            assertThat(HmacSigner.verify(SECRET.getBytes(StandardCharsets.UTF_8), r.body(), r.signature()))
                .as("signature %s", r.signature()).isTrue();
        });
    }

    @Test
    void anOpenedThenResolvedAnomalyArrivesAsAFiringAndAResolvedAlertEachSignedAndOnce() throws Exception
    {
        try (Receiver receiver = Receiver.start();
             WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 3)))
        {
            final Anomaly open = Anomalies.slowLink(0xabcL, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            sink.onOpened(open);
            sink.onUpdated(open);
            sink.onOpened(open);
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            sink.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
            sink.onResolved(Anomalies.resolved(open, START + 2_000_000_000L));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();

            final List<JsonNode> alerts = alerts(receiver);
            assertThat(alerts).hasSize(2);
            assertThat(alerts.get(0).has("endsAt")).isFalse();
            assertThat(alerts.get(1).path("endsAt").asText()).isEqualTo("2025-11-22T08:26:42Z");
            assertThat(alerts).allSatisfy(a -> assertThat(a.path("labels").path("anomaly_id").asText()).isEqualTo("0xabc"));
            assertSigned(receiver);
            final SinkCounters c = sink.counters();
            assertThat(c.exported()).isEqualTo(2);
            assertThat(c.refused()).isEqualTo(3);
        }
    }

    @Test
    void anEscalationToCriticalIsNotifiedAgainWhileARepeatedUpdateIsNot() throws Exception
    {
        try (Receiver receiver = Receiver.start();
             WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 3)))
        {
            final Anomaly open = Anomalies.slowLink(0xabdL, 7, 0x1a2bL, 3, 4, Severity.WARNING, START, -1);
            sink.onOpened(open);
            sink.onUpdated(Anomalies.escalated(open));
            sink.onUpdated(Anomalies.escalated(open));
            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();

            assertThat(alerts(receiver)).extracting(a -> a.path("annotations").path("severity").asText())
                .containsExactly("warning", "critical");
        }
    }

    @Test
    void aReceiverAnswering500sGetsTheNotificationOnceAfterItRecovers() throws Exception
    {
        try (Receiver receiver = Receiver.start().failFirst(3);
             WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 6)))
        {
            sink.onOpened(Anomalies.nicStall(0x51L, 9, 1, START, -1));

            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            assertThat(receiver.attempts()).isEqualTo(4);
            assertThat(alerts(receiver)).hasSize(1);
            assertThat(alerts(receiver).get(0).path("labels").path("alertname").asText()).isEqualTo("FlowscopeNicStall");
            assertSigned(receiver);
            assertThat(sink.counters().retries()).isEqualTo(3);
            assertThat(sink.counters().exported()).isEqualTo(1);
        }
    }

    @Test
    void aReceiverThatRefusesConnectionsGetsTheNotificationOnceWhenItStartsListening() throws Exception
    {
        final int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            port = probe.getLocalPort();
        }
        final URI url = URI.create("http://127.0.0.1:" + port + "/api/v2/alerts");
        try (WebhookAlertSink sink = new WebhookAlertSink(config(url, 1_000)))
        {
            sink.onOpened(Anomalies.slowLink(0x77L, 7, 0x1a2bL, 1, 2, Severity.CRITICAL, START, -1));
            io.flowscope.sink.testing.Eventually.await(() -> sink.counters().retries() >= 2,
                () -> "retries " + sink.counters());
            assertThat(sink.lastFailure()).contains("ConnectException");

            try (Receiver receiver = Receiver.start(port))
            {
                assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
                assertThat(alerts(receiver)).hasSize(1);
                assertSigned(receiver);
                assertThat(sink.counters().exported()).isEqualTo(1);
                assertThat(sink.counters().droppedAfterRetries()).isZero();
            }
        }
    }

    @Test
    void aReceiverThatNeverRecoversCostsBoundedAttemptsThenACountedDrop() throws Exception
    {
        try (Receiver receiver = Receiver.start().failFirst(Integer.MAX_VALUE);
             WebhookAlertSink sink = new WebhookAlertSink(config(receiver.url(), 3)))
        {
            sink.onOpened(Anomalies.slowLink(0x78L, 7, 0x1a2bL, 1, 2, Severity.CRITICAL, START, -1));

            assertThat(sink.flush(Duration.ofSeconds(60))).isTrue();
            assertThat(receiver.attempts()).isEqualTo(3);
            assertThat(sink.counters().droppedAfterRetries()).isEqualTo(1);
            assertThat(sink.lastFailure()).contains("answered 500");
        }
    }
}
