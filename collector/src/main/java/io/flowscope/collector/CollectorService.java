package io.flowscope.collector;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

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
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.ProducerDrops;
import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.sink.influx.InfluxSchema;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running service: a Vert.x instance with the {@link HttpVerticle}, and the {@link DrainLoop} on its own
 * thread. Started from an immutable {@link CollectorConfig}; {@link #close()} stops both and waits.
 */
public final class CollectorService implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(CollectorService.class);

    private final CollectorConfig config;
    private final Vertx vertx;
    private final HttpVerticle http;
    private final DrainLoop drain;
    private final String sourceDescription;
    private final ServiceSinks sinks;
    private final Extensions extensions;
    private final Source source;
    /** The journal directory's lock, held for the service's life (null without a journal). */
    private final JournalLock lock;

    /** What a component started beside the service (the fleet agent) adds to /metrics and /api/health. */
    private static final class Extensions
    {
        final List<Supplier<String>> metrics = new CopyOnWriteArrayList<>();
        final Map<String, Supplier<Object>> health = new ConcurrentHashMap<>();

        String metrics()
        {
            final StringBuilder b = new StringBuilder();
            metrics.forEach(m -> b.append(m.get()));
            return b.toString();
        }
    }

    private CollectorService(final CollectorConfig config, final Vertx vertx, final HttpVerticle http,
        final DrainLoop drain, final ServiceSinks sinks, final Extensions extensions, final Source source,
        final JournalLock lock)
    {
        this.lock = lock;
        this.source = source;
        this.extensions = extensions;
        this.sinks = sinks;
        this.config = config;
        this.vertx = vertx;
        this.http = http;
        this.drain = drain;
        this.sourceDescription = drain.sourceDescription();
    }

    /** A host id's name where the source knows it (a ring's hostname, a simulated node's name), else null. */
    public String hostName(final long hostId)
    {
        return source.hostName(hostId);
    }

    public String sourceDescription()
    {
        return sourceDescription;
    }

    /** The source the configuration asks for: the simulator when {@code simulate.scenario} is set, else rings. */
    public static Source sourceOf(final CollectorConfig config)
    {
        if (!config.simulateScenario().isEmpty())
        {
            try
            {
                return new SimulatorSource(config.simulateScenario(), config.simulateSpeed(),
                    config.simulateDurationSeconds());
            }
            catch (final IllegalArgumentException e)
            {
                throw new CollectorConfig.ConfigException("config: simulate.scenario = '" +
                    config.simulateScenario() + "': " + e.getMessage());
            }
        }
        return new RingSource(config.ringDir(), config.ringScanMs(), config.ringDeleteDrained());
    }

    public static CollectorService start(final CollectorConfig config, final Consumer<AnomalyEvent> console)
        throws Exception
    {
        return start(config, sourceOf(config), console);
    }

    public static CollectorService start(final CollectorConfig config, final Source source,
        final Consumer<AnomalyEvent> console) throws Exception
    {
        return start(config, source, AnomalyStages::create, console);
    }

    /**
     * With another anomaly stage than the service's: tests inject a stage that fails. A journal directory that
     * another service holds stops the start ({@link JournalLock.InUseException}, one line naming the directory and
     * the other process).
     */
    static CollectorService start(final CollectorConfig config, final Source source,
        final Function<AnomalySink, AnomalyStage> stageFactory, final Consumer<AnomalyEvent> console) throws Exception
    {
        final JournalLock lock;
        try
        {
            lock = config.journalEnabled() ? JournalLock.acquire(config.journalDir()) : null;
        }
        catch (final RuntimeException e)
        {
            source.close();
            throw e;
        }
        // after the lock: a service that does not start says so in one line (and its configuration is not news)
        LOG.info("configuration: {}", config);
        try
        {
            return start(config, source, stageFactory, console, lock);
        }
        catch (final Exception | Error e)
        {
            if (lock != null)
            {
                lock.close();
            }
            throw e;
        }
    }

    private static CollectorService start(final CollectorConfig config, final Source source,
        final Function<AnomalySink, AnomalyStage> stageFactory, final Consumer<AnomalyEvent> console,
        final JournalLock lock) throws Exception
    {
        final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2));
        final DrainLoop[] drainRef = new DrainLoop[1];
        // Hosts by name where the source knows it (Grafana's host variable, a page's host label), else by id.
        final ServiceSinks sinks = new ServiceSinks(config.sinks(), id ->
        {
            final String name = source.hostName(id);
            return name != null ? name : InfluxSchema.hexHost(id);
        });
        final Extensions ext = new Extensions();
        final HttpVerticle http = new HttpVerticle(config.httpHost(), config.httpPort(), config.publishIntervalMs(),
            () -> drainRef[0].snapshot(), () -> health(config, drainRef[0], sinks, source, ext),
            config.security(), () -> Metrics.renderSinks(sinks.statuses()) + ext.metrics())
            .page(source::hostName, source instanceof RingSource ? config.ringDir() : null);
        // a recovered event (an anomaly an earlier run announced, still open) is for the sinks that keep state only
        final DrainLoop drain = new DrainLoop(config, source, stageFactory, e ->
        {
            if (!e.recovered())
            {
                http.publish(e);
            }
            sinks.onAnomaly(e);
            if (!e.recovered())
            {
                console.accept(e);
            }
        });
        drain.sinks(sinks);
        drainRef[0] = drain;
        try
        {
            vertx.deployVerticle(http).await(30, TimeUnit.SECONDS);
        }
        catch (final Exception e)
        {
            sinks.close();
            source.close();
            vertx.close().await(30, TimeUnit.SECONDS);
            throw new IllegalStateException("cannot serve HTTP on " + config.httpHost() + ":" + config.httpPort() +
                ": " + e.getMessage(), e);
        }
        drain.start();
        if (!drain.awaitReady(5, TimeUnit.MINUTES))
        {
            final CollectorService s = new CollectorService(config, vertx, http, drain, sinks, ext, source, null);
            final Throwable t = drain.crashed();
            s.close();
            throw new IllegalStateException("the drain loop did not start: " + t, t);
        }
        return new CollectorService(config, vertx, http, drain, sinks, ext, source, lock);
    }

    private static Map<String, Object> health(final CollectorConfig config, final DrainLoop drain,
        final ServiceSinks sinks, final Source source, final Extensions ext)
    {
        final Map<String, Object> h = health(config, drain);
        h.put("sinks", sinks.health());
        final String late = source.behind();
        if (late != null)
        {
            if ("UP".equals(h.get("status")))
            {
                h.put("status", "DEGRADED");
            }
            reasons(h).add(late);
        }
        final Map<String, Object> own = source.health();
        if (own != null)
        {
            h.put(source instanceof SimulatorSource ? "simulator" : "source", own);
        }
        ext.health.forEach((k, v) -> h.put(k, v.get()));
        return h;
    }

    /** What /api/health says now (status UP, DEGRADED or DOWN, and why), as the HTTP endpoint serves it. */
    public Map<String, Object> health()
    {
        return health(config, drain, sinks, source, extensions);
    }

    @SuppressWarnings("unchecked")
    private static List<String> reasons(final Map<String, Object> h)
    {
        return (List<String>)h.computeIfAbsent("reasons", k -> new java.util.ArrayList<String>());
    }

    static Map<String, Object> health(final CollectorConfig config, final DrainLoop drain)
    {
        final Map<String, Object> h = new LinkedHashMap<>();
        final Snapshot s = drain.snapshot();
        final String jf = s.stats().journalFailure();
        final IngestFailures.Counts failures = s.stats().failures();
        // input that made a stage throw lately: detection may have missed what that input carried
        final boolean recentFailures = failures.recent(System.currentTimeMillis());
        // a ring that fills up is never silent: its producer drops records the engines will never see
        final String dropping = ProducerDrops.reason(s.stats().producers(), System.currentTimeMillis());
        final String status = drain.crashed() != null ? "DOWN" :
            jf != null || recentFailures || dropping != null ? "DEGRADED" : "UP";
        h.put("status", status);
        // Why it is not UP, one line each (the console prints them when the status changes).
        final List<String> reasons = new java.util.ArrayList<>();
        if (drain.crashed() != null)
        {
            reasons.add("the drain loop stopped: " + drain.crashed());
        }
        if (jf != null)
        {
            reasons.add("journal: " + jf);
        }
        if (recentFailures)
        {
            reasons.add("input that made a stage throw lately (see failures)");
        }
        if (dropping != null)
        {
            reasons.add(dropping);
        }
        h.put("reasons", reasons);
        h.put("ready", drain.isReady());
        h.put("source", s.stats().source());
        h.put("drainLoopLagMs", System.currentTimeMillis() - drain.lastIterationMs());
        h.put("eventsTotal", s.stats().eventsTotal());
        h.put("ringsAttached", s.stats().ringsAttached());
        final Map<String, Object> j = new LinkedHashMap<>();
        j.put("enabled", config.journalEnabled());
        j.put("dir", config.journalDir().toString());
        j.put("bytes", s.stats().journalBytes());
        j.put("maxBytes", config.journalMaxBytes());
        j.put("failure", jf);
        j.put("recoveredEntries", drain.recoveredEntries());
        h.put("journal", j);
        h.put("failures", failures.toHealth(System.currentTimeMillis()));
        h.put("producers", ProducerDrops.health(s.stats().producers(), System.currentTimeMillis()));
        if (drain.crashed() != null)
        {
            h.put("error", drain.crashed().toString());
        }
        return h;
    }

    public int port()
    {
        return http.actualPort();
    }

    public String url()
    {
        return (config.security().tls() != null ? "https" : "http") + "://" + config.httpHost() + ":" + port() + "/";
    }

    /** Appends {@code metrics} (Prometheus text) to /metrics and {@code health} under {@code key} in /api/health. */
    public void extend(final String key, final Supplier<Object> health, final Supplier<String> metrics)
    {
        extensions.health.put(key, health);
        extensions.metrics.add(metrics);
    }

    public ServiceSinks sinks()
    {
        return sinks;
    }

    public DrainLoop drain()
    {
        return drain;
    }

    @Override
    public void close() throws Exception
    {
        try
        {
            drain.stop();
        }
        finally
        {
            try
            {
                sinks.close();
            }
            finally
            {
                try
                {
                    vertx.close().await(30, TimeUnit.SECONDS);
                }
                finally
                {
                    if (lock != null)
                    {
                        lock.close(); // after the drain loop closed the journal
                    }
                }
            }
        }
    }
}
