package io.flowscope.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * The {@link ServiceDrainBenchmark} drain timed by the thread's CPU time instead of wall time, so that a shared
 * machine's other load (which takes the core away, not the work) does not count: CPU ns per ring record of each
 * {@code path}, median and spread of the rounds, after as many rounds again to warm up. Cache pollution by the other
 * load still counts. Each round drains 1 M records (one fill of the 4 rings; the fill is not timed).
 * <pre>
 * java $FLAGS -cp benchmarks/target/benchmarks.jar io.flowscope.bench.ServiceDrainCpuTime [rounds] [path ...]
 * </pre>
 * ({@code $FLAGS}: the module openings of {@link ServiceDrainBenchmark}'s fork, for Chronicle Queue.)
 */
public final class ServiceDrainCpuTime {
    private ServiceDrainCpuTime() {}

    public static void main(final String[] args) throws Exception {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        final String[] paths = args.length > 1
                ? Arrays.copyOfRange(args, 1, args.length)
                : new String[] {"decode", "journal", "engine", "engines", "service"};
        final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        final ServiceDrainBenchmark bench = new ServiceDrainBenchmark();
        for (final String path : paths) {
            final ServiceDrainBenchmark.ServiceState state = new ServiceDrainBenchmark.ServiceState();
            state.path = path;
            state.setUp();
            final double[] ns = new double[rounds];
            long sink = 0;
            try {
                for (int r = -rounds; r < rounds; r++) {
                    state.refill();
                    final long t0 = mx.getCurrentThreadCpuTime();
                    sink += bench.drain(state);
                    final long t1 = mx.getCurrentThreadCpuTime();
                    if (r >= 0) {
                        ns[r] = (double) (t1 - t0) / RingDrainBenchmark.RECORDS;
                    }
                }
            } finally {
                state.tearDown();
            }
            Arrays.sort(ns);
            System.out.printf(
                    "%-8s %7.1f CPU ns/record (min %.1f, max %.1f; %d rounds of %d records)%s%n",
                    path,
                    ns[rounds / 2],
                    ns[0],
                    ns[rounds - 1],
                    rounds,
                    RingDrainBenchmark.RECORDS,
                    sink == 42 ? " " : "");
        }
    }
}
