package io.flowscope.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.influx.InfluxConfig;
import io.flowscope.sink.influx.InfluxSink;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.testing.RealInfluxExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs every panel query, variable query and annotation query of every dashboard, as Grafana would send it
 * ({@link GrafanaQueries}: each variable takes the first value its own query returns, then all of them), against a
 * real InfluxDB filled through the InfluxDB sink with {@link ClusterFixture}; each must return rows. Fast and
 * independent of the service: the service-fed run is collector's {@code DashboardsAgainstServiceIT}.
 */
@ExtendWith(RealInfluxExtension.class)
class DashboardQueriesAgainstInfluxIT {
    private static final String DB = Provisioning.DATABASE;
    private static long[] span;

    @BeforeAll
    static void fillTheDatabaseThroughTheSink(final InfluxServer server) {
        final long now = System.currentTimeMillis() * 1_000_000L;
        try (InfluxSink sink = new InfluxSink(InfluxConfig.builder(server.url(), DB)
                .clock(EventClock.epoch())
                .hostNames(ClusterFixture::hostName)
                .processor(ProcessorConfig.builder()
                        .name("dashboards-fill")
                        .flushInterval(Duration.ofMillis(50))
                        .build())
                .build())) {
            span = ClusterFixture.fill(sink, now - 5_000_000_000L);
            assertThat(sink.flush(Duration.ofSeconds(120))).isTrue();
            assertThat(sink.counters().lost()).as(sink.lastFailure()).isZero();
        }
    }

    private static String timeFilter() {
        return GrafanaQueries.timeFilter(span[0] / 1_000_000L - 60_000, span[1] / 1_000_000L + 60_000);
    }

    @TestFactory
    Stream<DynamicTest> everyQueryOfEveryDashboardReturnsRowsFromTheSinksData(final InfluxServer server) {
        final List<DynamicTest> tests = new ArrayList<>();
        for (final GrafanaQueries.Selection selection : GrafanaQueries.Selection.values()) {
            for (final Dashboard d : FlowscopeDashboards.all()) {
                for (final GrafanaQueries.Query q :
                        GrafanaQueries.of(d, timeFilter(), "1s", selection, v -> server.rows(DB, v).stream()
                                .map(r -> r.path(1).asText())
                                .toList())) {
                    tests.add(DynamicTest.dynamicTest(
                            selection + " " + q.dashboard() + " " + q.kind() + " " + q.what(),
                            () -> assertThat(server.rows(DB, q.text()))
                                    .as(q.text())
                                    .isNotEmpty()));
                }
            }
        }
        assertThat(tests).hasSizeGreaterThan(2 * 40);
        return tests.stream();
    }
}
