package io.flowscope.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.input.EventTimeListener;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.collector.replay.Replay;
import io.flowscope.ring.EventKind;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.TestRingWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rings of three processes of one host whose backlogs a ring-by-ring, lane-by-lane drain read hundreds of ms of
 * event time apart (issue #15, acceptance 3, HANG): the service must raise nothing while it drains them, and still
 * name a rank that really stops.
 * <p>
 * Process 0 is rank 0 of communicator A (with process 1) and of communicator B (with process 2). Each process has two
 * threads, as NCCL's: the application thread records a Coll start and stop per all-reduce (its lane: two records an
 * iteration per communicator) and the proxy thread every proxy op and step (another lane: ~44 records per channel):
 * a send to the peer and a receive from it on two channels of A and one of B, the receive's four steps posted at once
 * and their data arriving one step time apart, as NCCL posts receives ahead. An iteration every 2 ms; the three rings
 * hold 1.5 s of it when the service attaches them (a job's start, or a service started under a running job). Drained
 * by record counts (1,024 records a ring a poll, shared between its lanes: the drain before host time advanced per
 * producer), the first polls read the application lanes 0.5, 1.0 and 1.5 s ahead while the proxy lanes were at 10 to
 * 40 ms: the receives left waiting at the end of a poll looked stalled for half a second or more, and the service
 * named a HANG with nothing stopped. Drained in time order per host, no record reaches the engines more than a few ms
 * behind its host's time (the producers' own order), and nothing is raised. Then process 1 stops for real: rank 0's
 * next receive of A from it waits while A's other ranks and B go on: a HANG of A naming rank 1 (and nothing else),
 * which a replay of the journal names the same. The rings are not of this machine's clock, so no idle tick moves the
 * host's time: only records do, and the test is deterministic in event time.
 */
class UnevenDrainTest {
    private static final long COMM_A = 0xA11AL;
    private static final long COMM_B = 0xB22BL;
    private static final String HOST = "node-a.cluster";
    private static final int STEPS = 4;
    private static final int BYTES = 65536;
    private static final long STEP_NS = 400_000;
    private static final long ITERATION_NS = 2_000_000;
    private static final long T0 = 10_000_000_000L;
    /** 1.5 s of backlog. */
    private static final int BACKLOG = 750;

    private static final int APP_THREAD = 0;
    private static final int PROXY_THREAD = 1;

    @TempDir
    Path dir;

    private CollectorConfig config() {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("ring.scanMs", "20");
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        return CollectorConfig.load(null, Map.of(), o);
    }

    /** One process: its ring (a lane per thread) and the records of its all-reduces, appended in time per thread. */
    private static final class Producer implements AutoCloseable {
        private record Rec(long timeNs, Function<TestRingWriter.Draft, TestRingWriter.Draft> build) {}

        final TestRingWriter writer;
        /** Per communicator hash: its index in this ring's table, and this process's rank in it (of two). */
        private final Map<Long, int[]> comms = new LinkedHashMap<>();

        private final int allReduce;
        private final int float32;
        private final int ring;
        private final int simple;
        private final TestRingWriter.Draft draft = new TestRingWriter.Draft();
        private final List<Rec> pending = new ArrayList<>();
        private long serial = 1;

        Producer(final Path file, final int pid, final long[] commHashes, final int[] ranks) throws Exception {
            this.writer = TestRingWriter.builder(file)
                    .capacity(1 << 18)
                    .lanes(2)
                    .pid(pid)
                    .hostname(HOST)
                    .create();
            for (int c = 0; c < commHashes.length; c++) {
                comms.put(commHashes[c], new int[] {writer.comm(commHashes[c], ranks[c], 2, 1, "c" + c), ranks[c]});
            }
            this.allReduce = writer.string("AllReduce");
            this.float32 = writer.string("ncclFloat32");
            this.ring = writer.string("Ring");
            this.simple = writer.string("Simple");
        }

        private long id(final EventKind kind, final int comm) {
            return (long) kind.code() << 60 | (long) comm << 48 | serial++;
        }

