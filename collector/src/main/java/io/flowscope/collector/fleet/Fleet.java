package io.flowscope.collector.fleet;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.http.HttpVerticle;
import io.flowscope.collector.http.Metrics;
import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

/** What {@code flowscope run --role agent|aggregator} starts besides (agent) or instead of (aggregator) the service. */
public final class Fleet
{
    private Fleet()
    {
    }

    /** An agent's publisher, started, its counters in the service's /metrics and /api/health; null for another role. */
    public static AgentPublisher startAgent(final CollectorService service, final CollectorConfig config,
        final FleetConfig fleet, final PrintWriter out)
    {
        if (!fleet.isAgent())
        {
            return null;
        }
        final AgentPublisher p = new AgentPublisher(config, fleet, service::hostName).start();
        service.extend("fleet", p::health, p::metrics);
        out.println("flowscope: fleet agent " + p.agentId() + " publishing to " + fleet.bootstrap() + " (topics " +
            fleet.summariesTopic() + ", " + fleet.anomaliesTopic() + ", " + fleet.eventsTopic() + ")");
        out.flush();
        return p;
    }

    /** A running aggregator with its HTTP side (the same API and live page as the service; anomalies only). */
    public static final class Served implements AutoCloseable
    {
        private final Aggregator aggregator;
        private final Vertx vertx;
        private final HttpVerticle http;
        private final String host;
        private final ServiceSinks sinks;
        private final String scheme;

        Served(final Aggregator aggregator, final Vertx vertx, final HttpVerticle http, final String host,
            final ServiceSinks sinks, final String scheme)
        {
            this.aggregator = aggregator;
            this.vertx = vertx;
            this.http = http;
            this.host = host;
            this.sinks = sinks;
            this.scheme = scheme;
        }

        public Aggregator aggregator()
        {
            return aggregator;
        }

        public String url()
        {
            return scheme + "://" + host + ":" + http.actualPort() + "/";
        }

        @Override
        public void close() throws Exception
        {
            try
            {
                aggregator.close();
            }
            finally
            {
                try
                {
                    sinks.close();
                }
                finally
                {
                    vertx.close().await(30, TimeUnit.SECONDS);
                }
            }
        }
    }

    public static Served startAggregator(final CollectorConfig config, final FleetConfig fleet,
        final Consumer<AnomalyEvent> console) throws Exception
    {
        final String instance = fleet.agentId().isEmpty() ? FleetConfig.hostName() + "-" +
            ProcessHandle.current().pid() : fleet.agentId();
        final HttpVerticle[] ref = new HttpVerticle[1];
        final Aggregator[] aggRef = new Aggregator[1];
        // the cross-node anomalies go to the configured sinks (alert webhooks, InfluxDB) as the service's do, hosts
        // named as the agents named them
        final ServiceSinks sinks = new ServiceSinks(config.sinks(), id -> aggRef[0].hostName(id));
        final Aggregator agg = new Aggregator(fleet, instance, e ->
        {
            if (ref[0] != null)
            {
                ref[0].publish(e);
            }
            sinks.onAnomaly(e);
            console.accept(e);
        });
        aggRef[0] = agg;
        final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2));
        final HttpVerticle http = new HttpVerticle(config.httpHost(), config.httpPort(), config.publishIntervalMs(),
            () -> snapshot(agg, fleet), () ->
            {
                final Map<String, Object> h = agg.health();
                h.put("sinks", sinks.health());
                return h;
            }, config.security(), () -> Metrics.renderSinks(sinks.statuses()) + agg.metrics());
        ref[0] = http;
        try
        {
            vertx.deployVerticle(http).await(30, TimeUnit.SECONDS);
            agg.start();
        }
        catch (final Exception e)
        {
            sinks.close();
            vertx.close().await(30, TimeUnit.SECONDS);
            throw e;
        }
        return new Served(agg, vertx, http, config.httpHost(), sinks,
            config.security().tls() != null ? "https" : "http");
    }

    private static Snapshot snapshot(final Aggregator agg, final FleetConfig fleet)
    {
        final List<io.flowscope.api.anomaly.Anomaly> list = agg.anomalies();
        final long open = list.stream().filter(io.flowscope.api.anomaly.Anomaly::isOpen).count();
        final Stats s = new Stats(agg.records(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, 0, agg.records(), open,
            "fleet aggregator " + agg.instance() + " on " + fleet.summariesTopic(),
            agg.failures());
        return new Snapshot(System.currentTimeMillis(), Long.MIN_VALUE, List.of(), List.of(), List.of(), List.of(),
            List.of(), list, s);
    }

    /** {@code run --role aggregator}: serves until {@code stop} (or the duration) ends. */
    public static int serveAggregator(final CollectorConfig config, final FleetConfig fleet,
        final Consumer<AnomalyEvent> console, final PrintWriter out, final CountDownLatch stop,
        final long durationSeconds) throws Exception
    {
        final Throwable failed;
        final CountDownLatch closed = new CountDownLatch(1);
        try (Served s = startAggregator(config, fleet, console))
        {
            final Thread hook = io.flowscope.collector.Main.shutdownHook(stop, closed);
            Runtime.getRuntime().addShutdownHook(hook);
            out.println("flowscope: fleet aggregator " + s.aggregator().instance() + " (group " + fleet.group() +
                ", " + fleet.bootstrap() + ") serving " + s.url() + "  (anomalies at " + s.url() +
                "api/anomalies; written to " + fleet.fleetAnomaliesTopic() + ")");
            out.flush();
            if (durationSeconds > 0)
            {
                stop.await(durationSeconds, TimeUnit.SECONDS);
            }
            else
            {
                while (!stop.await(200, TimeUnit.MILLISECONDS) && s.aggregator().failed() == null)
                {
                    // serving
                }
            }
            try
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (final IllegalStateException ignored)
            {
                // shutting down already
            }
            failed = s.aggregator().failed();
            out.println("flowscope: stopping the aggregator" + (failed == null ? "" : " (failed: " + failed + ")"));
            out.flush();
        }
        finally
        {
            closed.countDown();
        }
        // a failed aggregator exits non-zero, so that systemd (Restart=on-failure) or Kubernetes restarts it
        return failed == null ? 0 : 1;
    }
}
