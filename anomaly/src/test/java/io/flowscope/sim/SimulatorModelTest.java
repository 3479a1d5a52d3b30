package io.flowscope.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.input.TelemetryListener;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The simulator's two models: the classic one is the simulator the labelled suite was tuned on, event for event;
 * the nccl one emits in time order, deterministically, with NCCL's step shapes and its wait patterns.
 */
class SimulatorModelTest {
    /** Every event call (with its host), folded into a hash, and checks on the way (time order per host). */
    private static final class Recorder implements TelemetryListener {
        long hash = 1;
        long calls;
        long lastTime = Long.MIN_VALUE;
        long host;
        final Map<Long, Long> hostLast = new HashMap<>();
        long outOfOrder;
        final Map<Long, int[]> ops = new HashMap<>();
        final Map<Long, long[]> live = new HashMap<>();
        final Map<Long, Integer> maxInFlight = new HashMap<>();
        final Map<Long, Integer> inFlight = new HashMap<>();
        final Map<Long, Integer> stepsOfOp = new HashMap<>();
        final Map<Long, Long> bytesOfOp = new HashMap<>();

        private void m(final long... v) {
            for (final long x : v) {
                hash = hash * 0x9E3779B97F4A7C15L + x;
                hash ^= hash >>> 29;
            }
            calls++;
        }

        private void time(final long t) {
            m(1, host);
            final Long last = hostLast.get(host);
            if (last != null && t < last) {
                outOfOrder++;
            }
            hostLast.put(host, t);
        }

        @Override
        public void onHost(final long hostId) {
            host = hostId; // not hashed: advanceTo tells the host again at each call
        }

        @Override
        public void onProxyOpStart(
                final long k, final long c, final int r, final int p, final int ch, final boolean s, final long t) {
            time(t);
            m(2, k, c, r, p, ch, s ? 1 : 0, t);
            ops.put(k, new int[] {r, p, ch, s ? 1 : 0});
        }

        @Override
        public void onProxyOpStop(final long k, final long t) {
            time(t);
            m(3, k, t);
        }

        @Override
        public void onProxyStepStart(final long k, final long op, final int st, final long t) {
            time(t);
            m(4, k, op, st, t);
            live.put(k, new long[] {op, -1});
            final int n = inFlight.merge(op, 1, Integer::sum);
            maxInFlight.merge(op, n, Math::max);
            stepsOfOp.merge(op, 1, Integer::sum);
        }

        @Override
        public void onProxyStepState(final long k, final int st, final long ts, final long t) {
            time(t);
            m(5, k, st, ts, t);
            final long[] s = live.get(k);
            s[1] = st;
            if (ts > 0) {
                bytesOfOp.put(s[0], ts);
            }
        }

        @Override
        public void onProxyStepStop(final long k, final long t) {
            time(t);
            m(6, k, t);
            final long[] s = live.remove(k);
            inFlight.merge(s[0], -1, Integer::sum);
        }

        @Override
        public void onQpStart(final long k, final int d, final long q, final int o, final long len, final long t) {
            time(t);
            m(7, k, d, q, o, len, t);
        }

        @Override
        public void onQpStop(final long k, final long t) {
            time(t);
            m(8, k, t);
        }

        @Override
        public void onCollStart(
                final long k,
                final long c,
                final int r,
                final int n,
                final int f,
                final int al,
                final int pr,
                final long cnt,
                final int ds,
                final int nch,
                final long seq,
                final long t) {
            time(t);
            m(9, k, c, r, n, f, al, pr, cnt, ds, nch, seq, t);
        }

        @Override
        public void onCollStop(final long k, final long t) {
            time(t);
            m(10, k, t);
        }

        @Override
        public void onKernelChStart(final long k, final long c, final int ch, final long p, final long t) {
            time(t);
            m(11, k, c, ch, p, t);
        }

        @Override
        public void onKernelChStop(final long k, final long p, final long t) {
            time(t);
            m(12, k, p, t);
        }

        /** Live steps by (rank, send?, state). */
        Map<String, Integer> stuck() {
            final Map<String, Integer> out = new HashMap<>();
            for (final long[] s : live.values()) {
                final int[] op = ops.get(s[0]);
                out.merge("r" + op[0] + (op[3] == 1 ? " send " : " recv ") + s[1], 1, Integer::sum);
            }
            return out;
        }
    }

    private static Recorder run(final Scenario s, final long stepNs) {
        final Recorder r = new Recorder();
        final ClusterSimulator sim = new ClusterSimulator(s);
        for (long t = stepNs; t <= s.durationNs(); t += stepNs) {
            sim.advanceTo(t, r);
        }
        return r;
    }

