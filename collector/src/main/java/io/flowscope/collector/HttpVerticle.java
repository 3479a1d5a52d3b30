package io.flowscope.collector;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import io.flowscope.anomaly.Anomaly;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import io.flowscope.collector.security.SecurityConfig;
import io.flowscope.collector.security.TokenAuth;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PfxOptions;

/**
 * The HTTP side: REST API, live stream (server-sent events), Prometheus metrics and the live page. Reads only the
 * drain loop's immutable {@link Snapshot}s and the anomaly events handed to {@link #publish} (from any thread: the
 * event is re-posted to this verticle's context).
 */
public final class HttpVerticle extends VerticleBase
{
    private final String host;
    private final int port;
    private final long streamIntervalMs;
    private final Supplier<Snapshot> snapshots;
    private final Supplier<Map<String, Object>> health;
    private final SecurityConfig security;
    private final Supplier<String> extraMetrics;
    private final Set<HttpServerResponse> streams = ConcurrentHashMap.newKeySet();
    private HttpServer server;
    private long timer = -1;

    public HttpVerticle(final String host, final int port, final long streamIntervalMs,
        final Supplier<Snapshot> snapshots, final Supplier<Map<String, Object>> health)
    {
        this(host, port, streamIntervalMs, snapshots, health, CollectorConfig.defaults().security(), () -> "");
    }

    /**
     * @param security     token, TLS and request limits
     * @param extraMetrics more Prometheus text appended to /metrics (the sinks' counters)
     */
    public HttpVerticle(final String host, final int port, final long streamIntervalMs,
        final Supplier<Snapshot> snapshots, final Supplier<Map<String, Object>> health, final SecurityConfig security,
        final Supplier<String> extraMetrics)
    {
        this.security = security;
        this.extraMetrics = extraMetrics;
        this.host = host;
        this.port = port;
        this.streamIntervalMs = streamIntervalMs;
        this.snapshots = snapshots;
        this.health = health;
    }

    @Override
    public Future<?> start()
    {
        final Router router = Router.router(vertx);
        // request limits first (body over security.maxBodyBytes: 413), then the token
        router.route().handler(BodyHandler.create(false).setBodyLimit(security.maxBodyBytes()));
        if (security.authenticate())
        {
            final TokenAuth auth = new TokenAuth(security.token(), security.tls() != null);
            router.route().handler(auth);
            router.get("/login").handler(auth::login);
        }
        else
        {
            router.get("/login").handler(ctx -> ctx.response().setStatusCode(303).putHeader("Location", "/").end());
        }
        router.get("/api/health").handler(this::health);
        router.get("/api/health/live").handler(this::live);
        router.get("/api/health/ready").handler(this::ready);
        router.get("/api/flows").handler(ctx -> rows(ctx, Snapshot::flows));
        router.get("/api/ranks").handler(ctx -> rows(ctx, Snapshot::ranks));
        router.get("/api/links").handler(ctx -> rows(ctx, Snapshot::links));
        router.get("/api/qps").handler(ctx -> rows(ctx, Snapshot::qps));
        router.get("/api/comms").handler(ctx -> rows(ctx, Snapshot::comms));
        router.get("/api/anomalies").handler(this::anomalies);
        router.get("/api/heatmap").handler(this::heatmap);
        router.get("/api/stream").handler(this::stream);
        router.get("/api/live").handler(ctx -> json(ctx, 200, live(snapshots.get())));
        router.get("/metrics").handler(this::metrics);
        router.get("/api/*").handler(ctx -> error(ctx, 404, "no such route: " + ctx.request().path()));
        router.route("/api/*").handler(ctx -> error(ctx, 405, "method " + ctx.request().method() +
            " not allowed: the API is read-only (GET)"));
        router.get("/*").handler(StaticHandler.create("webroot").setCachingEnabled(false));
        router.route().failureHandler(HttpVerticle::failure);
        timer = vertx.setPeriodic(streamIntervalMs, id -> pushSnapshot());
        return vertx.createHttpServer(serverOptions(security)).requestHandler(router).listen(port, host)
            .onSuccess(s -> server = s);
    }

