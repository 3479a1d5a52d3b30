package io.flowscope.dashboards;

import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.PromQlTarget;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a PromQL expression reads, enough to check it against a scrape: the metric names it selects and the labels
 * it matches, groups by or names series with. A reader of the expressions the dashboards write, not a parser of all
 * of PromQL: identifiers outside braces, brackets and strings are metric names unless a function (followed by
 * {@code (}), an aggregation operator or a keyword; the names in {@code by (...)}, {@code without}, {@code on}, {@code ignoring},
 * {@code group_left}, {@code group_right} lists and on the left of a matcher in braces are labels.
 */
public final class PromQl {
    private static final Set<String> KEYWORDS = Set.of(
            "and",
            "or",
            "unless",
            "bool",
            "offset",
            "inf",
            "nan",
            "atan2",
            // aggregation operators, which may be followed by "by (...)" before their parenthesis
            "sum",
            "min",
            "max",
            "avg",
            "group",
            "stddev",
            "stdvar",
            "count",
            "count_values",
            "bottomk",
            "topk",
            "quantile",
            "limitk",
            "limit_ratio");
    private static final Set<String> LABEL_LISTS =
            Set.of("by", "without", "on", "ignoring", "group_left", "group_right");
    private static final Pattern MATCHER_LABEL = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)\\s*(?:=~|!~|!=|=)");
    private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*}}");
    private static final Pattern LABEL_VALUES =
            Pattern.compile("^label_values\\((.+),\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*\\)$");

    /** What an expression uses: metric names and label names. */
    public record Uses(Set<String> metrics, Set<String> labels) {}

    /** One query of a dashboard ({@code what} names it) and what it uses. */
    public record Query(String dashboard, String what, String text, Uses uses) {
        @Override
        public String toString() {
            return dashboard + " " + what + ": " + text;
        }
    }

    /**
     * Every PromQL query of a Prometheus dashboard with what it uses: variables' {@code label_values}, annotations'
     * expressions with the labels of their title, text and tags, panels' expressions with the labels of their legend.
     */
    public static List<Query> of(final Dashboard d) {
        final List<Query> out = new ArrayList<>();
        for (final TemplateVariable v : d.templating().list()) {
            if (TemplateVariable.QUERY.equals(v.type())) {
                out.add(new Query(d.uid(), "variable $" + v.name(), v.query(), variableUses(v.query())));
            }
        }
        for (final AnnotationQuery a : d.annotations().list()) {
            final Set<String> labels = new LinkedHashSet<>(legendLabels(a.titleFormat()));
            labels.addAll(legendLabels(a.textFormat()));
            if (a.tagKeys() != null) {
                labels.addAll(List.of(a.tagKeys().split(",")));
            }
            out.add(new Query(
                    d.uid(),
                    "annotation " + a.name(),
                    a.target().queryText(),
                    with(uses(a.target().queryText()), labels)));
        }
        for (final Panel p : d.panels()) {
            for (final Target t : p.targets()) {
                final PromQlTarget q = (PromQlTarget) t;
                out.add(new Query(
                        d.uid(),
                        "panel " + p.id() + " \"" + p.title() + "\" " + t.refId(),
                        q.expr(),
                        with(uses(q.expr()), legendLabels(q.legendFormat()))));
            }
        }
        return out;
    }

    private static Uses with(final Uses u, final Set<String> moreLabels) {
        final Set<String> labels = new LinkedHashSet<>(u.labels());
        labels.addAll(moreLabels);
        return new Uses(u.metrics(), labels);
    }

    private PromQl() {}

    public static Uses uses(final String expr) {
        final Set<String> metrics = new LinkedHashSet<>();
        final Set<String> labels = new LinkedHashSet<>();
        final int n = expr.length();
        int i = 0;
        while (i < n) {
            final char c = expr.charAt(i);
            if (c == '"' || c == '\'' || c == '`') {
                i = endOfString(expr, i);
            } else if (c == '{') {
                final int end = closing(expr, i, '{', '}');
                final Matcher m = MATCHER_LABEL.matcher(withoutStrings(expr.substring(i + 1, end)));
                while (m.find()) {
                    labels.add(m.group(1));
                }
                i = end + 1;
            } else if (c == '[') {
                i = closing(expr, i, '[', ']') + 1;
            } else if (c == '$') {
                i = endOfIdentifier(expr, i + 1);
            } else if (Character.isDigit(c) || c == '.') {
                i = endOfNumber(expr, i);
            } else if (Character.isLetter(c) || c == '_' || c == ':') {
                final int end = endOfIdentifier(expr, i);
                final String word = expr.substring(i, end);
                final int next = skipSpace(expr, end);
                if (LABEL_LISTS.contains(word) && next < n && expr.charAt(next) == '(') {
                    final int close = closing(expr, next, '(', ')');
                    for (final String label : expr.substring(next + 1, close).split(",")) {
                        if (!label.isBlank()) {
                            labels.add(label.strip());
                        }
                    }
                    i = close + 1;
                    continue;
                }
                if (!(next < n && expr.charAt(next) == '(')
                        && !KEYWORDS.contains(word)
                        && !LABEL_LISTS.contains(word)) {
                    metrics.add(word);
                }
                i = end;
            } else {
                i++;
            }
        }
        return new Uses(metrics, labels);
    }

    /** The labels a legend format such as {@code {{rank}} → {{peer}}} names. */
    public static Set<String> legendLabels(final String legendFormat) {
        final Set<String> labels = new LinkedHashSet<>();
        if (legendFormat != null) {
            final Matcher m = LEGEND_LABEL.matcher(legendFormat);
            while (m.find()) {
                labels.add(m.group(1));
            }
        }
        return labels;
    }

    /**
     * A variable's query {@code label_values(<selector>, <label>)} (Grafana's Prometheus variable function): what its
     * selector uses plus the label whose values it lists.
     */
    public static Uses variableUses(final String query) {
        final Matcher m = LABEL_VALUES.matcher(query.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a label_values(<selector>, <label>) query: " + query);
        }
        final Uses selector = uses(m.group(1));
        final Set<String> labels = new LinkedHashSet<>(selector.labels());
        labels.add(m.group(2));
        return new Uses(selector.metrics(), labels);
    }

    private static String withoutStrings(final String s) {
        return s.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`", "\"\"");
    }

    private static int endOfString(final String s, final int open) {
        final char quote = s.charAt(open);
        for (int i = open + 1; i < s.length(); i++) {
            if (s.charAt(i) == '\\' && quote != '`') {
                i++;
            } else if (s.charAt(i) == quote) {
                return i + 1;
            }
        }
        throw new IllegalArgumentException("unterminated string at " + open + " in: " + s);
    }

    private static int closing(final String s, final int open, final char o, final char c) {
        int depth = 0;
        for (int i = open; i < s.length(); i++) {
            final char ch = s.charAt(i);
            if (ch == '"' || ch == '\'' || ch == '`') {
                i = endOfString(s, i) - 1;
            } else if (ch == o) {
                depth++;
            } else if (ch == c && --depth == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("no '" + c + "' closes the '" + o + "' at " + open + " in: " + s);
    }

    private static int endOfIdentifier(final String s, final int from) {
        int i = from;
        while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_' || s.charAt(i) == ':')) {
            i++;
        }
        return i;
    }

    private static int endOfNumber(final String s, final int from) {
        int i = from;
        while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        return i;
    }

    private static int skipSpace(final String s, final int from) {
        int i = from;
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }
}
