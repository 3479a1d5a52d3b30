package io.flowscope.collector.http;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.security.SecurityConfig;
import io.flowscope.collector.security.TokenAuth;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The HTTP side: REST API, live stream (server-sent events), Prometheus metrics and the live page. Reads only the
 * drain loop's immutable {@link Snapshot}s and the anomaly events handed to {@link #publish} (from any thread: the
 * event is re-posted to this verticle's context). Read-only: GET and HEAD, OPTIONS answered with {@code Allow}. A
 * request no route can serve gets a 4xx with a one-line reason as the API's JSON error, counted by reason and logged
 * at DEBUG only ({@link HttpRejections}; collector/README.md, "Bad requests").
 */
public final class HttpVerticle extends VerticleBase {
    /** A path the static files may have: segments of letters, digits, '.', '_', '-', none starting with '.'. */
    private static final Pattern STATIC_PATH =
            Pattern.compile("/([A-Za-z0-9_-][A-Za-z0-9._-]*/)*([A-Za-z0-9_-][A-Za-z0-9._-]*)?");

    /** The methods every route answers: it is read-only. */
    static final String ALLOW = "GET, HEAD, OPTIONS";

    private final String host;
    private final int port;
    private final long streamIntervalMs;
    private final Supplier<Snapshot> snapshots;
    private final Supplier<Map<String, Object>> health;
    private final SecurityConfig security;
    private final Set<HttpServerResponse> streams = ConcurrentHashMap.newKeySet();
    private final HttpRejections rejections = new HttpRejections();
    private final Metrics metrics;
    private HttpServer server;
    private long timer = -1;
    /** Host names for the page (the source's), and the ring directory it watches (null: not rings). */
    private volatile LongFunction<String> hostNames = id -> null;

    private volatile String ringDir;

    public HttpVerticle(
            final String host,
            final int port,
            final long streamIntervalMs,
            final Supplier<Snapshot> snapshots,
            final Supplier<Map<String, Object>> health) {
        this(
                host,
                port,
                streamIntervalMs,
                snapshots,
                health,
                CollectorConfig.defaults().security(),
                () -> "");
    }

    /**
     * @param security     token, TLS and request limits
     * @param extraMetrics more Prometheus text served in /metrics (the sinks' and the fleet's counters: {@link Metrics})
     */
    public HttpVerticle(
            final String host,
            final int port,
            final long streamIntervalMs,
            final Supplier<Snapshot> snapshots,
            final Supplier<Map<String, Object>> health,
            final SecurityConfig security,
            final Supplier<String> extraMetrics) {
        this.security = security;
        this.host = host;
        this.port = port;
        this.streamIntervalMs = streamIntervalMs;
        this.snapshots = snapshots;
        this.health = health;
        this.metrics = new Metrics(snapshots, () -> this.hostNames, rejections, extraMetrics);
    }

    /**
     * What the live page says of the source: its host names (read from the HTTP thread: {@link Source#hostName})
     * and the ring directory it watches (null when the source is not rings).
     */
    public HttpVerticle page(final LongFunction<String> hostNames, final Path ringDir) {
        this.hostNames = hostNames;
        this.ringDir = ringDir == null ? null : ringDir.toString();
        return this;
    }

