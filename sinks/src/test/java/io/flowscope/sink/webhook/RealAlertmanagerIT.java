package io.flowscope.sink.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.http.ClientTls;
import io.flowscope.sink.http.HttpAuth;
import io.flowscope.sink.testing.AlertmanagerServer;
import io.flowscope.sink.testing.Anomalies;
import io.flowscope.sink.testing.Eventually;
import io.flowscope.sink.testing.SelfSigned;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #18, acceptance 1: the Alertmanager sink against a real Alertmanager (Debian prometheus-alertmanager 0.25)
 * on 127.0.0.1 with a {@code resolve_timeout} of 2 s, a default route to one webhook receiver and a route on
 * {@code severity="critical"} to another (both real HTTP servers in this JVM, resolved notifications on). The
 * flowscope side re-sends every 500 ms (alerts valid 2 s ahead).
 */
class RealAlertmanagerIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient PLAIN = HttpClient.newHttpClient();
    private static final Duration RESEND = Duration.ofMillis(500);
    /** The test password and its bcrypt hash (cost 5) for Alertmanager's basic_auth_users (made with libxcrypt). */
    private static final String PASSWORD = "flowscope-am-test-pw";

    private static final String PASSWORD_BCRYPT = "$2b$05$kWU5Ze6bS0.A..deOTk4qus.07B5k0IYDoV3VNnnqrJM4j6GyFHd2";

    @TempDir
    Path dir;

    private static String config(final Receiver warnings, final Receiver critical) {
        return "global:\n  resolve_timeout: 2s\n"
                + "route:\n  receiver: warnings\n  group_by: ['...']\n  group_wait: 100ms\n  group_interval: 500ms\n"
                + "  repeat_interval: 1h\n  routes:\n    - receiver: critical\n      matchers: ['severity=\"critical\"']\n"
                + "receivers:\n"
                + "  - name: warnings\n    webhook_configs:\n      - url: '" + warnings.url()
                + "'\n        send_resolved: true\n"
                + "  - name: critical\n    webhook_configs:\n      - url: '" + critical.url()
                + "'\n        send_resolved: true\n";
    }

    private static WebhookConfig.Builder sink(final URI url) {
        return WebhookConfig.builder(url)
                .clock(EventClock.epoch())
                .resendInterval(RESEND)
                .liveUrl(URI.create("http://127.0.0.1:7070/"))
                .runbookUrl(URI.create("http://127.0.0.1:7070/runbooks.md"))
                .processor(ProcessorConfig.builder()
                        .name("am-test")
                        .maxBatch(64)
                        .flushInterval(Duration.ofMillis(10))
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(20))
                        .maxBackoff(Duration.ofMillis(200))
                        .build());
    }

    private static long nowNs() {
        final Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** The alerts Alertmanager notified a receiver of, each with its notification's status. */
    private static List<JsonNode> notified(final Receiver receiver) throws Exception {
        final List<JsonNode> out = new ArrayList<>();
        for (final Receiver.Request r : receiver.accepted) {
            JSON.readTree(r.body()).path("alerts").forEach(out::add);
        }
        return out;
    }

    private static boolean notifiedWith(
            final Receiver receiver, final String status, final String alertname, final String severity)
            throws Exception {
        return notified(receiver).stream()
                .anyMatch(a -> a.path("status").asText().equals(status)
                        && a.path("labels").path("alertname").asText().equals(alertname)
                        && a.path("labels").path("severity").asText().equals(severity));
    }

    private static boolean notifiedUnchecked(
            final Receiver r, final String status, final String name, final String sev) {
        try {
            return notifiedWith(r, status, name, sev);
        } catch (final Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void anAnomalyOpenLongerThanResolveTimeoutStaysActiveAndResolvesWhenFlowscopeResolvesIt() throws Exception {
        try (Receiver warnings = Receiver.start();
                Receiver critical = Receiver.start();
                AlertmanagerServer am = new AlertmanagerServer(config(warnings, critical), null).start();
                WebhookAlertSink sink =
                        new WebhookAlertSink(sink(am.alertsUrl()).build())) {
            final long start = nowNs() - 1_000_000_000L;
            final Anomaly open = Anomalies.slowLink(0x5109L, 7, 0x1a2bL, 3, 4, Severity.WARNING, start, -1);
            sink.onOpened(open);
            Eventually.await(() -> am.alerts(PLAIN, null).size() == 1, () -> "alerts " + am.alerts(PLAIN, null));

            // three resolve_timeouts (and three alert validities) long, the alert stays active, its end moving on
            final long until = System.nanoTime() + Duration.ofSeconds(6).toNanos();
            final List<Instant> ends = new ArrayList<>();
            while (System.nanoTime() < until) {
                final JsonNode alerts = am.alerts(PLAIN, null);
                assertThat(alerts).as("active alerts at %s", Instant.now()).hasSize(1);
                final JsonNode a = alerts.get(0);
                assertThat(a.path("status").path("state").asText()).isEqualTo("active");
                assertThat(Instant.parse(a.path("endsAt").asText())).isAfter(Instant.now());
                ends.add(Instant.parse(a.path("endsAt").asText()));
                Thread.sleep(200);
            }
            assertThat(ends.get(ends.size() - 1)).isAfter(ends.get(0).plusSeconds(4));
            final JsonNode a = am.alerts(PLAIN, null).get(0);
            assertThat(a.path("labels").path("severity").asText()).isEqualTo("warning");
            assertThat(a.path("labels").path("kind").asText()).isEqualTo("slow_link");
            assertThat(a.path("labels").path("rank").asText()).isEqualTo("3");
            assertThat(a.path("annotations").path("runbook_url").asText())
                    .isEqualTo("http://127.0.0.1:7070/runbooks.md#slow_link");
            assertThat(a.path("generatorURL").asText()).isEqualTo("http://127.0.0.1:7070/#anomaly=0x5109");
            assertThat(sink.resends()).isGreaterThanOrEqualTo(10);

            final long resolvedNs = nowNs() - 200_000_000L;
            sink.onResolved(Anomalies.resolved(open, resolvedNs));
            Eventually.await(() -> am.alerts(PLAIN, null).isEmpty(), () -> "alerts " + am.alerts(PLAIN, null));
            // resolved by flowscope, at its resolution time (not expired at the last endsAt)
            Eventually.await(
                    () -> notifiedUnchecked(warnings, "resolved", "FlowscopeSlowLink", "warning"),
                    () -> "warnings receiver: " + warnings.accepted.size() + " posts");
            final JsonNode resolved = notified(warnings).stream()
                    .filter(n -> n.path("status").asText().equals("resolved"))
                    .findFirst()
                    .orElseThrow();
            final long endMs = Instant.parse(resolved.path("endsAt").asText()).toEpochMilli();
            assertThat(endMs).isEqualTo(resolvedNs / 1_000_000L);
            assertThat(critical.accepted).isEmpty();
            assertThat(sink.counters().rejected()).isZero();
            assertThat(sink.counters().droppedAfterRetries()).isZero();
        }
    }

    @Test
    void anAlertTakenUpByARestartedCollectorStaysOneActiveAlertPagedOnceAndResolvesWhenFlowscopeResolvesIt()
            throws Exception {
        try (Receiver warnings = Receiver.start();
                Receiver critical = Receiver.start();
                AlertmanagerServer am = new AlertmanagerServer(config(warnings, critical), null).start()) {
            final long start = nowNs() - 1_000_000_000L;
            final Anomaly open = Anomalies.slowLink(0x510aL, 7, 0x1a2bL, 3, 4, Severity.WARNING, start, -1);
            // the earlier run fires it and stops; the restart takes 1 s (under the alert's 2 s validity)
            try (WebhookAlertSink earlier =
                    new WebhookAlertSink(sink(am.alertsUrl()).build())) {
                earlier.onOpened(open);
                Eventually.await(() -> am.alerts(PLAIN, null).size() == 1, () -> "alerts " + am.alerts(PLAIN, null));
            }
            final JsonNode before = am.alerts(PLAIN, null).get(0);
            Thread.sleep(1_000);
            try (WebhookAlertSink restarted =
                    new WebhookAlertSink(sink(am.alertsUrl()).build())) {
                restarted.onStillOpen(open);
                // three resolve_timeouts long after the restart: still the one active alert of the earlier run
                final long until = System.nanoTime() + Duration.ofSeconds(6).toNanos();
                while (System.nanoTime() < until) {
                    final JsonNode alerts = am.alerts(PLAIN, null);
                    assertThat(alerts).as("active alerts at %s", Instant.now()).hasSize(1);
                    assertThat(alerts.get(0).path("status").path("state").asText())
                            .isEqualTo("active");
                    assertThat(alerts.get(0).path("fingerprint")).isEqualTo(before.path("fingerprint"));
                    assertThat(alerts.get(0).path("startsAt")).isEqualTo(before.path("startsAt"));
                    Thread.sleep(200);
                }
                // paged once, by the earlier run: taking it up is no new notification
                assertThat(notified(warnings))
                        .extracting(n -> n.path("status").asText())
                        .containsExactly("firing");

                final long resolvedNs = nowNs() - 200_000_000L;
                restarted.onResolved(Anomalies.resolved(open, resolvedNs));
                Eventually.await(() -> am.alerts(PLAIN, null).isEmpty(), () -> "alerts " + am.alerts(PLAIN, null));
                Eventually.await(
                        () -> notifiedUnchecked(warnings, "resolved", "FlowscopeSlowLink", "warning"),
                        () -> "warnings receiver: " + warnings.accepted.size() + " posts");
                final JsonNode resolved = notified(warnings).stream()
                        .filter(n -> n.path("status").asText().equals("resolved"))
                        .findFirst()
                        .orElseThrow();
                assertThat(Instant.parse(resolved.path("endsAt").asText()).toEpochMilli())
                        .isEqualTo(resolvedNs / 1_000_000L);
                assertThat(restarted.counters().rejected()).isZero();
            }
        }
    }

    @Test
    void aCriticalAnomalyReachesTheCriticalRouteAndAnEscalationMovesTheAlertThere() throws Exception {
        try (Receiver warnings = Receiver.start();
                Receiver critical = Receiver.start();
                AlertmanagerServer am = new AlertmanagerServer(config(warnings, critical), null).start();
                WebhookAlertSink sink =
                        new WebhookAlertSink(sink(am.alertsUrl()).build())) {
            final long start = nowNs() - 1_000_000_000L;
            final Anomaly nic = Anomalies.nicStall(0x51aL, 9, 1, start, -1);
            final Anomaly link = Anomalies.slowLink(0x51bL, 7, 0x1a2bL, 1, 2, Severity.WARNING, start, -1);
            sink.onOpened(nic);
            sink.onOpened(link);
            Eventually.await(
                    () -> notifiedUnchecked(critical, "firing", "FlowscopeNicStall", "critical")
                            && notifiedUnchecked(warnings, "firing", "FlowscopeSlowLink", "warning"),
                    () -> "critical " + critical.accepted.size() + ", warnings " + warnings.accepted.size());

            sink.onUpdated(Anomalies.escalated(link));
            Eventually.await(
                    () -> notifiedUnchecked(critical, "firing", "FlowscopeSlowLink", "critical")
                            && notifiedUnchecked(warnings, "resolved", "FlowscopeSlowLink", "warning"),
                    () -> "critical " + critical.accepted.size() + ", warnings " + warnings.accepted.size());

            sink.onResolved(Anomalies.resolved(nic, nowNs()));
            sink.onResolved(Anomalies.resolved(Anomalies.escalated(link), nowNs()));
            Eventually.await(
                    () -> notifiedUnchecked(critical, "resolved", "FlowscopeNicStall", "critical")
                            && notifiedUnchecked(critical, "resolved", "FlowscopeSlowLink", "critical"),
                    () -> "critical " + critical.accepted.size());
            assertThat(am.alerts(PLAIN, null)).isEmpty();
            assertThat(notified(warnings))
                    .noneMatch(a -> a.path("labels").path("severity").asText().equals("critical"));
            assertThat(notified(critical))
                    .noneMatch(a -> a.path("labels").path("severity").asText().equals("warning"));
        }
    }

    @Test
    void alertsGoThroughTlsWithAClientCertificateAndBasicAuthAndAWrongPasswordIsRejectedAndCounted() throws Exception {
        final SelfSigned server = SelfSigned.create(dir, "server");
        final SelfSigned client = SelfSigned.create(dir, "client");
        final String web = "tls_server_config:\n  cert_file: " + server.certPem() + "\n  key_file: " + server.keyPem()
                + "\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + client.certPem()
                + "\nbasic_auth_users:\n  flowscope: '" + PASSWORD_BCRYPT + "'\n";
        try (Receiver warnings = Receiver.start();
                Receiver critical = Receiver.start()) {
            try (AlertmanagerServer tlsAm = new AlertmanagerServer(config(warnings, critical), web).start()) {
                assertThat(tlsAm.alertsUrl().getScheme()).isEqualTo("https");
                final ClientTls tls = new ClientTls(server.certPem(), client.certPem(), client.keyPem(), false);
                final HttpClient reader =
                        HttpClient.newBuilder().sslContext(tls.sslContext()).build();
                final String basic = HttpAuth.basic("flowscope", PASSWORD).header();

                try (WebhookAlertSink good = new WebhookAlertSink(sink(tlsAm.alertsUrl())
                                .tls(tls)
                                .auth(HttpAuth.basic("flowscope", PASSWORD))
                                .build());
                        WebhookAlertSink wrongPassword = new WebhookAlertSink(sink(tlsAm.alertsUrl())
                                .tls(tls)
                                .auth(HttpAuth.basic("flowscope", "not-the-password"))
                                .build());
                        WebhookAlertSink noClientCert = new WebhookAlertSink(sink(tlsAm.alertsUrl())
                                .tls(new ClientTls(server.certPem(), null, null, false))
                                .auth(HttpAuth.basic("flowscope", PASSWORD))
                                .build());
                        WebhookAlertSink jdkTrust = new WebhookAlertSink(sink(tlsAm.alertsUrl())
                                .tls(new ClientTls(null, client.certPem(), client.keyPem(), false))
                                .auth(HttpAuth.basic("flowscope", PASSWORD))
                                .build());
                        WebhookAlertSink skipVerify = new WebhookAlertSink(sink(tlsAm.alertsUrl())
                                .tls(new ClientTls(null, client.certPem(), client.keyPem(), true))
                                .auth(HttpAuth.basic("flowscope", PASSWORD))
                                .build())) {
                    final long start = nowNs() - 1_000_000_000L;
                    good.onOpened(Anomalies.nicStall(0x7151L, 9, 3, start, -1));
                    wrongPassword.onOpened(Anomalies.nicStall(0x7152L, 9, 4, start, -1));
                    noClientCert.onOpened(Anomalies.nicStall(0x7153L, 9, 5, start, -1));
                    jdkTrust.onOpened(Anomalies.nicStall(0x7154L, 9, 6, start, -1));
                    skipVerify.onOpened(Anomalies.nicStall(0x7155L, 9, 7, start, -1));
                    for (final WebhookAlertSink s : List.of(good, wrongPassword, noClientCert, jdkTrust, skipVerify)) {
                        assertThat(s.flush(Duration.ofSeconds(30))).isTrue();
                    }

                    // the self-signed server is trusted through caFile, or not checked when asked; not by the JDK
                    final JsonNode alerts = tlsAm.alerts(reader, basic);
                    assertThat(alerts)
                            .extracting(a -> a.path("labels").path("device").asText())
                            .containsExactlyInAnyOrder("3", "7");
                    assertThat(jdkTrust.counters().exported()).isZero();
                    assertThat(jdkTrust.lastFailure()).contains("SSLHandshakeException");
                    assertThat(good.counters().exported()).isPositive();
                    assertThat(wrongPassword.counters().rejected()).isPositive();
                    assertThat(wrongPassword.lastFailure()).contains("answered 401");
                    assertThat(noClientCert.counters().droppedAfterRetries()).isPositive();
                    assertThat(noClientCert.counters().exported()).isZero();
                    assertThat(good.toString() + wrongPassword.lastFailure()).doesNotContain(PASSWORD);
                }
            }
        }
    }
}
