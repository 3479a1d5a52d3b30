package io.flowscope.dashboards.model;

/**
 * One query of a panel or an annotation, in the JSON shape of its datasource's query model: InfluxQL
 * ({@link InfluxQlTarget}, {@link InfluxQlAnnotationTarget}) or PromQL ({@link PromQlTarget}).
 */
public sealed interface Target permits InfluxQlTarget, InfluxQlAnnotationTarget, PromQlTarget {
    String refId();

    /** The query text as written (InfluxQL or PromQL), for the checks and the query tests. */
    String queryText();

    static InfluxQlTarget influxql(final String refId, final DatasourceRef ds, final String query, final String alias) {
        return new InfluxQlTarget(refId, ds, query, true, "time_series", alias);
    }
}
