package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * A dashboard variable. {@code query}: values from a query of the datasource (InfluxQL {@code SHOW TAG VALUES},
 * PromQL {@code label_values(...)}), refreshed when the time range changes ({@code refresh = 2}), multi-value with
 * All, used as a regex ({@code =~ /^$name$/}, {@code =~ "$name"}). {@code datasource}: its query is a datasource
 * plugin type; the user picks one datasource of that type, {@code current} being the provisioned one.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"type", "name", "label", "datasource", "query", "current", "refresh", "multi", "includeAll", "sort"
})
public record TemplateVariable(
        String type,
        String name,
        String label,
        DatasourceRef datasource,
        String query,
        Option current,
        int refresh,
        boolean multi,
        boolean includeAll,
        Integer sort) {
    public static final String QUERY = "query";
    public static final String DATASOURCE = "datasource";

    /** A selected value: the text shown and the value substituted (a datasource variable's: the uid). */
    public record Option(String text, String value) {}

    public static TemplateVariable query(
            final String name, final String label, final DatasourceRef ds, final String query) {
        return new TemplateVariable(QUERY, name, label, ds, query, null, 2, true, true, 1);
    }

    /** The {@code datasource} variable: any datasource of {@code pluginType}, the provisioned one by default. */
    public static TemplateVariable datasource(
            final String pluginType, final String defaultName, final String defaultUid) {
        return new TemplateVariable(
                DATASOURCE,
                DATASOURCE,
                "Data source",
                null,
                pluginType,
                new Option(defaultName, defaultUid),
                1,
                false,
                false,
                null);
    }

    /** The name a uid such as {@code ${datasource}} or {@code $datasource} refers to; null when it is a plain uid. */
    public static String referencedBy(final String uid) {
        if (uid != null && uid.startsWith("${") && uid.endsWith("}")) {
            return uid.substring(2, uid.length() - 1);
        }
        return uid != null && uid.startsWith("$") ? uid.substring(1) : null;
    }
}
