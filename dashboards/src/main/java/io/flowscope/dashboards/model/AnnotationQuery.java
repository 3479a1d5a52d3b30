package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/** Grafana annotations from an InfluxQL query: each row is an event at its time, text and tags from columns. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"name", "datasource", "enable", "iconColor", "query", "textColumn", "tagsColumn", "titleColumn"})
public record AnnotationQuery(String name, DatasourceRef datasource, boolean enable, String iconColor, String query,
    String textColumn, String tagsColumn, String titleColumn)
{
}
