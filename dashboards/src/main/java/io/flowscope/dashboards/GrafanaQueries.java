package io.flowscope.dashboards;

import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every query of an InfluxDB dashboard as Grafana's InfluxDB datasource sends it: {@code $timeFilter} becomes
 * {@code time >= <from>ms and time <= <to>ms}, {@code $__interval} the given interval, and each variable the values
 * selected from what its own query returned, regex-escaped (one value: the value; several: {@code (a|b)}).
 * Variables are resolved in order, so a chained variable's query sees the ones before it. Used by the tests that
 * run the dashboards against a real InfluxDB (filled by the sink in this module, by the service in collector).
 */
public final class GrafanaQueries {
    /** What a query feeds: a variable's values, an annotation or a panel. */
    public enum Kind {
        VARIABLE,
        ANNOTATION,
        PANEL
    }

    /** Which of its values a variable takes. */
    public enum Selection {
        /** The first value its query returns (a user picking one). */
        FIRST,
        /** Every value, as the All option sends them (what a dashboard opened without a selection shows). */
        ALL
    }

    /** One query, expanded; {@code what} names it for a failure message. */
    public record Query(String dashboard, Kind kind, String what, String text) {
        @Override
        public String toString() {
            return dashboard + " " + kind.name().toLowerCase(java.util.Locale.ROOT) + " " + what + ": " + text;
        }
    }

    private static final Pattern VARIABLE = Pattern.compile("\\$([A-Za-z0-9_]+)");
    private static final Pattern RELATIVE = Pattern.compile("now(?:-(\\d+)([smhdw]))?");

    private GrafanaQueries() {}

    /** Grafana's {@code $timeFilter} for a range in epoch milliseconds. */
    public static String timeFilter(final long fromMs, final long toMs) {
        return "time >= " + fromMs + "ms and time <= " + toMs + "ms";
    }

    /** Grafana's {@code $timeFilter} for a dashboard's own default range (e.g. now-15m .. now) at {@code nowMs}. */
    public static String timeFilter(final Dashboard.TimeRange range, final long nowMs) {
        return timeFilter(resolve(range.from(), nowMs), resolve(range.to(), nowMs));
    }

    static long resolve(final String relative, final long nowMs) {
        final Matcher m = RELATIVE.matcher(relative);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a relative time Grafana understands here: " + relative);
        }
        if (m.group(1) == null) {
            return nowMs;
        }
        final long unitMs =
                switch (m.group(2)) {
                    case "s" -> 1_000L;
                    case "m" -> 60_000L;
                    case "h" -> 3_600_000L;
                    case "d" -> 86_400_000L;
                    default -> 604_800_000L;
                };
        return nowMs - Long.parseLong(m.group(1)) * unitMs;
    }

    /**
     * Substitutes the macros and the variables of {@code values} (a variable without values is left as it is, so
     * the query matches nothing and says which variable was missing).
     */
    public static String expand(
            final String query,
            final String timeFilter,
            final String interval,
            final Map<String, List<String>> values) {
        final String q = query.replace("$timeFilter", timeFilter).replace("$__interval", interval);
        final Matcher m = VARIABLE.matcher(q);
        final StringBuilder sb = new StringBuilder();
        while (m.find()) {
            final List<String> selected = values.get(m.group(1));
            final String replacement;
            if (selected == null || selected.isEmpty()) {
                replacement = m.group();
            } else if (selected.size() == 1) {
                replacement = escapeRegex(selected.get(0));
            } else {
                replacement = "("
                        + String.join(
                                "|",
                                selected.stream()
                                        .map(GrafanaQueries::escapeRegex)
                                        .toList()) + ")";
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** Grafana's escaping of a value put into a regex (the influx datasource's interpolation of multi-value variables). */
    static String escapeRegex(final String value) {
        return value.replaceAll("([\\\\^$*+?.()|\\[\\]{}/])", "\\\\$1");
    }

    /**
     * Every query of {@code d} in the order Grafana runs them: the variables' (each answered by
     * {@code tagValues}, which runs the query and returns the tag values, its selection kept for the queries
     * after it), then the annotations', then each panel target's.
     */
    public static List<Query> of(
            final Dashboard d,
            final String timeFilter,
            final String interval,
            final Selection selection,
            final Function<String, List<String>> tagValues) {
        final List<Query> out = new ArrayList<>();
        final Map<String, List<String>> values = new LinkedHashMap<>();
        for (final TemplateVariable v : d.templating().list()) {
            if (!TemplateVariable.QUERY.equals(v.type())) {
                continue; // the datasource variable: which influxd, not a query
            }
            final String q = expand(v.query(), timeFilter, interval, values);
            out.add(new Query(d.uid(), Kind.VARIABLE, "$" + v.name(), q));
            final List<String> all = tagValues.apply(q);
            values.put(v.name(), selection == Selection.FIRST && !all.isEmpty() ? List.of(all.get(0)) : all);
        }
        for (final AnnotationQuery a : d.annotations().list()) {
            out.add(new Query(
                    d.uid(), Kind.ANNOTATION, a.name(), expand(a.target().queryText(), timeFilter, interval, values)));
        }
        for (final Panel p : d.panels()) {
            for (final Target t : p.targets()) {
                out.add(new Query(
                        d.uid(),
                        Kind.PANEL,
                        p.id() + " \"" + p.title() + "\" " + t.refId(),
                        expand(t.queryText(), timeFilter, interval, values)));
            }
        }
        return out;
    }
}
