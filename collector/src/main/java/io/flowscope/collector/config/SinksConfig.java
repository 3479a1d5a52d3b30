package io.flowscope.collector.config;

import io.flowscope.sink.http.ClientTls;
import io.flowscope.sink.http.HttpAuth;
import io.flowscope.sink.webhook.WebhookFormat;
import java.net.URI;
import java.util.List;

/**
 * The sinks slice of the configuration: the InfluxDB sink (null = off), the alert webhooks, and the live page's
 * public address alerts link to ({@code http.publicUrl} or derived; null: unknown). Immutable; {@link #toString()}
 * masks webhook secrets.
 */
public record SinksConfig(Influx influx, List<Webhook> webhooks, URI liveUrl) {
    public SinksConfig {
        webhooks = List.copyOf(webhooks);
    }

    /** {@code sinks.influxdb.*}; {@code auth} prints without its secret. */
    public record Influx(
            URI url,
            String database,
            int batchSize,
            int queueCapacity,
            int maxAttempts,
            int maxSeries,
            HttpAuth auth,
            ClientTls tls) {}

    /**
     * {@code sinks.webhooks[i].*}; the secret is empty when unsigned; {@code runbookUrl} null: the service's own
     * {@code runbooks.html}; {@code delivery}: its queue, batches and back-off.
     */
    public record Webhook(
            URI url,
            WebhookFormat format,
            String secret,
            int maxAttempts,
            long resendIntervalMs,
            URI runbookUrl,
            HttpAuth auth,
            ClientTls tls,
            Delivery delivery) {
        @Override
        public String toString() {
            return "Webhook[url=" + url + ", format=" + format + ", secret=" + (secret.isEmpty() ? "none" : "****")
                    + ", maxAttempts="
                    + maxAttempts + ", resendIntervalMs=" + resendIntervalMs + ", runbookUrl="
                    + (runbookUrl == null ? "(service)" : runbookUrl)
                    + ", auth=" + auth + ", " + tls + ", " + delivery + "]";
        }
    }

    /**
     * How a webhook's worker delivers ({@code sinks.webhooks[i].queueCapacity}, {@code .maxBatch},
     * {@code .flushIntervalMs}, {@code .initialBackoffMs}, {@code .maxBackoffMs}, {@code .jitter}): alerts queued
     * (beyond it the oldest is dropped, counted), alerts per POST at most, how long a batch waits for more, and the
     * back-off between attempts (doubling from the initial to the maximum, less a random fraction up to jitter).
     */
    public record Delivery(
            int queueCapacity,
            int maxBatch,
            long flushIntervalMs,
            long initialBackoffMs,
            long maxBackoffMs,
            double jitter) {}

    public boolean any() {
        return influx != null || !webhooks.isEmpty();
    }

    @Override
    public String toString() {
        return "influxdb=" + (influx == null ? "(off)" : influx) + " webhooks=" + webhooks + " liveUrl="
                + (liveUrl == null ? "(unknown)" : liveUrl);
    }
}
