package io.flowscope.sink.influx;

import io.flowscope.anomaly.Anomaly;
import io.flowscope.anomaly.AnomalySink;
import io.flowscope.sink.BatchingProcessor;
import io.flowscope.sink.SinkCounters;
import io.flowscope.window.CollectiveSink;
import io.flowscope.window.CollectiveSummary;
import io.flowscope.window.FlowSummary;
import io.flowscope.window.FlowSummarySink;

import java.time.Duration;

/**
 * The InfluxDB sink: a façade that turns flow summaries, collective summaries and anomaly events into
 * line-protocol points on the caller's thread (the reused summaries are copied into the text), admits them
 * through the series cap, and hands them to a {@link BatchingProcessor} that writes them from its own thread.
 * The caller never waits on the network: a full queue drops its oldest point (counted, see
 * {@link #counters()}).
 */
public final class InfluxSink implements FlowSummarySink, CollectiveSink, AnomalySink, AutoCloseable
{
    private final InfluxConfig config;
    private final InfluxSchema schema;
    private final SeriesLimiter limiter;
    private final InfluxHttpExporter exporter;
    private final BatchingProcessor<String> processor;
    private final StringBuilder scratch = new StringBuilder(512);
    private final LineProtocol line = new LineProtocol(scratch);

    public InfluxSink(final InfluxConfig config)
    {
        this.config = config;
        this.schema = new InfluxSchema(config.hostNames(), config.clock());
        this.limiter = new SeriesLimiter(config.maxSeries());
        this.exporter = new InfluxHttpExporter(config.url(), config.database(), config.createDatabase(),
            config.requestTimeout());
        if (config.createDatabase())
        {
            exporter.createDatabase(); // best effort: a server that is down now gets it on its first write
        }
        this.processor = new BatchingProcessor<>(config.processor(), exporter);
    }

    @Override
    public synchronized void onSummary(final FlowSummary summary)
    {
        scratch.setLength(0);
        schema.flow(summary, line);
        submit();
    }

    @Override
    public synchronized void onCollective(final CollectiveSummary summary)
    {
        scratch.setLength(0);
        schema.collective(summary, line);
        submit();
    }

    @Override
    public void onOpened(final Anomaly anomaly)
    {
        anomaly(anomaly, "opened");
    }

    @Override
    public void onUpdated(final Anomaly anomaly)
    {
        anomaly(anomaly, "updated");
    }

    @Override
    public void onResolved(final Anomaly anomaly)
    {
        anomaly(anomaly, "resolved");
    }

    private synchronized void anomaly(final Anomaly anomaly, final String state)
    {
        scratch.setLength(0);
        schema.anomaly(anomaly, state, line);
        submit();
    }

    private void submit()
    {
        if (limiter.admit(line.seriesKey()))
        {
            processor.offer(scratch.toString());
        }
    }

    /** Writes what is queued; true when all of it was finished (written or dropped) within the timeout. */
    public boolean flush(final Duration timeout)
    {
        return processor.flush(timeout);
    }

    public SinkCounters counters()
    {
        return processor.counters().withRefused(limiter.refused());
    }

    /** Why the last write failed ("" when none did). */
    public String lastFailure()
    {
        return processor.lastFailure();
    }

    public int series()
    {
        return limiter.series();
    }

    @Override
    public void close()
    {
        processor.shutdown(Duration.ofSeconds(10));
    }

    @Override
    public String toString()
    {
        return "InfluxSink{" + config + '}';
    }
}
