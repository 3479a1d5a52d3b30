package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** The passive GPU clock estimator against synthetic clocks: known offsets, known poll lags. */
class GpuClockEstimateTest
{
    @Test
    void shouldEstimateEachHostsOffsetWithinTheBoundFromSyntheticClocks()
    {
        for (int seed = 1; seed <= 300; seed++)
        {
            final SplittableRandom rnd = new SplittableRandom(seed);
            final long bound = 20_000;
            final WindowEngine e = new WindowEngine(new WindowConfig().gpuPollLagBoundNs(bound), s ->
            {
            });
            final int hosts = 1 + rnd.nextInt(4);
            final long[] offset = new long[hosts];
            final long[][] lags = new long[hosts][];
            for (int h = 0; h < hosts; h++)
            {
                // CLOCK_MONOTONIC (host) vs %globaltimer (epoch ns): offsets far negative, different per host.
                offset[h] = -1_700_000_000_000_000_000L + rnd.nextLong(1L << 45);
                lags[h] = new long[1 + rnd.nextInt(200)];
                for (int i = 0; i < lags[h].length; i++)
                {
                    // Mostly large lags (a busy poller), at least one within the bound (an idle one).
                    lags[h][i] = i == 0 ? rnd.nextLong(bound + 1) : rnd.nextLong(5_000_000);
                }
            }
            long key = 1;
            final int[] next = new int[hosts];
            for (int left = Arrays.stream(lags).mapToInt(l -> l.length).sum(); left > 0; )
            {
                final int h = rnd.nextInt(hosts);
                if (next[h] == lags[h].length)
                {
                    continue;
                }
                final long gpu = 1_700_000_000_000_000_000L + rnd.nextLong(1L << 40);
                e.onHost(h);
                e.onKernelChStart(key++, 999, 0, gpu, gpu + offset[h] + lags[h][next[h]++]); // parent unknown: still a sample
                left--;
            }
            for (int h = 0; h < hosts; h++)
            {
                final GpuClockEstimate g = new GpuClockEstimate();
                assertThat(e.gpuClock(h, g)).isTrue();
                final long[] sorted = lags[h].clone();
                Arrays.sort(sorted);
                final String as = "seed " + seed + " host " + h;
                assertThat(g.samples()).as(as).isEqualTo(sorted.length);
                assertThat(g.offsetNs()).as(as).isEqualTo(offset[h] + sorted[0]);
                assertThat(offset[h]).as(as).isBetween(g.offsetNs() - g.errorBoundNs(), g.offsetNs());
                assertThat(g.spreadNs()).as(as).isEqualTo(sorted.length < 2 ? -1 : sorted[1] - sorted[0]);
            }
            assertThat(e.gpuClock(hosts + 5, new GpuClockEstimate())).isFalse();
        }
    }

    @Test
    void shouldPutACollectivesGpuStartOnTheHostClock()
    {
        final CollectiveSummary[] last = new CollectiveSummary[1];
        final WindowEngine e = new WindowEngine(new WindowConfig(), s ->
        {
        }, s ->
        {
            last[0] = new CollectiveSummary();
            last[0].copyFrom(s);
        });
        final long offset = -5_000_000;
        e.onCollStart(1, 9, 0, 2, Collectives.ALL_REDUCE, Collectives.ALGO_RING, Collectives.PROTO_SIMPLE, 100, 4, 1,
            0, 10_000_000);
        e.onKernelChStart(2, 1, 0, 20_000_000, 20_000_000 + offset + 700);
        e.onKernelChStop(2, 20_001_000, 20_100_000 + offset);
        e.onCollStop(1, 20_200_000);
        assertThat(last[0].gpuStartHostKnown()).isTrue();
        assertThat(last[0].gpuStartHostNs()).isEqualTo(20_000_000 + offset + 700);
        assertThat(last[0].durationNs()).isEqualTo(1_000);
    }
}
