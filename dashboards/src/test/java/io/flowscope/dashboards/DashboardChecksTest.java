package io.flowscope.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.DatasourceRef;
import io.flowscope.dashboards.model.GridPos;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.PromQlTarget;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class DashboardChecksTest {
    /** The datasources the committed provisioning file defines: uid → type. */
    static Map<String, String> provisioned() throws IOException {
        final String yaml = Files.readString(
                GeneratedFilesAreCommittedTest.deployDir().resolve("provisioning/datasources/flowscope.yaml"));
        final Matcher m = Pattern.compile("(?m)^\\s+uid:\\s*(\\S+)\\s*\\n\\s+type:\\s*(\\S+)\\s*$")
                .matcher(yaml);
        final Map<String, String> types = new HashMap<>();
        while (m.find()) {
            types.put(m.group(1), m.group(2));
        }
        return types;
    }

    @Test
    void everyGeneratedDashboardPassesEveryCheckAgainstTheProvisionedDatasources() throws IOException {
        assertThat(provisioned())
                .isEqualTo(Map.of(Provisioning.DATASOURCE_UID, "influxdb", Provisioning.PROMETHEUS_UID, "prometheus"));
        for (final Dashboard d : DashboardGenerator.all()) {
            assertThat(DashboardChecks.problems(d, provisioned())).as(d.uid()).isEmpty();
        }
    }

    @Test
    void theTenDashboardsHaveDistinctUidsFiveForEachDatasource() {
        assertThat(FlowscopeDashboards.all())
                .extracting(Dashboard::uid)
                .containsExactly(
                        "flowscope-overview",
                        "flowscope-communicator",
                        "flowscope-links",
                        "flowscope-wait-states",
                        "flowscope-anomalies");
        assertThat(PrometheusDashboards.all())
                .extracting(Dashboard::uid)
                .containsExactly(
                        "flowscope-prom-overview",
                        "flowscope-prom-communicator",
                        "flowscope-prom-links",
                        "flowscope-prom-anomalies",
                        "flowscope-prom-service");
        assertThat(DashboardGenerator.all())
                .extracting(Dashboard::uid)
                .doesNotHaveDuplicates()
                .hasSize(10);
    }

    @Test
    void everyPanelTargetVariableAndAnnotationUsesTheDatasourceVariableOfTheDashboardsType() {
        for (final Dashboard d : DashboardGenerator.all()) {
            final TemplateVariable first = d.templating().list().get(0);
            assertThat(first.type()).as(d.uid()).isEqualTo(TemplateVariable.DATASOURCE);
            final DatasourceRef ref = new DatasourceRef(first.query(), DatasourceRef.VARIABLE_UID);
            assertThat(d.panels()).as(d.uid()).allSatisfy(p -> assertThat(p.datasource())
                    .isEqualTo(ref));
            assertThat(d.annotations().list()).as(d.uid()).isNotEmpty().allSatisfy(a -> assertThat(a.datasource())
                    .isEqualTo(ref));
            assertThat(d.templating().list().subList(1, d.templating().list().size()))
                    .as(d.uid())
                    .allSatisfy(v -> assertThat(v.datasource()).isEqualTo(ref));
        }
    }

    @Test
    void aDatasourceVariableOfTheWrongTypeOrAnUnprovisionedDefaultAndAnAnnotationWithoutTargetAreFound() {
        final Dashboard d = FlowscopeDashboards.anomalies();
        final List<TemplateVariable> variables = new ArrayList<>(d.templating().list());
        variables.set(0, TemplateVariable.datasource("prometheus", "elsewhere", "no-such-uid"));
        final List<AnnotationQuery> annotations =
                new ArrayList<>(d.annotations().list());
        final AnnotationQuery a = annotations.get(0);
        annotations.set(0, new AnnotationQuery(a.name(), a.datasource(), true, "red", null, null, null, null));
        final Dashboard broken = new Dashboard(
                d.uid(),
                d.title(),
                d.description(),
                d.tags(),
                d.timezone(),
                d.editable(),
                d.schemaVersion(),
                d.version(),
                d.refresh(),
                d.time(),
                new Dashboard.Templating(variables),
                new Dashboard.Annotations(annotations),
                d.panels());

        final List<String> problems = DashboardChecks.problems(broken, Provisioning.datasourceTypes());

        assertThat(problems)
                .anySatisfy(p ->
                        assertThat(p).contains("variable $datasource: its default no-such-uid is not a provisioned"))
                .anySatisfy(p -> assertThat(p)
                        .contains("panel 1")
                        .contains("of type influxdb names a variable of " + "prometheus datasources"))
                .anySatisfy(p -> assertThat(p).contains("annotation Anomalies opened: no target"));
    }

    private static Dashboard withPanels(final Dashboard d, final List<Panel> panels) {
        return new Dashboard(
                d.uid(),
                d.title(),
                d.description(),
                d.tags(),
                d.timezone(),
                d.editable(),
                d.schemaVersion(),
                d.version(),
                d.refresh(),
                d.time(),
                d.templating(),
                d.annotations(),
                panels);
    }

    @Test
    void duplicateIdsOverlapsPanelsOutsideTheGridUnprovisionedDatasourcesEmptyQueriesAndUndefinedVariablesAreFound() {
        final Dashboard d = FlowscopeDashboards.overview();
        final Panel first = d.panels().get(0);
        final DatasourceRef other = DatasourceRef.influxdb("not-provisioned");
        final DatasourceRef promOnInflux = DatasourceRef.influxdb(Provisioning.PROMETHEUS_UID);
        final List<Panel> panels = new ArrayList<>(d.panels());
        panels.add(new Panel(
                first.id(),
                "stat",
                "dup",
                null,
                new GridPos(4, 6, first.gridPos().x() + 1, 0),
                first.datasource(),
                first.targets(),
                null,
                null));
        panels.add(new Panel(
                100,
                "stat",
                "wide",
                null,
                new GridPos(4, 6, 20, 100),
                first.datasource(),
                first.targets(),
                null,
                null));
        panels.add(new Panel(
                101,
                "stat",
                "elsewhere",
                null,
                new GridPos(4, 6, 0, 200),
                other,
                List.of(Target.influxql("A", other, " ", null)),
                null,
                null));
        panels.add(new Panel(
                102,
                "stat",
                "undefined",
                null,
                new GridPos(4, 6, 0, 300),
                first.datasource(),
                List.of(Target.influxql(
                        "A", first.datasource(), "SELECT x FROM flow WHERE rank =~ /^$rank$/ AND $timeFilter", null)),
                null,
                null));
        panels.add(new Panel(
                103,
                "stat",
                "promql",
                null,
                new GridPos(4, 6, 0, 400),
                first.datasource(),
                List.of(PromQlTarget.range("A", DatasourceRef.prometheus(DatasourceRef.VARIABLE_UID), "up", null)),
                null,
                null));
        panels.add(new Panel(
                104, "stat", "wrong type", null, new GridPos(4, 6, 0, 500), promOnInflux, first.targets(), null, null));

        final List<String> problems = DashboardChecks.problems(withPanels(d, panels), Provisioning.datasourceTypes());

        assertThat(problems)
                .anySatisfy(p -> assertThat(p).contains("id 1 is not unique"))
                .anySatisfy(p -> assertThat(p).contains("overlaps panel 1"))
                .anySatisfy(p -> assertThat(p).contains("\"wide\"").contains("outside the 24-column grid"))
                .anySatisfy(p -> assertThat(p).contains("not-provisioned is not provisioned"))
                .anySatisfy(p -> assertThat(p).contains("\"promql\" target A: a PromQlTarget on a influxdb datasource"))
                .anySatisfy(p -> assertThat(p)
                        .contains(
                                "\"wrong type\": datasource flowscope-prometheus is not " + "provisioned as influxdb"))
                .anySatisfy(p -> assertThat(p).contains("\"elsewhere\"").contains("empty query"))
                .anySatisfy(p -> assertThat(p).contains("uses $rank, which is not defined"));
    }

    @Test
    void grafanaBuiltInsAreNotTemplateVariablesButEveryVariableSyntaxIsRecognised() {
        assertThat(DashboardChecks.variablesUsed("SELECT 1 WHERE $timeFilter GROUP BY time($__interval)"))
                .isEmpty();
        assertThat(DashboardChecks.variablesUsed("a =~ /^$comm$/ b = '${rank:regex}' c = [[peer]]"))
                .containsExactlyInAnyOrder("comm", "rank", "peer");
    }
}
