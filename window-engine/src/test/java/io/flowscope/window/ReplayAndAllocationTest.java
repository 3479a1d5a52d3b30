package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.Collectives;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Replay determinism (event time only) and the absence of allocation on the hot paths. */
class ReplayAndAllocationTest {
    @Test
    void shouldGiveIdenticalOutputWhenTheSameRecordedCallsAreReplayed() {
        for (int seed = 1; seed <= 50; seed++) {
            final SplittableRandom rnd = new SplittableRandom(seed);
            final WindowEnginePropertyTest.Shape shape =
                    new WindowEnginePropertyTest.Shape(0.1, 0.1, 0.1, 0.2, seed % 2 == 0);
            final long base = shape.wrap() ? Long.MAX_VALUE - rnd.nextLong(5_000_000) : rnd.nextLong(1L << 40);
            final List<Ev> calls = new ArrayList<>(WindowEnginePropertyTest.generate(rnd, shape, base, 0, 3));
            calls.addAll(WindowEnginePropertyTest.generate(rnd, shape, base + (1L << 45), 1_000_000, 4));
            WindowEnginePropertyTest.shuffleKeepingThreadOrder(rnd, calls);
            final long period = 1 + rnd.nextInt(100_000);
            final List<String> first = replay(calls, period);
            final List<String> second = replay(calls, period);
            assertThat(first).as("seed " + seed).isNotEmpty();
            assertThat(second).as("seed " + seed).isEqualTo(first);
        }
    }

    private static List<String> replay(final List<Ev> calls, final long period) {
        final List<String> out = new ArrayList<>();
        final WindowEngine e = new WindowEngine(
                new WindowConfig()
                        .periodNs(period)
                        .idleTimeoutNs(1_000_000_000L)
                        .stepTimeoutNs(500_000_000L)
                        .collectiveTimeoutNs(1_000_000)
                        .series(true),
                s -> out.add(dump(s)),
                c -> out.add(dump(c)));
        long k = 1L << 40;
        for (final Ev ev : calls) {
            ev.feed(e);
            if (ev.type() == Ev.OP_START) {
                // A collective with one channel beside each op: collectives, clock samples and aggregates too.
                e.onCollStart(
                        k,
                        ev.comm(),
                        ev.rank(),
                        4,
                        Collectives.ALL_REDUCE,
                        Collectives.ALGO_RING,
                        Collectives.PROTO_SIMPLE,
                        1024,
                        4,
                        1,
                        k,
                        ev.timeNs());
                e.onKernelChStart(k + 1, k, 0, ev.timeNs() - 777, ev.timeNs() + 5);
                e.onKernelChStop(k + 1, ev.timeNs() + 500, ev.timeNs() + 600);
                e.onCollStop(k, ev.timeNs() + 700);
                k += 2;
            }
        }
        e.flush();
        final GpuClockEstimate g = new GpuClockEstimate();
        out.add(e.gpuClock(3, g) + " " + g);
        out.add(e.toString());
        return out;
    }

    /** Every field of a summary record, by reflection, so that a field left out of a comparison cannot hide. */
    static String dump(final Object o) {
        final StringBuilder b = new StringBuilder(o.getClass().getSimpleName());
        for (final Field f : o.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            try {
                f.setAccessible(true);
                final Object v = f.get(o);
                b.append(' ')
                        .append(f.getName())
                        .append('=')
                        .append(v instanceof long[] a ? Arrays.toString(a) : String.valueOf(v));
            } catch (final IllegalAccessException ex) {
                throw new IllegalStateException(ex);
            }
        }
        return b.toString();
    }

    @Test
    void shouldNotAllocateOnTheHotPathsInSteadyState() {
        final long[] sink = new long[1];
        final WindowEngine e = new WindowEngine(
                new WindowConfig()
                        .periodNs(100_000)
                        .stepTimeoutNs(1_000_000)
                        .idleTimeoutNs(50_000_000)
                        .collectiveTimeoutNs(1_000_000)
                        .series(true),
                s -> sink[0] += s.bytes(),
                c -> sink[0] += c.durationNs());
        final long[] t = {1_000_000_000L};
        final long[] key = {1};
        run(e, t, key, 200_000); // warm up: JIT, pools and maps at their steady size
        final com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final long tid = Thread.currentThread().getId();
        final long before = mx.getThreadAllocatedBytes(tid);
        run(e, t, key, 200_000);
        final long allocated = mx.getThreadAllocatedBytes(tid) - before;
        assertThat(e.droppedStepTableFull() + e.droppedFlowTableFull() + e.droppedOpTableFull())
                .isZero();
        assertThat(e.collectivesEmitted()).isGreaterThan(1000);
        assertThat(allocated)
                .as("bytes allocated by 200k iterations (~2.6M events)")
                .isLessThan(4096);
    }

    /** Ops of 4 steps on 8 flows of 2 hosts, QP work requests, a collective per op; time moves on. */
    private static void run(final WindowEngine e, final long[] t, final long[] key, final int iterations) {
        for (int i = 0; i < iterations; i++) {
            final long host = i & 1;
            e.onHost(host);
            final long op = key[0]++;
            final boolean send = (i & 2) != 0;
            final long now = t[0] += 700;
            e.onProxyOpStart(op, 0xC0FFEE, (i >> 2) & 1, 1, (i >> 3) & 1, send, now);
            for (int s = 0; s < 4; s++) {
                final long step = key[0]++;
                e.onProxyStepStart(step, op, s, now + s);
                e.onProxyStepState(step, send ? 8 : 10, 0, now + s + 1);
                e.onProxyStepState(step, send ? 9 : 11, 65536, now + s + 50);
                e.onProxyStepStop(step, now + s + 100);
            }
            e.onProxyOpStop(op, now + 200);
            final long wr = key[0]++;
            e.onQpStart(wr, 0, 100 + (i & 3), 2, 65536, now + 10);
            e.onQpStop(wr, now + 300);
            final long coll = key[0]++;
            final long ch = key[0]++;
            e.onCollStart(
                    coll,
                    0xC0FFEE,
                    0,
                    8,
                    Collectives.ALL_REDUCE,
                    Collectives.ALGO_RING,
                    Collectives.PROTO_SIMPLE,
                    1 << 20,
                    4,
                    1,
                    i,
                    now);
            e.onKernelChStart(ch, coll, 0, now - 5_000, now + 20);
            e.onKernelChStop(ch, now - 4_000, now + 400);
            e.onCollStop(coll, now + 450);
        }
    }
}
