package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * Grafana annotations from a datasource query, in the current shape: the query in {@code target}, in its
 * datasource's query model. A Prometheus annotation's {@code titleFormat}, {@code textFormat} and {@code tagKeys}
 * stay on the annotation itself, where Grafana's Prometheus annotation support reads them (an event per run of
 * samples above 0, named from the series' labels); they are null, so absent, for InfluxDB.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"name", "datasource", "enable", "iconColor", "target", "titleFormat", "textFormat", "tagKeys"})
public record AnnotationQuery(
        String name,
        DatasourceRef datasource,
        boolean enable,
        String iconColor,
        Target target,
        String titleFormat,
        String textFormat,
        String tagKeys) {
    public static AnnotationQuery influxql(
            final String name, final DatasourceRef ds, final String iconColor, final InfluxQlAnnotationTarget target) {
        return new AnnotationQuery(name, ds, true, iconColor, target, null, null, null);
    }

    public static AnnotationQuery promql(
            final String name,
            final DatasourceRef ds,
            final String iconColor,
            final PromQlTarget target,
            final String titleFormat,
            final String textFormat,
            final String tagKeys) {
        return new AnnotationQuery(name, ds, true, iconColor, target, titleFormat, textFormat, tagKeys);
    }
}
