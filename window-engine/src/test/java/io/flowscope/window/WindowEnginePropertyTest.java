package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded random and adversarial streams, checked against {@link ReferenceModel}. A failure names its seed;
 * rerun one with {@code -Dwindow.seed=N}.
 */
class WindowEnginePropertyTest {
    private static final int SEEDS = Integer.getInteger("window.seeds", 400);

    /** Knobs of one generated stream. */
    record Shape(double dropStop, double dropState, double duplicate, double idleGap, boolean wrap) {}

    @Test
    void shouldMatchTheReferenceOnWellFormedStreamsWithOutOfOrderThreads() {
        check(new Shape(0, 0, 0, 0, false));
    }

    @Test
    void shouldMatchTheReferenceWhenStopsAndStatesGoMissing() {
        check(new Shape(0.2, 0.15, 0, 0, false));
    }

    @Test
    void shouldMatchTheReferenceWithDuplicateAndLateRecords() {
        check(new Shape(0, 0, 0.2, 0, false));
    }

    @Test
    void shouldMatchTheReferenceAcrossIdleGapsAndTheWrapOfTheClock() {
        check(new Shape(0, 0, 0, 0.3, true));
    }

    @Test
    void shouldMatchTheReferenceOnEverythingAtOnce() {
        check(new Shape(0.1, 0.1, 0.15, 0.2, true));
    }

    private static void check(final Shape shape) {
        final Integer only = Integer.getInteger("window.seed");
        for (int seed = only == null ? 1 : only; seed <= (only == null ? SEEDS : only); seed++) {
            checkOne(shape, seed);
        }
    }

    private static void checkOne(final Shape shape, final long seed) {
        final SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + shape.hashCode());
        final long base = shape.wrap() ? Long.MAX_VALUE - rnd.nextLong(5_000_000) : rnd.nextLong(1L << 40);
        final int nHosts = 1 + rnd.nextInt(3);
        final long[] bases = new long[nHosts];
        final List<Ev> events = new ArrayList<>();
        for (int h = 0; h < nHosts; h++) {
            // Each host its own clock: unrelated bases (up to 2^50 ns apart), keys unique across hosts.
            bases[h] = h == 0 ? base : base + rnd.nextLong(1L << 50);
            events.addAll(generate(rnd, shape, bases[h], h * 1_000_000L, 7L * h));
        }
        shuffleKeepingThreadOrder(rnd, events);
        final int windowSize = 1 + rnd.nextInt(10);

