package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * Proxy-step traffic of a ring collective as real NCCL's socket transport records it (docs/detection.md), for
 * the wait-state detectors' unit tests: every op, each rank receives from its left and sends to its right, four
 * 512 KiB steps a channel. A rank that arrives {@code lateNs} late (per op and rank) delays its first data: its
 * right neighbour's first receive waits (10 → 11) that much longer, and its own first receive finds the data
 * there. {@code gpu} makes the lateness its GPU's (its first send slot waits, 8 → 9). A sender's network time
 * per step is multiplied by {@code slowdown}. Jitter is seeded.
 */
final class RingTraffic {
    interface PerOp {
        long of(int op, int rank);
    }

    static final long HOST = 0x7e57_0001L;
    static final long COMM = 0xc0ffeeL;
    static final long STEP_BYTES = 512 * 1024;

    int ranks = 2;
    int channels = 2;
    long opPeriodNs = 1_800_000;
    long baseEntryWaitNs = 450_000;
    long networkNs = 250_000;
    PerOp lateNs = (op, rank) -> 0;
    boolean gpu;
    /** Network time factor of a sender's steps, per op and sender rank (1 = healthy). */
    PerOp slowdownPercent = (op, rank) -> 100;

    double jitter = 0.15;
    long seed = 1;
    /** Each rank on a host of its own, whose clock runs {@code rank * clockStepNs} ahead (clock domains apart). */
    boolean hostPerRank;

    long clockStepNs = 7_777_777_777L;
    /** Ranks that stop all their records after this op (their host falls silent), or -1. */
    int silentRank = -1;

    int silentFromOp = Integer.MAX_VALUE;
    /** Tell every host's time after every event, as the drain loop does after every batch (not once a ms). */
    boolean advanceEveryEvent;
    /** The NICs as the engine should see them (null: its own judgement of the QP events, none here). */
    NicView nics;
    /** The communicator's anchor host once 20 ops have run. */
    long anchorAfterWarmUp = Long.MIN_VALUE;

    private record Event(long t, int order, int rank, java.util.function.LongConsumer call) {}

    long hostOf(final int rank) {
        return hostPerRank ? HOST + 0x100L * (rank + 1) : HOST;
    }

    private long offset(final int rank) {
        return hostPerRank ? rank * clockStepNs : 0;
    }

