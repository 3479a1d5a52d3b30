package io.flowscope.sim;

import io.flowscope.api.input.TelemetryListener;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The calibration's measurements of a proxy-step stream, the same for a real trace ({@link JsonTrace}) and for
 * the simulator (it is a {@link TelemetryListener}): per op (ProxyOp) and step (ProxyStep) the times of NCCL's
 * states, then distributions over the ops whose first step started in a window:
 * <ul>
 * <li>phases of every step: send {@code S.gpu} 8 → 20, {@code S.peer} 20 → 9, {@code S.net} 9 → stop; receive
 * {@code R.wait} 10 → 11, {@code R.flush} 11 → 12, {@code R.gpu} 12 → stop;</li>
 * <li>the op's first step (the entry: where the ranks of an operation meet): {@code R.wait.first} 10 → 11 of
 * step 0, {@code S.gpu.first} 8 → 20 of step 0; and of the later steps, {@code R.wait.later};</li>
 * <li>pacing: {@code op.lead} op start → its first step start (how far ahead ops are posted), {@code op.active}
 * first step start → op stop, {@code op.period} first step to the next op's first step on the same flow,
 * {@code S.begin} / {@code R.begin} the previous op's stop on the flow → this op's first step start,
 * {@code S.spread} / {@code R.spread} a step's start − its op's first step start;</li>
 * <li>{@code net.window}: per sending rank and 25 ms window, Σ(9 → stop) / bytes over its median (network rate
 * noise);</li>
 * <li>the steps per op and the step size ({@code transSize} at 9 / 11), most frequent values.</li>
 * </ul>
 * Ops whose steps all carry fewer than 8 KiB (the workload's 1-element barriers) are left out. Per-rank figures
 * ({@code r0 R.wait.first}, ...) are kept for the straggler patterns. Times are ns; distributions report µs.
 */
final class TracePhases implements TelemetryListener {
    static final long MIN_OP_BYTES = 8192;
    static final long NET_WINDOW_NS = 25_000_000L;

    /** A distribution's size and quantiles, µs. */
    record Dist(int n, double p10, double p50, double p90) {
        static Dist of(final long[] ns, final int n) {
            if (n == 0) {
                return new Dist(0, Double.NaN, Double.NaN, Double.NaN);
            }
            final long[] s = Arrays.copyOf(ns, n);
            Arrays.sort(s);
            return new Dist(
                    n,
                    s[Math.min(n - 1, (int) (0.1 * n))] / 1e3,
                    s[Math.min(n - 1, (int) (0.5 * n))] / 1e3,
                    s[Math.min(n - 1, (int) (0.9 * n))] / 1e3);
        }

        @Override
        public String toString() {
            return String.format("n=%d p10 %.1f med %.1f p90 %.1f us", n, p10, p50, p90);
        }
    }

    /** The measured figures of one stream over one window. */
    record Figures(int ops, int stepsPerOp, long stepBytes, Map<String, Dist> phases) {
        Dist get(final String name) {
            final Dist d = phases.get(name);
            return d == null ? new Dist(0, Double.NaN, Double.NaN, Double.NaN) : d;
        }
    }

    private static final class Op {
        final int rank;
        final int channel;
        final boolean send;
        final long startNs;
        long stopNs = -1;
        final List<Step> steps = new ArrayList<>(8);

        Op(final int rank, final int channel, final boolean send, final long startNs) {
            this.rank = rank;
            this.channel = channel;
            this.send = send;
            this.startNs = startNs;
        }

        long firstStepNs() {
            long t = Long.MAX_VALUE;
            for (final Step s : steps) {
                t = Math.min(t, s.startNs);
            }
            return t;
        }

        long maxBytes() {
            long b = 0;
            for (final Step s : steps) {
                b = Math.max(b, s.bytes);
            }
            return b;
        }
    }

    private static final class Step {
        final int step;
        final long startNs;
        /** Times of states 8, 20, 9, 10, 11, 12 (-1 = not seen). */
        final long[] at = {-1, -1, -1, -1, -1, -1};

        long bytes;
        long stopNs = -1;

        Step(final int step, final long startNs) {
            this.step = step;
            this.startNs = startNs;
        }
    }

    private final Long2ObjectHashMap<Op> ops = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<Step> steps = new Long2ObjectHashMap<>();
    private final List<Op> all = new ArrayList<>();

    private static int slot(final int state) {
        switch (state) {
            case 8:
                return 0;
            case 20:
                return 1;
            case 9:
                return 2;
            case 10:
                return 3;
            case 11:
                return 4;
            case 12:
                return 5;
            default:
                return -1;
        }
    }

    @Override
    public void onProxyOpStart(
            final long opKey,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {
        final Op op = new Op(rank, channel, isSend, timeNs);
        ops.put(opKey, op);
        all.add(op);
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        final Op op = ops.get(opKey);
        if (op != null) {
            op.stopNs = timeNs;
        }
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        final Op op = ops.get(opKey);
        if (op == null) {
            return;
        }
        final Step s = new Step(step, timeNs);
        steps.put(stepKey, s);
        op.steps.add(s);
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        final Step s = steps.get(stepKey);
        final int k = slot(state);
        if (s == null || k < 0) {
            return;
        }
        s.at[k] = timeNs;
        if (state == 9 || state == 11) {
            s.bytes = Math.max(s.bytes, transSize);
        }
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        final Step s = steps.get(stepKey);
        if (s != null) {
            s.stopNs = timeNs;
        }
    }

    private static final class Acc {
        long[] v = new long[64];
        int n;

        void add(final long x) {
            if (n == v.length) {
                v = Arrays.copyOf(v, n * 2);
            }
            v[n++] = x;
        }
    }

    private static void put(final Map<String, Acc> m, final String name, final long from, final long to) {
        if (from >= 0 && to >= 0) {
            m.computeIfAbsent(name, k -> new Acc()).add(to - from);
        }
    }

    /** The figures over the ops whose first step started in [fromNs, toNs). */
    Figures figures(final long fromNs, final long toNs) {
        final Map<String, Acc> acc = new HashMap<>();
        final Map<Integer, Integer> stepsPerOp = new HashMap<>();
        final Map<Long, Integer> sizes = new HashMap<>();
        final Map<Long, List<Op>> flows = new HashMap<>();
        final Map<Long, long[]> netWindows = new TreeMap<>();
        int n = 0;
        for (final Op op : all) {
            if (op.steps.isEmpty() || op.maxBytes() < MIN_OP_BYTES || op.stopNs < 0) {
                continue;
            }
            flows.computeIfAbsent(((long) op.rank << 20 | op.channel) << 1 | (op.send ? 1 : 0), k -> new ArrayList<>())
                    .add(op);
            final long first = op.firstStepNs();
            if (first < fromNs || first >= toNs) {
                continue;
            }
            n++;
            stepsPerOp.merge(op.steps.size(), 1, Integer::sum);
            put(acc, "op.lead", op.startNs, first);
            put(acc, "op.active", first, op.stopNs);
            final String d = op.send ? "S." : "R.";
            final String r = "r" + op.rank + " ";
            for (final Step s : op.steps) {
                sizes.merge(s.bytes, 1, Integer::sum);
                put(acc, d + "spread", first, s.startNs);
                final long[] a = s.at;
                if (op.send) {
                    put(acc, "S.gpu", a[0], a[1]);
                    put(acc, "S.peer", a[1], a[2]);
                    put(acc, "S.net", a[2], s.stopNs);
                    put(acc, r + "S.net", a[2], s.stopNs);
                    if (s.step == 0) {
                        put(acc, "S.gpu.first", a[0], a[1]);
                        put(acc, r + "S.gpu.first", a[0], a[1]);
                    }
                    if (a[2] >= 0 && s.stopNs >= 0 && s.bytes > 0) {
                        final long[] w = netWindows.computeIfAbsent(
                                (long) op.rank << 32 | (s.stopNs - fromNs) / NET_WINDOW_NS, k -> new long[3]);
                        w[0] += s.stopNs - a[2];
                        w[1] += s.bytes;
                        w[2]++;
                    }
                } else {
                    put(acc, "R.wait", a[3], a[4]);
                    put(acc, "R.flush", a[4], a[5]);
                    put(acc, "R.gpu", a[5], s.stopNs);
                    put(acc, s.step == 0 ? "R.wait.first" : "R.wait.later", a[3], a[4]);
                    if (s.step == 0) {
                        put(acc, r + "R.wait.first", a[3], a[4]);
                    }
                }
            }
        }
        for (final List<Op> flow : flows.values()) {
            flow.sort((x, y) -> Long.compare(x.firstStepNs(), y.firstStepNs()));
            for (int i = 1; i < flow.size(); i++) {
                final Op prev = flow.get(i - 1);
                final Op op = flow.get(i);
                final long first = op.firstStepNs();
                if (first < fromNs || first >= toNs) {
                    continue;
                }
                put(acc, "op.period", prev.firstStepNs(), first);
                put(acc, op.send ? "S.begin" : "R.begin", prev.stopNs, first);
            }
        }
        // Network time per byte of each rank's sends per 25 ms window, over that rank's median window.
        final Map<Long, List<Double>> perRank = new HashMap<>();
        for (final Map.Entry<Long, long[]> e : netWindows.entrySet()) {
            final long[] w = e.getValue();
            if (w[2] >= 8) {
                perRank.computeIfAbsent(e.getKey() >>> 32, k -> new ArrayList<>())
                        .add((double) w[0] / w[1]);
            }
        }
        for (final List<Double> windows : perRank.values()) {
            final double[] s =
                    windows.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            final double median = s[s.length / 2];
            for (final double x : windows) {
                // kept in the µs-reporting accumulator as thousandths: 1.000 reads 1000 ns = 1.0 "µs"
                acc.computeIfAbsent("net.window", k -> new Acc()).add(Math.round(x / median * 1_000));
            }
        }
        final Map<String, Dist> out = new TreeMap<>();
        for (final Map.Entry<String, Acc> e : acc.entrySet()) {
            out.put(e.getKey(), Dist.of(e.getValue().v, e.getValue().n));
        }
        return new Figures(n, mode(stepsPerOp), mode(sizes), out);
    }

    private static <K extends Comparable<K>> K mode(final Map<K, Integer> counts) {
        K best = null;
        int bestCount = -1;
        for (final Map.Entry<K, Integer> e : counts.entrySet()) {
            if (e.getValue() > bestCount
                    || e.getValue() == bestCount && e.getKey().compareTo(best) < 0) {
                best = e.getKey();
                bestCount = e.getValue();
            }
        }
        return best;
    }

    /** Figures as readable lines, for reports and failure messages. */
    static String format(final Figures f) {
        final StringBuilder sb = new StringBuilder();
        sb.append(String.format("ops %d, steps/op %d, step %d B%n", f.ops(), f.stepsPerOp(), f.stepBytes()));
        final Map<String, Dist> ordered = new LinkedHashMap<>(f.phases());
        ordered.forEach((k, v) -> sb.append(String.format("  %-18s %s%n", k, v)));
        return sb.toString();
    }
}