    @Override
    public Future<?> start() {
        final Router router = Router.router(vertx);
        // what is wrong with the request itself first (target, encoding, body: 400 / 413), then the token, then
        // the routes: each answers GET and HEAD, OPTIONS with its Allow, any other method 405 with it
        router.route().handler(this::screen);
        if (security.authenticate()) {
            final TokenAuth auth = new TokenAuth(
                    security.token(),
                    security.tls() != null,
                    ctx -> rejections.rejected(
                            HttpRejections.Reason.UNAUTHORIZED,
                            ctx.request().method().name(),
                            ctx.request().path(),
                            "missing or wrong token"));
            router.route().handler(auth);
            route(router, "/login", Set.of("token"), auth::login);
        } else {
            route(router, "/login", Set.of("token"), ctx -> ctx.response()
                    .setStatusCode(303)
                    .putHeader("Location", "/")
                    .end());
        }
        route(router, "/api/health", ApiQuery.NONE, this::health);
        route(router, "/api/health/live", ApiQuery.NONE, this::live);
        route(router, "/api/health/ready", ApiQuery.NONE, this::ready);
        route(router, "/api/flows", ApiQuery.FLOWS, ctx -> rows(ctx, "/api/flows", ApiQuery.FLOWS, Snapshot::flows));
        route(router, "/api/ranks", ApiQuery.RANKS, ctx -> rows(ctx, "/api/ranks", ApiQuery.RANKS, Snapshot::ranks));
        route(router, "/api/links", ApiQuery.FLOWS, ctx -> rows(ctx, "/api/links", ApiQuery.FLOWS, Snapshot::links));
        route(router, "/api/qps", ApiQuery.QPS, ctx -> rows(ctx, "/api/qps", ApiQuery.QPS, Snapshot::qps));
        route(router, "/api/comms", ApiQuery.COMMS, ctx -> rows(ctx, "/api/comms", ApiQuery.COMMS, Snapshot::comms));
        route(router, "/api/anomalies", ApiQuery.ANOMALIES, this::anomalies);
        route(router, "/api/heatmap", ApiQuery.HEATMAP, this::heatmap);
        route(router, "/api/series", ApiQuery.SERIES, this::series);
        // ?token= is how a browser's EventSource authenticates (TokenAuth reads it)
        route(router, "/api/stream", Set.of("token"), this::stream);
        route(router, "/api/live", ApiQuery.NONE, ctx -> json(ctx, 200, live(snapshots.get())));
        route(router, "/metrics", Set.of("name[]"), this::metrics);
        router.route("/api/*")
                .handler(ctx -> reject(
                        ctx,
                        HttpRejections.Reason.NOT_FOUND,
                        "no such route: " + ctx.request().path()));
        // the live page's static files: any query is the page's own state, not an API parameter; names of plain
        // characters only (vert.x's StaticHandler throws on some encoded ones, e.g. /%2e%2e%5c: a 500)
        router.route("/*")
                .handler(ctx -> methods(ctx, () -> {
                    if (STATIC_PATH.matcher(ctx.normalizedPath()).matches()) {
                        ctx.next();
                    } else {
                        reject(
                                ctx,
                                HttpRejections.Reason.NOT_FOUND,
                                "no such route or file: " + ctx.request().path());
                    }
                }));
        router.route("/*")
                .method(HttpMethod.GET)
                .method(HttpMethod.HEAD)
                .handler(StaticHandler.create("webroot").setCachingEnabled(false));
        router.errorHandler(
                404,
                ctx -> reject(
                        ctx,
                        HttpRejections.Reason.NOT_FOUND,
                        "no such route or file: " + ctx.request().path()));
        // a failure while matching routes (vert.x answers 400 to an IllegalArgumentException there)
        router.errorHandler(400, ctx -> failure(ctx, 400));
        router.errorHandler(500, ctx -> failure(ctx, 500));
        router.route().failureHandler(ctx -> failure(ctx, ctx.statusCode()));
        timer = vertx.setPeriodic(streamIntervalMs, id -> pushSnapshot());
        return vertx.createHttpServer(serverOptions(security))
                .invalidRequestHandler(this::invalidRequest)
                // vert.x hands it to each connection too: a client's reset is counted, not logged at ERROR
                .exceptionHandler(rejections::connectionError)
                .requestHandler(req -> {
                    if (target(req)) {
                        router.handle(req);
                    }
                })
                .listen(port, host)
                .onSuccess(s -> server = s);
    }

    /**
     * The request target before the router sees it: {@code OPTIONS *} is answered (the server's methods),
     * {@code *} with another method and a target that is not a path are refused (400; the router would answer
     * 404 to the latter). True: route it.
     */
    private boolean target(final HttpServerRequest req) {
        if ("*".equals(req.uri())) {
            if (req.method() == HttpMethod.OPTIONS) {
                req.response().setStatusCode(204).putHeader("Allow", ALLOW).end();
            } else {
                reject(req, HttpRejections.Reason.BAD_PATH, "request target '*' is for OPTIONS only");
            }
            return false;
        }
        final String path = req.path();
        if (path != null && !path.isEmpty() && path.charAt(0) != '/') {
            reject(req, HttpRejections.Reason.BAD_PATH, "request target must be a path starting with '/'");
            return false;
        }
        return true;
    }

