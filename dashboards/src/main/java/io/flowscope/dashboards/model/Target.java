package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/** One raw InfluxQL query of a panel ({@code rawQuery = true}); {@code alias} names its series. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"refId", "datasource", "query", "rawQuery", "resultFormat", "alias"})
public record Target(String refId, DatasourceRef datasource, String query, boolean rawQuery, String resultFormat,
    String alias)
{
    public static Target influxql(final String refId, final DatasourceRef ds, final String query, final String alias)
    {
        return new Target(refId, ds, query, true, "time_series", alias);
    }

    public static Target table(final String refId, final DatasourceRef ds, final String query)
    {
        return new Target(refId, ds, query, true, "table", null);
    }
}
