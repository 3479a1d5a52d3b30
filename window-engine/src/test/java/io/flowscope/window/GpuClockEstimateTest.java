package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.Collectives;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The passive GPU clock estimator against synthetic clocks: known offsets, known poll lags. */
class GpuClockEstimateTest {
    @Test
    void shouldEstimateEachHostsOffsetWithinTheBoundFromSyntheticClocks() {
        for (int seed = 1; seed <= 300; seed++) {
            final SplittableRandom rnd = new SplittableRandom(seed);
            final long bound = 20_000;
            final WindowEngine e = new WindowEngine(new WindowConfig().gpuPollLagBoundNs(bound), s -> {});
            final int hosts = 1 + rnd.nextInt(4);
            final long[] offset = new long[hosts];
            final long[][] lags = new long[hosts][];
            for (int h = 0; h < hosts; h++) {
                // CLOCK_MONOTONIC (host) vs %globaltimer (epoch ns): offsets far negative, different per host.
                offset[h] = -1_700_000_000_000_000_000L + rnd.nextLong(1L << 45);
                lags[h] = new long[1 + rnd.nextInt(200)];
                for (int i = 0; i < lags[h].length; i++) {
                    // Mostly large lags (a busy poller), at least one within the bound (an idle one).
                    lags[h][i] = i == 0 ? rnd.nextLong(bound + 1) : rnd.nextLong(5_000_000);
                }
            }
            long key = 1;
            final int[] next = new int[hosts];
            for (int left = Arrays.stream(lags).mapToInt(l -> l.length).sum(); left > 0; ) {
                final int h = rnd.nextInt(hosts);
                if (next[h] == lags[h].length) {
                    continue;
                }
                final long gpu = 1_700_000_000_000_000_000L + rnd.nextLong(1L << 40);
                e.onHost(h);
                e.onKernelChStart(
                        key++, 999, 0, gpu, gpu + offset[h] + lags[h][next[h]++]); // parent unknown: still a sample
                left--;
            }
            for (int h = 0; h < hosts; h++) {
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
    void shouldPutACollectivesGpuStartOnTheHostClock() {
        final CollectiveSummary[] last = new CollectiveSummary[1];
        final WindowEngine e = new WindowEngine(new WindowConfig(), s -> {}, s -> {
            last[0] = new CollectiveSummary();
            last[0].copyFrom(s);
        });
        final long offset = -5_000_000;
        e.onCollStart(
                1,
                9,
                0,
                2,
                Collectives.ALL_REDUCE,
                Collectives.ALGO_RING,
                Collectives.PROTO_SIMPLE,
                100,
                4,
                1,
                0,
                10_000_000);
        e.onKernelChStart(2, 1, 0, 20_000_000, 20_000_000 + offset + 700);
        e.onKernelChStop(2, 20_001_000, 20_100_000 + offset);
        e.onCollStop(1, 20_200_000);
        assertThat(last[0].gpuStartHostKnown()).isTrue();
        assertThat(last[0].gpuStartHostNs()).isEqualTo(20_000_000 + offset + 700);
        assertThat(last[0].durationNs()).isEqualTo(1_000);
    }

    /** host = GPU + offset(host time) + lag; the clock of one GPU, fed through a collective of (comm 9, rank r). */
    private static void feedGpu(
            final WindowEngine e,
            final long host,
            final int rank,
            final long[] keys,
            final long hostNs,
            final long offsetNs) {
        final long coll = keys[0]++;
        final long ch = keys[0]++;
        e.onHost(host);
        e.onCollStart(
                coll,
                9,
                rank,
                2,
                Collectives.ALL_REDUCE,
                Collectives.ALGO_RING,
                Collectives.PROTO_SIMPLE,
                100,
                4,
                1,
                0,
                hostNs - 1);
        e.onKernelChStart(ch, coll, 0, hostNs - offsetNs, hostNs);
        e.onKernelChStop(ch, hostNs - offsetNs + 1, hostNs);
        e.onCollStop(coll, hostNs);
    }

    /** Lags: mostly a busy poller (up to 3 ms), one sample in 20 within the bound. */
    private static long lag(final SplittableRandom rnd, final long bound) {
        return rnd.nextInt(20) == 0 ? rnd.nextLong(bound + 1) : rnd.nextLong(3_000_000);
    }

    @Test
    void shouldTrackAGpuClockThatDriftsWithinTheBoundAndMeasureTheDrift() {
        for (int seed = 1; seed <= 40; seed++) {
            final SplittableRandom rnd = new SplittableRandom(seed);
            final long bound = 20_000;
            final WindowEngine e = new WindowEngine(
                    new WindowConfig().gpuPollLagBoundNs(bound).gpuClockWindow(1_000_000_000L, 8), s -> {});
            final long offset0 = -1_700_000_000_000_000_000L + rnd.nextLong(1L << 45);
            final double ppm = rnd.nextDouble() * 200 - 100;
            final long[] keys = {1};
            long t = 1_000_000_000_000L;
            // 20 s of samples, one every ~2 ms: the lifetime minimum would be 20 s x drift stale.
            for (int i = 0; i < 10_000; i++) {
                t += 1_000_000 + rnd.nextInt(2_000_000);
                final long trueOffset = offset0 + Math.round(ppm * 1e-6 * (t - 1_000_000_000_000L));
                feedGpu(e, 3, 1, keys, t, trueOffset + lag(rnd, bound));
            }
            final GpuClockEstimate g = new GpuClockEstimate();
            assertThat(e.gpuClock(3, 9, 1, g)).isTrue();
            final String as = "seed " + seed + " drift " + ppm + " " + g;
            final long trueNow = offset0 + Math.round(ppm * 1e-6 * (g.atHostNs() - 1_000_000_000_000L));
            assertThat(g.driftKnown()).as(as).isTrue();
            assertThat(g.buckets()).as(as).isEqualTo(7);
            assertThat(g.steps()).as(as).isZero();
            assertThat(g.samples()).as(as).isEqualTo(10_000);
            assertThat(Math.abs(g.offsetNs() - trueNow)).as(as).isLessThanOrEqualTo(g.errorBoundNs());
            // Bucket minima carry lags of up to 20 us over a 7 s span: the slope is good to a few ppm.
            assertThat(g.driftPpm()).as(as).isCloseTo(ppm, within(8.0));
            // Bound + residual + the extrapolation past the last complete bucket: well under the stale minimum's error.
            assertThat(g.errorBoundNs()).as(as).isLessThan(3 * bound);
            if (ppm > 5) {
                // An offset that grows: the per-host lifetime minimum stays at the first seconds' value.
                final GpuClockEstimate perHost = new GpuClockEstimate();
                assertThat(e.gpuClock(3, perHost)).isTrue();
                assertThat(Math.abs(perHost.offsetNs() - trueNow)).as(as).isGreaterThan(bound);
            }
        }
    }

    @Test
    void shouldGiveAnEpochScaleOffsetToTheNanosecond() {
        // %globaltimer counts Unix-epoch ns, so host CLOCK_MONOTONIC − GPU is near −1.8e18, where doubles step by
        // 256 ns: this offset is rank 0's lowest sample in the real trace nvlink-k-clean, which came out 107 ns off.
        final long offset = -1_795_642_929_819_298_453L;
        final WindowEngine e = new WindowEngine(new WindowConfig().gpuClockWindow(1_000_000_000L, 8), s -> {});
        final long[] keys = {1};
        final GpuClockEstimate g = new GpuClockEstimate();
        long t = 49_697_787_572L;
        for (int i = 0; i < 6_000; i++) {
            t += 1_000_000 + (i * 7919L) % 1_000_000;
            // One sample in 50 polled at once (lag 0), the others late; no drift: every bucket minimum is the offset.
            feedGpu(e, 5, 0, keys, t, offset + (i % 50 == 0 ? 0 : 1_000 + i % 977));
            if (i == 100) {
                assertThat(e.gpuClock(5, 9, 0, g)).isTrue();
                assertThat(g.buckets()).as(g.toString()).isEqualTo(1);
                assertThat(g.offsetNs()).as(g.toString()).isEqualTo(offset);
            }
        }
        assertThat(e.gpuClock(5, 9, 0, g)).isTrue();
        assertThat(g.buckets()).as(g.toString()).isEqualTo(7);
        assertThat(g.driftPpm()).as(g.toString()).isZero();
        assertThat(g.offsetNs()).as(g.toString()).isEqualTo(offset);
    }

    @Test
    void shouldForgetTheOldMinimumAfterAClockStepInEitherDirection() {
        for (final long stepNs : new long[] {5_000_000L, -5_000_000L, 300_000_000L}) {
            final SplittableRandom rnd = new SplittableRandom(stepNs);
            final long bound = 20_000;
            final WindowEngine e = new WindowEngine(
                    new WindowConfig()
                            .gpuPollLagBoundNs(bound)
                            .gpuClockWindow(1_000_000_000L, 8)
                            .gpuClockStepNs(1_000_000L),
                    s -> {});
            final long offset = 123_456_789L;
            final long[] keys = {1};
            long t = 50_000_000_000L;
            final long stepAt = t + 4_500_000_000L;
            final GpuClockEstimate g = new GpuClockEstimate();
            boolean checkedInsideTheBucket = false;
            for (int i = 0; i < 6_000; i++) {
                t += 1_000_000 + rnd.nextInt(1_000_000);
                final long trueOffset = offset + (t >= stepAt ? stepNs : 0);
                feedGpu(e, 4, 0, keys, t, trueOffset + lag(rnd, bound));
                // A downward step shows at once (a sample below the floor); an upward one when its bucket completes.
                if (!checkedInsideTheBucket && t >= stepAt + (stepNs < 0 ? 400_000_000L : 1_600_000_000L)) {
                    checkedInsideTheBucket = true;
                    assertThat(e.gpuClock(4, 9, 0, g)).isTrue();
                    assertThat(Math.abs(g.offsetNs() - trueOffset))
                            .as("step " + stepNs + " " + g)
                            .isLessThanOrEqualTo(g.errorBoundNs());
                    assertThat(g.steps()).as(g.toString()).isEqualTo(1);
                }
            }
            assertThat(e.gpuClock(4, 9, 0, g)).isTrue();
            final String as = "step " + stepNs + " " + g;
            assertThat(Math.abs(g.offsetNs() - (offset + stepNs))).as(as).isLessThanOrEqualTo(g.errorBoundNs());
            // Three buckets since the step, extrapolated up to a bucket past them: the bound grows, stays tight.
            assertThat(g.errorBoundNs()).as(as).isLessThan(4 * bound);
            assertThat(g.steps()).as(as).isEqualTo(1);
            assertThat(g.driftPpm()).as(as).isCloseTo(0.0, within(8.0));
        }
    }

    @Test
    void shouldKeepOneEstimatePerGpuOfAHost() {
        final WindowEngine e = new WindowEngine(new WindowConfig(), s -> {});
        final long[] keys = {1};
        // Two GPUs of one host (ranks 0 and 1 of communicator 9), offsets 1 ms apart, and one of another host.
        feedGpu(e, 1, 0, keys, 10_000_000, 1_000_000 + 300);
        feedGpu(e, 1, 1, keys, 10_100_000, 2_000_000 + 500);
        feedGpu(e, 2, 0, keys, 10_200_000, 7_000_000 + 100);
        final GpuClockEstimate g = new GpuClockEstimate();
        assertThat(e.gpuClock(1, 9, 0, g)).isTrue();
        assertThat(g.offsetNs()).isEqualTo(1_000_300);
        assertThat(g.driftKnown()).isFalse();
        assertThat(g.errorBoundNs()).isEqualTo(20_000);
        assertThat(e.gpuClock(1, 9, 1, g)).isTrue();
        assertThat(g.offsetNs()).isEqualTo(2_000_500);
        assertThat(e.gpuClock(2, 9, 0, g)).isTrue();
        assertThat(g.offsetNs()).isEqualTo(7_000_100);
        assertThat(e.gpuClock(2, 9, 1, g)).isFalse();
        assertThat(e.liveGpuClocks()).isEqualTo(3);
        // The per-host estimate mixes the host's GPUs: the lower offset.
        assertThat(e.gpuClock(1, g)).isTrue();
        assertThat(g.offsetNs()).isEqualTo(1_000_300);
    }
}