        /**
         * An all-reduce of {@code comm} from t: a Coll on the application thread; on the proxy thread, per channel, a
         * send op to the other rank and a receive op from it. With {@code peerStopped}, only the receive of channel
         * 0, whose data never comes, and no Coll stop.
         */
        void allReduce(final long commHash, final long t, final int channels, final boolean peerStopped) {
            final int comm = comms.get(commHash)[0];
            final int peer = 1 - comms.get(commHash)[1];
            final long coll = id(EventKind.COLL, comm);
            final long seq = serial;
            pending.add(new Rec(t, d -> d.start(EventKind.COLL, APP_THREAD, t, coll, 0)
                    .coll(seq, channels, 8, (long) BYTES * STEPS / 4, 0, allReduce, float32, ring, simple)));
            for (int ch = 0; ch < (peerStopped ? 1 : channels); ch++) {
                final long c = t + 20_000 + ch * 20_000L;
                if (!peerStopped) {
                    send(comm, peer, ch, c);
                }
                recv(comm, peer, ch, c + 10_000, peerStopped);
            }
            if (!peerStopped) {
                final long end = t + ITERATION_NS - 100_000;
                pending.add(new Rec(end, d -> d.stop(EventKind.COLL, APP_THREAD, end, coll)));
            }
        }

        /** Appends what the all-reduces since the last flush recorded, each thread's records in time order. */
        void flush() {
            pending.sort(java.util.Comparator.comparingLong(Rec::timeNs));
            for (final Rec r : pending) {
                assertThat(writer.append(r.build().apply(draft)))
                        .as("ring full")
                        .isNotNegative();
            }
            pending.clear();
        }

        private void send(final int comm, final int peer, final int ch, final long t) {
            final long op = id(EventKind.PROXY_OP, comm);
            pending.add(new Rec(t, d -> d.start(EventKind.PROXY_OP, PROXY_THREAD, t, op, 0)
                    .proxyOp(1234, peer, STEPS, BYTES, ch, true)));
            for (int s = 0; s < STEPS; s++) {
                final long step = id(EventKind.PROXY_STEP, comm);
                final long ts = t + 1_000 + s * STEP_NS;
                final int index = s;
                pending.add(new Rec(ts, d -> d.start(EventKind.PROXY_STEP, PROXY_THREAD, ts, step, op)
                        .proxyStep(index)));
                pending.add(new Rec(
                        ts + 100,
                        d -> d.state(
                                EventKind.PROXY_STEP,
                                PROXY_THREAD,
                                ts + 100,
                                step,
                                NcclState.PROXY_STEP_SEND_GPU_WAIT,
                                0)));
                pending.add(new Rec(
                        ts + 200,
                        d -> d.state(
                                EventKind.PROXY_STEP,
                                PROXY_THREAD,
                                ts + 200,
                                step,
                                NcclState.PROXY_STEP_SEND_PEER_WAIT,
                                BYTES)));
                pending.add(new Rec(
                        ts + 300,
                        d -> d.state(
                                EventKind.PROXY_STEP,
                                PROXY_THREAD,
                                ts + 300,
                                step,
                                NcclState.PROXY_STEP_SEND_WAIT,
                                BYTES)));
                pending.add(new Rec(
                        ts + STEP_NS - 100, d -> d.stop(EventKind.PROXY_STEP, PROXY_THREAD, ts + STEP_NS - 100, step)));
            }
            final long end = t + 1_000 + STEPS * STEP_NS;
            pending.add(new Rec(end, d -> d.stop(EventKind.PROXY_OP, PROXY_THREAD, end, op)));
        }

