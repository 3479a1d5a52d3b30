package io.flowscope.collector.http;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.collector.pipeline.FlowRow;
import io.vertx.core.MultiMap;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The filters of the REST API, parsed and validated: {@code from}, {@code to} (event time, ns), {@code comm}
 * (0x-hex or decimal communicator hash), {@code rank}, {@code peer}, {@code direction} (send|recv),
 * {@code state} (open|resolved|all, anomalies), {@code limit}. Each route takes the filters that can match its rows
 * ({@link #FLOWS}, {@link #RANKS}, ...); a parameter it does not take, one given twice, or a bad value is a
 * {@link BadRequest} whose message is the reason given with the 400.
 */
public record ApiQuery(
        long from, long to, Long comm, Integer rank, Integer peer, String direction, String state, int limit) {
    public static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final HttpRejections.Reason reason;

        public BadRequest(final String message) {
            this(HttpRejections.Reason.BAD_PARAMETER, message);
        }

        public BadRequest(final HttpRejections.Reason reason, final String message) {
            super(message);
            this.reason = reason;
        }

        /** The counter's reason: unknown, repeated or bad parameter. */
        public HttpRejections.Reason reason() {
            return reason;
        }
    }

    /** Every filter (the README's list). */
    static final Set<String> KNOWN = Set.of("from", "to", "comm", "rank", "peer", "direction", "state", "limit");
    /** Step flows and links: every row has a communicator, rank, peer and direction. */
    public static final Set<String> FLOWS = Set.of("from", "to", "comm", "rank", "peer", "direction", "limit");
    /** Ranks: no peer (-1 in every row). */
    public static final Set<String> RANKS = Set.of("from", "to", "comm", "rank", "direction", "limit");
    /** Communicators: no rank, no peer. */
    public static final Set<String> COMMS = Set.of("from", "to", "comm", "direction", "limit");
    /** NIC QPs: host, device and QP number only (no communicator, rank, peer or direction). */
    public static final Set<String> QPS = Set.of("from", "to", "limit");
    /** Anomalies: by time, culprit and state (no direction). */
    public static final Set<String> ANOMALIES = Set.of("from", "to", "comm", "rank", "peer", "state", "limit");
    /** The heatmap: one communicator or all. */
    public static final Set<String> HEATMAP = Set.of("comm");
    /** A link's series (the live page's chart): by communicator, rank, peer. */
    public static final Set<String> SERIES = Set.of("comm", "rank", "peer", "limit");
    /** Routes that take no parameter. */
    public static final Set<String> NONE = Set.of();

    /** Parses with every filter allowed (tests, tools). */
    public static ApiQuery parse(final MultiMap params) {
        return parse(params, KNOWN, "this route");
    }

    /**
     * Refuses a parameter {@code route} does not take ({@code allowed}) and one given more than once (but a list,
     * named {@code ...[]}).
     *
     * @throws BadRequest with reason unknown or repeated parameter
     */
    public static void checkNames(final MultiMap params, final Set<String> allowed, final String route) {
        for (final String name : params.names()) {
            if (!allowed.contains(name)) {
                throw new BadRequest(
                        HttpRejections.Reason.UNKNOWN_PARAMETER,
                        "unknown query parameter '" + shown(name)
                                + "' "
                                + (allowed.isEmpty()
                                        ? "(" + route + " takes none)"
                                        : "(" + route + " takes: " + String.join(", ", new TreeSet<>(allowed)) + ")"));
            }
            // a name ending in [] is a list by convention (/metrics' name[], as the Prometheus exporters take it)
            if (params.getAll(name).size() > 1 && !name.endsWith("[]")) {
                throw new BadRequest(
                        HttpRejections.Reason.REPEATED_PARAMETER,
                        "query parameter '" + shown(name) + "' given more than once");
            }
        }
    }

    /** Parses the filters of {@code route}, which takes {@code allowed}. */
    public static ApiQuery parse(final MultiMap params, final Set<String> allowed, final String route) {
        checkNames(params, allowed, route);
        final long from = longParam(params, "from", Long.MIN_VALUE);
        final long to = longParam(params, "to", Long.MAX_VALUE);
        if (from > to) {
            throw new BadRequest("from (" + from + ") is after to (" + to + ")");
        }
        final String commText = params.get("comm");
        Long comm = null;
        if (commText != null) {
            try {
                comm = commText.startsWith("0x") || commText.startsWith("0X")
                        ? Long.parseUnsignedLong(commText.substring(2), 16)
                        : Long.parseUnsignedLong(commText);
            } catch (final NumberFormatException e) {
                throw new BadRequest(
                        "comm must be a communicator hash, 0x-hex or decimal (got '" + shown(commText) + "')");
            }
        }
        final Integer rank = intParam(params, "rank");
        final Integer peer = intParam(params, "peer");
        final String direction = params.get("direction");
        if (direction != null && !direction.equals("send") && !direction.equals("recv")) {
            throw new BadRequest("direction must be send or recv (got '" + shown(direction) + "')");
        }
        final String state =
                params.get("state") == null ? "all" : params.get("state").toLowerCase(Locale.ROOT);
        if (!state.equals("all") && !state.equals("open") && !state.equals("resolved")) {
            throw new BadRequest("state must be open, resolved or all (got '" + shown(params.get("state")) + "')");
        }
        final Integer limit = intParam(params, "limit");
        if (limit != null && (limit < 1 || limit > 100_000)) {
            throw new BadRequest("limit must be in 1..100000 (got " + limit + ")");
        }
        return new ApiQuery(from, to, comm, rank, peer, direction, state, limit == null ? 10_000 : limit);
    }

    /** A client's text quoted in a reason: one line, at most 64 characters. */
    static String shown(final String s) {
        final String t = s.replaceAll("\\p{Cntrl}", "?");
        return t.length() <= 64 ? t : t.substring(0, 64) + "...";
    }

    private static long longParam(final MultiMap params, final String name, final long dflt) {
        final String v = params.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v);
        } catch (final NumberFormatException e) {
            throw new BadRequest(name + " must be an event time in ns, an integer (got '" + shown(v) + "')");
        }
    }

    private static Integer intParam(final MultiMap params, final String name) {
        final String v = params.get(name);
        if (v == null) {
            return null;
        }
        final int x;
        try {
            x = Integer.parseInt(v);
        } catch (final NumberFormatException e) {
            throw new BadRequest(name + " must be an integer (got '" + shown(v) + "')");
        }
        if (x < 0) {
            throw new BadRequest(name + " must be >= 0 (got " + x + ")");
        }
        return x;
    }

    public boolean matches(final FlowRow r) {
        if (r.periodEndNs() < from || r.periodStartNs() > to) {
            return false;
        }
        if (comm != null && !r.comm().equals(FlowRow.hex(comm))) {
            return false;
        }
        if (rank != null && r.rank() != rank) {
            return false;
        }
        if (peer != null && r.peer() != peer) {
            return false;
        }
        return direction == null || direction.equals(r.direction());
    }

    public boolean matches(final Anomaly a) {
        final long end = a.isOpen() ? Long.MAX_VALUE : a.resolvedNs();
        if (end < from || a.startNs() > to) {
            return false;
        }
        if (comm != null && a.culprit().commHash() != comm) {
            return false;
        }
        if (rank != null && a.culprit().rank() != rank && a.culprit().peer() != rank) {
            return false;
        }
        if (peer != null && a.culprit().peer() != peer) {
            return false;
        }
        return switch (state) {
            case "open" -> a.isOpen();
            case "resolved" -> !a.isOpen();
            default -> true;
        };
    }
}
