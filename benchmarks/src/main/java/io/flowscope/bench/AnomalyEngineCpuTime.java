package io.flowscope.bench;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.anomaly.AnomalyEngine;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The {@link AnomalyEngineBenchmark} loop timed by the thread's CPU time instead of wall time, so that a shared
 * machine's other load (which takes the core away, not the work) does not count: CPU ns per period and per
 * summary, and the periods/s one core would sustain. Cache pollution by the other load still counts.
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.flowscope.bench.AnomalyEngineCpuTime [ranks] [periods] [hot]
 * </pre>
 * {@code hot}: the summaries come in a few reused instances, as the window engine hands over one reused summary
 * (the default feeds 24,576 distinct objects at 4,096 ranks, whose cache misses count against the engine).
 * {@code replay} (after {@code hot} or {@code cold}): the stream alone, handed to a consumer that only reads one
 * field per summary: the harness's own share of the engine figure.
 */
public final class AnomalyEngineCpuTime {
    private AnomalyEngineCpuTime() {}

    public static void main(final String[] args) {
        final int ranks = args.length > 0 ? Integer.parseInt(args[0]) : 4096;
        final int periods = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        final boolean hot = args.length > 2 && "hot".equals(args[2]);
        final boolean replay = args.length > 3 && "replay".equals(args[3]);
        if (replay) {
            replay(ranks, periods, hot);
            return;
        }
        final AnomalySummaryStream s = new AnomalySummaryStream(ranks, 2);
        final int[] opened = new int[1];
        final AnomalyEngine engine = new AnomalyEngine(new AnomalyConfig(), new AnomalySink() {
            @Override
            public void onOpened(final Anomaly a) {
                opened[0]++;
            }

            @Override
            public void onResolved(final Anomaly a) {}
        });
        final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long period = 1;
        // Warm-up: as many periods again, not timed.
        for (int i = 0; i < periods; i++) {
            run(engine, s, period++, hot);
        }
        final long cpu0 = mx.getCurrentThreadCpuTime();
        final long wall0 = System.nanoTime();
        for (int i = 0; i < periods; i++) {
            run(engine, s, period++, hot);
        }
        final long cpu = mx.getCurrentThreadCpuTime() - cpu0;
        final long wall = System.nanoTime() - wall0;
        final double perPeriod = (double) cpu / periods;
        System.out.printf(
                "%d ranks%s, %d summaries/period, %d periods timed: CPU %.3f ms/period (%.0f ns/summary), "
                        + "%.0f periods/s per core (wall %.0f periods/s); anomalies opened: %d%n",
                ranks,
                hot ? " (hot)" : "",
                s.summariesPerPeriod(),
                periods,
                perPeriod / 1e6,
                perPeriod / s.summariesPerPeriod(),
                1e9 / perPeriod,
                periods * 1e9 / wall,
                opened[0]);
        if (opened[0] != 1) {
            throw new IllegalStateException("expected the one injected slow link, got " + opened[0]);
        }
    }

    private static void replay(final int ranks, final int periods, final boolean hot) {
        final AnomalySummaryStream s = new AnomalySummaryStream(ranks, 2);
        final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long sink = 0;
        long period = 1;
        long cpu0 = 0;
        for (int i = 0; i < 2 * periods; i++) {
            if (i == periods) {
                cpu0 = mx.getCurrentThreadCpuTime();
            }
            for (int h = 0; h < s.hosts; h++) {
                for (int k = 0; k < s.perHost; k++) {
                    sink += (hot ? s.hot(h, k, period) : s.summary(h, k, period)).flowKey();
                }
            }
            period++;
        }
        final double perPeriod = (double) (mx.getCurrentThreadCpuTime() - cpu0) / periods;
        System.out.printf(
                "%d ranks%s, stream alone: CPU %.3f ms/period (%.1f ns/summary) (%d)%n",
                ranks, hot ? " (hot)" : "", perPeriod / 1e6, perPeriod / s.summariesPerPeriod(), sink & 1);
    }

    private static void run(final AnomalyEngine engine, final AnomalySummaryStream s, final long p, final boolean hot) {
        for (int h = 0; h < s.hosts; h++) {
            for (int i = 0; i < s.perHost; i++) {
                engine.onSummary(hot ? s.hot(h, i, p) : s.summary(h, i, p));
            }
        }
        final long end = (p + 1) * AnomalySummaryStream.PERIOD_NS;
        for (int h = 0; h < s.hosts; h++) {
            engine.advanceTo(s.hostIds[h], end);
        }
    }
}
