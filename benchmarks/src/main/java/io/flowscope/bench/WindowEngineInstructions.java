package io.flowscope.bench;

import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;

/**
 * A small driver for repeatable instruction counts of the window engine (the build VM's cores are shared, so
 * wall-clock rates are noisy; {@code perf stat -e instructions} is not available there): replays {@code events}
 * events of the {@link WindowEngineBenchmark} stream (ProxyStep + QP mix, same engine configuration) through a
 * {@link WindowEngine}. Run it twice under {@code valgrind --tool=callgrind} with two event counts and
 * attribute the counts to the JIT's compiled methods ({@code -XX:+UnlockDiagnosticVMOptions
 * -XX:+DumpPerfMapAtExit} writes {@code /tmp/perf-<pid>.map}; {@code --dump-instr=yes} counts per instruction
 * address): the difference of the engine's and the replay's compiled-method counts over the difference of
 * events is the steady-state cost per event. The difference of the whole-process totals is not: the longer run
 * compiles more (C2's own work was ~60 % of it, {@code docs/perf-journal/4-window-engine.md}). A second argument
 * {@code baseline} replays into the benchmark's summing listener instead (the replay's own cost).
 *
 * <pre>
 * valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no --callgrind-out-file=cg.out \
 *     java -Xbatch -XX:+UseSerialGC -Xmx1g -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
 *     --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
 *     -cp benchmarks/target/benchmarks.jar io.flowscope.bench.WindowEngineInstructions 2500000
 * </pre>
 */
public final class WindowEngineInstructions {
    private WindowEngineInstructions() {}

    public static void main(final String[] args) {
        final long events = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
        final boolean baseline = args.length > 1 && "baseline".equals(args[1]);
        final ProxyStream stream = ProxyStream.generate(42, WindowEngineBenchmark.STREAM_NS, true);
        final long[] sums = new long[2];
        final FlowSummarySink sink = s -> {
            sums[0] += s.completions();
            sums[1] += s.bytes();
        };
        final WindowEngine engine = new WindowEngine(
                new WindowConfig()
                        .periodNs(1_000_000L)
                        .tombstoneTimeoutNs(2_000_000L)
                        .maxFlows(1024)
                        .maxOps(4096)
                        .maxSteps(65536),
                sink);
        engine.onHost(WindowEngineBenchmark.HOST_ID);
        final WindowEngineBenchmark.SumListener sum = new WindowEngineBenchmark.SumListener();
        final io.flowscope.api.input.TelemetryListener target = baseline ? sum : engine;
        long keyBase = 0;
        long timeBase = 1_000_000_000L;
        long left = events;
        while (left > 0) {
            final int to = (int) Math.min(stream.events, left);
            ProxyStream.replay(stream, 0, to, keyBase, timeBase, target);
            left -= to;
            keyBase += stream.keySpan;
            timeBase += stream.timeSpanNs;
        }
        engine.flush();
        System.out.println("events=" + events + " completions=" + sums[0] + " bytes=" + sums[1] + " dropped="
                + engine.droppedStepTableFull() + " unknown=" + engine.unknownStepRecords() + " sum=" + sum.sum);
    }
}