    /**
     * A route: GET and HEAD run {@code handler} once the query names are ones it takes ({@code params}: anything
     * else, or a name given twice, is a 400), OPTIONS answers 204 with {@code Allow}, another method 405 with it.
     */
    private void route(
            final Router router, final String path, final Set<String> params, final Handler<RoutingContext> handler) {
        router.route(path)
                .handler(ctx -> methods(ctx, () -> {
                    try {
                        ApiQuery.checkNames(ctx.queryParams(), params, path);
                    } catch (final ApiQuery.BadRequest e) {
                        reject(ctx, e.reason(), e.getMessage());
                        return;
                    }
                    handler.handle(ctx);
                }));
    }

    /** GET, HEAD: {@code serve}; OPTIONS: 204 with Allow; anything else: 405 with Allow. */
    private void methods(final RoutingContext ctx, final Runnable serve) {
        final HttpMethod m = ctx.request().method();
        if (m == HttpMethod.GET || m == HttpMethod.HEAD) {
            serve.run();
        } else if (m == HttpMethod.OPTIONS) {
            ctx.response().setStatusCode(204).putHeader("Allow", ALLOW).end();
        } else {
            ctx.response().putHeader("Allow", ALLOW);
            reject(
                    ctx,
                    HttpRejections.Reason.METHOD_NOT_ALLOWED,
                    "method " + m.name() + " not allowed on " + ctx.request().path() + ": the API is read-only (Allow: "
                            + ALLOW + ")");
        }
    }

    /**
     * Refuses what no route could serve, before the token: percent-encoding that does not decode in the path or
     * the query, a body declared larger than {@code security.maxBodyBytes} (413), a body on GET, HEAD or OPTIONS
     * (400; no route takes a body, so none is ever read).
     */
    private void screen(final RoutingContext ctx) {
        final HttpServerRequest req = ctx.request();
        try {
            ctx.normalizedPath();
        } catch (final IllegalArgumentException e) {
            reject(ctx, HttpRejections.Reason.BAD_PATH, "malformed path: " + oneLine(e.getMessage()));
            return;
        }
        try {
            ctx.queryParams();
        } catch (final RuntimeException e) {
            final Throwable cause = e.getCause() != null ? e.getCause() : e;
            reject(ctx, HttpRejections.Reason.BAD_QUERY, "malformed query string: " + oneLine(cause.getMessage()));
            return;
        }
        final long length = contentLength(req);
        if (length > security.maxBodyBytes()) {
            reject(
                    ctx,
                    HttpRejections.Reason.BODY_TOO_LARGE,
                    "request body too large: " + length + " bytes (limit " + security.maxBodyBytes() + ")");
            return;
        }
        final HttpMethod m = req.method();
        if (hasBody(req) && (m == HttpMethod.GET || m == HttpMethod.HEAD || m == HttpMethod.OPTIONS)) {
            reject(ctx, HttpRejections.Reason.BODY_NOT_ALLOWED, m.name() + " requests take no body");
            return;
        }
        if (hasBody(req) && req.version() != HttpVersion.HTTP_2) {
            // another method with a body: refused further on (401, 404, 405) without reading it; the connection
            // is closed after the answer, else it would wait for a body nobody reads and stall the next request
            ctx.addHeadersEndHandler(v -> ctx.response().putHeader(HttpHeaders.CONNECTION, "close"));
            ctx.addEndHandler(v -> req.connection().close());
        }
        ctx.next();
    }

    /** The declared Content-Length, 0 without one (an unparsable one never gets here: the decoder refuses it). */
    private static long contentLength(final HttpServerRequest req) {
        final String v = req.getHeader(HttpHeaders.CONTENT_LENGTH);
        if (v == null) {
            return 0;
        }
        try {
            return Long.parseLong(v.strip());
        } catch (final NumberFormatException e) {
            return 0;
        }
    }

    /** Whether the request declares a body (HTTP/1.x: a length above 0 or a transfer coding). */
    private static boolean hasBody(final HttpServerRequest req) {
        return contentLength(req) > 0 || req.headers().contains(HttpHeaders.TRANSFER_ENCODING);
    }

