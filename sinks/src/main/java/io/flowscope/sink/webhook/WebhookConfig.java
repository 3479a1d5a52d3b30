package io.flowscope.sink.webhook;

import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.http.ClientTls;
import io.flowscope.sink.http.HttpAuth;
import io.flowscope.sink.influx.InfluxSchema;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * One alert webhook. Immutable; {@link #builder(URI)}. The secret is held as bytes and never printed:
 * {@link #toString()} masks it.
 *
 * @param url             where to POST
 * @param format          generic JSON or an Alertmanager {@code /api/v2/alerts} array
 * @param secret          HMAC-SHA256 key (empty = unsigned)
 * @param signatureHeader header carrying {@code sha256=<hex>}
 * @param requestTimeout  per request
 * @param dedupCapacity   notification keys remembered for de-duplication (oldest forgotten first); Alertmanager:
 *                        open alerts kept for re-sending (beyond it the oldest is no longer re-sent)
 * @param staticLabels    labels added to every alert (e.g. cluster=...)
 * @param hostNames       the {@code host} label of a host id
 * @param rankNames       a rank culprit's process and GPU (annotations; the generic culprit's fields)
 * @param clock           event time → epoch ns for startsAt / endsAt
 * @param processor       batching, back-pressure, retries (exponential back-off with jitter, bounded)
 * @param resendInterval  Alertmanager: how often every open alert is sent again, each time with
 *                        {@code endsAt = now + }{@link #VALIDITY_RESENDS}{@code  × resendInterval}
 * @param liveUrl         the live page, for {@code generatorURL = liveUrl#anomaly=<id>}; null: no generatorURL
 * @param runbookUrl      the runbooks page, for {@code runbook_url = runbookUrl#<kind>}; null: no runbook_url
 * @param auth            bearer token or basic auth (never printed)
 * @param tls             CA file, client certificate, insecureSkipVerify
 * @param wallClock       what "now" is for endsAt (tests fix it)
 */
public record WebhookConfig(
        URI url,
        WebhookFormat format,
        byte[] secret,
        String signatureHeader,
        Duration requestTimeout,
        int dedupCapacity,
        Map<String, String> staticLabels,
        LongFunction<String> hostNames,
        RankNames rankNames,
        EventClock clock,
        ProcessorConfig processor,
        Duration resendInterval,
        URI liveUrl,
        URI runbookUrl,
        HttpAuth auth,
        ClientTls tls,
        Clock wallClock) {
    public static final String DEFAULT_SIGNATURE_HEADER = "X-Flowscope-Signature";

    /**
     * A firing alert's {@code endsAt} lies this many re-send intervals ahead of the moment it is sent, as Prometheus
     * does (4 × its resend delay): three re-sends may be lost before Alertmanager lets the alert resolve on its
     * own, and a collector that stopped stops paging after at most this long.
     */
    public static final int VALIDITY_RESENDS = 4;

    /** The labels flowscope sets itself: a static label may not take one of these names. */
    public static final java.util.Set<String> OWN_LABELS =
            java.util.Set.of("alertname", "source", "severity", "kind", "host", "comm", "rank", "peer", "device", "qp");

    public WebhookConfig {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(auth, "auth");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(wallClock, "wallClock");
        secret = secret.clone();
        staticLabels = Map.copyOf(staticLabels);
        for (final String name : staticLabels.keySet()) {
            if (!name.matches("[a-zA-Z_][a-zA-Z0-9_]*") || OWN_LABELS.contains(name)) {
                throw new IllegalArgumentException("static label '" + name + "': a label name ([a-zA-Z_][a-zA-Z0-9_]*) "
                        + "other than flowscope's own " + new java.util.TreeSet<>(OWN_LABELS));
            }
        }
        if (resendInterval.toMillis() < 100) {
            throw new IllegalArgumentException("resendInterval must be at least 100 ms: " + resendInterval);
        }
        if (!"https".equalsIgnoreCase(url.getScheme()) && !tls.isDefault()) {
            throw new IllegalArgumentException("TLS settings (" + tls + ") for a URL that is not https: " + url);
        }
    }

    /** How long ahead of now a firing alert's {@code endsAt} is. */
    public Duration alertValidity() {
        return resendInterval.multipliedBy(VALIDITY_RESENDS);
    }

    @Override
    public byte[] secret() {
        return secret.clone();
    }

    public static Builder builder(final URI url) {
        return new Builder(url);
    }

    @Override
    public boolean equals(final Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return "WebhookConfig{url=" + url + ", format=" + format + ", secret=" + (secret.length == 0 ? "none" : "****")
                + ", signatureHeader=" + signatureHeader + ", requestTimeout=" + requestTimeout + ", dedupCapacity="
                + dedupCapacity + ", staticLabels=" + new TreeMap<>(staticLabels) + ", resendInterval=" + resendInterval
                + ", liveUrl=" + liveUrl + ", runbookUrl=" + runbookUrl + ", auth=" + auth + ", " + tls + ", "
                + processor
                + '}';
    }

    /**
     * Defaults: Alertmanager format, unsigned, no auth, the JDK's TLS trust, 5 s requests, re-sent every 60 s, 8
     * attempts 200 ms..10 s back-off, 50% jitter; no generatorURL and no runbook_url until their pages are given.
     */
    public static final class Builder {
        private final URI url;
        private WebhookFormat format = WebhookFormat.ALERTMANAGER;
        private byte[] secret = new byte[0];
        private String signatureHeader = DEFAULT_SIGNATURE_HEADER;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private int dedupCapacity = 10_000;
        private Map<String, String> staticLabels = Map.of();
        private LongFunction<String> hostNames = InfluxSchema::hexHost;
        private RankNames rankNames = RankNames.NONE;
        private EventClock clock = EventClock.anchoredAtFirstSight();
        private ProcessorConfig processor = ProcessorConfig.builder()
                .name("flowscope-webhook")
                .queueCapacity(4096)
                .maxBatch(64)
                .flushInterval(Duration.ofMillis(100))
                .maxAttempts(8)
                .initialBackoff(Duration.ofMillis(200))
                .maxBackoff(Duration.ofSeconds(10))
                .jitter(0.5)
                .build();
        private Duration resendInterval = Duration.ofSeconds(60);
        private URI liveUrl;
        private URI runbookUrl;
        private HttpAuth auth = HttpAuth.NONE;
        private ClientTls tls = ClientTls.DEFAULT;
        private Clock wallClock = Clock.systemUTC();

        Builder(final URI url) {
            this.url = url;
        }

        public Builder format(final WebhookFormat v) {
            format = v;
            return this;
        }

        public Builder secret(final String v) {
            secret = v.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        public Builder signatureHeader(final String v) {
            signatureHeader = v;
            return this;
        }

        public Builder requestTimeout(final Duration v) {
            requestTimeout = v;
            return this;
        }

        public Builder dedupCapacity(final int v) {
            dedupCapacity = v;
            return this;
        }

        public Builder staticLabels(final Map<String, String> v) {
            staticLabels = v;
            return this;
        }

        public Builder hostNames(final LongFunction<String> v) {
            hostNames = v;
            return this;
        }

        public Builder rankNames(final RankNames v) {
            rankNames = v;
            return this;
        }

        public Builder clock(final EventClock v) {
            clock = v;
            return this;
        }

        public Builder processor(final ProcessorConfig v) {
            processor = v;
            return this;
        }

        public Builder resendInterval(final Duration v) {
            resendInterval = v;
            return this;
        }

        public Builder liveUrl(final URI v) {
            liveUrl = v;
            return this;
        }

        public Builder runbookUrl(final URI v) {
            runbookUrl = v;
            return this;
        }

        public Builder auth(final HttpAuth v) {
            auth = v;
            return this;
        }

        public Builder tls(final ClientTls v) {
            tls = v;
            return this;
        }

        public Builder wallClock(final Clock v) {
            wallClock = v;
            return this;
        }

        public WebhookConfig build() {
            return new WebhookConfig(
                    url,
                    format,
                    secret,
                    signatureHeader,
                    requestTimeout,
                    dedupCapacity,
                    staticLabels,
                    hostNames,
                    rankNames,
                    clock,
                    processor,
                    resendInterval,
                    liveUrl,
                    runbookUrl,
                    auth,
                    tls,
                    wallClock);
        }
    }
}
