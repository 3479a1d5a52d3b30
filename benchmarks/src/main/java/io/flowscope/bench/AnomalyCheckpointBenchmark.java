package io.flowscope.bench;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.anomaly.AnomalyEngine;
import io.flowscope.api.anomaly.AnomalySink;
import java.util.Arrays;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a fleet aggregator pays per commit for the anomaly stage's state (issue #20): {@link AnomalyEngine#checkpoint}
 * and {@link AnomalyEngine#restore} of a cluster's stage after 100 periods of {@link AnomalySummaryStream} (past
 * the warm-up, the injected slow link open). {@code copy}, the baseline, copies a byte array of the checkpoint's
 * size: the floor of any encoding. The checkpoint's size is printed at set-up.
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar AnomalyCheckpoint
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Thread)
public class AnomalyCheckpointBenchmark {
    private static final int PERIODS = 100;

    @Param({"512", "4096"})
    public int ranks;

    private final AnomalyConfig config = new AnomalyConfig();
    private final AnomalySink sink = AnomalySink.of((type, a) -> {});
    private AnomalyEngine engine;
    private byte[] checkpoint;

    @Setup(Level.Trial)
    public void setUp() {
        final AnomalySummaryStream s = new AnomalySummaryStream(ranks, 2);
        engine = new AnomalyEngine(config, sink);
        for (long p = 1; p <= PERIODS; p++) {
            for (int h = 0; h < s.hosts; h++) {
                for (int i = 0; i < s.perHost; i++) {
                    engine.onSummary(s.summary(h, i, p));
                }
            }
            for (int h = 0; h < s.hosts; h++) {
                engine.advanceTo(s.hostIds[h], (p + 1) * AnomalySummaryStream.PERIOD_NS);
            }
        }
        if (engine.openAnomalies().size() != 1) {
            throw new IllegalStateException("expected the injected slow link open: " + engine.openAnomalies());
        }
        checkpoint = engine.checkpoint();
        System.out.printf(
                "%n%d ranks after %d periods: checkpoint of %,d bytes (%.1f per rank)%n",
                ranks, PERIODS, checkpoint.length, (double) checkpoint.length / ranks);
    }

    @Benchmark
    public byte[] checkpoint() {
        return engine.checkpoint();
    }

    @Benchmark
    public AnomalyEngine restore() {
        final AnomalyEngine e = new AnomalyEngine(config, sink);
        e.restore(checkpoint);
        return e;
    }

    @Benchmark
    public byte[] copy() {
        return Arrays.copyOf(checkpoint, checkpoint.length);
    }
}
