package io.flowscope.sink.influx;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.sink.BatchingProcessor;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.SinkCounters;
import java.time.Duration;

/**
 * The InfluxDB sink: a façade that turns flow summaries, collective summaries and anomaly events into
 * line-protocol points on the caller's thread (the reused summaries are copied into the text), admits them
 * through the series cap, and hands them to a {@link BatchingProcessor} whose worker writes each batch through the
 * InfluxDB Java client ({@link InfluxClientExporter}).
 * The caller never waits on the network: a full queue drops its oldest point (counted, see
 * {@link #counters()}). Anomaly events have a queue and a writer of their own: they are rare and are what the
 * dashboards annotate; behind a backlog of flow points (the service offers more points than a small influxd
 * takes) drop-oldest would evict them, or they would wait seconds for the flows ahead of them.
 */
public final class InfluxSink implements FlowSummarySink, CollectiveSink, AnomalySink, AutoCloseable {
    /** Anomaly events queued at most (a storm of them beyond this still drops the oldest, counted). */
    static final int ANOMALY_QUEUE_CAPACITY = 4096;

    private final InfluxConfig config;
    private final InfluxSchema schema;
    private final SeriesLimiter limiter;
    private final InfluxClientExporter exporter;
    private final BatchingProcessor<String> processor;
    private final BatchingProcessor<String> anomalies;
    private final StringBuilder scratch = new StringBuilder(512);
    private final LineProtocol line = new LineProtocol(scratch);

    public InfluxSink(final InfluxConfig config) {
        this.config = config;
        this.schema = new InfluxSchema(config.hostNames(), config.rankNames(), config.clock());
        this.limiter = new SeriesLimiter(config.maxSeries());
        this.exporter = exporter(config);
        if (config.createDatabase()) {
            exporter.createDatabase(); // best effort: a server that is down now gets it on its first write
        }
        this.processor = new BatchingProcessor<>(config.processor(), exporter);
        final ProcessorConfig p = config.processor();
        this.anomalies = new BatchingProcessor<>(
                p.toBuilder()
                        .name(p.name() + "-anomalies")
                        .queueCapacity(Math.min(p.queueCapacity(), ANOMALY_QUEUE_CAPACITY))
                        .build(),
                exporter(config));
    }

    private static InfluxClientExporter exporter(final InfluxConfig config) {
        return new InfluxClientExporter(
                config.url(),
                config.database(),
                config.createDatabase(),
                config.requestTimeout(),
                config.auth(),
                config.tls());
    }

    @Override
    public synchronized void onSummary(final FlowSummary summary) {
        scratch.setLength(0);
        schema.flow(summary, line);
        submit(processor);
    }

    @Override
    public synchronized void onCollective(final CollectiveSummary summary) {
        scratch.setLength(0);
        schema.collective(summary, line);
        submit(processor);
    }

    @Override
    public void onOpened(final Anomaly anomaly) {
        anomaly(anomaly, "opened");
    }

    @Override
    public void onUpdated(final Anomaly anomaly) {
        anomaly(anomaly, "updated");
    }

    @Override
    public void onResolved(final Anomaly anomaly) {
        anomaly(anomaly, "resolved");
    }

    private synchronized void anomaly(final Anomaly anomaly, final String state) {
        scratch.setLength(0);
        schema.anomaly(anomaly, state, line);
        submit(anomalies);
    }

    private void submit(final BatchingProcessor<String> queue) {
        if (limiter.admit(line.seriesKey())) {
            queue.offer(scratch.toString());
        }
    }

    /** Writes what is queued; true when all of it was finished (written or dropped) within the timeout. */
    public boolean flush(final Duration timeout) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final boolean anomaliesDone = anomalies.flush(timeout);
        return processor.flush(Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))) && anomaliesDone;
    }

    /** Both queues' counters added up (anomaly points: {@link #anomalyCounters()}). */
    public SinkCounters counters() {
        final SinkCounters f = processor.counters();
        final SinkCounters a = anomalies.counters();
        return new SinkCounters(
                f.offered() + a.offered(),
                f.exported() + a.exported(),
                f.droppedQueueFull() + a.droppedQueueFull(),
                f.droppedAfterRetries() + a.droppedAfterRetries(),
                f.rejected() + a.rejected(),
                f.retries() + a.retries(),
                f.batches() + a.batches(),
                f.queued() + a.queued(),
                limiter.refused());
    }

    /** The anomaly queue's own counters. */
    public SinkCounters anomalyCounters() {
        return anomalies.counters();
    }

    /** Why the last write failed ("" when none did). */
    public String lastFailure() {
        final String flows = processor.lastFailure();
        return flows.isEmpty() ? anomalies.lastFailure() : flows;
    }

    public int series() {
        return limiter.series();
    }

    @Override
    public void close() {
        // the anomalies first: they are few, and the flows' backlog may use up its whole timeout
        anomalies.shutdown(Duration.ofSeconds(5));
        processor.shutdown(Duration.ofSeconds(10));
    }

    @Override
    public String toString() {
        return "InfluxSink{" + config + '}';
    }
}
