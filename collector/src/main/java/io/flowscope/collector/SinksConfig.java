package io.flowscope.collector;

import java.net.URI;
import java.util.List;

import io.flowscope.sink.webhook.WebhookFormat;

/**
 * The sinks slice of the configuration: the InfluxDB sink (null = off) and the alert webhooks. Immutable;
 * {@link #toString()} masks webhook secrets.
 */
public record SinksConfig(Influx influx, List<Webhook> webhooks)
{
    public SinksConfig
    {
        webhooks = List.copyOf(webhooks);
    }

    /** {@code sinks.influxdb.*}. */
    public record Influx(URI url, String database, int batchSize, int queueCapacity, int maxAttempts, int maxSeries)
    {
    }

    /** {@code sinks.webhooks[i].*}; the secret is empty when unsigned. */
    public record Webhook(URI url, WebhookFormat format, String secret, int maxAttempts)
    {
        @Override
        public String toString()
        {
            return "Webhook[url=" + url + ", format=" + format + ", secret=" + (secret.isEmpty() ? "none" : "****") +
                ", maxAttempts=" + maxAttempts + "]";
        }
    }

    public boolean any()
    {
        return influx != null || !webhooks.isEmpty();
    }

    @Override
    public String toString()
    {
        return "influxdb=" + (influx == null ? "(off)" : influx) + " webhooks=" + webhooks;
    }
}
