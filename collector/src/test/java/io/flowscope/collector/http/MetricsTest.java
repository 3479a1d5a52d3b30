package io.flowscope.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.pipeline.ProducerDrops;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.collector.pipeline.TrafficCounters;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.SimulatedRun;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The {@code /metrics} families as the library writes them, from a simulated run through the service's own
 * {@link Pipeline} and {@link TrafficCounters} (no HTTP): every byte the window engine's link summaries carry is in
 * {@code flowscope_link_bytes_total}, hosts by name, histograms cumulative with {@code +Inf} = {@code _count} =
 * the collectives counted, a full table counts what it drops, label values escaped.
 */
class MetricsTest {
    private static final String SCENARIO = "nodes=2,gpus=2,channels=2,size=1M,seed=3,algo=ring,bw=2e9";
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private record Sample(String name, Map<String, String> labels, double value) {}

    private static List<Sample> samples(final String text) {
        final List<Sample> out = new ArrayList<>();
        for (final String line : text.split("\n")) {
            final Matcher m = SAMPLE.matcher(line);
            if (line.startsWith("#") || !m.matches()) {
                continue;
            }
            final Map<String, String> labels = new HashMap<>();
            if (m.group(2) != null) {
                final Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
        }
        return out;
    }

    /** A simulated run of {@code ms} through a pipeline tapped by {@code traffic} and {@code alsoSummaries}. */
    private static Pipeline run(
            final ClusterSimulator sim,
            final long ms,
            final TrafficCounters traffic,
            final FlowSummarySink alsoSummaries) {
        final Pipeline p =
                new Pipeline(Pipeline.windowConfig(CollectorConfig.defaults()), AnomalyStages::create, e -> {});
        final CollectiveSink collectives = traffic;
        p.tap(
                s -> {
                    traffic.onSummary(s);
                    alsoSummaries.onSummary(s);
                },
                collectives);
        for (long t = SimulatedRun.STEP_NS; t <= ms * 1_000_000L; t += SimulatedRun.STEP_NS) {
            sim.advanceTo(t, p);
            p.endBatch(t);
        }
        p.finish();
        return p;
    }

    private static Stats stats(final TrafficCounters.View traffic, final List<ProducerDrops> producers) {
        return new Stats(
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, 0, 0, 0, "test", IngestFailures.Counts.NONE, producers, traffic);
    }

    @Test
    void shouldExposeEveryLinkByteWithHostNamesAndCumulativeHistogramsMatchingTheCollectivesCounted() {
        final ClusterSimulator sim = new ClusterSimulator(new SimulatorSource(SCENARIO, 1.0, 10).scenario());
        final TrafficCounters traffic = new TrafficCounters();
        final Map<String, Long> linkBytes = new HashMap<>();
        final Pipeline p = run(sim, 300, traffic, s -> {
            if (s.kind() == FlowSummary.KIND_LINK) {
                linkBytes.merge(s.rank() + ">" + s.peer() + (s.isSend() ? "send" : "recv"), s.bytes(), Long::sum);
            }
        });
        final Snapshot snapshot = p.snapshot(System.currentTimeMillis(), stats(traffic.publish(p.engine()), List.of()));
        final Metrics metrics = new Metrics(
                () -> snapshot, () -> id -> sim.hostName(sim.nodeOfHost(id)), new HttpRejections(), () -> "");
        final List<Sample> scrape = samples(metrics.text());

        final Map<String, Long> exposed = new HashMap<>();
        for (final Sample s : scrape) {
            if (s.name().equals("flowscope_link_bytes_total")) {
                assertThat(s.labels().get("host")).matches("sim-node-[01]");
                exposed.put(
                        s.labels().get("rank") + ">" + s.labels().get("peer")
                                + s.labels().get("direction"),
                        (long) s.value());
            }
        }
        assertThat(linkBytes).hasSize(8);
        assertThat(linkBytes.values()).allMatch(b -> b > 0);
        assertThat(exposed).isEqualTo(linkBytes);

        // collective histograms: cumulative, +Inf = _count = the collectives the ranks counted
        double collectives = 0;
        final List<Double> buckets = new ArrayList<>();
        double count = -1;
        for (final Sample s : scrape) {
            switch (s.name()) {
                case "flowscope_collectives_total" -> collectives += s.value();
                case "flowscope_collective_duration_seconds_bucket" -> buckets.add(s.value());
                case "flowscope_collective_duration_seconds_count" -> count = s.value();
                default -> {}
            }
        }
        assertThat(collectives).isPositive();
        assertThat(buckets)
                .hasSize(TrafficCounters.COLLECTIVE_BOUNDS_NS.length + 1)
                .isSorted();
        assertThat(buckets.get(buckets.size() - 1)).isEqualTo(count).isEqualTo(collectives);
        // bus bandwidth: every collective with a duration, in the bucket of its nccl-tests busbw (2e9 B/s links)
        final List<Double> bus = scrape.stream()
                .filter(s -> s.name().equals("flowscope_collective_bus_bandwidth_bytes_per_second_bucket"))
                .map(Sample::value)
                .toList();
        assertThat(bus).hasSize(TrafficCounters.BUS_BANDWIDTH_BOUNDS.length + 1).isSorted();
        assertThat(bus.get(bus.size() - 1)).isEqualTo(collectives);
        assertThat(bus.get(4))
                .as("busbw bounded by the links' 2e9 B/s: all in le=2.5e9")
                .isEqualTo(collectives);
        assertThat(bus.get(0)).as("and not all under 1e8 B/s").isLessThan(collectives);
        assertThat(scrape)
                .anyMatch(s -> s.name().equals("flowscope_wait_phase_seconds_count")
                        && "send".equals(s.labels().get("direction"))
                        && "network".equals(s.labels().get("phase"))
                        && s.value() > 0);
        assertThat(scrape).anyMatch(s -> s.name().equals("flowscope_build_info"));
        assertThat(scrape).anyMatch(s -> s.name().startsWith("jvm_memory"));
    }

    @Test
    void shouldKeepTheFirstSeriesAndCountWhatAFullTableDrops() {
        final TrafficCounters all = new TrafficCounters();
        final TrafficCounters capped = new TrafficCounters(2, 0, 1, 1);
        final ClusterSimulator sim = new ClusterSimulator(new SimulatorSource(SCENARIO, 1.0, 10).scenario());
        run(sim, 100, all, capped::onSummary);
        final TrafficCounters.View a = all.publish(null);
        final TrafficCounters.View c = capped.publish(null);
        assertThat(a.links()).isEqualTo(8);
        assertThat(c.links()).isEqualTo(2);
        assertThat(c.dropped()[0]).isPositive();
        for (int i = 0; i < c.links(); i++) {
            assertThat(c.linkBytes()[i]).isEqualTo(a.linkBytes()[i]); // the same first links, all their bytes
        }
        assertThat(a.dropped()).containsOnly(0L);
    }

    @Test
    void shouldEscapeLabelValuesAndCarryTextFamiliesThroughTheLibrary() {
        final String odd = "node \"7\" \\ a\nb";
        final String fleet = """
            # HELP flowscope_fleet_agent_sent_total Records handed to the producer
            # TYPE flowscope_fleet_agent_sent_total counter
            flowscope_fleet_agent_sent_total{agent="a \\"q\\" \\\\ z\\nw"} 42
            # HELP flowscope_fleet_agent_connected 1 while a producer session is open
            # TYPE flowscope_fleet_agent_connected gauge
            flowscope_fleet_agent_connected{agent="a"} 1.0
            """;
        final Snapshot s = new Snapshot(
                System.currentTimeMillis(),
                0,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                stats(TrafficCounters.View.EMPTY, List.of(new ProducerDrops(odd, 12, "ring", true, 3, 0, 0, 0))));
        final String text = new Metrics(() -> s, () -> null, new HttpRejections(), () -> fleet).text();
        assertThat(text)
                .contains("flowscope_producer_dropped_total{host=\"node \\\"7\\\" \\\\ a\\nb\",pid=\"12\","
                        + "reason=\"full\"} 3.0");
        assertThat(text)
                .contains("flowscope_fleet_agent_sent_total{agent=\"a \\\"q\\\" \\\\ z\\nw\"} 42.0")
                .contains("# TYPE flowscope_fleet_agent_sent_total counter")
                .contains("flowscope_fleet_agent_connected{agent=\"a\"} 1.0");
    }
}
