package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * {@link StepTable} against a direct model of the tombstone semantics that the engine had with a per-tombstone
 * sweep: a stopped key is a tombstone until a sweep of its own host at a period start P with
 * {@code P − stamp ≥ T} removes it; live entries and tombstones together never exceed {@code maxSteps}. Random
 * starts, stops, live removals, record times (some older than the period start − T) and per-host sweeps over
 * hosts with unrelated clocks, with a small table so that the tombstone sets rotate, grow, carry survivors and
 * fill up, and the live index grows and shrinks.
 */
class StepTableTest
{
    private static final class Tomb
    {
        final long stamp;
        final int host;

        Tomb(final long stamp, final int host)
        {
            this.stamp = stamp;
            this.host = host;
        }
    }

    @Test
    void shouldKeepTombstonesExactlyAsAPerTombstoneSweepWould()
    {
        for (long seed = 1; seed <= 40; seed++)
        {
            // Small tables fill up; large ones rotate their tombstone sets at the insert that would overfill one.
            final int maxSteps = seed % 2 == 0 ? 16 + (int)(seed % 5) * 40 : 400 + (int)(seed % 4) * 500;
            run(seed, seed % 3 == 0 ? 1 : 3, maxSteps, 1 + (int)(seed * 37 % 120));
        }
    }

    private static void run(final long seed, final int hosts, final int maxSteps, final int tombstonePeriods)
    {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final long periodNs = 100 + rnd.nextInt(400);
        // T from a fraction of a period to ~120 periods: tombstones expire within a generation of their set or
        // outlive it (then a rotation carries them over).
        final long tombstoneNs = periodNs * tombstonePeriods - rnd.nextInt((int)periodNs);
        final StepTable table = new StepTable(maxSteps, hosts, tombstoneNs);
        final Map<Long, Integer> live = new HashMap<>(); // key -> host
        final Map<Long, Long> liveStamp = new HashMap<>();
        final Map<Long, Tomb> tombs = new HashMap<>();
        final List<Long> liveKeys = new ArrayList<>();
        final long[] periodStart = new long[hosts];
        for (int h = 0; h < hosts; h++)
        {
            // Unrelated clocks: each host far from the others (signed differences only).
            periodStart[h] = (rnd.nextLong() / periodNs) * periodNs;
            table.hostPeriodStart[h] = periodStart[h];
        }
        final String as = "seed " + seed;
        // Keys from a small range (key 0 included: its hash is 0) so that keys are stopped and started again.
        final int keyRange = maxSteps * 6;
        for (int step = 0; step < 30_000; step++)
        {
            final int h = rnd.nextInt(hosts);
            final int op = rnd.nextInt(100);
            // Records mostly of live keys (a stream's records are), else of any key.
            final long key = op >= 40 && op < 80 && !liveKeys.isEmpty() && rnd.nextInt(4) != 0
                ? liveKeys.get(rnd.nextInt(liveKeys.size())) : rnd.nextInt(keyRange);
            if (op < 40)
            {
                final int slot = table.probeInsert(key);
                if (live.containsKey(key) || tombs.containsKey(key))
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
                    final long startNs = periodStart[h] + rnd.nextInt((int)periodNs);
                    final int b = table.occupy(slot, key, 0, 0, 0, h, startNs);
                    assertThat(table.t[b + StepTable.KEY]).isEqualTo(key);
                    live.put(key, h);
                    liveStamp.put(key, startNs);
                    liveKeys.add(key);
                }
            }
            else if (op < 75)
            {
                // A record (stop or not) of a key: found as the model says.
                final int b = table.find(key);
                if (live.containsKey(key))
                {
                    assertThat(b).as(as).isGreaterThanOrEqualTo(0);
                    assertThat(table.t[b + StepTable.KEY]).as(as).isEqualTo(key);
                    final int host = live.get(key);
                    if (rnd.nextInt(4) == 0)
                    {
                        // A record time: sometimes older than the host's period start − T (a step idle for long is stopped).
                        final long at = periodStart[host] - rnd.nextLong(2 * tombstoneNs + 1);
                        assertThat(StepTable.hostId(table.t[b + StepTable.FLAGS])).as(as).isEqualTo(host);
                        final long st = rnd.nextBoolean() ? WindowEngine.latestOf(table.stamp(b), at) : at;
                        table.stamp(b, st);
                        liveStamp.put(key, st);
                    }
                    if (op < 65)
                    {
                        table.bury(b);
                        live.remove(key);
                        liveKeys.remove(key);
                        final long st = liveStamp.remove(key);
                        tombs.put(key, new Tomb(st, host));
                    }
                }
                else if (tombs.containsKey(key))
                {
                    assertThat(b).as(as).isEqualTo(StepTable.BURIED);
                }
                else
                {
                    assertThat(b).as(as).isEqualTo(StepTable.ABSENT);
                }
            }
            else if (op < 80)
            {
                // A live entry removed (step timeout).
                if (live.containsKey(key))
                {
                    final int b = table.find(key);
                    table.remove(b);
                    live.remove(key);
                    liveKeys.remove(key);
                    liveStamp.remove(key);
                    assertThat(table.find(key)).as(as).isEqualTo(tombs.containsKey(key) ? StepTable.BURIED :
                        StepTable.ABSENT);
                }
            }
            else if (op < 97)
            {
                // A sweep of host h at its next period start (sometimes after a gap).
                periodStart[h] += periodNs * (1 + (rnd.nextInt(8) == 0 ? rnd.nextInt(20) : 0));
                final long p = periodStart[h];
                tombs.values().removeIf(t -> t.host == h && p - t.stamp >= tombstoneNs);
                table.onSweep(h, p);
            }
            else
            {
                assertThat(table.count()).as(as).isEqualTo(live.size() + tombs.size());
            }
        }
        assertThat(table.count()).as(as).isEqualTo(live.size() + tombs.size());
        final List<Long> keys = new ArrayList<>(tombs.keySet());
        for (final long key : keys)
        {
            assertThat(table.find(key)).as(as).isEqualTo(StepTable.BURIED);
        }
    }
}
