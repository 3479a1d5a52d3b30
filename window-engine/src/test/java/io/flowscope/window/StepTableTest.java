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
 * tombstones, over a small table whose keys collide in long probe chains, so that backward shifts move live
 * entries and tombstones, and a tombstone is later removed from the slot it was moved to.
 */
class StepTableTest
{
    @Test
    void shouldFindWhatWasInsertedBuriedAndRemoved()
    {
        for (long seed = 1; seed <= 30; seed++)
        {
            run(seed, 16 + (int)(seed % 4) * 100);
        }
    }

    private static void run(final long seed, final int maxSteps)
    {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final StepTable table = new StepTable(maxSteps);
        final Set<Long> live = new HashSet<>();
        final List<Long> liveKeys = new ArrayList<>();
        final Map<Long, Integer> tombs = new HashMap<>(); // key -> tombstone slot
        final List<Long> tombKeys = new ArrayList<>();
        final int keyRange = maxSteps * 4;
        final String as = "seed " + seed;
        for (int step = 0; step < 20_000; step++)
        {
            final int op = rnd.nextInt(100);
            final long key = op >= 35 && op < 65 && !liveKeys.isEmpty() && rnd.nextInt(4) != 0
                ? liveKeys.get(rnd.nextInt(liveKeys.size())) : rnd.nextInt(keyRange);
            if (op < 35)
            {
                final int slot = table.probeInsert(key);
                if (live.contains(key) || tombs.containsKey(key))
                {
                    assertThat(slot).as(as).isEqualTo(-1);
                }
                else if (live.size() + tombs.size() >= maxSteps)
                {
                    assertThat(slot).as(as).isEqualTo(Integer.MIN_VALUE);
                }
                else
                {
                    assertThat(slot).as(as).isGreaterThanOrEqualTo(0);
                    table.occupy(slot, key, 0, 0, 0, 0, step);
                    live.add(key);
                    liveKeys.add(key);
                }
            }
            else if (op < 65)
            {
                final int b = table.find(key);
                if (live.contains(key))
                {
                    assertThat(b).as(as).isGreaterThanOrEqualTo(0);
                    assertThat(table.t[b + StepTable.KEY]).as(as).isEqualTo(key);
                    if (op < 55)
                    {
                        table.bury(b);
                        live.remove(key);
                        liveKeys.remove(key);
                        int tomb = -1;
                        for (int i = 0; i < table.tombHighWater(); i++)
                        {
                            if (table.tombHost[i] != -1 && table.tombKey[i] == key && !tombs.containsValue(i))
                            {
                                tomb = i;
                            }
                        }
                        assertThat(tomb).as(as).isGreaterThanOrEqualTo(0);
                        tombs.put(key, tomb);
                        tombKeys.add(key);
                    }
                }
                else
                {
                    assertThat(b).as(as).isEqualTo(tombs.containsKey(key) ? StepTable.BURIED : StepTable.ABSENT);
                }
            }
            else if (op < 75)
            {
                if (!liveKeys.isEmpty())
                {
                    final long k = liveKeys.remove(rnd.nextInt(liveKeys.size()));
                    live.remove(k);
                    table.remove(table.find(k));
                }
            }
            else
            {
                if (!tombKeys.isEmpty())
                {
                    final long k = tombKeys.remove(rnd.nextInt(tombKeys.size()));
                    table.removeTomb(tombs.remove(k));
                }
            }
        }
        assertThat(table.count()).as(as).isEqualTo(live.size() + tombs.size());
        for (final long k : live)
        {
            assertThat(table.find(k)).as(as).isGreaterThanOrEqualTo(0);
        }
        for (final long k : tombs.keySet())
        {
            assertThat(table.find(k)).as(as).isEqualTo(StepTable.BURIED);
        }
    }
}
