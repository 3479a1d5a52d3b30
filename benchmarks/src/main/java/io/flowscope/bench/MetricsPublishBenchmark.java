package io.flowscope.bench;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.http.HttpRejections;
import io.flowscope.collector.http.Metrics;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.collector.pipeline.TrafficCounters;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.SimulatedRun;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What {@code /metrics} (issue #18 item 2) costs, in µs per call ({@code avgt}), on state a simulated 2 × 4 ring
 * (8 ranks, 16 links, 8 M allreduces) built in 1 s of simulated time through the service's own {@link Pipeline}:
 * <ul>
 * <li>{@code snapshot}: the baseline, what the drain thread already does every {@code publish.intervalMs}
 * ({@link Pipeline#snapshot});</li>
 * <li>{@code publish}: what it now does more at each publish, {@link TrafficCounters#publish} (the counters copied,
 * the engine's ten phase histograms folded into bucket counts);</li>
 * <li>{@code summaries}: the per-period path, {@link TrafficCounters#onSummary} over the run's recorded link and QP
 * summaries (1,000 a call: one per flow and period), against {@code summariesBaseline}, the same loop reading each
 * summary's kind;</li>
 * <li>{@code scrape}: the HTTP side's {@link Metrics#scrape} in OpenMetrics (as Prometheus asks), JVM metrics
 * included: not on the drain thread.</li>
 * </ul>
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar MetricsPublish -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-Xms1g",
            "-Xmx1g",
            "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
            "-Dchronicle.analytics.disable=true",
            "-Dchronicle.announcer.disable=true"
        })
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class MetricsPublishBenchmark {
    static final String SCENARIO = "nodes=2,gpus=4,channels=2,size=8M,seed=11,algo=ring";

    @State(Scope.Thread)
    public static class PublishState {
        Pipeline pipeline;
        TrafficCounters traffic;
        Stats stats;
        Metrics metrics;
        FlowSummary[] summaries;
        long wallMs;

        @Setup
        public void setUp() {
            final ClusterSimulator sim = new ClusterSimulator(new SimulatorSource(SCENARIO, 1.0, 10).scenario());
            traffic = new TrafficCounters();
            pipeline = new Pipeline(Pipeline.windowConfig(CollectorConfig.defaults()), AnomalyStages::create, e -> {});
            final List<FlowSummary> recorded = new ArrayList<>();
            pipeline.tap(
                    s -> {
                        traffic.onSummary(s);
                        if (recorded.size() < 1000
                                && (s.kind() == FlowSummary.KIND_LINK || s.kind() == FlowSummary.KIND_QP)) {
                            final FlowSummary copy = new FlowSummary();
                            copy.copyFrom(s);
                            recorded.add(copy);
                        }
                    },
                    traffic);
            for (long t = SimulatedRun.STEP_NS; t <= 1_000_000_000L; t += SimulatedRun.STEP_NS) {
                sim.advanceTo(t, pipeline);
                pipeline.endBatch(t);
            }
            summaries = recorded.toArray(new FlowSummary[0]);
            wallMs = System.currentTimeMillis();
            stats = new Stats(
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    null,
                    0,
                    0,
                    0,
                    "bench",
                    IngestFailures.Counts.NONE,
                    List.of(),
                    traffic.publish(pipeline.engine()));
            final Snapshot snapshot = pipeline.snapshot(wallMs, stats);
            metrics = new Metrics(
                    () -> snapshot, () -> id -> sim.hostName(sim.nodeOfHost(id)), new HttpRejections(), () -> "");
        }
    }

    @Benchmark
    public Object snapshot(final PublishState s) {
        return s.pipeline.snapshot(s.wallMs, s.stats);
    }

    @Benchmark
    public Object publish(final PublishState s) {
        return s.traffic.publish(s.pipeline.engine());
    }

    @Benchmark
    public void summaries(final PublishState s) {
        for (final FlowSummary f : s.summaries) {
            s.traffic.onSummary(f);
        }
    }

    @Benchmark
    public int summariesBaseline(final PublishState s) {
        int k = 0;
        for (final FlowSummary f : s.summaries) {
            k += f.kind();
        }
        return k;
    }

    @Benchmark
    public Object scrape(final PublishState s) {
        return s.metrics.scrape("application/openmetrics-text; version=1.0.0; charset=utf-8", List.of());
    }
}