    /** Emits {@code ops} operations into an engine over the anomaly stage, in time order; returns its anomalies. */
    List<Anomaly> run(final int ops, final AnomalyConfig config) {
        final List<Anomaly> opened = new ArrayList<>();
        stage = new AnomalyEngine(
                config,
                AnomalySink.of((type, a) -> {
                    if (AnomalySink.OPENED.equals(type)) {
                        opened.add(a);
                    } else if (AnomalySink.RESOLVED.equals(type)) {
                        resolved.add(a);
                    }
                }),
                nics);
        final WindowEngine engine = new WindowEngine(new WindowConfig().periodNs(1_000_000), stage, stage);
        final List<Event> events = new ArrayList<>();
        final Random rnd = new Random(seed);
        long key = 1;
        final long t0 = 1_000_000_000L;
        for (int op = 0; op < ops; op++) {
            final long start = t0 + op * opPeriodNs;
            for (int r = 0; r < ranks; r++) {
                final int right = (r + 1) % ranks;
                final int left = (r + ranks - 1) % ranks;
                final long myLate = lateNs.of(op, r);
                final long leftLate = lateNs.of(op, left);
                for (int ch = 0; ch < channels; ch++) {
                    final long recvOp = key++;
                    final long sendOp = key++;
                    final int rr = r;
                    final int cc = ch;
                    events.add(new Event(
                            start, 0, rr, tt -> engine.onProxyOpStart(recvOp, COMM, rr, left, cc, false, tt)));
                    events.add(new Event(
                            start, 0, rr, tt -> engine.onProxyOpStart(sendOp, COMM, rr, right, cc, true, tt)));
                    for (int s = 0; s < 4; s++) {
                        final long stepR = key++;
                        final long stepS = key++;
                        final int step = s;
                        // Receive: posted when this rank arrives; the first data comes when the left rank has
                        // arrived (a late receiver finds it there: its own entry wait is short).
                        final long post = start + myLate + s * 50_000L;
                        final long firstData = start + baseEntryWaitNs + leftLate;
                        final long arrive = Math.max(post + 20_000, firstData + s * networkNs);
                        final long recvArrive = arrive + noise(rnd, 30_000);
                        events.add(new Event(post, 1, rr, tt -> engine.onProxyStepStart(stepR, recvOp, step, tt)));
                        events.add(new Event(post + 1, 2, rr, tt -> engine.onProxyStepState(stepR, 10, 0, tt)));
                        events.add(
                                new Event(recvArrive, 3, rr, tt -> engine.onProxyStepState(stepR, 11, STEP_BYTES, tt)));
                        events.add(new Event(
                                recvArrive + 5_000, 4, rr, tt -> engine.onProxyStepState(stepR, 12, STEP_BYTES, tt)));
                        events.add(new Event(recvArrive + 60_000, 5, rr, tt -> engine.onProxyStepStop(stepR, tt)));
                        // Send: the slot is posted at the op's start (+ lateness on the CPU); the GPU fills it.
                        final long slot = start + (gpu ? 0 : myLate) + s * 50_000L;
                        final long filled = start + myLate + 100_000 + s * networkNs + noise(rnd, 20_000);
                        final long net =
                                networkNs * slowdownPercent.of(op, r) / 100 + noise(rnd, (long) (networkNs * jitter));
                        final long posted = Math.max(slot + 1_000, filled);
                        events.add(new Event(slot, 1, rr, tt -> engine.onProxyStepStart(stepS, sendOp, step, tt)));
                        events.add(new Event(slot + 1, 2, rr, tt -> engine.onProxyStepState(stepS, 8, 0, tt)));
                        events.add(new Event(posted, 3, rr, tt -> engine.onProxyStepState(stepS, 9, STEP_BYTES, tt)));
                        events.add(new Event(posted + net, 5, rr, tt -> engine.onProxyStepStop(stepS, tt)));
                    }
                    final long end = start + opPeriodNs - 10_000 + myLate;
                    events.add(new Event(end, 6, rr, tt -> engine.onProxyOpStop(recvOp, tt)));
                    events.add(new Event(end, 6, rr, tt -> engine.onProxyOpStop(sendOp, tt)));
                }
            }
        }
        events.sort(Comparator.comparingLong(Event::t).thenComparingInt(Event::order));
        long lastTick = 0;
        long currentHost = Long.MIN_VALUE;
        for (final Event e : events) {
            if (e.rank() == silentRank && e.t() >= 1_000_000_000L + silentFromOp * opPeriodNs) {
                continue;
            }
            if (hostOf(e.rank()) != currentHost) {
                currentHost = hostOf(e.rank());
                engine.onHost(currentHost);
            }
            e.call().accept(e.t() + offset(e.rank()));
            if (anchorAfterWarmUp == Long.MIN_VALUE && e.t() >= 1_000_000_000L + 20 * opPeriodNs) {
                anchorAfterWarmUp = stage.waitStates().anchorHostOf(COMM);
            }
            if (advanceEveryEvent || e.t() - lastTick >= 1_000_000) {
                for (int r = 0; r < (hostPerRank ? ranks : 1); r++) {
                    if (r != silentRank || e.t() < 1_000_000_000L + silentFromOp * opPeriodNs) {
                        stage.advanceTo(hostOf(r), e.t() + offset(r));
                    }
                }
                lastTick = e.t();
            }
        }
        return opened;
    }

    final List<Anomaly> resolved = new ArrayList<>();
    /** The stage of the last {@link #run}. */
    AnomalyEngine stage;

    private static long noise(final Random rnd, final long amplitude) {
        return amplitude <= 0 ? 0 : (long) ((rnd.nextDouble() - 0.5) * 2 * amplitude);
    }

    static PerOp between(final int from, final int to, final int rank, final long value, final long otherwise) {
        return (op, r) -> r == rank && op >= from && op < to ? value : otherwise;
    }
}
