package io.flowscope.dashboards;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PromQlTest {
    @Test
    void metricsAreTheIdentifiersOutsideBracesThatAreNeitherFunctionsNorAggregationsNorKeywords() {
        final PromQl.Uses u = PromQl.uses("sum by (host, device) (rate(a_total{comm=~\"$comm\", x!=\"}\"}"
                + "[$__rate_interval])) / on (host) group_left (device) b or vector(0) > bool 2");

        assertThat(u.metrics()).containsExactly("a_total", "b");
        assertThat(u.labels()).containsExactlyInAnyOrder("host", "device", "comm", "x");
    }

    @Test
    void anAggregationWithItsGroupingAfterTheParenthesisAndAnOffsetAreRead() {
        final PromQl.Uses u = PromQl.uses("count(m{severity=~\"(?i)critical\"}) without (peer) offset 5m");

        assertThat(u.metrics()).containsExactly("m");
        assertThat(u.labels()).containsExactlyInAnyOrder("severity", "peer");
    }

    @Test
    void aVariableQueryListsTheValuesOfItsLabelFromItsSelector() {
        final PromQl.Uses u = PromQl.variableUses("label_values(m{host=~\"$host\", comm=~\"$comm\"}, rank)");

        assertThat(u.metrics()).containsExactly("m");
        assertThat(u.labels()).containsExactly("host", "comm", "rank");
        assertThatThrownBy(() -> PromQl.variableUses("query_result(m)")).hasMessageContaining("label_values");
    }

    @Test
    void legendsNameLabelsInDoubleBraces() {
        assertThat(PromQl.legendLabels("{{rank}} → {{ peer }} ch {{channel}}"))
                .containsExactly("rank", "peer", "channel");
        assertThat(PromQl.legendLabels(null)).isEmpty();
    }

    @Test
    void anUnclosedSelectorIsAnErrorNotASilentMiss() {
        assertThatThrownBy(() -> PromQl.uses("m{a=\"b\"")).hasMessageContaining("no '}' closes");
    }
}
