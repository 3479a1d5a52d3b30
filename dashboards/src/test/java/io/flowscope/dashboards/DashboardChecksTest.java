package io.flowscope.dashboards;

import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.DatasourceRef;
import io.flowscope.dashboards.model.GridPos;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.Target;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class DashboardChecksTest
{
    /** The uids the committed datasource provisioning file defines. */
    static Set<String> provisionedUids() throws IOException
    {
        final String yaml = Files.readString(GeneratedFilesAreCommittedTest.deployDir()
            .resolve("provisioning/datasources/flowscope.yaml"));
        final Matcher m = Pattern.compile("(?m)^\\s+uid:\\s*(\\S+)\\s*$").matcher(yaml);
        final java.util.HashSet<String> uids = new java.util.HashSet<>();
        while (m.find())
        {
            uids.add(m.group(1));
        }
        return uids;
    }

    @Test
    void everyGeneratedDashboardPassesEveryCheckAgainstTheProvisionedDatasources() throws IOException
    {
        assertThat(provisionedUids()).containsExactly(Provisioning.DATASOURCE_UID);
        for (final Dashboard d : FlowscopeDashboards.all())
        {
            assertThat(DashboardChecks.problems(d, provisionedUids())).as(d.uid()).isEmpty();
        }
    }

    @Test
    void theFiveDashboardsHaveDistinctUids()
    {
        assertThat(FlowscopeDashboards.all()).extracting(Dashboard::uid).doesNotHaveDuplicates().containsExactly(
            "flowscope-overview", "flowscope-communicator", "flowscope-links", "flowscope-wait-states",
            "flowscope-anomalies");
    }

    private static Dashboard withPanels(final Dashboard d, final List<Panel> panels)
    {
        return new Dashboard(d.uid(), d.title(), d.description(), d.tags(), d.timezone(), d.editable(),
            d.schemaVersion(), d.version(), d.refresh(), d.time(), d.templating(), d.annotations(), panels);
    }

    @Test
    void duplicateIdsOverlapsPanelsOutsideTheGridUnprovisionedDatasourcesEmptyQueriesAndUndefinedVariablesAreFound()
    {
        final Dashboard d = FlowscopeDashboards.overview();
        final Panel first = d.panels().get(0);
        final DatasourceRef other = DatasourceRef.influxdb("not-provisioned");
        final List<Panel> panels = new ArrayList<>(d.panels());
        panels.add(new Panel(first.id(), "stat", "dup", null, new GridPos(4, 6, first.gridPos().x() + 1, 0),
            first.datasource(), first.targets(), null, null));
        panels.add(new Panel(100, "stat", "wide", null, new GridPos(4, 6, 20, 100), first.datasource(),
            first.targets(), null, null));
        panels.add(new Panel(101, "stat", "elsewhere", null, new GridPos(4, 6, 0, 200), other,
            List.of(Target.influxql("A", other, " ", null)), null, null));
        panels.add(new Panel(102, "stat", "undefined", null, new GridPos(4, 6, 0, 300), first.datasource(),
            List.of(Target.influxql("A", first.datasource(), "SELECT x FROM flow WHERE rank =~ /^$rank$/ AND $timeFilter", null)),
            null, null));

        final List<String> problems = DashboardChecks.problems(withPanels(d, panels), Set.of(Provisioning.DATASOURCE_UID));

        assertThat(problems)
            .anySatisfy(p -> assertThat(p).contains("id 1 is not unique"))
            .anySatisfy(p -> assertThat(p).contains("overlaps panel 1"))
            .anySatisfy(p -> assertThat(p).contains("\"wide\"").contains("outside the 24-column grid"))
            .anySatisfy(p -> assertThat(p).contains("not-provisioned is not provisioned"))
            .anySatisfy(p -> assertThat(p).contains("\"elsewhere\"").contains("empty query"))
            .anySatisfy(p -> assertThat(p).contains("uses $rank, which is not defined"));
    }

    @Test
    void grafanaBuiltInsAreNotTemplateVariablesButEveryVariableSyntaxIsRecognised()
    {
        assertThat(DashboardChecks.variablesUsed("SELECT 1 WHERE $timeFilter GROUP BY time($__interval)")).isEmpty();
        assertThat(DashboardChecks.variablesUsed("a =~ /^$comm$/ b = '${rank:regex}' c = [[peer]]"))
            .containsExactlyInAnyOrder("comm", "rank", "peer");
    }
}
