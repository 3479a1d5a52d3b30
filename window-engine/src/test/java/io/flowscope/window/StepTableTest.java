package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link StepTable} against a map: random starts, stops (tombstones), removals of live entries and of
 * tombstones, over a small table whose keys collide (in direct slots, and in long probe chains of the overflow
 * index), so that backward shifts move live entries and tombstones, and a tombstone is later removed from the
 * slot it was moved to; keys of random, same-low-bits and start-ordered shapes.
 */
class StepTableTest {
    /** Keys of a range four times the table: direct slots shared by about two keys each, some spilled. */
    private static final int RANDOM = 0;
    /** Keys with the same low bits (eight direct slots): nearly every entry spills into the index. */
    private static final int SAME_LOW_BITS = 1;
    /** Keys in order with gaps, as the plugin's record ids, from four producers 2^40 apart. */
    private static final int ORDERED = 2;

    @Test
    void shouldFindWhatWasInsertedBuriedAndRemoved() {
        for (long seed = 1; seed <= 30; seed++) {
            run(seed, 16 + (int) (seed % 4) * 100, RANDOM);
        }
    }

    @Test
    void shouldKeepEntriesWhoseDirectSlotsAreTakenInTheOverflow() {
        for (long seed = 1; seed <= 20; seed++) {
            run(seed, 16 + (int) (seed % 4) * 100, SAME_LOW_BITS);
        }
    }

    @Test
    void shouldServeKeysInStartOrder() {
        for (long seed = 1; seed <= 20; seed++) {
            run(seed, 16 + (int) (seed % 4) * 100, ORDERED);
        }
    }

    private static long newKey(final SplittableRandom rnd, final int mode, final int keyRange, final long[] next) {
        switch (mode) {
            case SAME_LOW_BITS:
                return (long) rnd.nextInt(keyRange) << 20 | rnd.nextInt(8);
            case ORDERED: {
                final int producer = rnd.nextInt(next.length);
                next[producer] += 1 + rnd.nextInt(3);
                // Now and then an old key again (a duplicate or a record of a key long gone).
                return ((long) producer << 40)
                        + (rnd.nextInt(10) == 0 ? next[producer] - rnd.nextInt(keyRange) : next[producer]);
            }
            default:
                return rnd.nextInt(keyRange);
        }
    }

    private static void run(final long seed, final int maxSteps, final int mode) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final StepTable table = new StepTable(maxSteps);
        final Set<Long> live = new HashSet<>();
        final List<Long> liveKeys = new ArrayList<>();
        final Map<Long, Integer> tombs = new HashMap<>(); // key -> tombstone slot
        final List<Long> tombKeys = new ArrayList<>();
        final int keyRange = maxSteps * 4;
        final long[] next = new long[4];
        final String as = "seed " + seed + ", keys " + mode;
        for (int step = 0; step < 20_000; step++) {
            final int op = rnd.nextInt(100);
            final long key = op >= 35 && op < 65 && !liveKeys.isEmpty() && rnd.nextInt(4) != 0
                    ? liveKeys.get(rnd.nextInt(liveKeys.size()))
                    : newKey(rnd, mode, keyRange, next);
            if (op < 35) {
                final int slot = table.probeInsert(key);
                if (live.contains(key) || tombs.containsKey(key)) {
                    assertThat(slot).as(as).isEqualTo(-1);
                } else if (live.size() + tombs.size() >= maxSteps) {
                    assertThat(slot).as(as).isEqualTo(Integer.MIN_VALUE);
                } else {
                    assertThat(slot).as(as).isGreaterThanOrEqualTo(0);
                    table.occupy(slot, key, 0, 0, 0, step);
                    live.add(key);
                    liveKeys.add(key);
                }
            } else if (op < 65) {
                final int b = table.find(key);
                if (live.contains(key)) {
                    assertThat(b).as(as).isGreaterThanOrEqualTo(0);
                    assertThat(table.t[b + StepTable.KEY]).as(as).isEqualTo(key);
                    if (op < 55) {
                        table.bury(b, step);
                        live.remove(key);
                        liveKeys.remove(key);
                        int tomb = -1;
                        for (int i = 0; i < table.tombHighWater(); i++) {
                            if (table.tombHost[i] != -1 && table.tombKey[i] == key && !tombs.containsValue(i)) {
                                tomb = i;
                            }
                        }
                        assertThat(tomb).as(as).isGreaterThanOrEqualTo(0);
                        tombs.put(key, tomb);
                        tombKeys.add(key);
                    }
                } else {
                    assertThat(b).as(as).isEqualTo(tombs.containsKey(key) ? StepTable.BURIED : StepTable.ABSENT);
                }
            } else if (op < 75) {
                if (!liveKeys.isEmpty()) {
                    final long k = liveKeys.remove(rnd.nextInt(liveKeys.size()));
                    live.remove(k);
                    table.remove(table.find(k));
                }
            } else {
                if (!tombKeys.isEmpty()) {
                    final long k = tombKeys.remove(rnd.nextInt(tombKeys.size()));
                    table.removeTomb(tombs.remove(k));
                }
            }
        }
        assertThat(table.count()).as(as).isEqualTo(live.size() + tombs.size());
        for (final long k : live) {
            assertThat(table.find(k)).as(as).isGreaterThanOrEqualTo(0);
        }
        for (final long k : tombs.keySet()) {
            assertThat(table.find(k)).as(as).isEqualTo(StepTable.BURIED);
        }
    }
}