        final Map<Long, long[]> summed = new HashMap<>(); // flowKey -> {completions, bytes, phase count, sum...}
        final Map<Long, FlowSummary> lastSummary = new HashMap<>();
        // (host, period, kind, comm, rank, peer, dir) -> {flows, posts, completions, bytes, outstanding steps, bytes}
        final Map<List<Long>, long[]> expectedAggregates = new HashMap<>();
        final Map<List<Long>, long[]> emittedAggregates = new HashMap<>();
        final Map<List<Long>, Long> rankBytes = new HashMap<>(); // (host, comm, rank, dir) -> summed RANK bytes
        final Map<List<Long>, FlowSummary> byPeriod = new HashMap<>(); // (flowKey, period start) -> summary
        final long periodNs = 1 + rnd.nextInt(200_000);
        final WindowEngine engine = new WindowEngine(
                new WindowConfig()
                        .windowSize(windowSize)
                        .periodNs(periodNs)
                        .idleTimeoutNs(Long.MAX_VALUE)
                        .stepTimeoutNs(Long.MAX_VALUE)
                        .tombstoneTimeoutNs(Long.MAX_VALUE)
                        .maxFlows(256)
                        .maxOps(4096)
                        .maxSteps(1 << 16)
                        .series(true),
                s -> {
                    final long dir = s.isSend() ? 1 : 0;
                    if (s.kind() >= FlowSummary.KIND_RANK) {
                        final List<Long> id = List.of(
                                s.hostId(),
                                s.periodStartNs(),
                                (long) s.kind(),
                                s.commHash(),
                                (long) s.rank(),
                                (long) s.peer(),
                                dir);
                        assertThat(emittedAggregates.put(id, aggregateFigures(s)))
                                .as("one aggregate per id")
                                .isNull();
                        assertThat(s.periodBandwidthBytesPerSecond())
                                .isEqualTo(s.bytes() * 1e9 / (s.periodEndNs() - s.periodStartNs()));
                        if (s.kind() == FlowSummary.KIND_RANK) {
                            rankBytes.merge(
                                    List.of(s.hostId(), s.commHash(), (long) s.rank(), dir), s.bytes(), Long::sum);
                        }
                        return;
                    }
                    if (s.kind() == FlowSummary.KIND_STEP) {
                        for (final long[] k : new long[][] {
                            {FlowSummary.KIND_RANK, s.rank(), -1},
                            {FlowSummary.KIND_LINK, s.rank(), s.peer()},
                            {FlowSummary.KIND_COMM, -1, -1}
                        }) {
                            final long[] a = expectedAggregates.computeIfAbsent(
                                    List.of(s.hostId(), s.periodStartNs(), k[0], s.commHash(), k[1], k[2], dir),
                                    x -> new long[6]);
                            final long[] f = aggregateFigures(s);
                            for (int i = 0; i < a.length; i++) {
                                a[i] += f[i];
                            }
                        }
                    }
                    final long[] t = summed.computeIfAbsent(s.flowKey(), k -> new long[2 + 2 * Phase.COUNT]);
                    t[0] += s.completions();
                    t[1] += s.bytes();
                    for (int p = 0; p < Phase.COUNT; p++) {
                        t[2 + 2 * p] += s.phaseCount(p);
                        t[3 + 2 * p] += s.phaseSumNs(p);
                    }
                    final FlowSummary copy = new FlowSummary();
                    copy.copyFrom(s);
                    lastSummary.put(s.flowKey(), copy);
                    assertThat(byPeriod.put(List.of(s.flowKey(), s.periodStartNs()), copy))
                            .as("one summary a period")
                            .isNull();
                });
        final ReferenceModel ref = new ReferenceModel(periodNs);
        for (final Ev e : events) {
            e.feed(engine);
            ref.apply(e);
        }
        engine.flush();