        /** A receive op whose steps are all posted at once, each step's data one step time after the last's. */
        private void recv(final int comm, final int peer, final int ch, final long t, final boolean never) {
            final long op = id(EventKind.PROXY_OP, comm);
            pending.add(new Rec(t, d -> d.start(EventKind.PROXY_OP, PROXY_THREAD, t, op, 0)
                    .proxyOp(1234, peer, STEPS, BYTES, ch, false)));
            for (int s = 0; s < STEPS; s++) {
                final long step = id(EventKind.PROXY_STEP, comm);
                final long posted = t + 1_000 + s * 1_000L;
                final long data = t + (s + 1) * STEP_NS;
                final int index = s;
                pending.add(new Rec(posted, d -> d.start(EventKind.PROXY_STEP, PROXY_THREAD, posted, step, op)
                        .proxyStep(index)));
                pending.add(new Rec(
                        posted + 100,
                        d -> d.state(
                                EventKind.PROXY_STEP,
                                PROXY_THREAD,
                                posted + 100,
                                step,
                                NcclState.PROXY_STEP_RECV_WAIT,
                                0)));
                if (!never) {
                    pending.add(new Rec(
                            data,
                            d -> d.state(
                                    EventKind.PROXY_STEP,
                                    PROXY_THREAD,
                                    data,
                                    step,
                                    NcclState.PROXY_STEP_RECV_FLUSH_WAIT,
                                    BYTES)));
                    pending.add(new Rec(
                            data + 100,
                            d -> d.state(
                                    EventKind.PROXY_STEP,
                                    PROXY_THREAD,
                                    data + 100,
                                    step,
                                    NcclState.PROXY_STEP_RECV_GPU_WAIT,
                                    0)));
                    pending.add(new Rec(data + 200, d -> d.stop(EventKind.PROXY_STEP, PROXY_THREAD, data + 200, step)));
                }
            }
            if (!never) {
                final long end = t + STEPS * STEP_NS + 300;
                pending.add(new Rec(end, d -> d.stop(EventKind.PROXY_OP, PROXY_THREAD, end, op)));
            }
        }

        @Override
        public void close() {
            writer.close();
        }
    }

    /** Iterations [from, to): A's all-reduce on two channels (process 1 unless stopped), B's on one. */
    private static void iterations(
            final Producer p0,
            final Producer p1,
            final Producer p2,
            final int from,
            final int to,
            final boolean p1Stopped) {
        for (int i = from; i < to; i++) {
            final long t = T0 + i * ITERATION_NS;
            if (!p1Stopped) {
                p0.allReduce(COMM_A, t, 2, false);
                p1.allReduce(COMM_A, t, 2, false);
            } else if (i == from) {
                p0.allReduce(COMM_A, t, 2, true);
            }
            p0.allReduce(COMM_B, t + 300_000, 1, false);
            p2.allReduce(COMM_B, t + 300_000, 1, false);
            p0.flush();
            p1.flush();
            p2.flush();
        }
    }

