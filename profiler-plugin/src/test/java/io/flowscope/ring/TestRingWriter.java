package io.flowscope.ring;

import static io.flowscope.ring.RecordLayout.*;
import static io.flowscope.ring.RingLayout.*;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A Java producer that implements the producer side of {@code RING.md} exactly (file creation, header
 * publication, string and communicator tables, lanes, claim / write / checksum / publish, drop counters),
 * for tests and benchmarks. Thread-safe like the C producer: any thread may claim and publish; each thread
 * needs its own {@link Draft}. As in C, a record goes to lane {@code thread % lane_count} of its
 * {@code thread} field ({@link #append(Draft)}); the methods taking a lane address one explicitly, those
 * without one address lane 0 (for single-lane rings).
 */
public final class TestRingWriter implements AutoCloseable {
    /** The bounded claim retry count of the protocol. */
    public static final int CLAIM_RETRIES = 64;

    private final Path path;
    private final FileChannel channel;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    private final long capacity;
    private final int laneCount;
    private final long laneCapacity;
    private final long mask;
    private final int headerSize;
    /** The layout this writer writes (its communicator entries follow it), published or not. */
    private final int layoutVersion;

    private final Map<String, Integer> strings = new HashMap<>();

    private TestRingWriter(
            final Path path, final FileChannel channel, final MappedByteBuffer mapped, final Builder builder) {
        this.path = path;
        this.channel = channel;
        this.mapped = mapped;
        this.buffer = new UnsafeBuffer(mapped);
        this.capacity = builder.capacity;
        this.laneCount = builder.lanes;
        this.laneCapacity = capacity / laneCount;
        this.mask = laneCapacity - 1;
        this.headerSize = builder.headerSize;
        this.layoutVersion = builder.layoutVersion;
    }

    public static Builder builder(final Path path) {
        return new Builder(path);
    }

    /** A published single-lane ring of {@code capacity} slots with default header fields. */
    public static TestRingWriter create(final Path path, final int capacity) throws IOException {
        return builder(path).capacity(capacity).create();
    }

    /** A published ring of {@code lanes} lanes of {@code laneCapacity} slots with default header fields. */
    public static TestRingWriter create(final Path path, final int lanes, final int laneCapacity) throws IOException {
        return builder(path).lanes(lanes).capacity((long) lanes * laneCapacity).create();
    }

    /** Options of the header a test wants. */
    public static final class Builder {
        private final Path path;
        private long capacity = 1024;
        private int lanes = 1;
        private Integer laneCountField;
        private Long laneCapacityField;
        private int headerSize = HEADER_SIZE;
        private int pid = (int) ProcessHandle.current().pid();
        private int abiVersion = 5;
        private int ncclVersion = 22809;
        private int eventMask = 4095;
        private String hostname = "test-host";
        private long anchorRealtimeNs = 1_700_000_000_000_000_000L;
        private long anchorMonotonicNs = 1_000_000_000L;
        private long magic = MAGIC;
        private int layoutVersion = LAYOUT_VERSION;
        private boolean publish = true;

        private Builder(final Path path) {
            this.path = path;
        }

        public Builder capacity(final long capacity) {
            this.capacity = capacity;
            return this;
        }

        /** Lanes (a power of two); {@code capacity} is the total, split evenly. Default 1. */
        public Builder lanes(final int lanes) {
            this.lanes = lanes;
            return this;
        }

        /** Writes these values into {@code lane_count} / {@code lane_capacity} instead of the real ones (bad headers). */
        public Builder laneFields(final int laneCount, final long laneCapacity) {
            this.laneCountField = laneCount;
            this.laneCapacityField = laneCapacity;
            return this;
        }

        public Builder pid(final int pid) {
            this.pid = pid;
            return this;
        }

        public Builder abiVersion(final int abiVersion) {
            this.abiVersion = abiVersion;
            return this;
        }

        public Builder hostname(final String hostname) {
            this.hostname = hostname;
            return this;
        }

        public Builder anchors(final long realtimeNs, final long monotonicNs) {
            this.anchorRealtimeNs = realtimeNs;
            this.anchorMonotonicNs = monotonicNs;
            return this;
        }

        public Builder magic(final long magic) {
            this.magic = magic;
            return this;
        }

        public Builder layoutVersion(final int layoutVersion) {
            this.layoutVersion = layoutVersion;
            return this;
        }

        /** false: leave {@code layout_version} at 0, as a producer still writing the header would. */
        public Builder publish(final boolean publish) {
            this.publish = publish;
            return this;
        }

        /** Creates the file ({@code O_CREAT|O_EXCL}), writes the header and the slot sequences, publishes. */
        public TestRingWriter create() throws IOException {
            final FileChannel channel = FileChannel.open(
                    path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
            final long length = fileLength(headerSize, capacity);
            final MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
            final TestRingWriter writer = new TestRingWriter(path, channel, mapped, this);
            final UnsafeBuffer b = writer.buffer;
            b.putLong(MAGIC_OFFSET, magic);
            b.putInt(RECORD_SIZE_OFFSET, RECORD_SIZE);
            b.putLong(CAPACITY_OFFSET, capacity);
            b.putInt(LANE_COUNT_OFFSET, laneCountField != null ? laneCountField : lanes);
            b.putLong(LANE_CAPACITY_OFFSET, laneCapacityField != null ? laneCapacityField : capacity / lanes);
            b.putLong(HEADER_SIZE_OFFSET, headerSize);
            b.putInt(PRODUCER_PID_OFFSET, pid);
            b.putInt(ABI_VERSION_OFFSET, abiVersion);
            b.putInt(NCCL_VERSION_OFFSET, ncclVersion);
            b.putInt(EVENT_MASK_OFFSET, eventMask);
            b.putLong(ANCHOR_REALTIME_NS_OFFSET, anchorRealtimeNs);
            b.putLong(ANCHOR_MONOTONIC_NS_OFFSET, anchorMonotonicNs);
            b.putInt(PRODUCER_STATE_OFFSET, PRODUCER_STATE_OPEN);
            b.putInt(CLOCK_SOURCE_OFFSET, CLOCK_SOURCE_CLOCK_GETTIME);
            b.putInt(STRING_CAPACITY_OFFSET, STRING_CAPACITY);
            b.putInt(STRING_COUNT_OFFSET, 1);
            b.putInt(COMM_CAPACITY_OFFSET, COMM_CAPACITY);
            b.putInt(COMM_COUNT_OFFSET, 0);
            putCString(b, HOSTNAME_OFFSET, HOSTNAME_LENGTH, hostname);
            putCString(b, PLUGIN_VERSION_OFFSET, PLUGIN_VERSION_LENGTH, "test-writer");
            for (int lane = 0; lane < lanes; lane++) {
                for (long i = 0; i < capacity / lanes; i++) {
                    b.putLong(writer.slotOffset(lane, i), i);
                }
            }
            if (publish) {
                writer.publishHeader(layoutVersion);
            }
            return writer;
        }
    }

    private static void putCString(final UnsafeBuffer b, final int offset, final int length, final String value) {
        final byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        final int n = Math.min(bytes.length, length - 1);
        b.putBytes(offset, bytes, 0, n);
        b.setMemory(offset + n, length - n, (byte) 0);
    }

    /** Writes {@code layout_version} last, with a release store. */
    public void publishHeader(final int layoutVersion) {
        buffer.putIntOrdered(LAYOUT_VERSION_OFFSET, layoutVersion);
    }

    public Path path() {
        return path;
    }

    /** The whole mapped file, for tests that damage it on purpose. */
    public UnsafeBuffer buffer() {
        return buffer;
    }

    public long capacity() {
        return capacity;
    }

    public int laneCount() {
        return laneCount;
    }

    public long laneCapacity() {
        return laneCapacity;
    }

    /** The lane a producer thread writes: {@code thread % lane_count} (thread as the record's u16). */
    public int laneOf(final int thread) {
        return (thread & 0xFFFF) % laneCount;
    }

    public int slotOffset(final int lane, final long position) {
        return headerSize + (int) ((lane * laneCapacity + (position & mask)) * RECORD_SIZE);
    }

    /** Slot of {@code position} in lane 0. */
    public int slotOffset(final long position) {
        return slotOffset(0, position);
    }

    public long tail(final int lane) {
        return buffer.getLongVolatile(laneTailOffset(lane));
    }

    public long head(final int lane) {
        return buffer.getLongVolatile(laneHeadOffset(lane));
    }

    /** Tail of lane 0. */
    public long tail() {
        return tail(0);
    }

    /** Head of lane 0. */
    public long head() {
        return head(0);
    }

    /** Sum of the lanes' tails: every position ever claimed. */
    public long claimed() {
        long sum = 0;
        for (int lane = 0; lane < laneCount; lane++) {
            sum += tail(lane);
        }
        return sum;
    }

    public long counter(final int offset) {
        return buffer.getLongVolatile(offset);
    }

    /** Interns {@code name} in the string table (truncated to 28 bytes); 0 when the table is full. */
    public synchronized int string(final String name) {
        if (name == null) {
            return NO_STRING;
        }
        final Integer known = strings.get(name);
        if (known != null) {
            return known;
        }
        while (true) {
            final int index = buffer.getIntVolatile(STRING_COUNT_OFFSET);
            if (index >= STRING_CAPACITY) {
                buffer.getAndAddLong(STRINGS_OVERFLOW_OFFSET, 1);
                return NO_STRING;
            }
            if (buffer.compareAndSetInt(STRING_COUNT_OFFSET, index, index + 1)) {
                final byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
                final int length = Math.min(bytes.length, STRING_NAME_MAX);
                final int entry = stringEntryOffset(index);
                buffer.putBytes(entry + STRING_NAME_OFFSET, bytes, 0, length);
                buffer.putIntOrdered(entry + STRING_LENGTH_OFFSET, length);
                strings.put(name, index);
                return index;
            }
        }
    }

    /** Registers a communicator as {@code init} does; returns its index, 4095 when the table is full. */
    public int comm(final long commHash, final int rank, final int nranks, final int nnodes, final String name) {
        return comm(commHash, rank, nranks, nnodes, name, -1, "");
    }

    /**
     * Registers a communicator with its rank's CUDA device, as {@code init} does (layout 1.1 on; a ring built with a
     * 1.0 {@code layoutVersion} gets the 1.0 entry: the name up to 88 bytes, no device).
     */
    public int comm(
            final long commHash,
            final int rank,
            final int nranks,
            final int nnodes,
            final String name,
            final int cudaDevice,
            final String pciBusId) {
        return comm(commHash, rank, nranks, nnodes, name, cudaDevice, pciBusId, null);
    }

    /**
     * The same with the device's UUID ({@code uuid}: its 16 bytes, null unknown), written beside the entry as the
     * plugin does from layout 1.2 on (an older {@code layoutVersion}: not written).
     */
    public int comm(
            final long commHash,
            final int rank,
            final int nranks,
            final int nnodes,
            final String name,
            final int cudaDevice,
            final String pciBusId,
            final byte[] uuid) {
        final boolean hasDevice = layoutMinor(layoutVersion) >= COMM_DEVICE_SINCE_MINOR;
        while (true) {
            final int index = buffer.getIntVolatile(COMM_COUNT_OFFSET);
            if (index >= COMM_CAPACITY) {
                buffer.getAndAddLong(COMMS_OVERFLOW_OFFSET, 1);
                return UNKNOWN_COMM_INDEX;
            }
            if (buffer.compareAndSetInt(COMM_COUNT_OFFSET, index, index + 1)) {
                final int entry = commEntryOffset(index);
                buffer.putLong(entry + COMM_HASH_OFFSET, commHash);
                buffer.putInt(entry + COMM_RANK_OFFSET, rank);
                buffer.putInt(entry + COMM_NRANKS_OFFSET, nranks);
                buffer.putInt(entry + COMM_NNODES_OFFSET, nnodes);
                buffer.putLong(entry + COMM_INIT_MONOTONIC_NS_OFFSET, System.nanoTime());
                putCString(buffer, entry + COMM_NAME_OFFSET, hasDevice ? COMM_NAME_LENGTH : COMM_NAME_LENGTH_1_0, name);
                if (hasDevice) {
                    buffer.putInt(entry + COMM_CUDA_DEV_OFFSET, cudaDevice);
                    putCString(buffer, entry + COMM_PCI_BUS_ID_OFFSET, COMM_PCI_BUS_ID_LENGTH, pciBusId);
                }
                if (uuid != null && layoutMinor(layoutVersion) >= GPU_UUID_SINCE_MINOR) {
                    buffer.putBytes(GPU_UUID_TABLE_OFFSET + GPU_UUID_SIZE * index, uuid, 0, GPU_UUID_SIZE);
                }
                buffer.putIntOrdered(entry + COMM_STATE_OFFSET, COMM_STATE_ACTIVE);
                return index;
            }
        }
    }

    /** Marks the producer closed, as the last {@code finalize} does. */
    public void markClosed(final long closedMonotonicNs) {
        buffer.putLongOrdered(CLOSED_MONOTONIC_NS_OFFSET, closedMonotonicNs);
        buffer.putIntOrdered(PRODUCER_STATE_OFFSET, PRODUCER_STATE_CLOSED);
    }

    /** Claims a position of lane 0. */
    public long tryClaim() {
        return tryClaim(0);
    }

    /** Claims a position of {@code lane} ({@code fs_ring_try_claim}); -1 when the lane is full or contended (counted). */
    public long tryClaim(final int lane) {
        final int tail = laneTailOffset(lane);
        long pos = buffer.getLong(tail);
        for (int i = 0; i < CLAIM_RETRIES; i++) {
            final long seq = buffer.getLongVolatile(slotOffset(lane, pos));
            final long diff = seq - pos;
            if (diff == 0) {
                if (buffer.compareAndSetLong(tail, pos, pos + 1)) {
                    return pos;
                }
                pos = buffer.getLongVolatile(tail);
            } else if (diff < 0) {
                buffer.getAndAddLong(DROPPED_FULL_OFFSET, 1);
                return -1;
            } else {
                pos = buffer.getLongVolatile(tail);
            }
        }
        buffer.getAndAddLong(DROPPED_CONTENDED_OFFSET, 1);
        return -1;
    }

    /** Writes {@code draft} at {@code pos} of lane 0. */
    public void write(final long pos, final Draft draft) {
        write(0, pos, draft);
    }

    /** Writes bytes 8..63 of {@code draft} into the slot of {@code pos} in {@code lane}, then the checksum. */
    public void write(final int lane, final long pos, final Draft draft) {
        final int slot = slotOffset(lane, pos);
        final UnsafeBuffer d = draft.buffer;
        d.putInt(CHECKSUM_OFFSET, 0);
        buffer.putLong(slot + 8, d.getLong(8));
        for (int offset = 16; offset < RECORD_SIZE; offset += 8) {
            buffer.putLong(slot + offset, d.getLong(offset));
        }
        buffer.putInt(slot + CHECKSUM_OFFSET, RecordChecksum.compute(d, 0, pos));
    }

    /** Publishes {@code pos} of lane 0. */
    public boolean publish(final long pos) {
        return publish(0, pos);
    }

    /** Publishes a claimed slot ({@code fs_ring_publish}); false when the consumer reclaimed it (abandoned). */
    public boolean publish(final int lane, final long pos) {
        if (buffer.compareAndSetLong(slotOffset(lane, pos), pos, pos + 1)) {
            return true;
        }
        buffer.getAndAddLong(DROPPED_ABANDONED_OFFSET, 1);
        return false;
    }

    /** Publishes a claimed slot of an owned lane ({@code fs_ring_publish_owned}): a release store, no CAS. */
    public void publishOwned(final int lane, final long pos) {
        buffer.putLongOrdered(slotOffset(lane, pos), pos + 1);
    }

    /** Claim, write, publish in the lane of the draft's thread: the position in that lane, or -1 when dropped. */
    public long append(final Draft draft) {
        return append(laneOf(draft.buffer.getShort(THREAD_OFFSET)), draft);
    }

    /** Claim, write, publish in {@code lane}: the position written, or -1 when the event was dropped. */
    public long append(final int lane, final Draft draft) {
        final long pos = tryClaim(lane);
        if (pos < 0) {
            return -1;
        }
        write(lane, pos, draft);
        return publish(lane, pos) ? pos : -1;
    }

    public void close() {
        IoUtil.unmap(mapped);
        try {
            channel.close();
        } catch (final IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** A record being composed: the common fields, then the payload of its kind and op. */
    public static final class Draft {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[RECORD_SIZE]);

        private Draft reset(
                final int kind, final int op, final int thread, final long timeNs, final long id, final long parent) {
            buffer.setMemory(0, RECORD_SIZE, (byte) 0);
            buffer.putByte(KIND_OFFSET, (byte) kind);
            buffer.putByte(OP_OFFSET, (byte) op);
            buffer.putShort(THREAD_OFFSET, (short) thread);
            buffer.putLong(TIME_NS_OFFSET, timeNs);
            buffer.putLong(ID_OFFSET, id);
            buffer.putLong(PARENT_OFFSET, parent);
            return this;
        }

        public Draft start(
                final EventKind kind, final int thread, final long timeNs, final long id, final long parent) {
            return reset(kind.code(), OP_START, thread, timeNs, id, parent);
        }

        public Draft stop(final EventKind kind, final int thread, final long timeNs, final long id) {
            return reset(kind.code(), OP_STOP, thread, timeNs, id, 0);
        }

        public Draft state(
                final EventKind kind,
                final int thread,
                final long timeNs,
                final long id,
                final int state,
                final long arg) {
            reset(kind.code(), OP_STATE, thread, timeNs, id, 0);
            buffer.putInt(STATE_STATE_OFFSET, state);
            buffer.putLong(STATE_ARG_OFFSET, arg);
            return this;
        }

        /** Any bytes at all (kind/op included), for fuzzing. */
        public Draft raw(
                final int kind, final int op, final int thread, final long timeNs, final long id, final long parent) {
            return reset(kind, op, thread, timeNs, id, parent);
        }

        public Draft putByte(final int offset, final int value) {
            buffer.putByte(offset, (byte) value);
            return this;
        }

        public Draft putShort(final int offset, final int value) {
            buffer.putShort(offset, (short) value);
            return this;
        }

        public Draft putInt(final int offset, final int value) {
            buffer.putInt(offset, value);
            return this;
        }

        public Draft putLong(final int offset, final long value) {
            buffer.putLong(offset, value);
            return this;
        }

        public Draft coll(
                final long seqNumber,
                final int nChannels,
                final int nWarps,
                final long count,
                final int root,
                final int func,
                final int datatype,
                final int algo,
                final int proto) {
            return putLong(
                            COLL_SEQ48_CH8_WARPS8_OFFSET,
                            seqNumber & COLL_SEQ_NUMBER_MASK
                                    | (long) (nChannels & 0xFF) << COLL_N_CHANNELS_SHIFT
                                    | (long) (nWarps & 0xFF) << COLL_N_WARPS_SHIFT)
                    .putLong(COLL_COUNT_OFFSET, count)
                    .putInt(COLL_ROOT_OFFSET, root)
                    .putByte(COLL_FUNC_OFFSET, func)
                    .putByte(COLL_DATATYPE_OFFSET, datatype)
                    .putByte(COLL_ALGO_OFFSET, algo)
                    .putByte(COLL_PROTO_OFFSET, proto);
        }

        public Draft p2p(final long count, final int peer, final int func, final int datatype, final int nChannels) {
            return putLong(P2P_COUNT_OFFSET, count)
                    .putInt(P2P_PEER_OFFSET, peer)
                    .putByte(P2P_FUNC_OFFSET, func)
                    .putByte(P2P_DATATYPE_OFFSET, datatype)
                    .putByte(P2P_N_CHANNELS_OFFSET, nChannels);
        }

        public Draft proxyOp(
                final int pid,
                final int peer,
                final int nSteps,
                final int chunkSize,
                final int channel,
                final boolean isSend) {
            return putInt(PROXY_OP_PID_OFFSET, pid)
                    .putInt(PROXY_OP_PEER_OFFSET, peer)
                    .putInt(PROXY_OP_N_STEPS_OFFSET, nSteps)
                    .putInt(PROXY_OP_CHUNK_SIZE_OFFSET, chunkSize)
                    .putByte(PROXY_OP_CHANNEL_OFFSET, channel)
                    .putByte(PROXY_OP_IS_SEND_OFFSET, isSend ? 1 : 0);
        }

        public Draft proxyStep(final int step) {
            return putInt(PROXY_STEP_STEP_OFFSET, step);
        }

        public Draft kernelCh(final int channel, final long pTimer) {
            return putByte(KERNEL_CH_CHANNEL_OFFSET, channel).putLong(KERNEL_CH_P_TIMER_OFFSET, pTimer);
        }

        public Draft netIb(final int opcode, final int device, final long qpNum, final long length, final long wrId) {
            return putInt(NET_PLUGIN_ID_OFFSET, (int) NET_PLUGIN_ID_IB)
                    .putByte(NET_TYPE_OFFSET, NET_TYPE_IB)
                    .putByte(NET_IB_OPCODE_OFFSET, opcode)
                    .putShort(NET_IB_DEVICE_OFFSET, device)
                    .putInt(NET_IB_QP_NUM_OFFSET, (int) qpNum)
                    .putInt(NET_IB_LENGTH_OFFSET, (int) length)
                    .putLong(NET_IB_WR_ID_OFFSET, wrId);
        }

        public Draft netSocket(final int sockOp, final int fd, final long length) {
            return putInt(NET_PLUGIN_ID_OFFSET, (int) NET_PLUGIN_ID_SOCKET)
                    .putByte(NET_TYPE_OFFSET, NET_TYPE_SOCKET)
                    .putByte(NET_SOCK_OP_OFFSET, sockOp)
                    .putInt(NET_SOCK_FD_OFFSET, fd)
                    .putLong(NET_SOCK_LENGTH_OFFSET, length);
        }

        public Draft netUnknown(final long pluginId) {
            return putInt(NET_PLUGIN_ID_OFFSET, (int) pluginId).putByte(NET_TYPE_OFFSET, NET_TYPE_UNKNOWN);
        }

        public Draft groupApi(final boolean graphCaptured, final int groupDepth) {
            return putByte(GROUP_API_GRAPH_CAPTURED_OFFSET, graphCaptured ? 1 : 0)
                    .putInt(GROUP_API_GROUP_DEPTH_OFFSET, groupDepth);
        }

        public Draft collApi(
                final long count,
                final int root,
                final int func,
                final int datatype,
                final boolean graphCaptured,
                final long stream) {
            return putLong(COLL_API_COUNT_OFFSET, count)
                    .putInt(COLL_API_ROOT_OFFSET, root)
                    .putByte(COLL_API_FUNC_OFFSET, func)
                    .putByte(COLL_API_DATATYPE_OFFSET, datatype)
                    .putByte(COLL_API_GRAPH_CAPTURED_OFFSET, graphCaptured ? 1 : 0)
                    .putLong(COLL_API_STREAM_OFFSET, stream);
        }

        public Draft p2pApi(
                final long count, final int func, final int datatype, final boolean graphCaptured, final long stream) {
            return putLong(P2P_API_COUNT_OFFSET, count)
                    .putByte(P2P_API_FUNC_OFFSET, func)
                    .putByte(P2P_API_DATATYPE_OFFSET, datatype)
                    .putByte(P2P_API_GRAPH_CAPTURED_OFFSET, graphCaptured ? 1 : 0)
                    .putLong(P2P_API_STREAM_OFFSET, stream);
        }

        public Draft kernelLaunch(final long stream) {
            return putLong(KERNEL_LAUNCH_STREAM_OFFSET, stream);
        }

        public Draft ceColl(
                final long seqNumber,
                final long count,
                final int root,
                final int func,
                final int datatype,
                final int syncStrategy,
                final boolean intraBatchSync) {
            return putLong(CE_COLL_SEQ_NUMBER_OFFSET, seqNumber)
                    .putLong(CE_COLL_COUNT_OFFSET, count)
                    .putInt(CE_COLL_ROOT_OFFSET, root)
                    .putByte(CE_COLL_FUNC_OFFSET, func)
                    .putByte(CE_COLL_DATATYPE_OFFSET, datatype)
                    .putByte(CE_COLL_SYNC_STRATEGY_OFFSET, syncStrategy)
                    .putByte(CE_COLL_INTRA_BATCH_SYNC_OFFSET, intraBatchSync ? 1 : 0);
        }

        public Draft ceSync(final boolean isComplete, final int nRanks) {
            return putByte(CE_SYNC_IS_COMPLETE_OFFSET, isComplete ? 1 : 0).putInt(CE_SYNC_N_RANKS_OFFSET, nRanks);
        }

        public Draft ceBatch(final int numOps, final boolean useIntraSync, final long totalBytes) {
            return putInt(CE_BATCH_NUM_OPS_OFFSET, numOps)
                    .putByte(CE_BATCH_USE_INTRA_SYNC_OFFSET, useIntraSync ? 1 : 0)
                    .putLong(CE_BATCH_TOTAL_BYTES_OFFSET, totalBytes);
        }
    }
}
