package io.flowscope.window;

import io.flowscope.api.summary.Phase;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The brute-force reference: keeps every record of every step in plain collections and computes each
 * flow's figures at the end by sorting. Same rules as the engine's documentation (first record of each
 * state counts, records after a step's stop are ignored), none of its machinery. No timeouts.
 */
final class ReferenceModel {
    /** A step flow, or a QP flow (qp: comm = qpNum, channel = device, rank = peer = -1, isSend). */
    record FlowId(long host, long comm, int rank, int peer, int channel, boolean isSend, boolean qp) {
        FlowId(
                final long host,
                final long comm,
                final int rank,
                final int peer,
                final int channel,
                final boolean isSend) {
            this(host, comm, rank, peer, channel, isSend, false);
        }
    }

    static final class Step {
        final long key;
        final FlowId flow;
        final long startNs;
        final Map<Integer, long[]> firstState = new HashMap<>(); // state -> {time, arg, order}
        int order;
        boolean stopped;
        long stopNs;
        boolean completedBeforePost;

        Step(final long key, final FlowId flow, final long startNs) {
            this.key = key;
            this.flow = flow;
            this.startNs = startNs;
        }

        boolean completed() {
            return flow.isSend ? stopped : stopped || firstState.containsKey(11);
        }

        long postNs() {
            final int s = flow.isSend ? 9 : 10;
            return firstState.containsKey(s) ? firstState.get(s)[0] : startNs;
        }

        long completeNs() {
            return !flow.isSend && firstState.containsKey(11) ? firstState.get(11)[0] : stopNs;
        }

        long bytes() {
            final int s = flow.isSend ? 9 : 11;
            return firstState.containsKey(s) ? firstState.get(s)[1] : 0;
        }

        boolean posted() {
            final int s = flow.isSend ? 9 : 10;
            if (!firstState.containsKey(s)) {
                return false;
            }
            // A recv posted after it completed (10 after 11) does not count as posted.
            return flow.isSend
                    || !firstState.containsKey(11)
                    || firstState.get(10)[2] < firstState.get(11)[2];
        }
    }

    /** Per flow, per period start of its host, per phase: the durations recorded at the steps' stops. */
    private final Map<FlowId, Map<Long, List<List<Long>>>> periodPhases = new HashMap<>();
    /** Per host: {period start, period end}, moved on by every event as the documentation says. */
    private final Map<Long, long[]> hostPeriods = new HashMap<>();

    private final long periodNs;

    ReferenceModel() {
        this(1);
    }

    ReferenceModel(final long periodNs) {
        this.periodNs = periodNs;
    }

    private final Map<Long, FlowId> liveOps = new HashMap<>();
    private final Map<Long, Step> steps = new HashMap<>();
    private final Set<FlowId> flows = new HashSet<>();
    private int order;

    void apply(final Ev e) {
        order++;
        final long[] period = hostPeriods.get(e.host());
        if (period == null) {
            final long start = Math.floorDiv(e.timeNs(), periodNs) * periodNs;
            hostPeriods.put(e.host(), new long[] {start, start + periodNs});
        } else if (e.timeNs() - period[1] >= 0) {
            final long gap = e.timeNs() - period[1];
            period[0] = period[1] + gap - Math.floorMod(gap, periodNs);
            period[1] = period[0] + periodNs;
        }
        switch (e.type()) {
            case Ev.OP_START -> {
                if (!liveOps.containsKey(e.key())) {
                    final FlowId f = new FlowId(e.host(), e.comm(), e.rank(), e.peer(), e.channel(), e.isSend());
                    liveOps.put(e.key(), f);
                    flows.add(f);
                }
            }
            case Ev.OP_STOP -> liveOps.remove(e.key());
            case Ev.STEP_START -> {
                final FlowId f = liveOps.get(e.opKey());
                if (!steps.containsKey(e.key()) && f != null) {
                    steps.put(e.key(), new Step(e.key(), f, e.timeNs()));
                }
            }
            case Ev.QP_START -> {
                if (!steps.containsKey(e.key())) {
                    final FlowId f = new FlowId(e.host(), e.comm(), -1, -1, e.channel(), true, true);
                    flows.add(f);
                    final Step s = new Step(e.key(), f, e.timeNs());
                    s.firstState.put(9, new long[] {e.timeNs(), e.arg(), order});
                    steps.put(e.key(), s);
                }
            }
            case Ev.STEP_STATE -> {
                final Step s = steps.get(e.key());
                if (s != null && !s.stopped) {
                    final boolean relevant = s.flow.isSend
                            ? e.state() == 8 || e.state() == 20 || e.state() == 9
                            : e.state() == 10 || e.state() == 11 || e.state() == 12;
                    if (relevant) {
                        s.firstState.putIfAbsent(e.state(), new long[] {e.timeNs(), e.arg(), order});
                    }
                }
            }
            default -> {
                final Step s = steps.get(e.key());
                if (s != null && !s.stopped) {
                    s.stopped = true;
                    s.stopNs = e.timeNs();
                    final long[][] d = new long[Phase.COUNT][2];
                    phasesOf(s, d);
                    boolean any = false;
                    for (int p = 0; p < Phase.COUNT; p++) {
                        any |= d[p][0] > 0;
                    }
                    if (!any) {
                        break;
                    }
                    final List<List<Long>> lists = periodPhases
                            .computeIfAbsent(s.flow, k -> new HashMap<>())
                            .computeIfAbsent(hostPeriods.get(e.host())[0], k -> {
                                final List<List<Long>> l = new ArrayList<>();
                                for (int p = 0; p < Phase.COUNT; p++) {
                                    l.add(new ArrayList<>());
                                }
                                return l;
                            });
                    for (int p = 0; p < Phase.COUNT; p++) {
                        if (d[p][0] > 0) {
                            lists.get(p).add(d[p][1]);
                        }
                    }
                }
            }
        }
    }

    Set<FlowId> flows() {
        return flows;
    }

    List<Step> completed(final FlowId f) {
        final List<Step> out = new ArrayList<>();
        for (final Step s : steps.values()) {
            if (s.flow.equals(f) && s.completed()) {
                out.add(s);
            }
        }
        return out;
    }

    long totalBytes(final FlowId f) {
        return completed(f).stream().mapToLong(Step::bytes).sum();
    }

    long outstandingSteps(final FlowId f) {
        return steps.values().stream()
                .filter(s -> s.flow.equals(f) && s.posted() && !s.completed())
                .count();
    }

    long outstandingBytes(final FlowId f) {
        return f.isSend
                ? steps.values().stream()
                        .filter(s -> s.flow.equals(f) && s.posted() && !s.completed())
                        .mapToLong(Step::bytes)
                        .sum()
                : 0;
    }

    /** {count, sum} per phase over the stopped steps of the flow; a phase needs both its bounding records. */
    long[][] phases(final FlowId f) {
        final long[][] out = new long[Phase.COUNT][2];
        for (final Step s : steps.values()) {
            if (s.flow.equals(f) && s.stopped) {
                phasesOf(s, out);
            }
        }
        return out;
    }

    /**
     * Per period start of the flow's host: per phase, the exact durations recorded in that period (by the host's
     * period at each step's stop record).
     */
    Map<Long, List<List<Long>>> periodPhases(final FlowId f) {
        return periodPhases.getOrDefault(f, Map.of());
    }

    /** The brute-force percentile: the ceil(n · permille / 1000)-th smallest (at least the first). */
    static long percentile(final List<Long> durations, final int permille) {
        final List<Long> sorted = new ArrayList<>(durations);
        sorted.sort(null);
        final long rank = Math.max(1, ((long) sorted.size() * permille + 999) / 1000);
        return sorted.get((int) rank - 1);
    }

    /** Adds a stopped step's phases to {count, sum} per phase. */
    private static void phasesOf(final Step s, final long[][] out) {
        final Map<Integer, long[]> st = s.firstState;
        if (s.flow.isSend) {
            add(out, Phase.GPU_WAIT, st.get(8), st.containsKey(20) ? st.get(20) : st.get(9));
            add(out, Phase.PEER_WAIT, st.get(20), st.get(9));
            add(out, Phase.NETWORK, st.get(9), new long[] {s.stopNs});
        } else {
            add(out, Phase.NETWORK, st.get(10), st.get(11));
            add(out, Phase.FLUSH, st.get(11), st.get(12));
            add(out, Phase.GPU_CONSUME, st.get(12), new long[] {s.stopNs});
        }
    }

    private static void add(final long[][] out, final int phase, final long[] from, final long[] to) {
        if (from != null && to != null && to[0] - from[0] >= 0) {
            out[phase][0]++;
            out[phase][1] += to[0] - from[0];
        }
    }

    /** The last n completions by (completion time relative to base, key). */
    List<Step> window(final FlowId f, final int n, final long base) {
        final List<Step> c = completed(f);
        c.sort(Comparator.<Step>comparingLong(s -> s.completeNs() - base).thenComparingLong(s -> s.key));
        return c.subList(Math.max(0, c.size() - n), c.size());
    }
}
