package io.flowscope.dashboards;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.dashboards.model.Dashboard;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GrafanaQueriesTest {
    @Test
    void macrosAndVariablesAreSubstitutedAsGrafanasInfluxDatasourceDoes() {
        final String q = "SELECT x FROM \"flow\" WHERE \"comm\" =~ /^$comm$/ AND \"rank\" =~ /^$rank$/ AND $timeFilter "
                + "GROUP BY time($__interval)";
        assertThat(GrafanaQueries.expand(
                        q,
                        GrafanaQueries.timeFilter(1000, 2000),
                        "1s",
                        Map.of("comm", List.of("0x1a.b"), "rank", List.of("3", "12"))))
                .isEqualTo("SELECT x FROM \"flow\" WHERE \"comm\" =~ /^0x1a\\.b$/ AND \"rank\" =~ /^(3|12)$/ AND "
                        + "time >= 1000ms and time <= 2000ms GROUP BY time(1s)");
        // a variable without values stays visible in the query that then fails
        assertThat(GrafanaQueries.expand("\"host\" =~ /^$host$/", "", "1s", Map.of("host", List.of())))
                .isEqualTo("\"host\" =~ /^$host$/");
        assertThat(GrafanaQueries.escapeRegex("a/b(c)|d$")).isEqualTo("a\\/b\\(c\\)\\|d\\$");
    }

    @Test
    void theDashboardsDefaultRangeIsResolvedAgainstNow() {
        assertThat(GrafanaQueries.timeFilter(new Dashboard.TimeRange("now-15m", "now"), 1_000_000_000L))
                .isEqualTo("time >= 999100000ms and time <= 1000000000ms");
        assertThat(GrafanaQueries.resolve("now-2h", 10_000_000L)).isEqualTo(10_000_000L - 7_200_000L);
        assertThatThrownBy(() -> GrafanaQueries.resolve("2025-01-01", 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void chainedVariablesSeeTheSelectionOfTheOnesBeforeThem() {
        final Dashboard links = FlowscopeDashboards.all().stream()
                .filter(d -> d.uid().equals("flowscope-links"))
                .findFirst()
                .orElseThrow();
        final List<String> asked = new ArrayList<>();
        final List<GrafanaQueries.Query> first =
                GrafanaQueries.of(links, "TF", "1s", GrafanaQueries.Selection.FIRST, q -> {
                    asked.add(q);
                    return List.of("a", "b");
                });
        assertThat(asked.get(1)).endsWith("WHERE \"host\" =~ /^a$/");
        assertThat(first).filteredOn(q -> q.kind() == GrafanaQueries.Kind.PANEL).allSatisfy(q -> assertThat(q.text())
                .doesNotContainPattern("\\$[A-Za-z_]")
                .contains("TF"));
        assertThat(first)
                .filteredOn(q -> q.kind() == GrafanaQueries.Kind.VARIABLE)
                .hasSize(4);

        asked.clear();
        GrafanaQueries.of(links, "TF", "1s", GrafanaQueries.Selection.ALL, q -> {
            asked.add(q);
            return List.of("a", "b");
        });
        assertThat(asked.get(3)).endsWith("\"host\" =~ /^(a|b)$/ AND \"comm\" =~ /^(a|b)$/ AND \"rank\" =~ /^(a|b)$/");
    }
}
