package io.flowscope.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.flowscope.dashboards.model.Dashboard;
import java.io.InputStream;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Every generated dashboard validates against dashboard.schema.json; broken ones do not. */
class DashboardSchemaTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonSchema schema() throws Exception {
        try (InputStream in =
                DashboardSchemaTest.class.getResourceAsStream("/io/flowscope/dashboards/dashboard.schema.json")) {
            return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V7).getSchema(in);
        }
    }

    private static JsonNode json(final Dashboard d) throws Exception {
        return JSON.readTree(DashboardGenerator.toJson(d));
    }

    @Test
    void everyGeneratedDashboardValidatesAgainstTheSchema() throws Exception {
        final JsonSchema schema = schema();
        for (final Dashboard d : DashboardGenerator.all()) {
            final Set<ValidationMessage> errors = schema.validate(json(d));
            assertThat(errors).as(d.uid()).isEmpty();
        }
    }

    @Test
    void aPanelWiderThanTheGridAnUnknownPropertyAndAQueryWithoutTimeFilterAreRejected() throws Exception {
        final JsonNode d = json(FlowscopeDashboards.overview());
        final ObjectNode panel = (ObjectNode) d.path("panels").get(0);
        ((ObjectNode) panel.path("gridPos")).put("w", 30);
        panel.put("colour", "red");
        ((ObjectNode) panel.path("targets").get(0)).put("query", "SELECT 1 FROM flow");

        final Set<ValidationMessage> errors = schema().validate(d);

        assertThat(errors)
                .extracting(ValidationMessage::getMessage)
                .anySatisfy(m -> assertThat(m).contains("gridPos.w"))
                .anySatisfy(m -> assertThat(m).contains("colour"))
                .anySatisfy(m -> assertThat(m).contains("query"));
    }
}