    /** A request the HTTP decoder refused (vert.x's default answers the same statuses, with no body). */
    private void invalidRequest(final HttpServerRequest req) {
        final Throwable cause = req.decoderResult().cause();
        final HttpRejections.Reason reason;
        final String message;
        if (cause instanceof TooLongHttpLineException) {
            reason = HttpRejections.Reason.URI_TOO_LONG;
            message = "request line longer than " + security.maxUriBytes() + " bytes (security.maxUriBytes)";
        } else if (cause instanceof TooLongHttpHeaderException) {
            reason = HttpRejections.Reason.HEADERS_TOO_LARGE;
            message = "request headers larger than " + security.maxHeaderBytes() + " bytes (security.maxHeaderBytes)";
        } else {
            reason = HttpRejections.Reason.MALFORMED;
            message = "malformed HTTP request"
                    + (cause == null || cause.getMessage() == null ? "" : ": " + oneLine(cause.getMessage()));
        }
        rejections.rejected(reason, "-", "-", message);
        // vert.x hands the same decoder failure to the connection as it closes: not a connection error
        req.connection().exceptionHandler(t -> {
            if (t != cause) {
                rejections.connectionError(t);
            }
        });
        req.response()
                .setStatusCode(reason.status())
                .putHeader("Content-Type", "application/json")
                .putHeader("Connection", "close")
                .end(Json.write(Map.of("status", reason.status(), "error", message)));
        req.connection().close();
    }

    /** A client's text in a one-line reason: control characters out, at most 200 characters. */
    static String oneLine(final String s) {
        if (s == null) {
            return "";
        }
        final String t = s.replaceAll("\\p{Cntrl}", " ").strip();
        return t.length() <= 200 ? t : t.substring(0, 200) + "...";
    }

    /**
     * Answers a refused request with its status, {@code {"status":..,"error":"<reason>"}}, counts it and logs it
     * at DEBUG. A request whose body was not read has its connection closed after the answer (HTTP/1.x: what
     * follows on the connection would be read as the next request).
     */
    private void reject(final RoutingContext ctx, final HttpRejections.Reason reason, final String message) {
        reject(ctx.request(), reason, message);
    }

    private void reject(final HttpServerRequest req, final HttpRejections.Reason reason, final String message) {
        reject(req, reason, reason.status(), message);
    }

    private void reject(
            final HttpServerRequest req, final HttpRejections.Reason reason, final int status, final String message) {
        rejections.rejected(reason, req.method().name(), req.path(), message);
        final HttpServerResponse r = req.response();
        if (r.ended() || r.closed()) {
            return;
        }
        if (r.headWritten()) {
            r.reset();
            return;
        }
        final boolean close = hasBody(req) && req.version() != HttpVersion.HTTP_2;
        if (close) {
            r.putHeader("Connection", "close");
        }
        final Future<Void> done = r.setStatusCode(status)
                .putHeader("Content-Type", "application/json")
                .end(Json.write(Map.of("status", status, "error", message)));
        if (close) {
            done.onComplete(v -> req.connection().close());
        }
    }

    /**
     * Header and request-line limits (431 / 414 beyond them) and TLS when configured. HTTP/1.x only, as under TLS
     * (no ALPN): without it vert.x would also take cleartext HTTP/2 (h2c), whose connections are set up only once
     * a first request is complete, so a client that resets one mid-request had it logged at ERROR with no handler
     * of ours to count it.
     */
    static HttpServerOptions serverOptions(final SecurityConfig security) {
        final HttpServerOptions o = new HttpServerOptions()
                .setMaxHeaderSize(security.maxHeaderBytes())
                .setMaxInitialLineLength(security.maxUriBytes())
                .setHttp2ClearTextEnabled(false);
        final SecurityConfig.Tls tls = security.tls();
        if (tls != null) {
            o.setSsl(true);
            if (tls.pem()) {
                o.setKeyCertOptions(new PemKeyCertOptions()
                        .setCertPath(tls.certFile().toString())
                        .setKeyPath(tls.keyFile().toString()));
            } else {
                o.setKeyCertOptions(
                        new PfxOptions().setPath(tls.keystoreFile().toString()).setPassword(tls.keystorePassword()));
            }
        }
        return o;
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(timer);
        for (final HttpServerResponse r : streams) {
            try {
                r.end();
            } catch (final RuntimeException ignored) {
                // the client went away
            }
        }
        streams.clear();
        return server == null ? Future.succeededFuture() : server.close();
    }