    @Test
    void shouldRaiseNothingWhileTheRingsOfAHostAreDrainedUnevenlyAndStillNameARankThatStops() throws Exception {
        // the rings are made apart and moved into the ring directory at once, when the service runs
        final Path staging = dir.resolve("staging");
        Files.createDirectories(staging);
        final int pid = (int) ProcessHandle.current().pid();
        final List<AnomalyEvent> events = Collections.synchronizedList(new ArrayList<>());
        final Anomaly hang;
        final long stop = T0 + (BACKLOG + 50) * ITERATION_NS;
        try (Producer p0 = new Producer(
                        staging.resolve("flowscope-" + (pid + 1) + "-0.ring"),
                        pid + 1,
                        new long[] {COMM_A, COMM_B},
                        new int[] {0, 0});
                Producer p1 = new Producer(
                        staging.resolve("flowscope-" + (pid + 2) + "-0.ring"), pid + 2, new long[] {COMM_A}, new int[] {
                            1
                        });
                Producer p2 = new Producer(
                        staging.resolve("flowscope-" + (pid + 3) + "-0.ring"), pid + 3, new long[] {COMM_B}, new int[] {
                            1
                        });
                CollectorService s = CollectorService.start(config(), events::add)) {
            iterations(p0, p1, p2, 0, BACKLOG, false);
            final long backlog = p0.writer.claimed() + p1.writer.claimed() + p2.writer.claimed();
            Files.move(staging, dir.resolve("rings"));
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> s.snapshot().stats().ringRecordsTotal() == backlog);
            assertThat(s.snapshot().stats().ringsAttached()).isEqualTo(3);
            assertThat(opened(events))
                    .as("anomalies while the backlogs drained")
                    .isEmpty();
            // what the engines saw of the backlogs, in the order they saw it: no record more than a few ms (the
            // producers' own order across their threads' lanes) behind its host's time; the drain by counts: 1.47 s
            assertThat(maxLatenessNs(dir.resolve("journal")))
                    .as("lateness behind the host's time")
                    .isLessThan(5_000_000L);

            // 100 ms more of everyone; then process 1 stops: rank 0's next receive of A from it waits, B goes on
            iterations(p0, p1, p2, BACKLOG, BACKLOG + 50, false);
            iterations(p0, p1, p2, BACKLOG + 50, BACKLOG + 450, true);
            final long total = p0.writer.claimed() + p1.writer.claimed() + p2.writer.claimed();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> s.snapshot().stats().ringRecordsTotal() == total);
            Thread.sleep(200); // a few more batches
            assertThat(s.failure()).isNull();
            final Stats st = s.snapshot().stats();
            assertThat(st.ringCorrupt()).isZero();
            assertThat(st.ringProducerDrops()).isZero();
            assertThat(st.failures().total()).isZero();
            final List<Anomaly> opened = opened(events);
            assertThat(opened).as("anomalies").hasSize(1);
            hang = opened.get(0);
            assertThat(hang.kind()).isEqualTo(AnomalyKind.HANG);
            assertThat(hang.culprit().commHash()).isEqualTo(COMM_A);
            assertThat(hang.culprit().rank())
                    .as("the rank that stopped: %s", hang)
                    .isEqualTo(1);
            assertThat(hang.culprit().peer()).as("the receiver waiting on it").isZero();
            assertThat(hang.culprit().channel()).isZero();
            // dated by rank 0's receive posted after the stop (its period), named the threshold later
            assertThat(hang.startNs()).isBetween(stop - ITERATION_NS, stop + ITERATION_NS);
            assertThat(hang.detectedNs() - hang.startNs())
                    .isBetween(AnomalyStages.HANG_THRESHOLD_NS, AnomalyStages.HANG_THRESHOLD_NS + 5 * ITERATION_NS);
            assertThat(hang.summary()).contains(HOST);
        }
        // written live, faster than real time: a lane publishing while another runs waits at most a look (RingMerge)
        assertThat(maxLatenessNs(dir.resolve("journal")))
                .as("lateness behind the host's time, live")
                .isLessThan(50_000_000L);
        // a replay of the journal names the same hang, dated the same, and nothing else
        final Replay.Result replay =
                Replay.run(dir.resolve("journal"), config(), Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        final List<Anomaly> replayed = opened(replay.events());
        assertThat(replayed).hasSize(1);
        assertThat(replayed.get(0).culprit()).isEqualTo(hang.culprit());
        assertThat(replayed.get(0).startNs()).isEqualTo(hang.startNs());
        assertThat(replayed.get(0).detectedNs()).isEqualTo(hang.detectedNs());
    }

    private static List<Anomaly> opened(final List<AnomalyEvent> events) {
        final List<Anomaly> l = new ArrayList<>();
        synchronized (events) {
            for (final AnomalyEvent e : events) {
                if (e.type().equals("opened")) {
                    l.add(e.anomaly());
                }
            }
        }
        return l;
    }

    /** Over the journal's input calls: the most a call's time was behind the latest time its host had reached. */
    private static long maxLatenessNs(final Path journal) {
        final Map<Long, Long> latest = new LinkedHashMap<>();
        final long[] host = {0};
        final long[] worst = {0};
        final EventTimeListener l = new EventTimeListener() {
            @Override
            public void onHost(final long hostId) {
                host[0] = hostId;
            }

            @Override
            protected void onEventTime(final long t) {
                final Long before = latest.get(host[0]);
                if (before == null || t > before) {
                    latest.put(host[0], t);
                } else {
                    worst[0] = Math.max(worst[0], before - t);
                }
            }
        };
        try (JournalReader r = new JournalReader(journal)) {
            while (r.read(l, new JournalReader.Meta() {}, 256) > 0) {
                // reads on
            }
        }
        return worst[0];
    }
}