    @Test
    void theClassicModelIsTheSimulatorTheSuiteWasTunedOnEventForEvent() {
        // Hashes of every listener call of the simulator before the nccl model (4819eef), advanced 1 ms at a time.
        assertThat(Long.toHexString(run(Scenario.builtIn("clean-mixed-4x4-bursty"), 1_000_000).hash))
                .isEqualTo("cad74273a227ff95");
        assertThat(Long.toHexString(run(Scenario.builtIn("hang-mixed-2x4-offsets"), 1_000_000).hash))
                .isEqualTo("fdc7c95a2697de41");
        assertThat(Long.toHexString(run(Scenario.builtIn("slow-gpu-sendrecv-2x4-25"), 1_000_000).hash))
                .isEqualTo("1457e3fa748bb2b1");
        assertThat(Scenario.builtIn("clean-ring-2x4").model()).isEqualTo(Scenario.MODEL_CLASSIC);
    }

    @Test
    void theNcclModelEmitsEachHostsEventsInTimeOrderAndTheSameRunTwice() {
        for (final String spec : new String[] {
            "nodes=2,gpus=4,channels=2,size=8M,algo=mixed,bursty=true,offsets=true,jitter=0.15,seed=3",
            "nodes=4,gpus=2,channels=2,size=2M,algo=tree,seed=4,fault=slow-link,rank=3,peer=1,fraction=0.5,at=40ms",
            "nodes=2,gpus=2,channels=2,size=4M,transport=socket,netnoise=0.15,seed=5,fault=late-cpu,rank=1,delay=1ms,"
                    + "at=30ms,fault=slow-gpu,rank=2,fraction=1,delay=2ms,at=60ms",
            "nodes=2,gpus=4,channels=2,size=8M,algo=sendrecv,nics=2,seed=6,fault=nic-down,node=1,device=0,at=30ms,"
                    + "for=20ms,fault=congestion,node=0,device=1,fraction=0.5,at=50ms,for=20ms"
        }) {
            final Scenario s = Scenario.parse(spec + ",model=nccl,duration=100ms");
            final Recorder a = run(s, 1_000_000);
            final Recorder b = run(s, 333_333);
            assertThat(a.outOfOrder).as(spec).isZero();
            assertThat(b.outOfOrder).as(spec).isZero();
            assertThat(a.calls).as(spec).isGreaterThan(10_000);
            assertThat(b.hash)
                    .as(spec + ": the same events whatever the advance step")
                    .isEqualTo(a.hash);
        }
    }

    @Test
    void theNcclModelShapesStepsAsNccl228() {
        // ring AllReduce: each rank's share of a channel in chunks of <= 4 x 512 KiB, 2 slices a chunk, 2 (n - 1)
        // chunk steps a loop; send/recv: 128 KiB steps; at most 4 (collectives) or 8 (send/recv) steps in flight
        final Object[][] cases = {
            {"nodes=1,gpus=2,size=4M", 4, 512L << 10, 4},
            {"nodes=1,gpus=2,size=1M", 4, 128L << 10, 4},
            {"nodes=1,gpus=2,size=64M", 32, 1L << 20, 4},
            {"nodes=2,gpus=4,size=8M", 28, 256L << 10, 4},
            {"nodes=1,gpus=2,size=2M,algo=sendrecv", 8, 128L << 10, 8}
        };
        for (final Object[] c : cases) {
            final Scenario s = Scenario.parse(c[0] + ",channels=2,model=nccl,duration=60ms,seed=1");
            final Recorder r = run(s, 1_000_000);
            final Map<Integer, Integer> stepCounts = new HashMap<>();
            r.stepsOfOp.values().forEach(n -> stepCounts.merge(n, 1, Integer::sum));
            final int mode = stepCounts.entrySet().stream()
                    .max(Map.Entry.comparingByValue())
                    .orElseThrow()
                    .getKey();
            assertThat(mode).as(c[0] + " steps per op").isEqualTo(c[1]);
            assertThat(r.bytesOfOp.values()).as(c[0] + " step bytes").containsOnly((Long) c[2]);
            assertThat(r.maxInFlight.values().stream()
                            .mapToInt(Integer::intValue)
                            .max()
                            .orElseThrow())
                    .as(c[0] + " steps in flight")
                    .isEqualTo(c[3]);
        }
    }

    @Test
    void aHungGpuLeavesItsSendsInEightItsReceivesInTwelveAndItsPeersWaitingForData() {
        final Scenario s = Scenario.parse("nodes=2,gpus=2,channels=2,size=4M,seed=7,duration=80ms,model=nccl,"
                + "transport=socket,fault=hang,rank=2,at=40ms");
        final Recorder r = run(s, 1_000_000);
        final Map<String, Integer> stuck = r.stuck();
        assertThat(stuck).containsKeys("r2 send 8", "r3 recv 10");
        assertThat(stuck.keySet())
                .allMatch(
                        k -> !k.startsWith("r2 recv") || k.equals("r2 recv 12"),
                        "the hung rank's receives got their data and wait for its GPU");
        assertThat(stuck.keySet())
                .allMatch(
                        k -> !k.endsWith(" 20") && !k.endsWith(" 9") && !k.endsWith(" 11"),
                        "nothing waits in the network or for a credit over sockets");
    }
}
