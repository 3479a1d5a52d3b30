package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;
import java.util.Map;

/** One Grafana panel (timeseries, stat, table) with its targets (InfluxQL or PromQL). */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"id", "type", "title", "description", "gridPos", "datasource", "targets", "fieldConfig", "options"})
public record Panel(
        int id,
        String type,
        String title,
        String description,
        GridPos gridPos,
        DatasourceRef datasource,
        List<Target> targets,
        FieldConfig fieldConfig,
        Map<String, Object> options) {}
