package io.flowscope.dashboards;

import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.DatasourceRef;
import io.flowscope.dashboards.model.GridPos;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What Grafana would get wrong silently, checked before a dashboard is written: unique panel ids and refIds,
 * grid positions inside 24 columns without overlap, every datasource uid provisioned, no empty query, every
 * template variable used in a query defined (Grafana's own {@code $timeFilter}, {@code $__*} excepted).
 */
public final class DashboardChecks
{
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z0-9_]+)(?::[^}]*)?}|\\[\\[([A-Za-z0-9_]+)]]|\\$([A-Za-z0-9_]+)");
    private static final Set<String> BUILT_INS = Set.of("timeFilter", "interval", "timeFrom", "timeTo");

    private DashboardChecks()
    {
    }

    /** @return the problems found, each naming the dashboard and the panel; empty when the dashboard is sound */
    public static List<String> problems(final Dashboard d, final Set<String> provisionedUids)
    {
        final List<String> problems = new ArrayList<>();
        final String where = "dashboard " + d.uid() + ": ";
        final Set<String> defined = new HashSet<>();
        for (final TemplateVariable v : d.templating().list())
        {
            if (!defined.add(v.name()))
            {
                problems.add(where + "variable $" + v.name() + " is defined twice");
            }
            datasource(problems, where + "variable $" + v.name(), v.datasource(), provisionedUids);
            query(problems, where + "variable $" + v.name(), v.query(), defined);
        }
        for (final AnnotationQuery a : d.annotations().list())
        {
            datasource(problems, where + "annotation " + a.name(), a.datasource(), provisionedUids);
            query(problems, where + "annotation " + a.name(), a.query(), defined);
        }
        final Set<Integer> ids = new HashSet<>();
        final List<Panel> panels = d.panels();
        for (int i = 0; i < panels.size(); i++)
        {
            final Panel p = panels.get(i);
            final String at = where + "panel " + p.id() + " \"" + p.title() + "\"";
            if (!ids.add(p.id()))
            {
                problems.add(at + ": id " + p.id() + " is not unique");
            }
            final GridPos g = p.gridPos();
            if (g.w() < 1 || g.h() < 1 || g.x() < 0 || g.y() < 0 || g.x() + g.w() > GridPos.COLUMNS)
            {
                problems.add(at + ": gridPos " + g + " is outside the 24-column grid");
            }
            for (int j = 0; j < i; j++)
            {
                if (g.overlaps(panels.get(j).gridPos()))
                {
                    problems.add(at + ": gridPos " + g + " overlaps panel " + panels.get(j).id() + " "
                        + panels.get(j).gridPos());
                }
            }
            datasource(problems, at, p.datasource(), provisionedUids);
            if (p.targets() == null || p.targets().isEmpty())
            {
                problems.add(at + ": no query");
                continue;
            }
            final Set<String> refIds = new HashSet<>();
            for (final Target t : p.targets())
            {
                if (!refIds.add(t.refId()))
                {
                    problems.add(at + ": refId " + t.refId() + " is not unique");
                }
                datasource(problems, at + " target " + t.refId(), t.datasource(), provisionedUids);
                query(problems, at + " target " + t.refId(), t.query(), defined);
            }
        }
        return problems;
    }

    /** The template variables a query uses ({@code $x}, {@code ${x}}, {@code ${x:regex}}, {@code [[x]]}), built-ins excluded. */
    public static Set<String> variablesUsed(final String query)
    {
        final Set<String> used = new HashSet<>();
        final Matcher m = VARIABLE.matcher(query);
        while (m.find())
        {
            final String name = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3);
            if (!name.startsWith("__") && !BUILT_INS.contains(name))
            {
                used.add(name);
            }
        }
        return used;
    }

    private static void datasource(final List<String> problems, final String at, final DatasourceRef ds,
        final Set<String> provisionedUids)
    {
        if (ds == null || !provisionedUids.contains(ds.uid()))
        {
            problems.add(at + ": datasource " + (ds == null ? "missing" : ds.uid()) + " is not provisioned "
                + provisionedUids);
        }
    }

    private static void query(final List<String> problems, final String at, final String query,
        final Set<String> defined)
    {
        if (query == null || query.isBlank())
        {
            problems.add(at + ": empty query");
            return;
        }
        for (final String v : variablesUsed(query))
        {
            if (!defined.contains(v))
            {
                problems.add(at + ": uses $" + v + ", which is not defined (before it)");
            }
        }
    }
}
