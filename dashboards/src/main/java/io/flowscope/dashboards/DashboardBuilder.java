package io.flowscope.dashboards;

import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.DatasourceRef;
import io.flowscope.dashboards.model.FieldConfig;
import io.flowscope.dashboards.model.GridPos;
import io.flowscope.dashboards.model.InfluxQlAnnotationTarget;
import io.flowscope.dashboards.model.InfluxQlTarget;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.PromQlTarget;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds one dashboard over one kind of datasource: its first variable is {@code datasource} (any datasource of
 * that type, the provisioned one by default), and every panel, target, variable and annotation refers to it.
 * Panels are laid out left to right, wrapping onto a new row when the 24 columns are used up; ids and refIds are
 * assigned in order.
 */
final class DashboardBuilder {
    /** The datasource kinds a dashboard is written for, with the provisioned default. */
    enum Source {
        INFLUXDB(DatasourceRef.INFLUXDB, Provisioning.DATASOURCE_NAME, Provisioning.DATASOURCE_UID),
        PROMETHEUS(DatasourceRef.PROMETHEUS, Provisioning.PROMETHEUS_NAME, Provisioning.PROMETHEUS_UID);

        final String type;
        final String defaultName;
        final String defaultUid;

        Source(final String type, final String defaultName, final String defaultUid) {
            this.type = type;
            this.defaultName = defaultName;
            this.defaultUid = defaultUid;
        }
    }

    /** One query of a panel: the series' legend (InfluxQL alias, PromQL legendFormat; null: Grafana's) and text. */
    record Series(String legend, String query) {
        /** "legend|InfluxQL" or just InfluxQL (InfluxQL has no '|'; PromQL may, so it is never split). */
        static Series influxql(final String aliasBarQuery) {
            final int bar = aliasBarQuery.indexOf('|');
            return bar < 0
                    ? new Series(null, aliasBarQuery)
                    : new Series(aliasBarQuery.substring(0, bar), aliasBarQuery.substring(bar + 1));
        }
    }

    private final String uid;
    private final String title;
    private final String description;
    private final Source source;
    private final DatasourceRef ds;
    private final List<Panel> panels = new ArrayList<>();
    private final List<TemplateVariable> variables = new ArrayList<>();
    private final List<AnnotationQuery> annotations = new ArrayList<>();
    private int x;
    private int y;
    private int rowHeight;

    DashboardBuilder(final String uid, final String title, final String description, final Source source) {
        this.uid = uid;
        this.title = title;
        this.description = description;
        this.source = source;
        this.ds = new DatasourceRef(source.type, DatasourceRef.VARIABLE_UID);
        variables.add(TemplateVariable.datasource(source.type, source.defaultName, source.defaultUid));
    }

    private void require(final Source s) {
        if (source != s) {
            throw new IllegalStateException(uid + ": a " + s + " query on a " + source + " dashboard");
        }
    }

    /** A multi-value variable whose values are those of a tag: {@code SHOW TAG VALUES FROM m WITH KEY = tag [WHERE]}. */
    DashboardBuilder tagVariable(final String name, final String label, final String measurement, final String where) {
        require(Source.INFLUXDB);
        variables.add(TemplateVariable.query(
                name,
                label,
                ds,
                "SHOW TAG VALUES FROM \"" + measurement + "\" WITH KEY = \"" + name + "\""
                        + (where == null ? "" : " WHERE " + where)));
        return this;
    }

    /** A multi-value variable whose values are those of a label: {@code label_values(metric{matchers}, name)}. */
    DashboardBuilder labelVariable(
            final String name, final String label, final PrometheusMetric metric, final String matchers) {
        require(Source.PROMETHEUS);
        variables.add(
                TemplateVariable.query(name, label, ds, "label_values(" + metric.select(matchers) + ", " + name + ")"));
        return this;
    }

    /** Anomaly points of one state from InfluxDB: text = summary, tags = kind, severity, host, title = kind. */
    DashboardBuilder anomalyAnnotations(final String name, final String color, final String state) {
        require(Source.INFLUXDB);
        annotations.add(AnnotationQuery.influxql(
                name,
                ds,
                color,
                InfluxQlAnnotationTarget.of(
                        "SELECT \"summary\", \"kind\", \"severity\", \"host\" FROM \"anomaly\" WHERE \"state\" = '"
                                + state + "' AND $timeFilter",
                        "summary",
                        "kind,severity,host",
                        "kind")));
        return this;
    }