    /** The bound port (0 asked: the one chosen). */
    public int actualPort() {
        return server.actualPort();
    }

    /** Hands an anomaly event to the live stream; callable from any thread. */
    public void publish(final AnomalyEvent e) {
        context.runOnContext(v -> broadcast("anomaly", Json.write(Json.event(e))));
    }

    private void broadcast(final String event, final String data) {
        final String frame = "event: " + event + "\ndata: " + data + "\n\n";
        for (final HttpServerResponse r : streams) {
            if (r.writeQueueFull()) {
                continue;
            }
            try {
                r.write(frame);
            } catch (final IllegalStateException gone) {
                // closed or ended meanwhile (the client went away): its close handler removes it
                streams.remove(r);
            }
        }
    }

    private void pushSnapshot() {
        if (!streams.isEmpty()) {
            broadcast("snapshot", Json.write(live(snapshots.get())));
        }
    }

    /** What the page polls: heatmaps, anomalies and stats, and the page's own (collector/README.md, "The live page"). */
    private Map<String, Object> live(final Snapshot s) {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("wallMs", s.wallMs());
        m.put("lastEventNs", s.lastEventNs());
        m.put("heatmaps", LivePage.heatmaps(s, null, hostNames));
        m.put(
                "anomalies",
                s.anomalies().stream()
                        .map(a -> Json.anomaly(a, s.culprits().get(a.id())))
                        .toList());
        m.put("stats", s.stats());
        LivePage.live(m, s, hostNames, ringDir);
        return m;
    }

    private void stream(final RoutingContext ctx) {
        final HttpServerResponse r = ctx.response();
        if (ctx.request().method() == HttpMethod.HEAD) {
            r.putHeader("Content-Type", "text/event-stream")
                    .putHeader("Cache-Control", "no-cache")
                    .end();
            return;
        }
        r.setChunked(true).putHeader("Content-Type", "text/event-stream").putHeader("Cache-Control", "no-cache");
        streams.add(r);
        r.closeHandler(v -> streams.remove(r));
        r.exceptionHandler(t -> streams.remove(r));
        r.write("retry: 1000\nevent: snapshot\ndata: " + Json.write(live(snapshots.get())) + "\n\n");
    }

    /**
     * A handler's failure: a 4xx the framework chose ({@code ctx.fail(4xx)}) is a refusal like the others; anything
     * else is a 500, counted and logged (rate-limited: {@link HttpRejections#internalError}).
     */
    private void failure(final RoutingContext ctx, final int status) {
        if (status >= 400 && status < 500) {
            final HttpRejections.Reason reason =
                    switch (status) {
                        case 400 -> HttpRejections.Reason.MALFORMED;
                        case 401 -> HttpRejections.Reason.UNAUTHORIZED;
                        case 404 -> HttpRejections.Reason.NOT_FOUND;
                        case 405 -> HttpRejections.Reason.METHOD_NOT_ALLOWED;
                        case 413 -> HttpRejections.Reason.BODY_TOO_LARGE;
                        case 414 -> HttpRejections.Reason.URI_TOO_LONG;
                        case 431 -> HttpRejections.Reason.HEADERS_TOO_LARGE;
                        default -> HttpRejections.Reason.OTHER;
                    };
            final String phrase =
                    HttpResponseStatus.valueOf(status).reasonPhrase().toLowerCase(Locale.ROOT);
            final String detail = ctx.failure() == null || ctx.failure().getMessage() == null
                    ? ""
                    : ": " + oneLine(ctx.failure().getMessage());
            reject(ctx.request(), reason, status, phrase + detail);
            return;
        }
        rejections.internalError(
                ctx.request().method().name(),
                ctx.request().path(),
                ctx.failure() != null ? ctx.failure() : new IllegalStateException("status " + status));
        final HttpServerResponse r = ctx.response();
        if (r.ended() || r.closed()) {
            return;
        }
        if (r.headWritten()) {
            r.reset();
            return;
        }
        error(ctx, 500, "internal error");
    }

