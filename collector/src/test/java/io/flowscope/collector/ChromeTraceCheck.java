package io.flowscope.collector;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules of the Chrome JSON trace event format that Perfetto's importer relies on, checked on a parsed file
 * (trace_processor cannot be fetched here): the object form with {@code traceEvents}; every event with a known
 * {@code ph}, integer {@code pid}/{@code tid}, a numeric {@code ts} (except metadata); "X" with {@code dur} ≥ 0;
 * "B"/"E" balanced per track; slices of one track nesting (a slice that starts inside another ends inside it);
 * "M" events named as the format names them with their argument; "i" with a scope; {@code displayTimeUnit} ms or ns.
 * Returns the list of violations (empty: valid).
 */
public final class ChromeTraceCheck {
    private static final Set<String> PHASES = Set.of("X", "B", "E", "i", "I", "M", "C");
    private static final Map<String, String> METADATA = Map.of(
            "process_name",
            "name",
            "thread_name",
            "name",
            "process_sort_index",
            "sort_index",
            "thread_sort_index",
            "sort_index",
            "process_labels",
            "labels");

    /** Numbers as written: a double keeps only quarter microseconds of an epoch timestamp in µs. */
    public static final com.fasterxml.jackson.databind.ObjectMapper EXACT =
            new com.fasterxml.jackson.databind.ObjectMapper()
                    .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private ChromeTraceCheck() {}

    /** Timestamps in ns, exactly as written (µs with up to three decimals). */
    static long ns(final JsonNode v) {
        return (v.isBigDecimal() ? v.decimalValue() : new BigDecimal(v.asText()))
                .movePointRight(3)
                .longValueExact();
    }

    public static List<String> violations(final JsonNode trace) {
        final List<String> bad = new ArrayList<>();
        if (!trace.isObject() || !trace.path("traceEvents").isArray()) {
            bad.add("not an object with a traceEvents array");
            return bad;
        }
        final String unit = trace.path("displayTimeUnit").asText("ms");
        if (!unit.equals("ms") && !unit.equals("ns")) {
            bad.add("displayTimeUnit " + unit);
        }
        final Map<String, List<long[]>> slices = new HashMap<>();
        final Map<String, Deque<String>> open = new HashMap<>();
        int i = 0;
        for (final JsonNode e : trace.get("traceEvents")) {
            final String where = "event " + i++ + " " + e;
            final String ph = e.path("ph").asText("");
            if (!PHASES.contains(ph)) {
                bad.add(where + ": ph");
                continue;
            }
            if (!e.path("pid").isIntegralNumber()
                    || (e.has("tid") && !e.get("tid").isIntegralNumber())) {
                bad.add(where + ": pid/tid not integers");
            }
            if (ph.equals("M")) {
                final String key = METADATA.get(e.path("name").asText());
                if (key == null || !e.path("args").has(key)) {
                    bad.add(where + ": metadata name or argument");
                }
                continue;
            }
            if (!e.path("ts").isNumber()) {
                bad.add(where + ": ts not a number");
                continue;
            }
            final String track = e.path("pid").asLong() + "/" + e.path("tid").asLong();
            final long ts;
            try {
                ts = ns(e.get("ts"));
            } catch (final ArithmeticException x) {
                bad.add(where + ": ts finer than ns");
                continue;
            }
            switch (ph) {
                case "X" -> {
                    if (!e.path("dur").isNumber() || e.get("dur").asDouble() < 0) {
                        bad.add(where + ": X without dur >= 0");
                        continue;
                    }
                    slices.computeIfAbsent(track, k -> new ArrayList<>()).add(new long[] {ts, ts + ns(e.get("dur"))});
                }
                case "B" ->
                    open.computeIfAbsent(track, k -> new ArrayDeque<>())
                            .push(e.path("name").asText());
                case "E" -> {
                    final Deque<String> d = open.get(track);
                    if (d == null || d.isEmpty()) {
                        bad.add(where + ": E without B");
                    } else {
                        d.pop();
                    }
                }
                case "i", "I" -> {
                    if (!Set.of("g", "p", "t").contains(e.path("s").asText("t"))) {
                        bad.add(where + ": instant scope");
                    }
                }
                default -> {
                    // counters: a ts and args
                }
            }
        }
        open.forEach((t, d) -> {
            if (!d.isEmpty()) {
                bad.add("track " + t + ": " + d.size() + " B without E");
            }
        });
        slices.forEach((t, l) -> {
            l.sort(Comparator.<long[]>comparingLong(s -> s[0]).thenComparing(s -> -s[1]));
            final Deque<long[]> stack = new ArrayDeque<>();
            for (final long[] s : l) {
                while (!stack.isEmpty() && stack.peek()[1] <= s[0]) {
                    stack.pop();
                }
                if (!stack.isEmpty() && s[1] > stack.peek()[1]) {
                    bad.add("track " + t + ": slice [" + s[0] + ", " + s[1] + "] overlaps [" + stack.peek()[0] + ", "
                            + stack.peek()[1] + "] without nesting");
                    if (bad.size() > 20) {
                        return;
                    }
                    continue;
                }
                stack.push(s);
            }
        });
        return bad;
    }
}
