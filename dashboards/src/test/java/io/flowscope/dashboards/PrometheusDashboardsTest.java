package io.flowscope.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.dashboards.model.Dashboard;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus dashboards query only what {@link PrometheusMetric} lists, so a rename of the service's metrics is
 * one edit of that table; counters only as rates over {@code $__rate_interval}. Against a real scrape of the
 * service: collector's {@code PrometheusDashboardsAgainstScrapeTest}.
 */
class PrometheusDashboardsTest {
    private static final Map<String, PrometheusMetric> BY_NAME = Arrays.stream(PrometheusMetric.values())
            .collect(Collectors.toMap(PrometheusMetric::metricName, Function.identity()));

    @Test
    void everyMetricAndLabelTheDashboardsQueryIsInTheTableAndEveryRowIsQueried() {
        final Set<PrometheusMetric> used = EnumSet.noneOf(PrometheusMetric.class);
        for (final Dashboard d : PrometheusDashboards.all()) {
            for (final PromQl.Query q : PromQl.of(d)) {
                assertThat(q.uses().metrics()).as(q.toString()).isNotEmpty().isSubsetOf(BY_NAME.keySet());
                final Set<String> labels = q.uses().metrics().stream()
                        .flatMap(m -> BY_NAME.get(m).labels().stream())
                        .collect(Collectors.toSet());
                labels.addAll(PrometheusMetric.TARGET_LABELS);
                assertThat(q.uses().labels()).as(q.toString()).isSubsetOf(labels);
                q.uses().metrics().forEach(m -> used.add(BY_NAME.get(m)));
            }
        }
        assertThat(used).as("rows no dashboard queries").containsExactlyInAnyOrder(PrometheusMetric.values());
    }

    @Test
    void countersArePlottedAsRatesOverTheRateIntervalAndGaugesAsTheirSamples() {
        assertThat(PrometheusMetric.EVENTS.value("instance=~\"$instance\""))
                .isEqualTo("rate(flowscope_events_total{instance=~\"$instance\"}[$__rate_interval])");
        assertThat(PrometheusMetric.JOURNAL_BYTES.value("")).isEqualTo("flowscope_journal_bytes");
        for (final Dashboard d : PrometheusDashboards.all()) {
            for (final PromQl.Query q : PromQl.of(d)) {
                for (final String m : q.uses().metrics()) {
                    if (BY_NAME.get(m).kind() == PrometheusMetric.Kind.COUNTER
                            && !q.what().startsWith("variable")) {
                        final String outsideRates =
                                q.text().replaceAll("rate\\(" + m + "(\\{[^}]*})?\\[\\$__rate_interval]\\)", "");
                        assertThat(outsideRates)
                                .as("%s: counter %s outside rate(...[$__rate_interval])", q, m)
                                .doesNotContain(m);
                    }
                }
            }
        }
    }
}
