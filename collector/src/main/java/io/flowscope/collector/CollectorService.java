package io.flowscope.collector;

import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.http.HttpVerticle;
import io.flowscope.collector.http.Metrics;
import io.flowscope.collector.ingest.DrainLoop;
import io.flowscope.collector.ingest.RingSource;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.ingest.Source;
import io.flowscope.collector.journal.JournalLock;
import io.flowscope.collector.pipeline.Announcements;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Detector;
import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.sink.influx.InfluxSchema;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: the one place that builds a running service from the one {@link CollectorConfig} — a
 * {@link Detector} (a node's {@link DrainLoop} over its source, or a fleet aggregator that {@code Main} builds), the
 * sinks from their configuration slice, the HTTP side (API, stream, /metrics, live page) and the anomaly fan-out
 * ({@link Announcements}) between them. {@link #close()} stops them all and waits.
 * <p>
 * Built in data order, so that nothing needs what is built after it: announcements, the detector, the sinks (which
 * name hosts as the detector knows them), the HTTP side (which serves the detector's snapshots), then the receivers
 * attached to the announcements, the HTTP side deployed and the detector started.
 */
public final class CollectorService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CollectorService.class);

    private final CollectorConfig config;
    private final Vertx vertx;
    private final HttpVerticle http;
    private final Detector detector;
    private final ServiceSinks sinks;
    private final Extensions extensions;
    /** The journal directory's lock, held for the service's life (null without a journal or for an aggregator). */
    private final JournalLock lock;

    /** What a component started beside the service (the fleet agent) adds to /metrics and /api/health. */
    private static final class Extensions {
        final List<Supplier<String>> metrics = new CopyOnWriteArrayList<>();
        final Map<String, Supplier<Object>> health = new ConcurrentHashMap<>();

        String metrics() {
            final StringBuilder b = new StringBuilder();
            metrics.forEach(m -> b.append(m.get()));
            return b.toString();
        }
    }

    private CollectorService(
            final CollectorConfig config,
            final Vertx vertx,
            final HttpVerticle http,
            final Detector detector,
            final ServiceSinks sinks,
            final Extensions extensions,
            final JournalLock lock) {
        this.config = config;
        this.vertx = vertx;
        this.http = http;
        this.detector = detector;
        this.sinks = sinks;
        this.extensions = extensions;
        this.lock = lock;
    }

    /** A host id's name where the detector knows it (a ring's hostname, a simulated node's name), else null. */
    public String hostName(final long hostId) {
        return detector.hostName(hostId);
    }

    public String sourceDescription() {
        return detector.describe();
    }

    /** The source the configuration asks for: the simulator when {@code simulate.scenario} is set, else rings. */
    public static Source sourceOf(final CollectorConfig config) {
        if (!config.simulateScenario().isEmpty()) {
            try {
                return new SimulatorSource(
                        config.simulateScenario(), config.simulateSpeed(), config.simulateDurationSeconds());
            } catch (final IllegalArgumentException e) {
                throw new CollectorConfig.ConfigException(
                        "config: simulate.scenario = '" + config.simulateScenario() + "': " + e.getMessage());
            }
        }
        return new RingSource(config.ringDir(), config.ringScanMs(), config.ringDeleteDrained());
    }

    /** A node's service (standalone or fleet agent) on the source the configuration asks for. */
    public static CollectorService start(final CollectorConfig config, final Consumer<AnomalyEvent> console)
            throws Exception {
        return start(config, sourceOf(config), console);
    }

    public static CollectorService start(
            final CollectorConfig config, final Source source, final Consumer<AnomalyEvent> console) throws Exception {
        return start(config, source, AnomalyStages::create, console);
    }

    /**
     * A node's service with another anomaly stage than the service's: tests inject a stage that fails. A journal
     * directory that another service holds stops the start ({@link JournalLock.InUseException}, one line naming the
     * directory and the other process).
     */
    static CollectorService start(
            final CollectorConfig config,
            final Source source,
            final Function<AnomalySink, AnomalyStage> stageFactory,
            final Consumer<AnomalyEvent> console)
            throws Exception {
        final JournalLock lock;
        try {
            lock = config.journalEnabled() ? JournalLock.acquire(config.journalDir()) : null;
        } catch (final RuntimeException e) {
            source.close();
            throw e;
        }
        // after the lock: a service that does not start says so in one line (and its configuration is not news)
        LOG.info("configuration: {}", config);
        try {
            final Announcements announced = new Announcements();
            final DrainLoop drain = new DrainLoop(config, source, stageFactory, announced);
            return start(
                    config,
                    drain,
                    announced,
                    console,
                    lock,
                    source instanceof RingSource ? config.ringDir() : null,
                    true);
        } catch (final Exception | Error e) {
            if (lock != null) {
                lock.close();
            }
            throw e;
        }
    }

    /**
     * A service around a detector built elsewhere with {@code announced} (the fleet aggregator, which only
     * {@code Main} knows): the same sinks, HTTP side and fan-out as a node's, no journal lock, no live-page names.
     */
    public static CollectorService start(
            final CollectorConfig config,
            final Detector detector,
            final Announcements announced,
            final Consumer<AnomalyEvent> console)
            throws Exception {
        return start(config, detector, announced, console, null, null, false);
    }

    private static CollectorService start(
            final CollectorConfig config,
            final Detector detector,
            final Announcements announced,
            final Consumer<AnomalyEvent> console,
            final JournalLock lock,
            final java.nio.file.Path pageRingDir,
            final boolean pageHostNames)
            throws Exception {
        final Vertx vertx =
                Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2));
        // Hosts by name where the detector knows it (Grafana's host variable, a page's host label), else by id.
        final LongFunction<String> hostNames = id -> {
            final String name = detector.hostName(id);
            return name != null ? name : InfluxSchema.hexHost(id);
        };
        final ServiceSinks sinks = new ServiceSinks(config.sinks(), hostNames);
        final Extensions ext = new Extensions();
        final HttpVerticle http = new HttpVerticle(
                config.httpHost(),
                config.httpPort(),
                config.publishIntervalMs(),
                detector::snapshot,
                () -> health(detector, sinks, ext),
                config.security(),
                () -> Metrics.renderSinks(sinks.statuses()) + detector.metrics() + ext.metrics());
        if (pageHostNames) {
            http.page(detector::hostName, pageRingDir);
        }
        // a recovered event (an anomaly an earlier run announced, still open) is for the sinks that keep state only
        announced
                .to(e -> {
                    if (!e.recovered()) {
                        http.publish(e);
                    }
                })
                .to(sinks::onAnomaly)
                .to(e -> {
                    if (!e.recovered()) {
                        console.accept(e);
                    }
                });
        try {
            vertx.deployVerticle(http).await(30, TimeUnit.SECONDS);
        } catch (final Exception e) {
            try {
                detector.close();
                sinks.close();
            } finally {
                vertx.close().await(30, TimeUnit.SECONDS);
            }
            throw new IllegalStateException(
                    "cannot serve HTTP on " + config.httpHost() + ":" + config.httpPort() + ": " + e.getMessage(), e);
        }
        final CollectorService service = new CollectorService(config, vertx, http, detector, sinks, ext, lock);
        try {
            detector.start(sinks);
        } catch (final Exception | Error e) {
            service.closeKeepingLock();
            throw e;
        }
        if (!detector.awaitReady(5, TimeUnit.MINUTES)) {
            final Throwable t = detector.failure();
            service.closeKeepingLock();
            throw new IllegalStateException("the drain loop did not start: " + t, t);
        }
        return service;
    }

    private static Map<String, Object> health(final Detector detector, final ServiceSinks sinks, final Extensions ext) {
        final Map<String, Object> h = detector.health();
        h.put("sinks", sinks.health());
        ext.health.forEach((k, v) -> h.put(k, v.get()));
        return h;
    }

    /** What /api/health says now (status UP, DEGRADED or DOWN, and why), as the HTTP endpoint serves it. */
    public Map<String, Object> health() {
        return health(detector, sinks, extensions);
    }

    /** The latest snapshot the HTTP side serves. */
    public Snapshot snapshot() {
        return detector.snapshot();
    }

    /** Null while the detector runs; the error that stopped it otherwise (a node's drain loop died). */
    public Throwable failure() {
        return detector.failure();
    }

    /** True when the input has ended (a simulation of fixed duration). */
    public boolean finished() {
        return detector.finished();
    }

    public int port() {
        return http.actualPort();
    }

    public String url() {
        return (config.security().tls() != null ? "https" : "http") + "://" + config.httpHost() + ":" + port() + "/";
    }

    /** Appends {@code metrics} (Prometheus text) to /metrics and {@code health} under {@code key} in /api/health. */
    public void extend(final String key, final Supplier<Object> health, final Supplier<String> metrics) {
        extensions.health.put(key, health);
        extensions.metrics.add(metrics);
    }

    public ServiceSinks sinks() {
        return sinks;
    }

    /** Closes all but the journal lock, which the caller releases (a start that failed). */
    private void closeKeepingLock() throws Exception {
        try {
            detector.close();
        } finally {
            try {
                sinks.close();
            } finally {
                vertx.close().await(30, TimeUnit.SECONDS);
            }
        }
    }

    @Override
    public void close() throws Exception {
        try {
            closeKeepingLock();
        } finally {
            if (lock != null) {
                lock.close(); // after the drain loop closed the journal
            }
        }
    }
}
