package io.flowscope.sink.webhook;

import io.flowscope.anomaly.Anomaly;
import io.flowscope.anomaly.AnomalySink;
import io.flowscope.sink.BatchingProcessor;
import io.flowscope.sink.SinkCounters;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An {@link AnomalySink} that notifies a webhook: de-duplicates (same anomaly id and state once, see
 * {@link Notification#dedupKey()}), queues, and lets a {@link BatchingProcessor} POST from its own thread with
 * bounded exponential back-off and jitter. Never blocks the caller; duplicates are counted as refused.
 */
public final class WebhookAlertSink implements AnomalySink, AutoCloseable
{
    private final WebhookConfig config;
    private final BatchingProcessor<Notification> processor;
    private final Map<String, Boolean> seen;
    private long duplicates;

    public WebhookAlertSink(final WebhookConfig config)
    {
        this.config = config;
        this.processor = new BatchingProcessor<>(config.processor(), new WebhookExporter(config));
        final int capacity = config.dedupCapacity();
        this.seen = new LinkedHashMap<>(16, 0.75f, false)
        {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(final Map.Entry<String, Boolean> eldest)
            {
                return size() > capacity;
            }
        };
    }

    @Override
    public void onOpened(final Anomaly anomaly)
    {
        submit(new Notification(anomaly, Notification.Event.OPENED));
    }

    @Override
    public void onUpdated(final Anomaly anomaly)
    {
        submit(new Notification(anomaly, Notification.Event.UPDATED));
    }

    @Override
    public void onResolved(final Anomaly anomaly)
    {
        submit(new Notification(anomaly, Notification.Event.RESOLVED));
    }

    private void submit(final Notification n)
    {
        synchronized (seen)
        {
            if (seen.putIfAbsent(n.dedupKey(), Boolean.TRUE) != null)
            {
                duplicates++;
                return;
            }
        }
        processor.offer(n);
    }

    public boolean flush(final Duration timeout)
    {
        return processor.flush(timeout);
    }

    /** {@code refused} = duplicates suppressed. */
    public SinkCounters counters()
    {
        synchronized (seen)
        {
            return processor.counters().withRefused(duplicates);
        }
    }

    public String lastFailure()
    {
        return processor.lastFailure();
    }

    @Override
    public void close()
    {
        processor.shutdown(Duration.ofSeconds(10));
    }

    @Override
    public String toString()
    {
        return "WebhookAlertSink{" + config + '}';
    }
}
