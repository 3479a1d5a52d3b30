package io.flowscope.bench;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;

/**
 * Heap footprint of a {@link WindowEngine} holding many live flows (issue #3: 100,000 live flows in ≤ 512 MB).
 * <p>
 * Configures the engine for {@code flows} flows ({@code maxFlows = flows}, {@code maxOps = flows},
 * {@code maxSteps = flows × (completed + outstanding)}; default window 8, period 1 ms, timeouts 10 s), then
 * drives every flow live: a ProxyOp, {@code completed} send steps start → 8 → 20 → 9 → stop (a full window
 * of completions; each stays as a tombstone for the step timeout) and {@code outstanding} steps posted (9) and
 * not stopped, 1 ns of event time per event (no step or flow times out). Used heap (MemoryMXBean, after
 * several {@code System.gc()}) is measured before the engine exists, after its construction (the pools are
 * preallocated there) and after the drive; the difference over the baseline, divided by the flows, is the
 * cost per live flow. Checks that every flow and step is live and nothing was dropped.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.flowscope.bench.WindowEngineFootprint [flows [completed [outstanding [maxAggregates]]]]
 * java -Xmx512m -cp benchmarks/target/benchmarks.jar io.flowscope.bench.WindowEngineFootprint 100000
 * </pre>
 */
public final class WindowEngineFootprint {
    private WindowEngineFootprint() {}

    public static void main(final String[] args) throws InterruptedException {
        final int flows = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        final int completed = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        final int outstanding = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        final int maxAggregates = args.length > 3 ? Integer.parseInt(args[3]) : -1;
        final int stepsPerFlow = completed + outstanding;
        final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();

        final long baseline = usedAfterGc(memory);
        // The size-independent part: an engine of one flow, op and step (collective pools, histograms, hosts).
        WindowEngine tiny =
                new WindowEngine(new WindowConfig().maxFlows(1).maxOps(1).maxSteps(1), s -> {});
        final long fixed = usedAfterGc(memory) - baseline;
        Reference.reachabilityFence(tiny);
        tiny = null;
        final long[] summaries = new long[1];
        final FlowSummarySink sink = (FlowSummary s) -> summaries[0]++;
        final WindowConfig config = new WindowConfig()
                .maxFlows(flows)
                .maxOps(flows)
                .maxSteps(Math.max(1, flows * stepsPerFlow))
                .maxAggregates(maxAggregates);
        final WindowEngine engine = new WindowEngine(config, sink);
        final long constructed = usedAfterGc(memory);

        long t = 1_000_000_000L;
        long stepKey = 1L << 40;
        for (int f = 0; f < flows; f++) {
            final long opKey = f + 1;
            final int rank = f / 1024;
            final int peer = (f / 8) % 128;
            final int channel = f % 8;
            engine.onProxyOpStart(opKey, 0xC0FFEEL + (f >>> 17), rank, peer, channel, true, t++);
            for (int s = 0; s < stepsPerFlow; s++) {
                final long k = stepKey++;
                engine.onProxyStepStart(k, opKey, s, t++);
                engine.onProxyStepState(k, 8, 0, t++);
                engine.onProxyStepState(k, 20, 0, t++);
                engine.onProxyStepState(k, 9, 262_144, t++);
                if (s < completed) {
                    engine.onProxyStepStop(k, t++);
                }
            }
        }
        final long driven = usedAfterGc(memory);

        final long expectedSteps = (long) flows * stepsPerFlow;
        final boolean ok = engine.liveFlows() == flows
                && engine.liveOps() == flows
                && engine.liveSteps() == expectedSteps
                && engine.droppedFlowTableFull() == 0
                && engine.droppedOpTableFull() == 0
                && engine.droppedStepTableFull() == 0
                && engine.flowsEvicted() == 0
                && engine.stepsTimedOut() == 0;

        final long maxHeap = memory.getHeapMemoryUsage().getMax();
        System.out.printf(
                "config: %s, maxAggregates=%s%n",
                config, maxAggregates < 0 ? "default" : Integer.toString(maxAggregates));
        System.out.printf(
                "driven: %d flows x (1 op, %d completed + %d outstanding steps), %d events, %.1f ms event time, "
                        + "%d summaries%n",
                flows, completed, outstanding, t - 1_000_000_000L, (t - 1_000_000_000L) / 1e6, summaries[0]);
        System.out.printf(
                "live: flows=%d ops=%d steps=%d (%s)%n",
                engine.liveFlows(),
                engine.liveOps(),
                engine.liveSteps(),
                ok ? "as driven" : "NOT AS DRIVEN: " + engine);
        System.out.printf("max heap: %.1f MiB%n", maxHeap / 1048576.0);
        System.out.printf(
                "used heap after GC: baseline %.1f MiB, engine constructed %.1f MiB, flows driven %.1f MiB%n",
                baseline / 1048576.0, constructed / 1048576.0, driven / 1048576.0);
        final long engineBytes = driven - baseline;
        System.out.printf(
                "engine: %.1f MiB constructed (+%.1f MiB by the drive) = %.1f MiB for %d live flows, "
                        + "%.0f bytes per flow%n",
                (constructed - baseline) / 1048576.0,
                (driven - constructed) / 1048576.0,
                engineBytes / 1048576.0,
                flows,
                (double) engineBytes / flows);
        System.out.printf(
                "of which size-independent (an engine of 1 flow/op/step): %.1f MiB; the rest per flow: %.0f bytes%n",
                fixed / 1048576.0, (double) (engineBytes - fixed) / flows);
        Reference.reachabilityFence(engine);
        if (!ok) {
            System.exit(1);
        }
    }

    private static long usedAfterGc(final MemoryMXBean memory) throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
