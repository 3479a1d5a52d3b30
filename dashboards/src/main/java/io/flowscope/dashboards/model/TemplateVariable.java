package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * A query variable: its values come from an InfluxQL {@code SHOW TAG VALUES} query, refreshed when the time
 * range changes ({@code refresh = 2}); panels use it as {@code =~ /^$name$/} so multi-value and All work.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"type", "name", "label", "datasource", "query", "refresh", "multi", "includeAll", "sort"})
public record TemplateVariable(String type, String name, String label, DatasourceRef datasource, String query,
    int refresh, boolean multi, boolean includeAll, int sort)
{
    public static TemplateVariable tagValues(final String name, final String label, final DatasourceRef ds,
        final String query)
    {
        return new TemplateVariable("query", name, label, ds, query, 2, true, true, 1);
    }
}
