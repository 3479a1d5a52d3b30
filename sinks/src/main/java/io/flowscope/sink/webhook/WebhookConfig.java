package io.flowscope.sink.webhook;

import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.influx.InfluxSchema;

import java.net.URI;
import java.nio.charset.StandardCharsets;
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
 * @param dedupCapacity   notification keys remembered for de-duplication (oldest forgotten first)
 * @param staticLabels    labels added to every alert (e.g. cluster=...)
 * @param hostNames       the {@code host} label of a host id
 * @param clock           event time → epoch ns for startsAt / endsAt
 * @param processor       batching, back-pressure, retries (exponential back-off with jitter, bounded)
 */
public record WebhookConfig(URI url, WebhookFormat format, byte[] secret, String signatureHeader,
    Duration requestTimeout, int dedupCapacity, Map<String, String> staticLabels, LongFunction<String> hostNames,
    EventClock clock, ProcessorConfig processor)
{
    public static final String DEFAULT_SIGNATURE_HEADER = "X-Flowscope-Signature";

    public WebhookConfig
    {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(format, "format");
        secret = secret.clone();
        staticLabels = Map.copyOf(staticLabels);
    }

    @Override
    public byte[] secret()
    {
        return secret.clone();
    }

    public static Builder builder(final URI url)
    {
        return new Builder(url);
    }

    @Override
    public boolean equals(final Object o)
    {
        return this == o;
    }

    @Override
    public int hashCode()
    {
        return System.identityHashCode(this);
    }

    @Override
    public String toString()
    {
        return "WebhookConfig{url=" + url + ", format=" + format + ", secret=" + (secret.length == 0 ? "none" : "****")
            + ", signatureHeader=" + signatureHeader + ", requestTimeout=" + requestTimeout + ", dedupCapacity="
            + dedupCapacity + ", staticLabels=" + new TreeMap<>(staticLabels) + ", " + processor + '}';
    }

    /** Defaults: Alertmanager format, unsigned, 5 s requests, 8 attempts 200 ms..10 s back-off, 50% jitter. */
    public static final class Builder
    {
        private final URI url;
        private WebhookFormat format = WebhookFormat.ALERTMANAGER;
        private byte[] secret = new byte[0];
        private String signatureHeader = DEFAULT_SIGNATURE_HEADER;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private int dedupCapacity = 10_000;
        private Map<String, String> staticLabels = Map.of();
        private LongFunction<String> hostNames = InfluxSchema::hexHost;
        private EventClock clock = EventClock.anchoredAtFirstSight();
        private ProcessorConfig processor = ProcessorConfig.builder().name("flowscope-webhook").queueCapacity(4096)
            .maxBatch(64).flushInterval(Duration.ofMillis(100)).maxAttempts(8).initialBackoff(Duration.ofMillis(200))
            .maxBackoff(Duration.ofSeconds(10)).jitter(0.5).build();

        Builder(final URI url)
        {
            this.url = url;
        }

        public Builder format(final WebhookFormat v)
        {
            format = v;
            return this;
        }

        public Builder secret(final String v)
        {
            secret = v.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        public Builder signatureHeader(final String v)
        {
            signatureHeader = v;
            return this;
        }

        public Builder requestTimeout(final Duration v)
        {
            requestTimeout = v;
            return this;
        }

        public Builder dedupCapacity(final int v)
        {
            dedupCapacity = v;
            return this;
        }

        public Builder staticLabels(final Map<String, String> v)
        {
            staticLabels = v;
            return this;
        }

        public Builder hostNames(final LongFunction<String> v)
        {
            hostNames = v;
            return this;
        }

        public Builder clock(final EventClock v)
        {
            clock = v;
            return this;
        }

        public Builder processor(final ProcessorConfig v)
        {
            processor = v;
            return this;
        }

        public WebhookConfig build()
        {
            return new WebhookConfig(url, format, secret, signatureHeader, requestTimeout, dedupCapacity, staticLabels,
                hostNames, clock, processor);
        }
    }
}
