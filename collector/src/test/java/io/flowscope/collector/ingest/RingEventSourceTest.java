package io.flowscope.collector.ingest;

import static io.flowscope.ring.EventKind.COLL;
import static io.flowscope.ring.EventKind.KERNEL_CH;
import static io.flowscope.ring.EventKind.NET_PLUGIN;
import static io.flowscope.ring.EventKind.PROXY_OP;
import static io.flowscope.ring.EventKind.PROXY_STEP;
import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.RingReader;
import io.flowscope.ring.TestRingWriter;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingEventSourceTest {
    @TempDir
    Path dir;

    private static long id(final int kind, final int comm, final long serial) {
        return (long) kind << 60 | (long) comm << 48 | serial;
    }

    @Test
    void shouldFeedProxyStepLifecyclesFromARealRingIntoTheEngine() throws Exception {
        final List<FlowSummary> out = new ArrayList<>();
        final WindowEngine engine = new WindowEngine(new WindowConfig().periodNs(1_000_000), s -> {
            final FlowSummary c = new FlowSummary();
            c.copyFrom(s);
            out.add(c);
        });
        final RingEventSource source = new RingEventSource(engine);
        try (TestRingWriter writer = TestRingWriter.create(dir.resolve("r.ring"), 1024)) {
            final int comm = writer.comm(0xABCDEFL, 3, 8, 1, "world");
            final TestRingWriter.Draft d = new TestRingWriter.Draft();
            final long op = id(PROXY_OP.code(), comm, 1);
            final long t0 = 5_000_000;
            writer.append(d.start(PROXY_OP, 0, t0, op, 0).proxyOp(1234, 4, 2, 65536, 7, true));
            for (int s = 0; s < 2; s++) {
                final long step = id(PROXY_STEP.code(), comm, 10 + s);
                final long t = t0 + 1_000 + s * 10_000;
                writer.append(d.start(PROXY_STEP, 0, t, step, op).proxyStep(s));
                writer.append(d.state(PROXY_STEP, 0, t + 100, step, NcclState.PROXY_STEP_SEND_GPU_WAIT, 0));
                writer.append(d.state(PROXY_STEP, 0, t + 300, step, NcclState.PROXY_STEP_SEND_PEER_WAIT, 65536));
                writer.append(d.state(PROXY_STEP, 0, t + 1_000, step, NcclState.PROXY_STEP_SEND_WAIT, 65536));
                writer.append(d.stop(PROXY_STEP, 0, t + 5_000, step));
            }
            writer.append(d.stop(PROXY_OP, 0, t0 + 20_000, op));

            try (RingReader reader = RingReader.open(writer.path())) {
                while (reader.poll(source, 100) > 0) {
                    // drain
                }
            }
        }
        engine.flush();
        out.removeIf(s -> s.kind() != FlowSummary.KIND_STEP);

        assertThat(source.records()).isEqualTo(12);
        assertThat(out).hasSize(1);
        final FlowSummary s = out.get(0);
        assertThat(s.hostId()).isEqualTo(RingEventSource.hostId("test-host")).isNotZero();
        assertThat(RingEventSource.hostId("test-host")).isEqualTo(0x97864685C4A5B06AL); // stable: FNV-1a 64
        assertThat(s.commHash()).isEqualTo(0xABCDEFL);
        assertThat(s.rank()).isEqualTo(3);
        assertThat(s.peer()).isEqualTo(4);
        assertThat(s.channel()).isEqualTo(7);
        assertThat(s.isSend()).isTrue();
        assertThat(s.completions()).isEqualTo(2);
        assertThat(s.bytes()).isEqualTo(2 * 65536);
        assertThat(s.windowBytes()).isEqualTo(2 * 65536);
        // first post (9) at t0 + 2000, last completion at t0 + 16000
        assertThat(s.windowSpanNs()).isEqualTo(14_000);
        assertThat(s.outstandingSteps()).isZero();
        assertThat(s.phaseCount(Phase.GPU_WAIT)).isEqualTo(2);
        assertThat(s.phaseSumNs(Phase.GPU_WAIT)).isEqualTo(2 * 200);
        assertThat(s.phaseSumNs(Phase.PEER_WAIT)).isEqualTo(2 * 700);
        assertThat(s.phaseMaxNs(Phase.NETWORK)).isEqualTo(4_000);
        assertThat(engine.liveOps()).isZero();
    }

    @Test
    void shouldFeedNetPluginQpWorkRequestsAsQpFlowsOfTheRingsHost() throws Exception {
        final List<FlowSummary> out = new ArrayList<>();
        final WindowEngine engine = new WindowEngine(new WindowConfig(), s -> {
            final FlowSummary c = new FlowSummary();
            c.copyFrom(s);
            out.add(c);
        });
        final RingEventSource source = new RingEventSource(engine);
        try (TestRingWriter writer = TestRingWriter.builder(dir.resolve("q.ring"))
                .capacity(1024)
                .hostname("node-7")
                .create()) {
            final int comm = writer.comm(0xABCDEFL, 3, 8, 1, "world");
            final TestRingWriter.Draft d = new TestRingWriter.Draft();
            for (int w = 0; w < 3; w++) {
                final long wr = id(NET_PLUGIN.code(), comm, 100 + w);
                writer.append(d.start(NET_PLUGIN, 0, 1_000 + w * 100, wr, 0).netIb(2, 1, 0x1234, 4096, w));
                if (w < 2) {
                    writer.append(d.stop(NET_PLUGIN, 0, 2_000 + w * 100, wr));
                }
            }
            final long sock = id(NET_PLUGIN.code(), comm, 200);
            writer.append(d.start(NET_PLUGIN, 0, 1_500, sock, 0).netSocket(0, 9, 100));
            writer.append(d.stop(NET_PLUGIN, 0, 1_600, sock));
            try (RingReader reader = RingReader.open(writer.path())) {
                while (reader.poll(source, 100) > 0) {
                    // drain
                }
            }
        }
        engine.flush();
        assertThat(out).singleElement().satisfies(s -> {
            assertThat(s.kind()).isEqualTo(FlowSummary.KIND_QP);
            assertThat(s.hostId()).isEqualTo(RingEventSource.hostId("node-7"));
            assertThat(s.device()).isEqualTo(1);
            assertThat(s.qpNum()).isEqualTo(0x1234);
            assertThat(s.completions()).isEqualTo(2);
            assertThat(s.bytes()).isEqualTo(2 * 4096);
            assertThat(s.outstandingSteps()).isEqualTo(1);
            assertThat(s.outstandingBytes()).isEqualTo(4096);
        });
        assertThat(engine.unknownStepRecords()).isEqualTo(1); // the socket event's stop
    }

    @Test
    void shouldFeedACollectiveAndItsKernelChannelsIntoACollectiveSummary() throws Exception {
        final List<CollectiveSummary> out = new ArrayList<>();
        final WindowEngine engine = new WindowEngine(new WindowConfig(), s -> {}, s -> {
            final CollectiveSummary c = new CollectiveSummary();
            c.copyFrom(s);
            out.add(c);
        });
        final RingEventSource source = new RingEventSource(engine);
        final long gpu = 1_700_000_000_000_000_000L;
        try (TestRingWriter writer = TestRingWriter.create(dir.resolve("c.ring"), 1024)) {
            final int comm = writer.comm(0xABCDEFL, 3, 8, 1, "world");
            final TestRingWriter.Draft d = new TestRingWriter.Draft();
            final long coll = id(COLL.code(), comm, 1);
            writer.append(d.start(COLL, 0, 1_000, coll, 0)
                    .coll(
                            42,
                            2,
                            16,
                            1 << 20,
                            0,
                            writer.string("AllReduce"),
                            writer.string("ncclFloat32"),
                            writer.string("RING"),
                            writer.string("SIMPLE")));
            writer.append(d.stop(COLL, 0, 1_500, coll));
            for (int ch = 0; ch < 2; ch++) {
                final long k = id(KERNEL_CH.code(), comm, 10 + ch);
                writer.append(d.start(KERNEL_CH, 1, 30_000 + ch, k, coll).kernelCh(ch, gpu + 10_000 + ch * 500));
                writer.append(d.state(KERNEL_CH, 1, 60_000 + ch, k, 22, gpu + 20_000 + ch * 1_000));
                writer.append(d.stop(KERNEL_CH, 1, 60_001 + ch, k));
            }
            try (RingReader reader = RingReader.open(writer.path())) {
                while (reader.poll(source, 100) > 0) {
                    // drain
                }
            }
        }
        assertThat(out).singleElement().satisfies(c -> {
            assertThat(c.func()).isEqualTo(Collectives.ALL_REDUCE);
            assertThat(c.algo()).isEqualTo(Collectives.ALGO_RING);
            assertThat(c.proto()).isEqualTo(Collectives.PROTO_SIMPLE);
            assertThat(c.datatypeSize()).isEqualTo(4);
            assertThat(c.nranks()).isEqualTo(8);
            assertThat(c.seqNumber()).isEqualTo(42);
            assertThat(c.hostId()).isEqualTo(RingEventSource.hostId("test-host"));
            assertThat(c.complete()).isTrue();
            assertThat(c.durationNs()).isEqualTo(11_000); // gpu + 10000 .. gpu + 21000
            assertThat(c.bytes()).isEqualTo(4L << 20);
            assertThat(c.busBandwidthBytesPerSecond()).isEqualTo(c.algBandwidthBytesPerSecond() * 2 * 7 / 8);
        });
    }
    /**
     * Each communicator entry of a ring is handed on once, with the ring's hostname and producer pid and the
     * rank's GPU, before the first record handed on after it appeared: those of a ring when its records start, a
     * later one as soon as a record names it; a second ring's its own.
     */
    @Test
    void shouldHandOnEachCommunicatorRankOfARingOnceBeforeItsRecords() throws Exception {
        final List<String> calls = new ArrayList<>();
        final io.flowscope.api.input.TelemetryListener listener = new io.flowscope.api.input.TelemetryListener() {
            @Override
            public void onRingComm(
                    final long hostId,
                    final String hostname,
                    final int pid,
                    final long commHash,
                    final int rank,
                    final int nranks,
                    final int cudaDevice,
                    final String pciBusId) {
                calls.add(String.format(
                        "comm %s %d 0x%x %d/%d gpu %d '%s'",
                        hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId));
                assertThat(hostId).isEqualTo(RingEventSource.hostId(hostname));
            }

            @Override
            public void onProxyOpStart(
                    final long opKey,
                    final long commHash,
                    final int rank,
                    final int peer,
                    final int channel,
                    final boolean isSend,
                    final long timeNs) {
                calls.add(String.format("op 0x%x", commHash));
            }

            @Override
            public void onProxyOpStop(final long opKey, final long timeNs) {}

            @Override
            public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {}

            @Override
            public void onProxyStepState(
                    final long stepKey, final int state, final long transSize, final long timeNs) {}

            @Override
            public void onProxyStepStop(final long stepKey, final long timeNs) {}
        };
        final RingEventSource source = new RingEventSource(listener);
        try (TestRingWriter a = TestRingWriter.builder(dir.resolve("a.ring"))
                        .capacity(64)
                        .hostname("gpu-node-17")
                        .pid(48213)
                        .create();
                TestRingWriter b = TestRingWriter.builder(dir.resolve("b.ring"))
                        .capacity(64)
                        .hostname("gpu-node-18")
                        .pid(9001)
                        .create();
                RingReader ra = RingReader.open(a.path());
                RingReader rb = RingReader.open(b.path())) {
            final TestRingWriter.Draft d = new TestRingWriter.Draft();
            final int world = a.comm(0x1111L, 1, 2, 1, "world", 1, "0000:19:00.0");
            a.append(d.start(PROXY_OP, 0, 10, id(PROXY_OP.code(), world, 1), 0).proxyOp(48213, 0, 1, 1, 0, true));
            a.append(d.start(PROXY_OP, 0, 11, id(PROXY_OP.code(), world, 2), 0).proxyOp(48213, 0, 1, 1, 0, true));
            ra.poll(source, 100);
            // a communicator made later (a split): handed on with its first record
            final int split = a.comm(0x2222L, 0, 1, 1, "split", 1, "0000:19:00.0");
            a.append(d.start(PROXY_OP, 0, 12, id(PROXY_OP.code(), split, 3), 0).proxyOp(48213, 0, 1, 1, 0, true));
            ra.poll(source, 100);
            final int other = b.comm(0x1111L, 0, 2, 1, "world", -1, "");
            b.append(d.start(PROXY_OP, 0, 13, id(PROXY_OP.code(), other, 1), 0).proxyOp(9001, 1, 1, 1, 0, true));
            rb.poll(source, 100);
            a.append(d.start(PROXY_OP, 0, 14, id(PROXY_OP.code(), world, 4), 0).proxyOp(48213, 0, 1, 1, 0, true));
            ra.poll(source, 100); // back to ring a: nothing handed on again
        }
        assertThat(calls)
                .containsExactly(
                        "comm gpu-node-17 48213 0x1111 1/2 gpu 1 '0000:19:00.0'",
                        "op 0x1111",
                        "op 0x1111",
                        "comm gpu-node-17 48213 0x2222 0/1 gpu 1 '0000:19:00.0'",
                        "op 0x2222",
                        "comm gpu-node-18 9001 0x1111 0/2 gpu -1 ''",
                        "op 0x1111",
                        "op 0x1111");
    }
}
