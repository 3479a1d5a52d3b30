package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/** One raw InfluxQL query of a panel ({@code rawQuery = true}); {@code alias} names its series. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"refId", "datasource", "query", "rawQuery", "resultFormat", "alias"})
public record InfluxQlTarget(
        String refId, DatasourceRef datasource, String query, boolean rawQuery, String resultFormat, String alias)
        implements Target {
    public static InfluxQlTarget table(final String refId, final DatasourceRef ds, final String query) {
        return new InfluxQlTarget(refId, ds, query, true, "table", null);
    }

    @Override
    public String queryText() {
        return query;
    }
}
