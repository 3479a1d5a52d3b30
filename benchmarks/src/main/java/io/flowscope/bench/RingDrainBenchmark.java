package io.flowscope.bench;

import io.flowscope.api.input.TelemetryListener;
import io.flowscope.collector.ingest.RingEventSource;
import io.flowscope.ring.EventKind;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.RecordHandler;
import io.flowscope.ring.RecordLayout;
import io.flowscope.ring.RecordView;
import io.flowscope.ring.RingLayout;
import io.flowscope.ring.RingMerge;
import io.flowscope.ring.RingReader;
import io.flowscope.ring.TestRingWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Java drain rate of one ring on one thread, in records/s ({@code thrpt}, ops = records). {@code drain}:
 * {@link RingReader#poll} over a ring pre-filled by {@link TestRingWriter} with a proxy-heavy mix (mostly
 * ProxyStep START/STATE/STOP, some ProxyOp, KernelCh, NetPlugin IB QP, Coll), re-filled before every
 * invocation, with a handler reading what a window engine reads. {@code lanes}: the ring's lane count
 * (1, or 8 as the C default); every lane is filled completely, the groups of the mix going to the lanes
 * in turn (each group's threads map to one lane). {@code scanBaseline}: a plain sequential
 * scan of the same slot bytes summing one field (the memory-bandwidth floor). Both check their sums
 * against what the writer wrote, so a fast wrong answer fails the run.
 * <p>
 * {@code drainHost}: the same records in 4 rings of one host, 8 lanes each, a record every 125 ns (8 M records/s
 * on the node), drained as the collector's {@code RingDirectory} drains a host: {@code order=rings}, ring by ring
 * and lane by lane by record counts ({@link RingReader#poll}, 1,024 a ring: the drain before host time advanced per
 * producer); {@code order=merge}, one {@link RingMerge} in time order (4,096 a poll) with a skew of {@code skewUs}
 * (default 50, the service's; 0: an exact merge). {@code interleave}: how the times of the 32 lanes interleave, which
 * sets the merge's runs: {@code op}, a proxy op's ~40 records per lane in turn; {@code record}, record by record the
 * rings in turn, then their lanes (an exact merge's worst case, a run of one record, and a change of ring at every
 * run: busy proxy threads of a node's processes).
 * {@code drainHostAdapter}: the same drain into the collector's ring adapter ({@link RingEventSource}, decoding and
 * keying every record into window-engine calls) with a listener that only sums the times: what a change of ring
 * between two records costs the adapter.
 *
 * <pre>
 * java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar RingDrain -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class RingDrainBenchmark {
    /** Records per ring fill (= capacity, all lanes: the ring is filled completely). */
    public static final int RECORDS = 1 << 20;

    /** The benchmark's lane-count parameter. */
    @State(Scope.Thread)
    public static class Lanes {
        @Param({"1", "8"})
        public int lanes;
    }

    /** A ring file, its writer and the expected sums of what was written. */
    abstract static class RingState {
        Path directory;
        TestRingWriter writer;
        /** Every ring (writer is the first); records go to ring by ring, lane by lane as {@link #target} says. */
        TestRingWriter[] writers;

        long expectedHandlerSum;
        long expectedTimeSum;
        private final TestRingWriter.Draft draft = new TestRingWriter.Draft();
        private int comm;
        private long commHash;
        private int rank;
        private int allReduce;
        private int serial;

        int lanes;
        int rings;
        boolean byRecord;
        /** Event time between consecutive records of the fill (record times are their index times this). */
        long timeStepNs = 1;

        long laneCapacity;
        /** Per ring and lane (ring * lanes + lane): where this fill started. */
        private long[] fillStart;

        private int next;
        /** The time (in records) of the next fill's first record: fills go on in time, as a live ring's records do. */
        private long nextTime = 1_000_000;

        void create(final int lanes) throws IOException {
            create(lanes, 1, false);
        }

        /** {@code rings} rings of {@code lanes} lanes, RECORDS slots in all; {@code byRecord}: see {@link #target}. */
        void create(final int lanes, final int rings, final boolean byRecord) throws IOException {
            this.lanes = lanes;
            this.rings = rings;
            this.byRecord = byRecord;
            this.laneCapacity = RECORDS / lanes / rings;
            this.fillStart = new long[lanes * rings];
            final Path shm = Path.of("/dev/shm");
            directory = Files.isDirectory(shm)
                    ? Files.createTempDirectory(shm, "ringbench")
                    : Files.createTempDirectory("ringbench");
            writers = new TestRingWriter[rings];
            commHash = 0xF10A5C099E2779B1L;
            rank = 3;
            for (int r = 0; r < rings; r++) {
                writers[r] = TestRingWriter.create(
                        directory.resolve("flowscope-" + (r + 1) + "-0.ring"), lanes, (int) laneCapacity);
                // the same tables in every ring: one comm, the same string indexes
                comm = writers[r].comm(commHash, rank, 8, 1, "bench");
                allReduce = writers[r].string("AllReduce");
                writers[r].string("ncclFloat32");
            }
            writer = writers[0];
        }

        /**
         * The ring and lane (ring * lanes + lane) of the next record of group {@code group}: with {@code byRecord},
         * record by record the rings in turn, then their lanes; else the group's, groups in turn (ring first, then
         * lane).
         */
        private int target(final int group) {
            if (byRecord) {
                final int k = next++ % (rings * lanes);
                return k % rings * lanes + k / rings;
            }
            return group % rings * lanes + group / rings % lanes;
        }

        /** Fills the ring with RECORDS records of the mix; remembers the sums the readers must find. */
        void fill() {
            long handlerSum = 0;
            long timeSum = 0;
            long time = nextTime;
            int written = 0;
            int group = 0;
            while (written < RECORDS) {
                // Threads t0, t1 = t0 + lanes, t2 = t0 + 2 * lanes all write lane t0.
                final int g = group++;
                final int lane = g & (lanes - 1);
                final int t0 = lane;
                final int t1 = lane + lanes;
                final int t2 = lane + 2 * lanes;
                // One proxy op of 8 steps: ProxyOp START + STATE 19, 8 x (ProxyStep START, 2-3 STATE, STOP),
                // every other step a NetPlugin QP START/STOP, a KernelCh START/STATE/STOP, a Coll START/STOP.
                final long coll = id(EventKind.COLL);
                handlerSum += emit(
                        g,
                        draft.start(EventKind.COLL, t0, time++, coll, 0)
                                .coll(serial, 4, 8, 1L << 20, 0, allReduce, 2, 0, 0),
                        time - 1,
                        coll,
                        EventKind.COLL,
                        1,
                        1L << 20);
                final long op = id(EventKind.PROXY_OP);
                handlerSum += emit(
                        g,
                        draft.start(EventKind.PROXY_OP, t1, time++, op, coll).proxyOp(1, 2, 8, 131072, 0, true),
                        time - 1,
                        op,
                        EventKind.PROXY_OP,
                        1,
                        0);
                handlerSum += emit(
                        g,
                        draft.state(EventKind.PROXY_OP, t1, time++, op, NcclState.PROXY_OP_IN_PROGRESS, 0),
                        time - 1,
                        op,
                        EventKind.PROXY_OP,
                        3,
                        0);
                for (int s = 0; s < 8; s++) {
                    final long step = id(EventKind.PROXY_STEP);
                    handlerSum += emit(
                            g,
                            draft.start(EventKind.PROXY_STEP, t1, time++, step, op)
                                    .proxyStep(s),
                            time - 1,
                            step,
                            EventKind.PROXY_STEP,
                            1,
                            s);
                    handlerSum += emit(
                            g,
                            draft.state(EventKind.PROXY_STEP, t1, time++, step, 8, 16384),
                            time - 1,
                            step,
                            EventKind.PROXY_STEP,
                            3,
                            16384);
                    if ((s & 3) == 0) {
                        handlerSum += emit(
                                g,
                                draft.state(EventKind.PROXY_STEP, t1, time++, step, 20, 16384),
                                time - 1,
                                step,
                                EventKind.PROXY_STEP,
                                3,
                                16384);
                    }
                    handlerSum += emit(
                            g,
                            draft.state(EventKind.PROXY_STEP, t1, time++, step, 9, 16384),
                            time - 1,
                            step,
                            EventKind.PROXY_STEP,
                            3,
                            16384);
                    if ((s & 1) == 0) {
                        final long net = id(EventKind.NET_PLUGIN);
                        handlerSum += emit(
                                g,
                                draft.start(EventKind.NET_PLUGIN, t2, time++, net, step)
                                        .netIb(4, 0, 256 + s, 16384, serial),
                                time - 1,
                                net,
                                EventKind.NET_PLUGIN,
                                1,
                                16384);
                        handlerSum += emit(
                                g,
                                draft.stop(EventKind.NET_PLUGIN, t2, time++, net),
                                time - 1,
                                net,
                                EventKind.NET_PLUGIN,
                                2,
                                0);
                    }
                    handlerSum += emit(
                            g,
                            draft.stop(EventKind.PROXY_STEP, t1, time++, step),
                            time - 1,
                            step,
                            EventKind.PROXY_STEP,
                            2,
                            0);
                }
                final long ch = id(EventKind.KERNEL_CH);
                handlerSum += emit(
                        g,
                        draft.start(EventKind.KERNEL_CH, t1, time++, ch, coll).kernelCh(0, time),
                        time - 1,
                        ch,
                        EventKind.KERNEL_CH,
                        1,
                        0);
                handlerSum += emit(
                        g,
                        draft.state(EventKind.KERNEL_CH, t1, time++, ch, NcclState.KERNEL_CH_STOP, time),
                        time - 1,
                        ch,
                        EventKind.KERNEL_CH,
                        3,
                        time);
                handlerSum += emit(
                        g, draft.stop(EventKind.KERNEL_CH, t1, time++, ch), time - 1, ch, EventKind.KERNEL_CH, 2, 0);
                handlerSum +=
                        emit(g, draft.stop(EventKind.PROXY_OP, t1, time++, op), time - 1, op, EventKind.PROXY_OP, 2, 0);
                handlerSum +=
                        emit(g, draft.stop(EventKind.COLL, t0, time++, coll), time - 1, coll, EventKind.COLL, 2, 0);
                written = written();
            }
            nextTime = time;
            for (int r = 0; r < rings; r++) {
                final TestRingWriter w = writers[r];
                for (int lane = 0; lane < lanes; lane++) {
                    final int at = r * lanes + lane;
                    final long end = w.tail(lane);
                    if (end - fillStart[at] != laneCapacity) {
                        throw new IllegalStateException("filled " + (end - fillStart[at]) + " records in ring " + r
                                + " lane " + lane + ", expected " + laneCapacity);
                    }
                    for (long pos = fillStart[at]; pos < end; pos++) {
                        timeSum += w.buffer().getLong(w.slotOffset(lane, pos) + RecordLayout.TIME_NS_OFFSET);
                    }
                    fillStart[at] = end;
                }
            }
            expectedHandlerSum = handlerSum;
            expectedTimeSum = timeSum;
        }

        private int written() {
            long written = 0;
            for (int r = 0; r < rings; r++) {
                for (int lane = 0; lane < lanes; lane++) {
                    written += writers[r].tail(lane) - fillStart[r * lanes + lane];
                }
            }
            return (int) written;
        }

        private long id(final EventKind kind) {
            return RecordLayout.id(kind.code(), comm, ++serial & RecordLayout.ID_SERIAL_MASK);
        }

        /**
         * Appends a record of group {@code group} to its ring and lane ({@link #target}) and returns its contribution
         * to the handler's sum (0 when the lane was full).
         */
        private long emit(
                final int group,
                final TestRingWriter.Draft d,
                final long time,
                final long id,
                final EventKind kind,
                final int op,
                final long value) {
            // the fill counts time in records; the record's time is that times timeStepNs
            final long t = time * timeStepNs;
            d.putLong(RecordLayout.TIME_NS_OFFSET, t);
            final long contribution = contribution(t, id, kind.code(), op, commHash, rank, value);
            final int at = target(group);
            final TestRingWriter w = writers[at / lanes];
            final int lane = at % lanes;
            if (w.tail(lane) - fillStart[at] >= laneCapacity) {
                return 0;
            }
            if (w.append(lane, d) < 0) {
                throw new IllegalStateException("ring full during fill: the reader did not drain it");
            }
            return contribution;
        }

        void destroy() throws IOException {
            for (final TestRingWriter w : writers) {
                w.close();
            }
            try (var files = Files.list(directory)) {
                for (final Path file : (Iterable<Path>) files::iterator) {
                    Files.delete(file);
                }
            }
            Files.delete(directory);
        }
    }

    /** What the handler adds for one record: the fields a window engine reads. */
    static long contribution(
            final long time,
            final long id,
            final int kind,
            final int op,
            final long commHash,
            final int rank,
            final long value) {
        return time * 31 + (id ^ commHash) + rank + (kind << 2 | op) + value;
    }

    /** The drain state: one reader, the ring re-filled before every invocation. */
    @State(Scope.Thread)
    public static class DrainState extends RingState {
        RingReader reader;
        final Handler handler = new Handler();

        @Setup(Level.Trial)
        public void setUp(final Lanes params) throws IOException {
            create(params.lanes);
            reader = RingReader.open(writer.path());
        }

        @Setup(Level.Invocation)
        public void refill() {
            fill();
            handler.sum = 0;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            reader.close();
            destroy();
        }
    }

    /** Rings of one host: 4 rings of 8 lanes, drained ring by ring or merged in time order. */
    @State(Scope.Thread)
    public static class HostState extends RingState {
        @Param({"rings", "merge"})
        public String order;

        /** The merge's skew in µs (0: exact). */
        @Param({"50"})
        public long skewUs;

        @Param({"op", "record"})
        public String interleave;

        RingReader[] readers;
        RingMerge merge;
        boolean merged;
        final Handler handler = new Handler();
        final Calls calls = new Calls();
        final RingEventSource adapter = new RingEventSource(calls);

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            create(8, 4, interleave.equals("record"));
            timeStepNs = 125;
            readers = new RingReader[rings];
            merge = new RingMerge(skewUs * 1_000);
            for (int r = 0; r < rings; r++) {
                readers[r] = RingReader.open(writers[r].path());
                merge.add(readers[r]);
            }
            merged = order.equals("merge");
        }

        @Setup(Level.Invocation)
        public void refill() {
            fill();
            handler.sum = 0;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            for (final RingReader r : readers) {
                r.close();
            }
            destroy();
        }
    }

    /** The baseline state: the same bytes, written once, scanned in place. */
    @State(Scope.Thread)
    public static class ScanState extends RingState {
        UnsafeBuffer buffer;
        int firstSlot;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            create(1);
            fill();
            buffer = writer.buffer();
            firstSlot = RingLayout.HEADER_SIZE;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            destroy();
        }
    }

    /** The window-engine calls of the ring adapter, summed by time (an engine's input, not its work). */
    static final class Calls implements TelemetryListener {
        long sum;

        public void onProxyOpStart(
                final long opKey,
                final long commHash,
                final int rank,
                final int peer,
                final int channel,
                final boolean isSend,
                final long timeNs) {
            sum += timeNs ^ opKey;
        }

        public void onProxyOpStop(final long opKey, final long timeNs) {
            sum += timeNs ^ opKey;
        }

        public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
            sum += timeNs ^ stepKey;
        }

        public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
            sum += timeNs ^ stepKey;
        }

        public void onProxyStepStop(final long stepKey, final long timeNs) {
            sum += timeNs ^ stepKey;
        }

        public void onQpStart(
                final long wrKey,
                final int device,
                final long qpNum,
                final int opcode,
                final long length,
                final long timeNs) {
            sum += timeNs ^ wrKey;
        }

        public void onQpStop(final long wrKey, final long timeNs) {
            sum += timeNs ^ wrKey;
        }

        public void onCollStart(
                final long collKey,
                final long commHash,
                final int rank,
                final int nranks,
                final int func,
                final int algo,
                final int proto,
                final long count,
                final int datatypeSize,
                final int nChannels,
                final long seqNumber,
                final long timeNs) {
            sum += timeNs ^ collKey ^ func;
        }

        public void onCollStop(final long collKey, final long timeNs) {
            sum += timeNs ^ collKey;
        }

        public void onKernelChStart(
                final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
            sum += timeNs ^ chKey;
        }

        public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
            sum += timeNs ^ chKey;
        }
    }

    /** Reads what the window engine will: kind, op, time, id, communicator, and the kind's main value. */
    static final class Handler implements RecordHandler {
        long sum;

        public void onRecord(final RecordView r) {
            final int kind = r.kindCode();
            final int op = r.opCode();
            long value = 0;
            if (op == RecordLayout.OP_STATE) {
                value = r.stateArg();
            } else if (op == RecordLayout.OP_START) {
                switch (kind) {
                    case 1: // Coll
                        value = r.count();
                        break;
                    case 4: // ProxyStep
                        value = r.step();
                        break;
                    case 7: // NetPlugin
                        value = r.length();
                        break;
                    default:
                        break;
                }
            }
            sum += contribution(r.timeNs(), r.id(), kind, op, r.commHash(), r.rank(), value);
        }
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public long drain(final DrainState state) {
        final RingReader reader = state.reader;
        final Handler handler = state.handler;
        int total = 0;
        while (total < RECORDS) {
            final int n = reader.poll(handler, 4096);
            if (n == 0) {
                throw new IllegalStateException("ring ran dry after " + total + " of " + RECORDS + " records");
            }
            total += n;
        }
        if (handler.sum != state.expectedHandlerSum) {
            throw new IllegalStateException(
                    "drain read wrong values: " + handler.sum + " != " + state.expectedHandlerSum);
        }
        return handler.sum;
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public long drainHost(final HostState state) {
        final Handler handler = state.handler;
        int total = 0;
        while (total < RECORDS) {
            int n = 0;
            if (state.merged) {
                n = state.merge.poll(handler, 1024 * state.rings);
            } else {
                for (final RingReader reader : state.readers) {
                    n += reader.poll(handler, 1024);
                }
            }
            if (n == 0) {
                throw new IllegalStateException("rings ran dry after " + total + " of " + RECORDS + " records");
            }
            total += n;
        }
        if (handler.sum != state.expectedHandlerSum) {
            throw new IllegalStateException(
                    "drain read wrong values: " + handler.sum + " != " + state.expectedHandlerSum);
        }
        return handler.sum;
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public long drainHostAdapter(final HostState state) {
        final RingEventSource adapter = state.adapter;
        final long before = adapter.records();
        long total = 0;
        while (total < RECORDS) {
            int n = 0;
            if (state.merged) {
                n = state.merge.poll(adapter, 1024 * state.rings);
            } else {
                for (final RingReader reader : state.readers) {
                    n += reader.poll(adapter, 1024);
                }
            }
            if (n == 0) {
                throw new IllegalStateException("rings ran dry after " + total + " of " + RECORDS + " records");
            }
            total += n;
        }
        if (adapter.records() - before != RECORDS) {
            throw new IllegalStateException("the adapter took " + (adapter.records() - before) + " records");
        }
        return state.calls.sum;
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public long scanBaseline(final ScanState state) {
        final UnsafeBuffer buffer = state.buffer;
        long sum = 0;
        final int end = state.firstSlot + RECORDS * RecordLayout.RECORD_SIZE;
        for (int slot = state.firstSlot; slot < end; slot += RecordLayout.RECORD_SIZE) {
            sum += buffer.getLong(slot + RecordLayout.TIME_NS_OFFSET);
        }
        if (sum != state.expectedTimeSum) {
            throw new IllegalStateException("scan read wrong values: " + sum + " != " + state.expectedTimeSum);
        }
        return sum;
    }
}
