package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * One PromQL query in the Prometheus datasource's query model: {@code expr}, {@code legendFormat} naming each series
 * from its labels ({@code {{rank}}}), a range query over the dashboard's time range or an instant query at its end
 * ({@code format = table} for a table panel), edited as code. {@code interval} is an annotation query's step.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({
    "refId",
    "datasource",
    "expr",
    "legendFormat",
    "range",
    "instant",
    "format",
    "interval",
    "editorMode"
})
public record PromQlTarget(
        String refId,
        DatasourceRef datasource,
        String expr,
        String legendFormat,
        boolean range,
        boolean instant,
        String format,
        String interval,
        String editorMode)
        implements Target {
    public static PromQlTarget range(
            final String refId, final DatasourceRef ds, final String expr, final String legendFormat) {
        return new PromQlTarget(refId, ds, expr, legendFormat, true, false, "time_series", null, "code");
    }

    public static PromQlTarget table(final String refId, final DatasourceRef ds, final String expr) {
        return new PromQlTarget(refId, ds, expr, null, false, true, "table", null, "code");
    }

    public static PromQlTarget annotation(final String expr, final String step) {
        return new PromQlTarget(InfluxQlAnnotationTarget.REF_ID, null, expr, null, true, false, null, step, "code");
    }

    @Override
    public String queryText() {
        return expr;
    }
}