    private static void json(final RoutingContext ctx, final int status, final Object body) {
        ctx.response()
                .setStatusCode(status)
                .putHeader("Content-Type", "application/json")
                .end(Json.write(body));
    }

    private static void error(final RoutingContext ctx, final int status, final String reason) {
        json(ctx, status, Map.of("status", status, "error", reason));
    }

    /** The route's filters, or null when refused (answered 400 with the reason). */
    private ApiQuery query(final RoutingContext ctx, final String route, final Set<String> params) {
        try {
            return ApiQuery.parse(ctx.queryParams(), params, route);
        } catch (final ApiQuery.BadRequest e) {
            reject(ctx, e.reason(), e.getMessage());
            return null;
        }
    }

    private void rows(
            final RoutingContext ctx,
            final String route,
            final Set<String> params,
            final Function<Snapshot, List<FlowRow>> which) {
        final ApiQuery q = query(ctx, route, params);
        if (q == null) {
            return;
        }
        final Snapshot s = snapshots.get();
        final List<FlowRow> out = new ArrayList<>();
        for (final FlowRow r : which.apply(s)) {
            if (q.matches(r)) {
                out.add(r);
                if (out.size() >= q.limit()) {
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

    private void anomalies(final RoutingContext ctx) {
        final ApiQuery q = query(ctx, "/api/anomalies", ApiQuery.ANOMALIES);
        if (q == null) {
            return;
        }
        final List<Map<String, Object>> out = new ArrayList<>();
        final Snapshot s = snapshots.get();
        for (final Anomaly a : s.anomalies()) {
            if (q.matches(a) && out.size() < q.limit()) {
                out.add(Json.anomaly(a, s.culprits().get(a.id())));
            }
        }
        json(ctx, 200, Map.of("count", out.size(), "items", out));
    }

    private void heatmap(final RoutingContext ctx) {
        final ApiQuery q = query(ctx, "/api/heatmap", ApiQuery.HEATMAP);
        if (q == null) {
            return;
        }
        json(
                ctx,
                200,
                Map.of(
                        "heatmaps",
                        LivePage.heatmaps(
                                snapshots.get(), q.comm() == null ? null : FlowRow.hex(q.comm()), hostNames)));
    }

    /** A link's series for the page's chart: {@link LivePage#series}. */
    private void series(final RoutingContext ctx) {
        final ApiQuery q = query(ctx, "/api/series", ApiQuery.SERIES);
        if (q == null) {
            return;
        }
        final List<Map<String, Object>> items = LivePage.series(snapshots.get(), q, hostNames);
        json(ctx, 200, Map.of("count", items.size(), "items", items));
    }

    private void health(final RoutingContext ctx) {
        final Map<String, Object> h = health.get();
        json(ctx, "DOWN".equals(h.get("status")) ? 503 : 200, h);
    }

    private void live(final RoutingContext ctx) {
        final Map<String, Object> h = health.get();
        json(ctx, "DOWN".equals(h.get("status")) ? 503 : 200, Map.of("status", h.get("status")));
    }

    private void ready(final RoutingContext ctx) {
        final Map<String, Object> h = health.get();
        final boolean ready = Boolean.TRUE.equals(h.get("ready"));
        json(ctx, ready ? 200 : 503, Map.of("ready", ready));
    }

    /**
     * The Prometheus client library's scrape, in the format the scraper's Accept asks for ({@link Metrics}); off the
     * event loop (the JVM's metrics read MXBeans).
     */
    private void metrics(final RoutingContext ctx) {
        final String accept = ctx.request().getHeader("Accept");
        final List<String> names = ctx.queryParam("name[]");
        vertx.executeBlocking(() -> metrics.scrape(accept, names)).onComplete(r -> {
            if (r.succeeded()) {
                ctx.response()
                        .putHeader("Content-Type", r.result().contentType())
                        .end(io.vertx.core.buffer.Buffer.buffer(r.result().body()));
            } else {
                ctx.fail(r.cause());
            }
        });
    }
}
