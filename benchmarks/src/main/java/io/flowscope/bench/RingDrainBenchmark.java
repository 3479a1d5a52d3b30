package io.flowscope.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.flowscope.ring.EventKind;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.RecordHandler;
import io.flowscope.ring.RecordLayout;
import io.flowscope.ring.RecordView;
import io.flowscope.ring.RingLayout;
import io.flowscope.ring.RingReader;
import io.flowscope.ring.TestRingWriter;
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
 *
 * <pre>
 * java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar RingDrain -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class RingDrainBenchmark
{
    /** Records per ring fill (= capacity, all lanes: the ring is filled completely). */
    public static final int RECORDS = 1 << 20;

    /** The benchmark's lane-count parameter. */
    @State(Scope.Thread)
    public static class Lanes
    {
        @Param({"1", "8"})
        public int lanes;
    }

    /** A ring file, its writer and the expected sums of what was written. */
    abstract static class RingState
    {
        Path directory;
        TestRingWriter writer;
        long expectedHandlerSum;
        long expectedTimeSum;
        private final TestRingWriter.Draft draft = new TestRingWriter.Draft();
        private int comm;
        private long commHash;
        private int rank;
        private int allReduce;
        private int serial;

        int lanes;
        long laneCapacity;
        private long[] fillStart;

        void create(final int lanes) throws IOException
        {
            this.lanes = lanes;
            this.laneCapacity = RECORDS / lanes;
            this.fillStart = new long[lanes];
            final Path shm = Path.of("/dev/shm");
            directory = Files.isDirectory(shm) ? Files.createTempDirectory(shm, "ringbench") :
                Files.createTempDirectory("ringbench");
            writer = TestRingWriter.create(directory.resolve("flowscope-1-0.ring"), lanes, (int)laneCapacity);
            commHash = 0xF10A5C099E2779B1L;
            rank = 3;
            comm = writer.comm(commHash, rank, 8, 1, "bench");
            allReduce = writer.string("AllReduce");
            writer.string("ncclFloat32");
        }

        /** Fills the ring with RECORDS records of the mix; remembers the sums the readers must find. */
        void fill()
        {
            long handlerSum = 0;
            long timeSum = 0;
            long time = 1_000_000;
            int written = 0;
            int group = 0;
            while (written < RECORDS)
            {
                // Threads t0, t1 = t0 + lanes, t2 = t0 + 2 * lanes all write lane t0.
                final int lane = group++ & (lanes - 1);
                final int t0 = lane;
                final int t1 = lane + lanes;
                final int t2 = lane + 2 * lanes;
                // One proxy op of 8 steps: ProxyOp START + STATE 19, 8 x (ProxyStep START, 2-3 STATE, STOP),
                // every other step a NetPlugin QP START/STOP, a KernelCh START/STATE/STOP, a Coll START/STOP.
                final long coll = id(EventKind.COLL);
                handlerSum += emit(lane, draft.start(EventKind.COLL, t0, time++, coll, 0)
                    .coll(serial, 4, 8, 1L << 20, 0, allReduce, 2, 0, 0), time - 1, coll, EventKind.COLL, 1, 1L << 20);
                final long op = id(EventKind.PROXY_OP);
                handlerSum += emit(lane, draft.start(EventKind.PROXY_OP, t1, time++, op, coll).proxyOp(1, 2, 8, 131072, 0, true),
                    time - 1, op, EventKind.PROXY_OP, 1, 0);
                handlerSum += emit(lane, draft.state(EventKind.PROXY_OP, t1, time++, op, NcclState.PROXY_OP_IN_PROGRESS, 0),
                    time - 1, op, EventKind.PROXY_OP, 3, 0);
                for (int s = 0; s < 8; s++)
                {
                    final long step = id(EventKind.PROXY_STEP);
                    handlerSum += emit(lane, draft.start(EventKind.PROXY_STEP, t1, time++, step, op).proxyStep(s),
                        time - 1, step, EventKind.PROXY_STEP, 1, s);
                    handlerSum += emit(lane, draft.state(EventKind.PROXY_STEP, t1, time++, step, 8, 16384),
                        time - 1, step, EventKind.PROXY_STEP, 3, 16384);
                    if ((s & 3) == 0)
                    {
                        handlerSum += emit(lane, draft.state(EventKind.PROXY_STEP, t1, time++, step, 20, 16384),
                            time - 1, step, EventKind.PROXY_STEP, 3, 16384);
                    }
                    handlerSum += emit(lane, draft.state(EventKind.PROXY_STEP, t1, time++, step, 9, 16384),
                        time - 1, step, EventKind.PROXY_STEP, 3, 16384);
                    if ((s & 1) == 0)
                    {
                        final long net = id(EventKind.NET_PLUGIN);
                        handlerSum += emit(lane, draft.start(EventKind.NET_PLUGIN, t2, time++, net, step)
                            .netIb(4, 0, 256 + s, 16384, serial), time - 1, net, EventKind.NET_PLUGIN, 1, 16384);
                        handlerSum += emit(lane, draft.stop(EventKind.NET_PLUGIN, t2, time++, net),
                            time - 1, net, EventKind.NET_PLUGIN, 2, 0);
                    }
                    handlerSum += emit(lane, draft.stop(EventKind.PROXY_STEP, t1, time++, step),
                        time - 1, step, EventKind.PROXY_STEP, 2, 0);
                }
                final long ch = id(EventKind.KERNEL_CH);
                handlerSum += emit(lane, draft.start(EventKind.KERNEL_CH, t1, time++, ch, coll).kernelCh(0, time),
                    time - 1, ch, EventKind.KERNEL_CH, 1, 0);
                handlerSum += emit(lane, draft.state(EventKind.KERNEL_CH, t1, time++, ch, NcclState.KERNEL_CH_STOP, time),
                    time - 1, ch, EventKind.KERNEL_CH, 3, time);
                handlerSum += emit(lane, draft.stop(EventKind.KERNEL_CH, t1, time++, ch), time - 1, ch, EventKind.KERNEL_CH, 2, 0);
                handlerSum += emit(lane, draft.stop(EventKind.PROXY_OP, t1, time++, op), time - 1, op, EventKind.PROXY_OP, 2, 0);
                handlerSum += emit(lane, draft.stop(EventKind.COLL, t0, time++, coll), time - 1, coll, EventKind.COLL, 2, 0);
                written = written();
            }
            for (int lane = 0; lane < lanes; lane++)
            {
                final long end = writer.tail(lane);
                if (end - fillStart[lane] != laneCapacity)
                {
                    throw new IllegalStateException("filled " + (end - fillStart[lane]) + " records in lane " + lane +
                        ", expected " + laneCapacity);
                }
                for (long pos = fillStart[lane]; pos < end; pos++)
                {
                    timeSum += writer.buffer().getLong(writer.slotOffset(lane, pos) + RecordLayout.TIME_NS_OFFSET);
                }
                fillStart[lane] = end;
            }
            expectedHandlerSum = handlerSum;
            expectedTimeSum = timeSum;
        }

        private int written()
        {
            long written = 0;
            for (int lane = 0; lane < lanes; lane++)
            {
                written += writer.tail(lane) - fillStart[lane];
            }
            return (int)written;
        }

        private long id(final EventKind kind)
        {
            return RecordLayout.id(kind.code(), comm, ++serial & RecordLayout.ID_SERIAL_MASK);
        }

        /** Appends a record to {@code lane} and returns its contribution to the handler's sum (0 when the lane was full). */
        private long emit(
            final int lane, final TestRingWriter.Draft d, final long time, final long id, final EventKind kind, final int op,
            final long value)
        {
            final long contribution = contribution(time, id, kind.code(), op, commHash, rank, value);
            if (writer.tail(lane) - fillStart[lane] >= laneCapacity)
            {
                return 0;
            }
            if (writer.append(d) < 0)
            {
                throw new IllegalStateException("ring full during fill: the reader did not drain it");
            }
            return contribution;
        }

        void destroy() throws IOException
        {
            writer.close();
            try (var files = Files.list(directory))
            {
                for (final Path file : (Iterable<Path>)files::iterator)
                {
                    Files.delete(file);
                }
            }
            Files.delete(directory);
        }
    }

    /** What the handler adds for one record: the fields a window engine reads. */
    static long contribution(
        final long time, final long id, final int kind, final int op, final long commHash, final int rank, final long value)
    {
        return time * 31 + (id ^ commHash) + rank + (kind << 2 | op) + value;
    }

    /** The drain state: one reader, the ring re-filled before every invocation. */
    @State(Scope.Thread)
    public static class DrainState extends RingState
    {
        RingReader reader;
        final Handler handler = new Handler();

        @Setup(Level.Trial)
        public void setUp(final Lanes params) throws IOException
        {
            create(params.lanes);
            reader = RingReader.open(writer.path());
        }

        @Setup(Level.Invocation)
        public void refill()
        {
            fill();
            handler.sum = 0;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException
        {
            reader.close();
            destroy();
        }
    }

    /** The baseline state: the same bytes, written once, scanned in place. */
    @State(Scope.Thread)
    public static class ScanState extends RingState
    {
        UnsafeBuffer buffer;
        int firstSlot;

        @Setup(Level.Trial)
        public void setUp() throws IOException
        {
            create(1);
            fill();
            buffer = writer.buffer();
            firstSlot = RingLayout.HEADER_SIZE;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException
        {
            destroy();
        }
    }

    /** Reads what the window engine will: kind, op, time, id, communicator, and the kind's main value. */
    static final class Handler implements RecordHandler
    {
        long sum;

        public void onRecord(final RecordView r)
        {
            final int kind = r.kindCode();
            final int op = r.opCode();
            long value = 0;
            if (op == RecordLayout.OP_STATE)
            {
                value = r.stateArg();
            }
            else if (op == RecordLayout.OP_START)
            {
                switch (kind)
                {
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
    public long drain(final DrainState state)
    {
        final RingReader reader = state.reader;
        final Handler handler = state.handler;
        int total = 0;
        while (total < RECORDS)
        {
            final int n = reader.poll(handler, 4096);
            if (n == 0)
            {
                throw new IllegalStateException("ring ran dry after " + total + " of " + RECORDS + " records");
            }
            total += n;
        }
        if (handler.sum != state.expectedHandlerSum)
        {
            throw new IllegalStateException("drain read wrong values: " + handler.sum + " != " + state.expectedHandlerSum);
        }
        return handler.sum;
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public long scanBaseline(final ScanState state)
    {
        final UnsafeBuffer buffer = state.buffer;
        long sum = 0;
        final int end = state.firstSlot + RECORDS * RecordLayout.RECORD_SIZE;
        for (int slot = state.firstSlot; slot < end; slot += RecordLayout.RECORD_SIZE)
        {
            sum += buffer.getLong(slot + RecordLayout.TIME_NS_OFFSET);
        }
        if (sum != state.expectedTimeSum)
        {
            throw new IllegalStateException("scan read wrong values: " + sum + " != " + state.expectedTimeSum);
        }
        return sum;
    }
}
