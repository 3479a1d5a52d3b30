package io.flowscope.bench;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.anomaly.AnomalyEngine;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.summary.FlowSummary;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Anomaly stage rate on one thread: one invocation = one 1 ms period of a whole cluster's flow summaries
 * ({@link AnomalySummaryStream}: {@code ranks} ranks, 8 per host, 2 channels, 6 summaries per rank and period),
 * each host's summaries then {@code advanceTo(host, period end)}, as the service's drain loop would call it.
 * Score = periods/s; summaries/s = score × summaries per period (printed at tear-down); the cluster keeps up in
 * real time while periods/s ≥ 1000, so the largest real-time cluster ≈ ranks × score / 1000.
 * <ul>
 * <li>{@code engine}: into an {@link AnomalyEngine} with the default configuration;</li>
 * <li>{@code baseline}: the same loop into a sink that only reads two fields (the replay's own cost).</li>
 * </ul>
 * At tear-down the engine must have opened exactly one anomaly, the slow link 7 → 8 injected at period 40 (a
 * fast wrong answer fails the run).
 * <pre>
 * java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar AnomalyEngine
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class AnomalyEngineBenchmark {
    @State(Scope.Thread)
    public static class Cluster {
        @Param({"512", "4096"})
        public int ranks;

        AnomalySummaryStream stream;
        AnomalyEngine engine;
        long period;
        int opened;
        int openedSlowLink;

        @Setup(Level.Trial)
        public void setUp() {
            stream = new AnomalySummaryStream(ranks, 2);
            engine = new AnomalyEngine(new AnomalyConfig(), new AnomalySink() {
                @Override
                public void onOpened(final Anomaly a) {
                    opened++;
                    if (a.kind() == AnomalyKind.SLOW_LINK && a.culprit().rank() == AnomalySummaryStream.SLOW_RANK) {
                        openedSlowLink++;
                    }
                }

                @Override
                public void onResolved(final Anomaly a) {}
            });
            period = 1;
        }

        @TearDown(Level.Trial)
        public void check() {
            System.out.printf(
                    "%n%d ranks: %d summaries per period, %d periods run, %d summaries consumed%n",
                    ranks, stream.summariesPerPeriod(), period - 1, engine.summaries());
            if (period > AnomalySummaryStream.SLOW_FROM_PERIOD + 20 && (opened != 1 || openedSlowLink != 1)) {
                throw new IllegalStateException("expected exactly the injected slow link, got " + opened
                        + " anomalies, " + openedSlowLink + " of them the slow link: " + engine.openAnomalies());
            }
            if (engine.summaries() != (period - 1) * stream.summariesPerPeriod()) {
                throw new IllegalStateException("summaries lost: " + engine.summaries());
            }
        }
    }

    @State(Scope.Thread)
    public static class Baseline {
        @Param({"512", "4096"})
        public int ranks;

        AnomalySummaryStream stream;
        long period = 1;

        @Setup(Level.Trial)
        public void setUp() {
            stream = new AnomalySummaryStream(ranks, 2);
        }
    }

    @Benchmark
    public void engine(final Cluster c) {
        final AnomalySummaryStream s = c.stream;
        final long p = c.period++;
        for (int h = 0; h < s.hosts; h++) {
            for (int i = 0; i < s.perHost; i++) {
                c.engine.onSummary(s.summary(h, i, p));
            }
        }
        final long end = (p + 1) * AnomalySummaryStream.PERIOD_NS;
        for (int h = 0; h < s.hosts; h++) {
            c.engine.advanceTo(s.hostIds[h], end);
        }
    }

    @Benchmark
    public void baseline(final Baseline b, final Blackhole bh) {
        final AnomalySummaryStream s = b.stream;
        final long p = b.period++;
        long sum = 0;
        for (int h = 0; h < s.hosts; h++) {
            for (int i = 0; i < s.perHost; i++) {
                final FlowSummary f = s.summary(h, i, p);
                sum += f.bytes() + f.periodStartNs();
            }
        }
        bh.consume(sum);
    }
}
