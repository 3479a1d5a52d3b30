package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * An InfluxQL annotation query in Grafana's current shape: the query and its column mapping inside the
 * annotation's {@code target} (the InfluxDB datasource's own query model, {@code fromAnnotations = true}), not the
 * deprecated top-level {@code query} / {@code textColumn} that Grafana migrates on load. Each row is an event at its
 * time; text, tags and title come from the named columns.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"refId", "query", "rawQuery", "fromAnnotations", "textColumn", "tagsColumn", "titleColumn"})
public record InfluxQlAnnotationTarget(
        String refId,
        String query,
        boolean rawQuery,
        boolean fromAnnotations,
        String textColumn,
        String tagsColumn,
        String titleColumn)
        implements Target {
    /** The refId Grafana gives an annotation's query. */
    public static final String REF_ID = "Anno";

    public static InfluxQlAnnotationTarget of(
            final String query, final String textColumn, final String tagsColumn, final String titleColumn) {
        return new InfluxQlAnnotationTarget(REF_ID, query, true, true, textColumn, tagsColumn, titleColumn);
    }

    @Override
    public String queryText() {
        return query;
    }
}