    /** Header and request-line limits (431 / 414 beyond them) and TLS when configured. */
    static HttpServerOptions serverOptions(final SecurityConfig security)
    {
        final HttpServerOptions o = new HttpServerOptions().setMaxHeaderSize(security.maxHeaderBytes())
            .setMaxInitialLineLength(security.maxUriBytes());
        final SecurityConfig.Tls tls = security.tls();
        if (tls != null)
        {
            o.setSsl(true);
            if (tls.pem())
            {
                o.setKeyCertOptions(new PemKeyCertOptions().setCertPath(tls.certFile().toString())
                    .setKeyPath(tls.keyFile().toString()));
            }
            else
            {
                o.setKeyCertOptions(new PfxOptions().setPath(tls.keystoreFile().toString())
                    .setPassword(tls.keystorePassword()));
            }
        }
        return o;
    }

    @Override
    public Future<?> stop()
    {
        vertx.cancelTimer(timer);
        for (final HttpServerResponse r : streams)
        {
            try
            {
                r.end();
            }
            catch (final RuntimeException ignored)
            {
                // the client went away
            }
        }
        streams.clear();
        return server == null ? Future.succeededFuture() : server.close();
    }

    /** The bound port (0 asked: the one chosen). */
    public int actualPort()
    {
        return server.actualPort();
    }

    /** Hands an anomaly event to the live stream; callable from any thread. */
    public void publish(final AnomalyEvent e)
    {
        context.runOnContext(v -> broadcast("anomaly", Json.write(Json.event(e))));
    }

    private void broadcast(final String event, final String data)
    {
        final String frame = "event: " + event + "\ndata: " + data + "\n\n";
        for (final HttpServerResponse r : streams)
        {
            if (r.writeQueueFull())
            {
                continue;
            }
            r.write(frame);
        }
    }

    private void pushSnapshot()
    {
        if (!streams.isEmpty())
        {
            broadcast("snapshot", Json.write(live(snapshots.get())));
        }
    }

    private static Map<String, Object> live(final Snapshot s)
    {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("wallMs", s.wallMs());
        m.put("lastEventNs", s.lastEventNs());
        m.put("heatmaps", heatmaps(s, null));
        m.put("anomalies", s.anomalies().stream().map(a -> Json.anomaly(a, s.culprits().get(a.id()))).toList());
        m.put("stats", s.stats());
        return m;
    }

    private void stream(final RoutingContext ctx)
    {
        final HttpServerResponse r = ctx.response();
        r.setChunked(true).putHeader("Content-Type", "text/event-stream").putHeader("Cache-Control", "no-cache");
        streams.add(r);
        r.closeHandler(v -> streams.remove(r));
        r.exceptionHandler(t -> streams.remove(r));
        r.write("retry: 1000\nevent: snapshot\ndata: " + Json.write(live(snapshots.get())) + "\n\n");
    }

    /** A handler's failure (413 from the body limit, ...) as a JSON error; an unexpected exception is a 500. */
    private static void failure(final RoutingContext ctx)
    {
        final int status = ctx.statusCode() > 0 ? ctx.statusCode() : 500;
        if (ctx.response().headWritten())
        {
            ctx.response().reset();
            return;
        }
        final String reason = switch (status)
        {
            case 413 -> "request body too large";
            case 400 -> "malformed request";
            case 500 -> "internal error";
            default -> io.netty.handler.codec.http.HttpResponseStatus.valueOf(status).reasonPhrase();
        };
        if (status == 500 && ctx.failure() != null)
        {
            org.slf4j.LoggerFactory.getLogger(HttpVerticle.class).error("{} {}: {}", ctx.request().method(),
                ctx.normalizedPath(), ctx.failure().toString());
        }
        error(ctx, status, reason);
    }

    private static void json(final RoutingContext ctx, final int status, final Object body)
    {
        ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(Json.write(body));
    }

    private static void error(final RoutingContext ctx, final int status, final String reason)
    {
        json(ctx, status, Map.of("status", status, "error", reason));
    }

