package io.flowscope.collector.security;

import io.vertx.core.Handler;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Set;

/**
 * Token authentication of the HTTP side. A request passes with the token as {@code Authorization: Bearer <token>},
 * as the {@code flowscope_token} cookie (set by {@code GET /login?token=<token>}, for the live page and a browser's
 * EventSource), or, on the live stream {@code /api/stream} only, as {@code ?token=<token>}. The probes
 * {@code /api/health/live} and {@code /api/health/ready} and {@code /login} are open. Anything else: 401. The
 * token is compared in constant time and never written anywhere.
 */
public final class TokenAuth implements Handler<RoutingContext> {
    public static final String COOKIE = "flowscope_token";
    /** Served without the token: the liveness and readiness probes, and the login URL. */
    public static final Set<String> OPEN_PATHS = Set.of("/api/health/live", "/api/health/ready", "/login");

    private final byte[] token;
    private final boolean secureCookie;
    private final Handler<RoutingContext> refused;

    public TokenAuth(final String token, final boolean secureCookie) {
        this(token, secureCookie, ctx -> {});
    }

    /** @param refused told of each request answered 401 (counted in /metrics), before the answer */
    public TokenAuth(final String token, final boolean secureCookie, final Handler<RoutingContext> refused) {
        this.token = token.getBytes(StandardCharsets.UTF_8);
        this.secureCookie = secureCookie;
        this.refused = refused;
    }

    @Override
    public void handle(final RoutingContext ctx) {
        if (OPEN_PATHS.contains(ctx.normalizedPath()) || authorized(ctx)) {
            ctx.next();
            return;
        }
        unauthorized(ctx);
    }

    private boolean authorized(final RoutingContext ctx) {
        final String header = ctx.request().getHeader("Authorization");
        if (header != null
                && header.regionMatches(true, 0, "Bearer ", 0, 7)
                && matches(header.substring(7).strip())) {
            return true;
        }
        final Cookie c = ctx.request().getCookie(COOKIE);
        if (c != null && matches(c.getValue())) {
            return true;
        }
        if ("/api/stream".equals(ctx.normalizedPath())) {
            final java.util.List<String> q = ctx.queryParam("token");
            return q.size() == 1 && matches(q.get(0));
        }
        return false;
    }

    /** Constant-time comparison with the configured token. */
    public boolean matches(final String candidate) {
        return candidate != null && MessageDigest.isEqual(token, candidate.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code GET /login?token=..}: sets the cookie and sends the browser to the live page; a wrong token: 401. */
    public void login(final RoutingContext ctx) {
        final java.util.List<String> q = ctx.queryParam("token");
        if (q.size() != 1 || !matches(q.get(0))) {
            unauthorized(ctx);
            return;
        }
        ctx.response()
                .addCookie(Cookie.cookie(COOKIE, q.get(0))
                        .setPath("/")
                        .setHttpOnly(true)
                        .setSameSite(CookieSameSite.STRICT)
                        .setSecure(secureCookie));
        ctx.response()
                .setStatusCode(303)
                .putHeader("Location", "/")
                .putHeader("Cache-Control", "no-store")
                .end();
    }

    private void unauthorized(final RoutingContext ctx) {
        refused.handle(ctx);
        ctx.response()
                .setStatusCode(401)
                .putHeader("WWW-Authenticate", "Bearer realm=\"flowscope\"")
                .putHeader("Content-Type", "application/json")
                .end(new JsonObject(Map.of(
                                "status",
                                401,
                                "error",
                                "missing or wrong token: send 'Authorization: Bearer <token>', or open /login?token=<token> once "
                                        + "in a browser (cookie), or add ?token=<token> to /api/stream"))
                        .encode());
    }
}
