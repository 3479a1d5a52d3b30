package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.dashboards.PromQl;
import io.flowscope.dashboards.PrometheusDashboards;
import io.flowscope.dashboards.PrometheusMetric;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.sink.webhook.WebhookConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #18 item 3: every metric and label the Prometheus dashboards query is in a real scrape of the running
 * service's {@code /metrics}, so a rename of a metric or a label (issue #18 item 2, item 5) cannot silently empty a
 * panel. The service runs in-process on a simulated cluster with NICs and a slow link that stays open (so
 * {@code flowscope_anomaly_open} has a series) and a webhook sink (so the sink counters are exposed); it is scraped
 * until every query's metrics have samples carrying the labels the query matches, groups or names series by, or
 * for at most 60 s; then every miss is reported with the query that makes it. Prometheus' own target labels
 * ({@code instance}, {@code job}) are not the service's to expose.
 */
class PrometheusDashboardsAgainstScrapeTest {
    private static final String SCENARIO = "nodes=2,gpus=4,nics=2,channels=2,size=4M,seed=7,algo=ring,"
            + "fault=slow-link,rank=3,peer=4,fraction=0.3,at=300ms";
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+\\S+.*$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    @TempDir
    Path dir;

    /** metric name → the label names of its samples (union over its series) in one scrape. */
    static Map<String, Set<String>> labelsByMetric(final String exposition) {
        final Map<String, Set<String>> out = new HashMap<>();
        for (final String line : exposition.split("\n")) {
            final Matcher m = SAMPLE.matcher(line);
            if (line.startsWith("#") || !m.matches()) {
                continue;
            }
            final Set<String> labels = out.computeIfAbsent(m.group(1), k -> new HashSet<>());
            if (m.group(3) != null) {
                final Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.add(l.group(1));
                }
            }
        }
        return out;
    }

    /** What the scrape lacks for the dashboards' queries: one line per metric or label a query uses and misses. */
    static List<String> misses(final Map<String, Set<String>> scraped, final List<PromQl.Query> queries) {
        final List<String> misses = new ArrayList<>();
        for (final PromQl.Query q : queries) {
            final Set<String> labels = new HashSet<>();
            for (final String metric : q.uses().metrics()) {
                if (!scraped.containsKey(metric)) {
                    misses.add("no sample of " + metric + " for " + q);
                } else {
                    labels.addAll(scraped.get(metric));
                }
            }
            for (final String label : q.uses().labels()) {
                if (!labels.contains(label)
                        && !PrometheusMetric.TARGET_LABELS.contains(label)
                        && q.uses().metrics().stream().allMatch(scraped::containsKey)) {
                    misses.add("no label " + label + " on " + q.uses().metrics() + " for " + q);
                }
            }
        }
        return misses;
    }

    private static List<PromQl.Query> dashboardQueries() {
        final List<PromQl.Query> queries = new ArrayList<>();
        for (final Dashboard d : PrometheusDashboards.all()) {
            queries.addAll(PromQl.of(d));
        }
        return queries;
    }

    @Test
    void everyMetricAndLabelThePrometheusDashboardsQueryIsInAScrapeOfTheRunningService() throws Exception {
        final List<PromQl.Query> queries = dashboardQueries();
        assertThat(queries).hasSizeGreaterThan(40);
        try (WebhookReceiver receiver = new WebhookReceiver(WebhookConfig.DEFAULT_SIGNATURE_HEADER)) {
            final Map<String, String> o = new LinkedHashMap<>();
            o.put("http.port", "0");
            o.put("journal.dir", dir.resolve("journal").toString());
            o.put("publish.intervalMs", "50");
            o.put("simulate.scenario", SCENARIO);
            o.put("simulate.durationSeconds", "120");
            o.put("sinks.webhooks.0.url", receiver.url());
            try (CollectorService s = CollectorService.start(CollectorConfig.load(null, Map.of(), o), e -> {})) {
                final long deadline = System.nanoTime() + 60_000_000_000L;
                List<String> misses;
                String scrape;
                do {
                    Thread.sleep(250);
                    scrape = Http.get(s.url() + "metrics").body();
                    misses = misses(labelsByMetric(scrape), queries);
                } while (!misses.isEmpty() && System.nanoTime() < deadline);
                assertThat(misses)
                        .as("after 60 s of scrapes; the last:%n%s", scrape)
                        .isEmpty();
            }
        }
    }

    @Test
    void aRenamedMetricAndARenamedLabelAreMissesNamingTheirQuery() {
        final String exposition = """
            # HELP flowscope_events_total Engine input events since start
            # TYPE flowscope_events_total counter
            flowscope_events_total 12
            flowscope_link_bytes_total{comm="0x1",rank="3",peer="4",direction="send",note="a \\"quoted\\" }"} 7
            """;
        final Map<String, Set<String>> scraped = labelsByMetric(exposition);
        assertThat(scraped.get("flowscope_link_bytes_total"))
                .containsExactlyInAnyOrder("comm", "rank", "peer", "direction", "note");

        final PromQl.Query renamedMetric = new PromQl.Query(
                "d",
                "panel 1",
                "sum(flowscope_link_bandwidth_bytes_per_second)",
                PromQl.uses("sum(flowscope_link_bandwidth_bytes_per_second)"));
        final PromQl.Query renamedLabel = new PromQl.Query(
                "d",
                "panel 2",
                "sum by (host) (rate(flowscope_link_bytes_total" + "[$__rate_interval]))",
                PromQl.uses("sum by (host, instance) (rate(flowscope_link_bytes_total[5m]))"));
        final PromQl.Query present = new PromQl.Query(
                "d",
                "panel 3",
                "rate(flowscope_events_total[$__rate_interval])",
                PromQl.uses("sum by (instance) (rate(flowscope_events_total[$__rate_interval]))"));

        assertThat(misses(scraped, List.of(renamedMetric, renamedLabel, present)))
                .containsExactly(
                        "no sample of flowscope_link_bandwidth_bytes_per_second for " + renamedMetric,
                        "no label host on [flowscope_link_bytes_total] for " + renamedLabel);
    }
}
