package io.flowscope.collector.pipeline;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What detects anomalies behind the service's HTTP side and sinks: a node's drain loop over its rings or the
 * simulator, or the fleet's aggregator over Kafka. The composition root ({@code CollectorService}) builds the same
 * HTTP side, sinks and anomaly fan-out around either; the detector announces anomaly events to the
 * {@link Announcements} it was built with.
 */
public interface Detector extends AutoCloseable {
    /** Begins detecting; the flow and collective summaries it makes from now on go to {@code summaries} too. */
    void start(ServiceSinks summaries) throws Exception;

    /** Waits until it serves what it rebuilt at start (a node's journal catch-up); false if it died meanwhile. */
    default boolean awaitReady(final long timeout, final TimeUnit unit) throws InterruptedException {
        return true;
    }

    /** The latest immutable snapshot the HTTP side serves. Any thread. */
    Snapshot snapshot();

    /** {@code /api/health} without the sinks (status UP, DEGRADED or DOWN, and why). Any thread. */
    Map<String, Object> health();

    /** Its own Prometheus text families, appended to {@code /metrics} (empty: none). Any thread. */
    default String metrics() {
        return "";
    }

    /** A host id's name where it knows it, else null. Any thread (the sinks' workers ask). */
    String hostName(long hostId);

    /** One line for humans: what it detects from. */
    String describe();

    /** Null while alive; the error that stopped it otherwise. */
    Throwable failure();

    /** True when its input has ended (a simulation of fixed duration). */
    boolean finished();

    @Override
    void close() throws Exception;
}
