package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RingTable} and {@link PeriodRing} against a plain model (a deque of the last pushes per owner), with
 * owners added while others have pushed (the blocks are re-laid when the table grows) and rings wrapping.
 */
class RingTablesTest {
    private static final int SERIES = 3;
    private static final int WINDOW = 4;

    @Test
    void ringTableKeepsEveryOwnersWindowAcrossGrowth() {
        final Random random = new Random(7);
        final RingTable table = new RingTable(SERIES, WINDOW, 2);
        final List<Deque<long[]>> model = new ArrayList<>();
        for (int round = 0; round < 400; round++) {
            if (model.size() < 37 && random.nextInt(4) == 0) {
                table.add(model.size());
                model.add(new ArrayDeque<>());
            }
            for (int o = 0; o < model.size(); o++) {
                if (random.nextInt(3) == 0) {
                    continue;
                }
                final long[] v = {random.nextInt(1000), random.nextInt(1000), random.nextInt(1000)};
                final int slot = table.slot(o);
                final long[] src = {v[0], v[1], 0};
                table.setAll(o, slot, src, 0, 2);
                assertThat(src[0]).isZero();
                table.set(o, slot, 2, v[2]);
                table.advance(o);
                final Deque<long[]> d = model.get(o);
                d.addLast(v);
                if (d.size() > WINDOW) {
                    d.removeFirst();
                }
            }
            for (int o = 0; o < model.size(); o++) {
                final Deque<long[]> d = model.get(o);
                assertThat(table.filled(o)).isEqualTo(d.size());
                for (int k = 0; k < SERIES; k++) {
                    long sum = 0;
                    long max = 0;
                    for (final long[] v : d) {
                        sum += v[k];
                        max = Math.max(max, v[k]);
                    }
                    assertThat(table.sum(o, k)).isEqualTo(sum);
                    assertThat(table.max(o, k)).isEqualTo(max);
                    assertThat(table.latest(o, k)).isEqualTo(d.isEmpty() ? 0 : d.peekLast()[k]);
                }
            }
        }
    }

    @Test
    void periodRingKeepsEveryOwnersPeriodsAcrossGrowth() {
        final Random random = new Random(11);
        final PeriodRing ring = new PeriodRing(SERIES, WINDOW, 2);
        final List<Deque<long[]>> model = new ArrayList<>();
        for (int round = 0; round < 400; round++) {
            if (model.size() < 37 && random.nextInt(4) == 0) {
                ring.add(model.size());
                model.add(new ArrayDeque<>());
            }
            for (int o = 0; o < model.size(); o++) {
                if (random.nextInt(3) == 0) {
                    continue;
                }
                ring.open(o, SERIES);
                final long[] v = new long[SERIES];
                for (int n = random.nextInt(3); n >= 0; n--) {
                    final int at = ring.current(o);
                    final long a = random.nextInt(1000);
                    final long b = random.nextInt(1000);
                    final long c = random.nextInt(1000);
                    ring.add(at, 0, a);
                    ring.add(at, 1, b);
                    ring.max(at, 2, c);
                    v[0] += a;
                    v[1] += b;
                    v[2] = Math.max(v[2], c);
                }
                final Deque<long[]> d = model.get(o);
                d.addLast(v);
                if (d.size() > WINDOW) {
                    d.removeFirst();
                }
            }
            for (int o = 0; o < model.size(); o++) {
                long s0 = 0;
                long s1 = 0;
                long m2 = 0;
                for (final long[] v : model.get(o)) {
                    s0 += v[0];
                    s1 += v[1];
                    m2 = Math.max(m2, v[2]);
                }
                assertThat(ring.sum(o, 0)).isEqualTo(s0);
                assertThat(ring.sum(o, 1)).isEqualTo(s1);
                assertThat(ring.max(o, 2)).isEqualTo(m2);
            }
        }
    }
}
