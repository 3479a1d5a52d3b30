package io.flowscope.bench;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.RingEventSource;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.ring.RecordHandler;
import io.flowscope.ring.RingMerge;
import io.flowscope.ring.RingReader;
import io.flowscope.window.WindowEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import net.openhft.chronicle.queue.rollcycles.LegacyRollCycles;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The collector's drain thread per ring record, stage by stage, in ns per record ({@code avgt}, ops = records): the
 * rings of one host (4 rings of 8 lanes, the {@link RingDrainBenchmark} mix, a record every 125 ns of event time: 8 M
 * records/s on the node, fills going on in time) drained as the service drains them, a {@link RingMerge} poll of
 * 4,096 records at a time (the service's 1,024 a ring) into the ring adapter ({@link RingEventSource}), then
 * {@code path}:
 * <ul>
 * <li>{@code decode}: a listener that sums the calls (the ring protocol, the merge, decoding and keying);</li>
 * <li>{@code journal}: the {@link JournalWriter} alone, one excerpt per poll (a minutely Chronicle cycle in a temporary
 * directory of {@code java.io.tmpdir}, on disk as the service's);</li>
 * <li>{@code engine}: the {@link WindowEngine} alone (the service's configuration, summaries dropped);</li>
 * <li>{@code engines}: the service's {@link Pipeline} without a journal: window engine, anomaly stage (the service's
 * thresholds) and the latest-value tables, its batch ended after every poll;</li>
 * <li>{@code service}: the {@link Pipeline} with the journal, as {@code DrainLoop} runs it (no snapshots: one per
 * 200 ms).</li>
 * </ul>
 * Each stage's cost is its figure less {@code decode}'s; {@code service} is the drain thread's whole cost per record,
 * whose inverse is the rate one core can ingest.
 *
 * <pre>
 * java $(cat benchmarks/jvm.flags) -jar benchmarks/target/benchmarks.jar ServiceDrain -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-Xms2g",
            "-Xmx2g",
            "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
            "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
            "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "-Dchronicle.analytics.disable=true",
            "-Dchronicle.announcer.disable=true"
        })
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 5, time = 2)
public class ServiceDrainBenchmark {
    /** Records per poll: the service's 1,024 a ring, a host of 4 rings. */
    static final int POLL = 4096;

    @State(Scope.Thread)
    public static class ServiceState extends RingDrainBenchmark.RingState {
        @Param({"decode", "journal", "engine", "engines", "service"})
        public String path;

        RingReader[] readers;
        RingMerge merge;
        Path journalDir;
        JournalWriter journal;
        Pipeline pipeline;
        RecordHandler adapter;
        RingDrainBenchmark.Calls calls;
        WindowEngine engine;
        long records;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            create(8, 4, false);
            timeStepNs = 125;
            readers = new RingReader[rings];
            merge = new RingMerge();
            for (int r = 0; r < rings; r++) {
                readers[r] = RingReader.open(writers[r].path());
                merge.add(readers[r]);
            }
            final CollectorConfig config = CollectorConfig.defaults();
            if (path.equals("journal") || path.equals("service")) {
                journalDir = Files.createTempDirectory("servicedrain-journal");
                journal = new JournalWriter(journalDir, LegacyRollCycles.MINUTELY, 1L << 30, 0);
            }
            switch (path) {
                case "decode" -> adapter = new RingEventSource(calls = new RingDrainBenchmark.Calls());
                case "journal" -> adapter = new RingEventSource(journal);
                case "engine" -> {
                    engine = new WindowEngine(Pipeline.windowConfig(config), s -> {}, s -> {});
                    adapter = new RingEventSource(engine);
                }
                default -> {
                    pipeline = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
                    if (journal != null) {
                        pipeline.journal(journal);
                    }
                    adapter = new RingEventSource(pipeline);
                }
            }
        }

        @Setup(Level.Invocation)
        public void refill() {
            fill();
        }

        /** What the drain loop does after each poll. */
        void endBatch() {
            final long wallNs = System.currentTimeMillis() * 1_000_000L;
            if (pipeline != null) {
                pipeline.endBatch(wallNs);
            } else if (journal != null) {
                journal.flush(wallNs);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            for (final RingReader r : readers) {
                r.close();
            }
            destroy();
            if (journal != null) {
                journal.close();
                try (var files = Files.walk(journalDir)) {
                    files.sorted(java.util.Comparator.reverseOrder())
                            .forEach(p -> p.toFile().delete());
                }
            }
            if (pipeline != null && pipeline.failures().counts().total() > 0) {
                throw new IllegalStateException(
                        "the pipeline caught failures: " + pipeline.failures().counts());
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(RingDrainBenchmark.RECORDS)
    public long drain(final ServiceState state) {
        final RingMerge merge = state.merge;
        final RecordHandler adapter = state.adapter;
        int total = 0;
        while (total < RingDrainBenchmark.RECORDS) {
            final int n = merge.poll(adapter, POLL);
            if (n == 0) {
                throw new IllegalStateException("drained " + total + " of " + RingDrainBenchmark.RECORDS);
            }
            total += n;
            state.endBatch();
        }
        state.records += total;
        return state.calls != null ? state.calls.sum : total;
    }
}
