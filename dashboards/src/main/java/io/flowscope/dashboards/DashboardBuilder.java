package io.flowscope.dashboards;

import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.DatasourceRef;
import io.flowscope.dashboards.model.FieldConfig;
import io.flowscope.dashboards.model.GridPos;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds one dashboard: panels are laid out left to right, wrapping onto a new row when the 24 columns are
 * used up; ids and refIds are assigned in order. Every query uses the one provisioned datasource.
 */
final class DashboardBuilder
{
    private final String uid;
    private final String title;
    private final String description;
    private final DatasourceRef ds;
    private final List<Panel> panels = new ArrayList<>();
    private final List<TemplateVariable> variables = new ArrayList<>();
    private final List<AnnotationQuery> annotations = new ArrayList<>();
    private int x;
    private int y;
    private int rowHeight;

    DashboardBuilder(final String uid, final String title, final String description, final DatasourceRef ds)
    {
        this.uid = uid;
        this.title = title;
        this.description = description;
        this.ds = ds;
    }

    /** A multi-value variable whose values are those of a tag: {@code SHOW TAG VALUES FROM m WITH KEY = tag [WHERE]}. */
    DashboardBuilder tagVariable(final String name, final String label, final String measurement, final String where)
    {
        variables.add(TemplateVariable.tagValues(name, label, ds, "SHOW TAG VALUES FROM \"" + measurement
            + "\" WITH KEY = \"" + name + "\"" + (where == null ? "" : " WHERE " + where)));
        return this;
    }

    DashboardBuilder anomalyAnnotations(final String name, final String color, final String state)
    {
        annotations.add(new AnnotationQuery(name, ds, true, color,
            "SELECT \"summary\", \"kind\", \"severity\", \"host\" FROM \"anomaly\" WHERE \"state\" = '" + state
                + "' AND $timeFilter", "summary", "kind,severity,host", "kind"));
        return this;
    }

    /** A panel of {@code w} columns and {@code h} rows; each query is "alias|InfluxQL" or just InfluxQL. */
    DashboardBuilder panel(final String type, final String title, final String description, final int w, final int h,
        final FieldConfig fieldConfig, final Map<String, Object> options, final String... queries)
    {
        if (x + w > GridPos.COLUMNS)
        {
            x = 0;
            y += rowHeight;
            rowHeight = 0;
        }
        final List<Target> targets = new ArrayList<>();
        for (int i = 0; i < queries.length; i++)
        {
            final String refId = String.valueOf((char)('A' + i));
            final int bar = queries[i].indexOf('|');
            final String alias = bar < 0 ? null : queries[i].substring(0, bar);
            final String query = bar < 0 ? queries[i] : queries[i].substring(bar + 1);
            targets.add("table".equals(type) ? Target.table(refId, ds, query) : Target.influxql(refId, ds, query, alias));
        }
        panels.add(new Panel(panels.size() + 1, type, title, description, new GridPos(h, w, x, y), ds, targets,
            fieldConfig, options));
        x += w;
        rowHeight = Math.max(rowHeight, h);
        return this;
    }

    DashboardBuilder timeseries(final String title, final String description, final int w, final String unit,
        final String... queries)
    {
        return panel("timeseries", title, description, w, 8, FieldConfig.unit(unit), null, queries);
    }

    DashboardBuilder stacked(final String title, final String description, final int w, final String unit,
        final String... queries)
    {
        return panel("timeseries", title, description, w, 8, FieldConfig.stacked(unit), null, queries);
    }

    DashboardBuilder stat(final String title, final String description, final int w, final String unit,
        final String query)
    {
        return panel("stat", title, description, w, 4, FieldConfig.unit(unit),
            Map.of("reduceOptions", Map.of("calcs", List.of("lastNotNull"), "fields", "", "values", false)), query);
    }

    DashboardBuilder table(final String title, final String description, final int w, final String query)
    {
        return panel("table", title, description, w, 8, FieldConfig.unit("short"), null, query);
    }

    Dashboard build()
    {
        return new Dashboard(uid, title, description, List.of("flowscope", "nccl"), "utc", false,
            Dashboard.SCHEMA_VERSION, 1, "10s", new Dashboard.TimeRange("now-15m", "now"),
            new Dashboard.Templating(List.copyOf(variables)), new Dashboard.Annotations(List.copyOf(annotations)),
            List.copyOf(panels));
    }
}
