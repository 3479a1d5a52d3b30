package io.flowscope.dashboards.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/** Field defaults of a panel: the unit (Grafana unit id: Bps, bytes, ns, short...) and custom settings. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FieldConfig(Defaults defaults, List<Object> overrides) {
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Defaults(String unit, Map<String, Object> custom) {}

    public static FieldConfig unit(final String unit) {
        return new FieldConfig(new Defaults(unit, null), List.of());
    }

    public static FieldConfig stacked(final String unit) {
        return new FieldConfig(
                new Defaults(unit, Map.of("stacking", Map.of("mode", "normal", "group", "A"), "fillOpacity", 60)),
                List.of());
    }
}
