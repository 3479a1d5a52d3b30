package io.flowscope.dashboards;

import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.DatasourceRef;
import io.flowscope.dashboards.model.GridPos;
import io.flowscope.dashboards.model.InfluxQlTarget;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.PromQlTarget;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What Grafana would get wrong silently, checked before a dashboard is written: unique panel ids and refIds,
 * grid positions inside 24 columns without overlap, every datasource a provisioned uid of its type or the
 * dashboard's datasource variable of that type (whose default is provisioned), InfluxQL only on InfluxDB and PromQL
 * only on Prometheus, every annotation's query in its target, no empty query, every template variable used in a
 * query defined before it (Grafana's own {@code $timeFilter}, {@code $__*} excepted).
 */
public final class DashboardChecks {
    private static final Pattern VARIABLE =
            Pattern.compile("\\$\\{([A-Za-z0-9_]+)(?::[^}]*)?}|\\[\\[([A-Za-z0-9_]+)]]|\\$([A-Za-z0-9_]+)");
    private static final Set<String> BUILT_INS = Set.of("timeFilter", "interval", "timeFrom", "timeTo");

    private DashboardChecks() {}

    /**
     * @param provisioned every provisioned datasource: uid → plugin type
     * @return the problems found, each naming the dashboard and the panel; empty when the dashboard is sound
     */
    public static List<String> problems(final Dashboard d, final Map<String, String> provisioned) {
        final List<String> problems = new ArrayList<>();
        final String where = "dashboard " + d.uid() + ": ";
        final Map<String, TemplateVariable> defined = new LinkedHashMap<>();
        for (final TemplateVariable v : d.templating().list()) {
            if (defined.containsKey(v.name())) {
                problems.add(where + "variable $" + v.name() + " is defined twice");
            }
            if (TemplateVariable.DATASOURCE.equals(v.type())) {
                final String uid = v.current() == null ? null : v.current().value();
                if (!v.query().equals(provisioned.get(uid))) {
                    problems.add(where + "variable $" + v.name() + ": its default " + uid + " is not a provisioned "
                            + v.query() + " datasource " + provisioned);
                }
            } else {
                datasource(problems, where + "variable $" + v.name(), v.datasource(), provisioned, defined);
                query(problems, where + "variable $" + v.name(), v.query(), defined.keySet());
            }
            defined.put(v.name(), v);
        }
        for (final AnnotationQuery a : d.annotations().list()) {
            datasource(problems, where + "annotation " + a.name(), a.datasource(), provisioned, defined);
            if (a.target() == null) {
                problems.add(where + "annotation " + a.name() + ": no target (the query belongs in target)");
                continue;
            }
            language(problems, where + "annotation " + a.name(), a.datasource(), a.target());
            query(problems, where + "annotation " + a.name(), a.target().queryText(), defined.keySet());
        }
        final Set<Integer> ids = new HashSet<>();
        final List<Panel> panels = d.panels();
        for (int i = 0; i < panels.size(); i++) {
            final Panel p = panels.get(i);
            final String at = where + "panel " + p.id() + " \"" + p.title() + "\"";
            if (!ids.add(p.id())) {
                problems.add(at + ": id " + p.id() + " is not unique");
            }
            final GridPos g = p.gridPos();
            if (g.w() < 1 || g.h() < 1 || g.x() < 0 || g.y() < 0 || g.x() + g.w() > GridPos.COLUMNS) {
                problems.add(at + ": gridPos " + g + " is outside the 24-column grid");
            }
            for (int j = 0; j < i; j++) {
                if (g.overlaps(panels.get(j).gridPos())) {
                    problems.add(at + ": gridPos " + g + " overlaps panel "
                            + panels.get(j).id() + " " + panels.get(j).gridPos());
                }
            }
            datasource(problems, at, p.datasource(), provisioned, defined);
            if (p.targets() == null || p.targets().isEmpty()) {
                problems.add(at + ": no query");
                continue;
            }
            final Set<String> refIds = new HashSet<>();
            for (final Target t : p.targets()) {
                if (!refIds.add(t.refId())) {
                    problems.add(at + ": refId " + t.refId() + " is not unique");
                }
                final DatasourceRef tds = t instanceof InfluxQlTarget q
                        ? q.datasource()
                        : t instanceof PromQlTarget q ? q.datasource() : null;
                datasource(problems, at + " target " + t.refId(), tds, provisioned, defined);
                language(problems, at + " target " + t.refId(), p.datasource(), t);
                query(problems, at + " target " + t.refId(), t.queryText(), defined.keySet());
            }
        }
        return problems;
    }

    /** The template variables a query uses ({@code $x}, {@code ${x}}, {@code ${x:regex}}, {@code [[x]]}), built-ins excluded. */
    public static Set<String> variablesUsed(final String query) {
        final Set<String> used = new HashSet<>();
        final Matcher m = VARIABLE.matcher(query);
        while (m.find()) {
            final String name = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3);
            if (!name.startsWith("__") && !BUILT_INS.contains(name)) {
                used.add(name);
            }
        }
        return used;
    }

    /**
     * A datasource is either a provisioned uid of its type or a reference to a datasource variable defined before,
     * of the same plugin type.
     */
    private static void datasource(
            final List<String> problems,
            final String at,
            final DatasourceRef ds,
            final Map<String, String> provisioned,
            final Map<String, TemplateVariable> defined) {
        if (ds == null) {
            problems.add(at + ": datasource missing");
            return;
        }
        final String variable = TemplateVariable.referencedBy(ds.uid());
        if (variable == null) {
            if (!ds.type().equals(provisioned.get(ds.uid()))) {
                problems.add(
                        at + ": datasource " + ds.uid() + " is not provisioned as " + ds.type() + " " + provisioned);
            }
            return;
        }
        final TemplateVariable v = defined.get(variable);
        if (v == null || !TemplateVariable.DATASOURCE.equals(v.type())) {
            problems.add(at + ": datasource " + ds.uid() + " is not a datasource variable defined before it");
        } else if (!v.query().equals(ds.type())) {
            problems.add(at + ": datasource " + ds.uid() + " of type " + ds.type() + " names a variable of " + v.query()
                    + " datasources");
        }
    }

    /** An InfluxQL target on an InfluxDB datasource, a PromQL one on Prometheus. */
    private static void language(final List<String> problems, final String at, final DatasourceRef ds, final Target t) {
        final String expected = t instanceof PromQlTarget ? DatasourceRef.PROMETHEUS : DatasourceRef.INFLUXDB;
        if (ds != null && !expected.equals(ds.type())) {
            problems.add(at + ": a " + t.getClass().getSimpleName() + " on a " + ds.type() + " datasource");
        }
    }

    private static void query(
            final List<String> problems, final String at, final String query, final Set<String> defined) {
        if (query == null || query.isBlank()) {
            problems.add(at + ": empty query");
            return;
        }
        for (final String v : variablesUsed(query)) {
            if (!defined.contains(v)) {
                problems.add(at + ": uses $" + v + ", which is not defined (before it)");
            }
        }
    }
}
