package io.flowscope.sink.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;

/**
 * How a sink authenticates to its destination: nothing, a bearer token ({@code Authorization: Bearer <token>}),
 * HTTP basic auth ({@code Authorization: Basic base64(user:password)}) or InfluxDB's {@code Token <token>}. The secret
 * is never printed: {@link #toString()} names the scheme (and the user) only.
 */
public final class HttpAuth {
    public static final HttpAuth NONE = new HttpAuth("none", null, null);

    private final String scheme;
    private final String user;
    private final String header;

    private HttpAuth(final String scheme, final String user, final String header) {
        this.scheme = scheme;
        this.user = user;
        this.header = header;
    }

    public static HttpAuth bearer(final String token) {
        requireUsable(token, "bearer token");
        return new HttpAuth("bearer", null, "Bearer " + token);
    }

    /**
     * InfluxDB's scheme ({@code Authorization: Token <token>}): an API token of InfluxDB 2.x / 3.x, or
     * {@code user:password} for InfluxDB 1.8+.
     */
    public static HttpAuth token(final String token) {
        requireUsable(token, "token");
        return new HttpAuth("token", null, "Token " + token);
    }

    /** RFC 7617: the user may not contain a colon (the password may). */
    public static HttpAuth basic(final String user, final String password) {
        requireUsable(user, "basic auth user");
        requireUsable(password, "basic auth password");
        if (user.indexOf(':') >= 0) {
            throw new IllegalArgumentException("a basic auth user may not contain ':'");
        }
        return new HttpAuth(
                "basic",
                user,
                "Basic "
                        + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }

    private static void requireUsable(final String s, final String what) {
        Objects.requireNonNull(s, what);
        if (s.isEmpty() || s.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            // a header value cannot carry control characters (a token file's stray line break, say)
            throw new IllegalArgumentException("the " + what + " is empty or holds a control character");
        }
    }

    /** The {@code Authorization} header value, or null when none is sent. */
    public String header() {
        return header;
    }

    public boolean isNone() {
        return header == null;
    }

    @Override
    public String toString() {
        return user == null ? scheme : scheme + "(" + user + ", ****)";
    }
}
