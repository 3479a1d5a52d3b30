package io.flowscope.collector.http;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the HTTP side refused and why, for {@code /metrics}: requests answered 4xx by reason (a fixed set of labels,
 * so the series stay bounded whatever clients send), connections ended by an I/O error (a client that reset the
 * connection, a TLS handshake refused) and handler failures answered 500. A refused request is logged at DEBUG only
 * (any client can cause one, so a higher level would be a log flood anyone can start); a 500 is a bug of ours and is
 * logged at ERROR, the first at once and then at most one every 10 s with how many were not logged meanwhile.
 * Thread-safe.
 */
public final class HttpRejections {
    static final Logger LOG = LoggerFactory.getLogger(HttpRejections.class);
    private static final long ERROR_LOG_INTERVAL_MS = 10_000;

    /** Why a request was refused: the {@code reason} label, and the status it is answered with. */
    public enum Reason {
        /** The HTTP decoder refused the request (not HTTP, a bad header line, conflicting lengths, ...). */
        MALFORMED(400),
        /** The request line is longer than {@code security.maxUriBytes}. */
        URI_TOO_LONG(414),
        /** The headers are larger than {@code security.maxHeaderBytes}. */
        HEADERS_TOO_LARGE(431),
        /** The request target is not a path, or its percent-encoding does not decode. */
        BAD_PATH(400),
        /** The query string's percent-encoding does not decode. */
        BAD_QUERY(400),
        /** A GET, HEAD or OPTIONS request with a body. */
        BODY_NOT_ALLOWED(400),
        /** A body declared larger than {@code security.maxBodyBytes}. */
        BODY_TOO_LARGE(413),
        /** No token, or a wrong one. */
        UNAUTHORIZED(401),
        /** No such route or file. */
        NOT_FOUND(404),
        /** A method the route does not answer (the answer carries {@code Allow}). */
        METHOD_NOT_ALLOWED(405),
        /** A query parameter the route does not take. */
        UNKNOWN_PARAMETER(400),
        /** A query parameter given more than once. */
        REPEATED_PARAMETER(400),
        /** A query parameter whose value is not valid. */
        BAD_PARAMETER(400),
        /** Any other 4xx (a framework refusal not foreseen above). */
        OTHER(400);

        private final int status;

        Reason(final int status) {
            this.status = status;
        }

        public int status() {
            return status;
        }

        /** The Prometheus label value. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<Reason, LongAdder> rejected = new EnumMap<>(Reason.class);
    private final LongAdder connectionErrors = new LongAdder();
    private final LongAdder internalErrors = new LongAdder();
    private final AtomicLong lastErrorLogMs = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong errorsNotLogged = new AtomicLong();

    public HttpRejections() {
        for (final Reason r : Reason.values()) {
            rejected.put(r, new LongAdder());
        }
    }

    /**
     * Counts a refused request and logs it at DEBUG: method, path (never the query: it may hold the token), the
     * reason given to the client.
     */
    public void rejected(final Reason reason, final String method, final String path, final String message) {
        rejected.get(reason).increment();
        if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "refused {} {}: {} ({})",
                    method,
                    HttpVerticle.oneLine(path),
                    HttpVerticle.oneLine(message),
                    reason.label());
        }
    }

    public long rejected(final Reason reason) {
        return rejected.get(reason).sum();
    }

    /** A connection ended by an I/O error or a failed TLS handshake: counted, logged at DEBUG. */
    public void connectionError(final Throwable t) {
        connectionErrors.increment();
        LOG.debug("connection error: {}", t.toString());
    }

    public long connectionErrors() {
        return connectionErrors.sum();
    }

    /** A handler failed (answered 500): counted; logged at ERROR, rate-limited. */
    public void internalError(final String method, final String path, final Throwable t) {
        internalErrors.increment();
        final long now = System.currentTimeMillis();
        final long last = lastErrorLogMs.get();
        if (last != Long.MIN_VALUE && now - last < ERROR_LOG_INTERVAL_MS || !lastErrorLogMs.compareAndSet(last, now)) {
            errorsNotLogged.incrementAndGet();
            return;
        }
        final long skipped = errorsNotLogged.getAndSet(0);
        LOG.error(
                "{} {} failed (answered 500){}",
                method,
                path,
                skipped == 0 ? "" : " (" + skipped + " more not logged in the last 10 s)",
                t);
    }

    public long internalErrors() {
        return internalErrors.sum();
    }

    /** Prometheus text: every reason always (zeros included), so that rates work from the first refusal. */
    public String render() {
        final StringBuilder b = new StringBuilder(1536);
        b.append("# HELP flowscope_http_requests_rejected_total HTTP requests refused with a 4xx, by reason\n");
        b.append("# TYPE flowscope_http_requests_rejected_total counter\n");
        for (final Reason r : Reason.values()) {
            b.append("flowscope_http_requests_rejected_total{reason=\"")
                    .append(r.label())
                    .append("\"} ")
                    .append(rejected(r))
                    .append('\n');
        }
        b.append("# HELP flowscope_http_connection_errors_total HTTP connections ended by an I/O error "
                + "(reset by the client, TLS handshake refused)\n");
        b.append("# TYPE flowscope_http_connection_errors_total counter\n");
        b.append("flowscope_http_connection_errors_total ")
                .append(connectionErrors())
                .append('\n');
        b.append("# HELP flowscope_http_internal_errors_total HTTP requests answered 500 (a handler failed)\n");
        b.append("# TYPE flowscope_http_internal_errors_total counter\n");
        b.append("flowscope_http_internal_errors_total ")
                .append(internalErrors())
                .append('\n');
        return b.toString();
    }
}