    private static ApiQuery query(final RoutingContext ctx)
    {
        return ApiQuery.parse(ctx.queryParams());
    }

    private void rows(final RoutingContext ctx, final Function<Snapshot, List<FlowRow>> which)
    {
        final ApiQuery q;
        try
        {
            q = query(ctx);
        }
        catch (final ApiQuery.BadRequest e)
        {
            error(ctx, 400, e.getMessage());
            return;
        }
        final Snapshot s = snapshots.get();
        final List<FlowRow> out = new ArrayList<>();
        for (final FlowRow r : which.apply(s))
        {
            if (q.matches(r))
            {
                out.add(r);
                if (out.size() >= q.limit())
                {
                    break;
                }
            }
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("lastEventNs", s.lastEventNs());
        m.put("count", out.size());
        m.put("items", out);
        json(ctx, 200, m);
    }

    private void anomalies(final RoutingContext ctx)
    {
        final ApiQuery q;
        try
        {
            q = query(ctx);
        }
        catch (final ApiQuery.BadRequest e)
        {
            error(ctx, 400, e.getMessage());
            return;
        }
        final List<Map<String, Object>> out = new ArrayList<>();
        final Snapshot s = snapshots.get();
        for (final Anomaly a : s.anomalies())
        {
            if (q.matches(a) && out.size() < q.limit())
            {
                out.add(Json.anomaly(a, s.culprits().get(a.id())));
            }
        }
        json(ctx, 200, Map.of("count", out.size(), "items", out));
    }

    private void heatmap(final RoutingContext ctx)
    {
        final ApiQuery q;
        try
        {
            q = query(ctx);
        }
        catch (final ApiQuery.BadRequest e)
        {
            error(ctx, 400, e.getMessage());
            return;
        }
        json(ctx, 200, Map.of("heatmaps", heatmaps(snapshots.get(), q.comm() == null ? null : FlowRow.hex(q.comm()))));
    }

    /** Per communicator: ranks and a rank × peer matrix of send bandwidth (bytes/s, latest period). */
    static List<Map<String, Object>> heatmaps(final Snapshot s, final String onlyComm)
    {
        final Map<String, List<FlowRow>> byComm = new LinkedHashMap<>();
        for (final FlowRow r : s.links())
        {
            if ("send".equals(r.direction()) && (onlyComm == null || onlyComm.equals(r.comm())))
            {
                byComm.computeIfAbsent(r.comm(), k -> new ArrayList<>()).add(r);
            }
        }
        final List<Map<String, Object>> out = new ArrayList<>();
        byComm.forEach((comm, rows) ->
        {
            final TreeSet<Integer> ranks = new TreeSet<>();
            rows.forEach(r ->
            {
                ranks.add(r.rank());
                ranks.add(r.peer());
            });
            final List<Integer> index = new ArrayList<>(ranks);
            final Double[][] matrix = new Double[index.size()][index.size()];
            for (final FlowRow r : rows)
            {
                matrix[index.indexOf(r.rank())][index.indexOf(r.peer())] = r.periodBandwidthBytesPerSecond();
            }
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("comm", comm);
            m.put("ranks", index);
            m.put("sendBandwidthBytesPerSecond", matrix);
            out.add(m);
        });
        return out;
    }

    private void health(final RoutingContext ctx)
    {
        final Map<String, Object> h = health.get();
        json(ctx, "DOWN".equals(h.get("status")) ? 503 : 200, h);
    }

    private void live(final RoutingContext ctx)
    {
        final Map<String, Object> h = health.get();
        json(ctx, "DOWN".equals(h.get("status")) ? 503 : 200, Map.of("status", h.get("status")));
    }

    private void ready(final RoutingContext ctx)
    {
        final Map<String, Object> h = health.get();
        final boolean ready = Boolean.TRUE.equals(h.get("ready"));
        json(ctx, ready ? 200 : 503, Map.of("ready", ready));
    }

    private void metrics(final RoutingContext ctx)
    {
        ctx.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            .end(Metrics.render(snapshots.get()) + extraMetrics.get());
    }
}