        final String as = "seed " + seed + " " + shape;
        final FlowSummary snap = new FlowSummary();
        for (final ReferenceModel.FlowId f : ref.flows()) {
            final long hb = bases[(int) (f.host() / 7)];
            assertThat(
                            f.qp()
                                    ? engine.snapshotQp(f.host(), f.channel(), f.comm(), snap)
                                    : engine.snapshot(
                                            f.host(), f.comm(), f.rank(), f.peer(), f.channel(), f.isSend(), snap))
                    .as(as)
                    .isTrue();
            assertThat(snap.kind()).as(as).isEqualTo(f.qp() ? FlowSummary.KIND_QP : FlowSummary.KIND_STEP);
            assertThat(snap.hostId()).as(as).isEqualTo(f.host());
            final List<ReferenceModel.Step> window = ref.window(f, windowSize, hb);
            assertThat(snap.windowCompletions()).as(as).isEqualTo(window.size());
            assertThat(snap.windowBytes())
                    .as(as)
                    .isEqualTo(window.stream()
                            .mapToLong(ReferenceModel.Step::bytes)
                            .sum());
            if (!window.isEmpty()) {
                final long firstPost =
                        window.stream().mapToLong(s -> s.postNs() - hb).min().getAsLong();
                final long last = window.get(window.size() - 1).completeNs() - hb;
                assertThat(snap.windowSpanNs()).as(as).isEqualTo(last - firstPost);
            }
            assertThat(snap.outstandingSteps()).as(as).isEqualTo(ref.outstandingSteps(f));
            assertThat(snap.outstandingBytes()).as(as).isEqualTo(ref.outstandingBytes(f));
            assertThat(
                            f.qp()
                                    ? engine.totalBytesQp(f.host(), f.channel(), f.comm())
                                    : engine.totalBytes(
                                            f.host(), f.comm(), f.rank(), f.peer(), f.channel(), f.isSend()))
                    .as(as)
                    .isEqualTo(ref.totalBytes(f));
            final long[] t = summed.getOrDefault(snap.flowKey(), new long[2 + 2 * Phase.COUNT]);
            assertThat(t[0])
                    .as(as + " summed completions")
                    .isEqualTo(ref.completed(f).size());
            assertThat(t[1]).as(as + " summed bytes").isEqualTo(ref.totalBytes(f));
            // Series: every bucket a level retains holds exactly the bytes of the completions in it.
            final Series series = f.qp()
                    ? engine.seriesQp(f.host(), f.channel(), f.comm())
                    : engine.series(f.host(), f.comm(), f.rank(), f.peer(), f.channel(), f.isSend());
            final long epoch = engine.seriesEpochNs(f.host());
            final List<ReferenceModel.Step> done = ref.completed(f);
            for (int level = 0; level < Series.LEVELS; level++) {
                final Map<Long, Long> buckets = new HashMap<>();
                for (final ReferenceModel.Step st : done) {
                    buckets.merge(Series.bucket(level, st.completeNs() - epoch), st.bytes(), Long::sum);
                }
                final long newest = buckets.keySet().stream()
                        .mapToLong(Long::longValue)
                        .max()
                        .orElse(0);
                if (!buckets.isEmpty()) {
                    assertThat(series.newest(level))
                            .as(as + " newest bucket, level " + level)
                            .isEqualTo(newest);
                }
                for (final Map.Entry<Long, Long> b : buckets.entrySet()) {
                    final boolean retained = b.getKey() > newest - Series.capacity(level);
                    assertThat(series.bytes(level, b.getKey()))
                            .as(as + " level " + level + " bucket " + b.getKey())
                            .isEqualTo(retained ? b.getValue() : -1);
                }
                for (long k = newest - Series.capacity(level) + 1; k <= newest && !buckets.isEmpty(); k++) {
                    assertThat(series.bytes(level, k)).as(as).isEqualTo(buckets.getOrDefault(k, 0L));
                }
            }
            final long[][] phases = ref.phases(f);
            for (int p = 0; p < Phase.COUNT; p++) {
                assertThat(t[2 + 2 * p]).as(as + " count of " + Phase.name(p)).isEqualTo(phases[p][0]);
                assertThat(t[3 + 2 * p]).as(as + " sum of " + Phase.name(p)).isEqualTo(phases[p][1]);
            }
            // Per period and phase: the count, and p50 / p90 / p99 within the documented bucket error.
            for (final Map.Entry<Long, List<List<Long>>> period :
                    ref.periodPhases(f).entrySet()) {
                final FlowSummary ps = byPeriod.get(List.of(snap.flowKey(), period.getKey()));
                assertThat(ps).as(as + " summary of period " + period.getKey()).isNotNull();
                for (int p = 0; p < Phase.COUNT; p++) {
                    final List<Long> d = period.getValue().get(p);
                    assertThat(ps.phaseCount(p))
                            .as(as + " period count of " + Phase.name(p))
                            .isEqualTo(d.size());
                    final long[] got = {ps.phaseP50Ns(p), ps.phaseP90Ns(p), ps.phaseP99Ns(p)};
                    for (int k = 0; k < 3; k++) {
                        if (d.isEmpty()) {
                            assertThat(got[k])
                                    .as(as + " no percentile of " + Phase.name(p))
                                    .isEqualTo(Phase.ABSENT);
                            continue;
                        }
                        final long exact = ReferenceModel.percentile(d, PhaseBuckets.PERMILLE[k]);
                        assertThat((double) Math.abs(got[k] - exact))
                                .as(as + " p" + PhaseBuckets.PERMILLE[k] / 10 + " of " + Phase.name(p) + " " + d)
                                .isLessThanOrEqualTo(exact * PhaseBuckets.RELATIVE_ERROR + 1);
                    }
                }
            }
        }
        assertThat(engine.liveFlows()).as(as).isEqualTo(ref.flows().size());
        // Aggregates: exactly the group sums of the step flows' summaries of each period ...
        assertThat(emittedAggregates.keySet()).as(as).isEqualTo(expectedAggregates.keySet());
        for (final Map.Entry<List<Long>, long[]> e : expectedAggregates.entrySet()) {
            assertThat(emittedAggregates.get(e.getKey()))
                    .as(as + " aggregate " + e.getKey())
                    .isEqualTo(e.getValue());
        }
        // ... and, summed over periods, each rank's bytes are the reference's total.
        final Map<List<Long>, Long> refRankBytes = new HashMap<>();
        for (final ReferenceModel.FlowId f : ref.flows()) {
            if (!f.qp()) {
                refRankBytes.merge(
                        List.of(f.host(), f.comm(), (long) f.rank(), f.isSend() ? 1L : 0L),
                        ref.totalBytes(f),
                        Long::sum);
            }
        }
        refRankBytes.forEach((k, v) -> assertThat(rankBytes.getOrDefault(k, 0L))
                .as(as + " rank bytes " + k)
                .isEqualTo(v));
    }

    /**
     * Flows of a few communicators; each op runs on one proxy thread and its steps overlap, so completions
     * come out of order; threads are interleaved at random (records of different threads out of order).
     */
    private static long[] aggregateFigures(final FlowSummary s) {
        return new long[] {s.flows(), s.posts(), s.completions(), s.bytes(), s.outstandingSteps(), s.outstandingBytes()
        };
    }

    /** Interleaves the hosts' streams at random, keeping each host's order (its threads' orders). */
    static void shuffleKeepingThreadOrder(final SplittableRandom rnd, final List<Ev> events) {
        final Map<Long, List<Ev>> byHost = new java.util.TreeMap<>();
        for (final Ev e : events) {
            byHost.computeIfAbsent(e.host(), k -> new ArrayList<>()).add(e);
        }
        final List<List<Ev>> lists = new ArrayList<>(byHost.values());
        final int[] next = new int[lists.size()];
        events.clear();
        int remaining = lists.stream().mapToInt(List::size).sum();
        while (remaining > 0) {
            final int t = rnd.nextInt(lists.size());
            if (next[t] < lists.get(t).size()) {
                events.add(lists.get(t).get(next[t]++));
                remaining--;
            }
        }
    }

    static List<Ev> generate(
            final SplittableRandom rnd, final Shape shape, final long base, final long firstKey, final long host) {
        final int threads = 1 + rnd.nextInt(4);
        final List<List<Ev>> perThread = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            perThread.add(new ArrayList<>());
        }
        final int nOps = 1 + rnd.nextInt(12);
        long nextKey = 1 + firstKey;
        for (int o = 0; o < nOps; o++) {
            final List<Ev> out = new ArrayList<>();
            final boolean send = rnd.nextBoolean();
            final long opKey = nextKey++;
            long t = base + rnd.nextLong(1_000_000);
            if (rnd.nextDouble() < shape.idleGap()) {
                t += 1_000_000_000L + rnd.nextLong(2_000_000_000L); // seconds of silence
            }
            out.add(Ev.opStart(
                    opKey, 0xC0FFEEL + rnd.nextInt(2), rnd.nextInt(2), rnd.nextInt(3), rnd.nextInt(2), send, t));
            final int nSteps = rnd.nextInt(24);
            long last = t;
            for (int s = 0; s < nSteps; s++) {
                final long step = nextKey++;
                long ts = t + 1 + s * (long) (1 + rnd.nextInt(3_000));
                final List<Ev> life = new ArrayList<>();
                life.add(Ev.stepStart(step, opKey, ts));
                final long bytes = 1 + rnd.nextInt(1 << 19);
                if (send) {
                    life.add(Ev.state(step, 8, 0, ts += rnd.nextInt(2_000)));
                    for (int k = rnd.nextInt(3); k > 0; k--) {
                        life.add(Ev.state(step, 20, bytes, ts += rnd.nextInt(2_000)));
                    }
                    life.add(Ev.state(step, 9, bytes, ts += rnd.nextInt(2_000)));
                } else {
                    life.add(Ev.state(step, 10, 0, ts += rnd.nextInt(2_000)));
                    life.add(Ev.state(step, 11, bytes, ts += rnd.nextInt(20_000)));
                    life.add(Ev.state(step, 12, bytes, ts += rnd.nextInt(2_000)));
                }
                final Ev stop = Ev.stepStop(step, ts += rnd.nextInt(20_000));
                for (final Ev e : life) {
                    if (e.type() == Ev.STEP_START || rnd.nextDouble() >= shape.dropState()) {
                        out.add(e);
                    }
                }
                if (rnd.nextDouble() >= shape.dropStop()) {
                    out.add(stop);
                }
                last = Math.max(last - base, ts - base) + base;
            }
            out.add(Ev.opStop(opKey, last + 1));
            toThread(rnd, shape, base, host, out, perThread.get(rnd.nextInt(threads)));
        }
        // QP work requests: a few QPs, each posted by one thread; completions overlap and come out of order.
        final int nQps = rnd.nextInt(4);
        for (int q = 0; q < nQps; q++) {
            final List<Ev> out = new ArrayList<>();
            final int device = rnd.nextInt(2);
            final long qpNum = 100 + rnd.nextInt(3);
            long t = base + rnd.nextLong(1_000_000);
            if (rnd.nextDouble() < shape.idleGap()) {
                t += 1_000_000_000L + rnd.nextLong(2_000_000_000L);
            }
            for (int w = rnd.nextInt(30); w > 0; w--) {
                final long wr = nextKey++;
                t += rnd.nextInt(2_000);
                out.add(Ev.qpStart(wr, device, qpNum, 1 + rnd.nextInt(1 << 20), t));
                if (rnd.nextDouble() >= shape.dropStop()) {
                    out.add(Ev.qpStop(wr, t + rnd.nextInt(30_000)));
                }
            }
            toThread(rnd, shape, base, host, out, perThread.get(rnd.nextInt(threads)));
        }
        // Per-thread order within a thread; threads interleave at random.
        return interleave(rnd, perThread);
    }

    /** Sorts one producer's records by time, adds duplicates, appends them to a thread's list. */
    private static void toThread(
            final SplittableRandom rnd,
            final Shape shape,
            final long base,
            final long host,
            final List<Ev> out,
            final List<Ev> thread) {
        {
            // One thread's records are in time order (relative to base: the clock may wrap).
            out.sort((a, b) -> Long.compare(a.timeNs() - base, b.timeNs() - base));
            // Duplicates: a copy of a record, delivered again later (a consumer restarted mid-delivery).
            final int n = out.size();
            for (int i = 0; i < n; i++) {
                if (rnd.nextDouble() < shape.duplicate()) {
                    final int at = i + 1 + rnd.nextInt(out.size() - i);
                    out.add(Math.min(at, out.size()), out.get(i));
                }
            }
            for (final Ev e : out) {
                thread.add(e.onHost(host));
            }
        }
    }

    private static List<Ev> interleave(final SplittableRandom rnd, final List<List<Ev>> perThread) {
        final int threads = perThread.size();
        final List<Ev> merged = new ArrayList<>();
        final int[] next = new int[threads];
        int remaining = perThread.stream().mapToInt(List::size).sum();
        while (remaining > 0) {
            final int t = rnd.nextInt(threads);
            if (next[t] < perThread.get(t).size()) {
                merged.add(perThread.get(t).get(next[t]++));
                remaining--;
            }
        }
        return merged;
    }
}
