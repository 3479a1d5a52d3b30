package io.flowscope.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.dashboards.model.AnnotationQuery;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.dashboards.model.Panel;
import io.flowscope.dashboards.model.Target;
import io.flowscope.dashboards.model.TemplateVariable;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.influx.InfluxConfig;
import io.flowscope.sink.influx.InfluxSink;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.testing.RealInfluxExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every panel query, variable query and annotation query of every dashboard, as Grafana would send it
 * ($timeFilter, $__interval and the variables substituted: each variable takes the first value its own query
 * returns), against a real InfluxDB filled through the InfluxDB sink with {@link ClusterFixture}; each must
 * return rows.
 */
@ExtendWith(RealInfluxExtension.class)
class DashboardQueriesAgainstInfluxTest
{
    private static final String DB = Provisioning.DATABASE;
    private static long[] span;

    @BeforeAll
    static void fillTheDatabaseThroughTheSink(final InfluxServer server)
    {
        final long now = System.currentTimeMillis() * 1_000_000L;
        try (InfluxSink sink = new InfluxSink(InfluxConfig.builder(server.url(), DB).clock(EventClock.epoch())
            .hostNames(ClusterFixture::hostName)
            .processor(ProcessorConfig.builder().name("dashboards-fill").flushInterval(Duration.ofMillis(50)).build())
            .build()))
        {
            span = ClusterFixture.fill(sink, now - 5_000_000_000L);
            assertThat(sink.flush(Duration.ofSeconds(120))).isTrue();
            assertThat(sink.counters().lost()).as(sink.lastFailure()).isZero();
        }
    }

    private static String timeFilter()
    {
        return "time >= " + (span[0] / 1_000_000L - 60_000) + "ms and time <= " + (span[1] / 1_000_000L + 60_000) + "ms";
    }

    static String substitute(final String query, final Map<String, String> values)
    {
        String q = query.replace("$timeFilter", timeFilter()).replace("$__interval", "1s");
        final Matcher m = Pattern.compile("\\$([A-Za-z0-9_]+)").matcher(q);
        final StringBuilder sb = new StringBuilder();
        while (m.find())
        {
            final String value = values.get(m.group(1));
            if (value == null)
            {
                throw new AssertionError("no value for $" + m.group(1) + " in " + query);
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(value.replaceAll("([\\\\^$.|?*+()\\[\\]{}/])", "\\\\$1")));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    @TestFactory
    Stream<DynamicTest> everyQueryOfEveryDashboardReturnsRowsFromTheSinksData(final InfluxServer server)
    {
        final List<DynamicTest> tests = new ArrayList<>();
        for (final Dashboard d : FlowscopeDashboards.all())
        {
            final Map<String, String> values = new LinkedHashMap<>();
            for (final TemplateVariable v : d.templating().list())
            {
                final String q = substitute(v.query(), values);
                final List<JsonNode> rows = server.rows(DB, q);
                assertThat(rows).as("dashboard %s variable $%s: %s", d.uid(), v.name(), q).isNotEmpty();
                values.put(v.name(), rows.get(0).path(1).asText());
            }
            for (final AnnotationQuery a : d.annotations().list())
            {
                final String q = substitute(a.query(), values);
                tests.add(DynamicTest.dynamicTest(d.uid() + " annotation " + a.name(), () ->
                {
                    final List<JsonNode> rows = server.rows(DB, q);
                    assertThat(rows).as(q).isNotEmpty();
                }));
            }
            for (final Panel p : d.panels())
            {
                for (final Target t : p.targets())
                {
                    final String q = substitute(t.query(), values);
                    tests.add(DynamicTest.dynamicTest(d.uid() + " panel " + p.id() + " " + p.title() + " " + t.refId(),
                        () -> assertThat(server.rows(DB, q)).as("%s with %s", q, values).isNotEmpty()));
                }
            }
        }
        assertThat(tests).hasSizeGreaterThan(30);
        return tests.stream();
    }
}
