package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/** A Grafana dashboard, the subset flowscope emits (its JSON Schema: dashboard.schema.json in this module). */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({
    "uid",
    "title",
    "description",
    "tags",
    "timezone",
    "editable",
    "schemaVersion",
    "version",
    "refresh",
    "time",
    "templating",
    "annotations",
    "panels"
})
public record Dashboard(
        String uid,
        String title,
        String description,
        List<String> tags,
        String timezone,
        boolean editable,
        int schemaVersion,
        int version,
        String refresh,
        TimeRange time,
        Templating templating,
        Annotations annotations,
        List<Panel> panels) {
    /** Grafana's dashboard JSON schema version these files follow. */
    public static final int SCHEMA_VERSION = 39;

    public record TimeRange(String from, String to) {}

    public record Templating(List<TemplateVariable> list) {}

    public record Annotations(List<AnnotationQuery> list) {}
}