    /**
     * Open anomalies from Prometheus: one region per run of scrapes in which an anomaly series is 1 (opened to
     * resolved, to a scrape interval), titled by kind, tagged by kind and severity.
     */
    DashboardBuilder openAnomalyAnnotations(final String name, final String color) {
        require(Source.PROMETHEUS);
        annotations.add(AnnotationQuery.promql(
                name,
                ds,
                color,
                PromQlTarget.annotation(
                        PrometheusMetric.ANOMALY_OPEN.select(""), Provisioning.PROMETHEUS_SCRAPE_INTERVAL),
                "{{kind}}",
                "{{kind}} ({{severity}}): comm {{comm}} rank {{rank}} peer {{peer}}",
                "kind,severity"));
        return this;
    }

    /** A panel of {@code w} columns and {@code h} rows. */
    DashboardBuilder panel(
            final String type,
            final String title,
            final String description,
            final int w,
            final int h,
            final FieldConfig fieldConfig,
            final Map<String, Object> options,
            final List<Series> queries) {
        if (x + w > GridPos.COLUMNS) {
            x = 0;
            y += rowHeight;
            rowHeight = 0;
        }
        final boolean table = "table".equals(type);
        final List<Target> targets = new ArrayList<>();
        for (int i = 0; i < queries.size(); i++) {
            final String refId = String.valueOf((char) ('A' + i));
            final Series q = queries.get(i);
            targets.add(
                    switch (source) {
                        case INFLUXDB ->
                            table
                                    ? InfluxQlTarget.table(refId, ds, q.query())
                                    : Target.influxql(refId, ds, q.query(), q.legend());
                        case PROMETHEUS ->
                            table
                                    ? PromQlTarget.table(refId, ds, q.query())
                                    : PromQlTarget.range(refId, ds, q.query(), q.legend());
                    });
        }
        panels.add(new Panel(
                panels.size() + 1,
                type,
                title,
                description,
                new GridPos(h, w, x, y),
                ds,
                targets,
                fieldConfig,
                options));
        x += w;
        rowHeight = Math.max(rowHeight, h);
        return this;
    }

    private static List<Series> influxql(final String... queries) {
        return java.util.Arrays.stream(queries).map(Series::influxql).toList();
    }

    DashboardBuilder timeseries(
            final String title, final String description, final int w, final String unit, final String... queries) {
        require(Source.INFLUXDB);
        return timeseries(title, description, w, unit, influxql(queries));
    }

    DashboardBuilder timeseries(
            final String title, final String description, final int w, final String unit, final List<Series> queries) {
        return panel("timeseries", title, description, w, 8, FieldConfig.unit(unit), null, queries);
    }

    DashboardBuilder stacked(
            final String title, final String description, final int w, final String unit, final String... queries) {
        require(Source.INFLUXDB);
        return stacked(title, description, w, unit, influxql(queries));
    }

    DashboardBuilder stacked(
            final String title, final String description, final int w, final String unit, final List<Series> queries) {
        return panel("timeseries", title, description, w, 8, FieldConfig.stacked(unit), null, queries);
    }

    DashboardBuilder stat(
            final String title, final String description, final int w, final String unit, final String query) {
        return panel(
                "stat",
                title,
                description,
                w,
                4,
                FieldConfig.unit(unit),
                Map.of("reduceOptions", Map.of("calcs", List.of("lastNotNull"), "fields", "", "values", false)),
                List.of(source == Source.INFLUXDB ? Series.influxql(query) : new Series(null, query)));
    }

    DashboardBuilder table(final String title, final String description, final int w, final String query) {
        return panel(
                "table",
                title,
                description,
                w,
                8,
                FieldConfig.unit("short"),
                null,
                List.of(source == Source.INFLUXDB ? Series.influxql(query) : new Series(null, query)));
    }

    Dashboard build() {
        return new Dashboard(
                uid,
                title,
                description,
                List.of("flowscope", "nccl", source.type),
                "utc",
                false,
                Dashboard.SCHEMA_VERSION,
                1,
                "10s",
                new Dashboard.TimeRange("now-15m", "now"),
                new Dashboard.Templating(List.copyOf(variables)),
                new Dashboard.Annotations(List.copyOf(annotations)),
                List.copyOf(panels));
    }
}
