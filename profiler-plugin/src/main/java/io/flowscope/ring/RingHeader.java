package io.flowscope.ring;

import static io.flowscope.ring.RingLayout.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

/**
 * A view of a ring file's header (see {@link RingLayout} for the diagram). {@link #read} checks the
 * magic, the published layout version and the sizes once; the fields fixed at creation are then cached,
 * the ones producers or the consumer update ({@code abi_version}, mask, state, the lanes' tail and head,
 * counters, tables) are read live from the mapped memory.
 */
public final class RingHeader {
    private final Path path;
    private final AtomicBuffer buffer;
    private final int layoutVersion;
    private final long capacity;
    private final int laneCount;
    private final long laneCapacity;
    private final long laneMask;
    private final int headerSize;
    private final int producerPid;
    private final long anchorRealtimeNs;
    private final long anchorMonotonicNs;
    private final int clockSource;
    private final int stringCapacity;
    private final int commCapacity;
    private final String hostname;
    private final String pluginVersion;

    private RingHeader(final Path path, final AtomicBuffer buffer, final int layoutVersion) {
        this.path = path;
        this.buffer = buffer;
        this.layoutVersion = layoutVersion;
        this.capacity = buffer.getLong(CAPACITY_OFFSET);
        this.laneCount = buffer.getInt(LANE_COUNT_OFFSET);
        this.laneCapacity = buffer.getLong(LANE_CAPACITY_OFFSET);
        this.laneMask = laneCapacity - 1;
        this.headerSize = (int) buffer.getLong(HEADER_SIZE_OFFSET);
        this.producerPid = buffer.getInt(PRODUCER_PID_OFFSET);
        this.anchorRealtimeNs = buffer.getLong(ANCHOR_REALTIME_NS_OFFSET);
        this.anchorMonotonicNs = buffer.getLong(ANCHOR_MONOTONIC_NS_OFFSET);
        this.clockSource = buffer.getInt(CLOCK_SOURCE_OFFSET);
        this.stringCapacity = buffer.getInt(STRING_CAPACITY_OFFSET);
        this.commCapacity = buffer.getInt(COMM_CAPACITY_OFFSET);
        this.hostname = cString(buffer, HOSTNAME_OFFSET, HOSTNAME_LENGTH);
        this.pluginVersion = cString(buffer, PLUGIN_VERSION_OFFSET, PLUGIN_VERSION_LENGTH);
    }

    /**
     * Checks and wraps the header of a mapped ring file.
     *
     * @param path       for messages only.
     * @param buffer     the mapped file from offset 0 (at least the header; the slots too for a reader).
     * @param fileLength the length of the file on disk.
     * @throws RingFormatException.NotARing           bad magic or an inconsistent header.
     * @throws RingFormatException.UnsupportedVersion another major layout version.
     * @throws RingFormatException.Truncated          the file is shorter than the header says.
     * @throws RingFormatException.NotPublished       {@code layout_version} is still 0.
     */
    public static RingHeader read(final Path path, final AtomicBuffer buffer, final long fileLength)
            throws RingFormatException {
        final long available = Math.min(fileLength, buffer.capacity());
        if (available >= 8) {
            final long magic = buffer.getLong(MAGIC_OFFSET);
            if (magic != 0 && magic != MAGIC) {
                throw new RingFormatException.NotARing(
                        path,
                        String.format(
                                "not a flowscope ring (magic 0x%016x, expected 0x%016x \"FSRING1\\n\")", magic, MAGIC));
            }
        }
        if (available < LAYOUT_VERSION_OFFSET + 4) {
            throw new RingFormatException.Truncated(
                    path, "file of " + fileLength + " bytes is shorter than a ring header");
        }
        final int layoutVersion = buffer.getIntVolatile(LAYOUT_VERSION_OFFSET);
        if (layoutVersion == 0) {
            throw new RingFormatException.NotPublished(path);
        }
        if (buffer.getLong(MAGIC_OFFSET) != MAGIC) {
            throw new RingFormatException.NotARing(
                    path,
                    String.format(
                            "not a flowscope ring (magic 0x%016x with layout_version 0x%08x)",
                            buffer.getLong(MAGIC_OFFSET), layoutVersion));
        }
        if (layoutMajor(layoutVersion) != LAYOUT_MAJOR) {
            throw new RingFormatException.UnsupportedVersion(path, layoutVersion);
        }
        if (available < MIN_HEADER_SIZE) {
            throw new RingFormatException.Truncated(
                    path,
                    "file of " + fileLength + " bytes is shorter than the tables of a ring header (" + MIN_HEADER_SIZE
                            + ")");
        }
        final int recordSize = buffer.getInt(RECORD_SIZE_OFFSET);
        final long capacity = buffer.getLong(CAPACITY_OFFSET);
        final int laneCount = buffer.getInt(LANE_COUNT_OFFSET);
        final long laneCapacity = buffer.getLong(LANE_CAPACITY_OFFSET);
        final long headerSize = buffer.getLong(HEADER_SIZE_OFFSET);
        final int stringCapacity = buffer.getInt(STRING_CAPACITY_OFFSET);
        final int commCapacity = buffer.getInt(COMM_CAPACITY_OFFSET);
        if (recordSize != RecordLayout.RECORD_SIZE) {
            throw new RingFormatException.NotARing(path, "record_size " + recordSize + ", layout 1.x has 64");
        }
        if (laneCount < 1 || laneCount > MAX_LANES || Integer.bitCount(laneCount) != 1) {
            throw new RingFormatException.NotARing(
                    path,
                    "lane_count " + Integer.toUnsignedString(laneCount) + " is not a power of two in [1, " + MAX_LANES
                            + "]");
        }
        if (laneCapacity < 2 || Long.bitCount(laneCapacity) != 1) {
            throw new RingFormatException.NotARing(
                    path, "lane_capacity " + Long.toUnsignedString(laneCapacity) + " is not a power of two >= 2");
        }
        if (laneCapacity > Integer.MAX_VALUE / RecordLayout.RECORD_SIZE || capacity != laneCount * laneCapacity) {
            throw new RingFormatException.NotARing(
                    path,
                    "capacity " + Long.toUnsignedString(capacity) + " is not lane_count * lane_capacity (" + laneCount
                            + " * " + laneCapacity + ")");
        }
        if (headerSize < MIN_HEADER_SIZE
                || headerSize % RecordLayout.RECORD_SIZE != 0
                || headerSize > Integer.MAX_VALUE) {
            throw new RingFormatException.NotARing(
                    path, "header_size " + headerSize + " is invalid (1.0 has " + HEADER_SIZE + ")");
        }
        if (stringCapacity < 0
                || stringCapacity > STRING_CAPACITY
                || commCapacity < 0
                || commCapacity > COMM_CAPACITY) {
            throw new RingFormatException.NotARing(
                    path,
                    "string_capacity " + stringCapacity + " / comm_capacity " + commCapacity
                            + " exceed the tables of layout 1.0 (" + STRING_CAPACITY + " / " + COMM_CAPACITY + ")");
        }
        if (capacity > (Integer.MAX_VALUE - headerSize) / RecordLayout.RECORD_SIZE) {
            throw new RingFormatException.NotARing(
                    path, "capacity " + capacity + " slots is larger than this reader maps (2 GiB)");
        }
        final long expectedLength = fileLength(headerSize, capacity);
        if (fileLength < expectedLength) {
            throw new RingFormatException.Truncated(
                    path, "file of " + fileLength + " bytes, header says " + expectedLength);
        }
        return new RingHeader(path, buffer, layoutVersion);
    }

    static String cString(final AtomicBuffer buffer, final int offset, final int maxLength) {
        int length = 0;
        while (length < maxLength && buffer.getByte(offset + length) != 0) {
            length++;
        }
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    public Path path() {
        return path;
    }

    /** The mapped file, from offset 0. */
    public AtomicBuffer buffer() {
        return buffer;
    }

    public int layoutVersion() {
        return layoutVersion;
    }

    public long capacity() {
        return capacity;
    }

    /** {@code lane_count}: a power of two in [1, 64]. */
    public int laneCount() {
        return laneCount;
    }

    /** {@code lane_capacity}: slots per lane, a power of two &gt;= 2. */
    public long laneCapacity() {
        return laneCapacity;
    }

    /** {@code lane_capacity - 1}. */
    public long laneMask() {
        return laneMask;
    }

    public int headerSize() {
        return headerSize;
    }

    public int producerPid() {
        return producerPid;
    }

    public long anchorRealtimeNs() {
        return anchorRealtimeNs;
    }

    public long anchorMonotonicNs() {
        return anchorMonotonicNs;
    }

    /** 1 TSC scaled to CLOCK_MONOTONIC ns, 2 clock_gettime. */
    public int clockSource() {
        return clockSource;
    }

    public int stringCapacity() {
        return stringCapacity;
    }

    public int commCapacity() {
        return commCapacity;
    }

    public String hostname() {
        return hostname;
    }

    public String pluginVersion() {
        return pluginVersion;
    }

    /** Wall-clock ns (CLOCK_REALTIME) of a record's CLOCK_MONOTONIC {@code time_ns}. */
    public long toWallClockNs(final long monotonicNs) {
        return monotonicNs - anchorMonotonicNs + anchorRealtimeNs;
    }

    // Live fields.

    public int abiVersion() {
        return buffer.getIntVolatile(ABI_VERSION_OFFSET);
    }

    public int ncclVersion() {
        return buffer.getIntVolatile(NCCL_VERSION_OFFSET);
    }

    public int eventMask() {
        return buffer.getIntVolatile(EVENT_MASK_OFFSET);
    }

    public int producerState() {
        return buffer.getIntVolatile(PRODUCER_STATE_OFFSET);
    }

    public boolean isProducerClosed() {
        return producerState() == PRODUCER_STATE_CLOSED;
    }

    public long closedMonotonicNs() {
        return buffer.getLongVolatile(CLOSED_MONOTONIC_NS_OFFSET);
    }

    public int stringCount() {
        return buffer.getIntVolatile(STRING_COUNT_OFFSET);
    }

    public int commCount() {
        return buffer.getIntVolatile(COMM_COUNT_OFFSET);
    }

    /** Lane {@code lane}'s tail: the next position a producer of that lane claims. */
    public long tail(final int lane) {
        return buffer.getLongVolatile(laneTailOffset(checkLane(lane)));
    }

    /** Lane {@code lane}'s head as the consumer last stored it. */
    public long head(final int lane) {
        return buffer.getLongVolatile(laneHeadOffset(checkLane(lane)));
    }

    /** Positions claimed in lane {@code lane} and not yet consumed, per the stored head. */
    public long lag(final int lane) {
        return Math.max(0, tail(lane) - head(lane));
    }

    /** {@link #lag(int)} summed over the lanes. */
    public long lag() {
        long lag = 0;
        for (int lane = 0; lane < laneCount; lane++) {
            lag += lag(lane);
        }
        return lag;
    }

    private int checkLane(final int lane) {
        if (lane < 0 || lane >= laneCount) {
            throw new IndexOutOfBoundsException("lane " + lane + " of " + laneCount);
        }
        return lane;
    }

    public long consumerHeartbeatNs() {
        return buffer.getLongVolatile(CONSUMER_HEARTBEAT_NS_OFFSET);
    }

    public int consumerPid() {
        return buffer.getIntVolatile(CONSUMER_PID_OFFSET);
    }

    public long consumerSkippedStale() {
        return buffer.getLongVolatile(CONSUMER_SKIPPED_STALE_OFFSET);
    }

    public long consumerCorrupt() {
        return buffer.getLongVolatile(CONSUMER_CORRUPT_OFFSET);
    }

    public long droppedFull() {
        return buffer.getLongVolatile(DROPPED_FULL_OFFSET);
    }

    public long droppedAbandoned() {
        return buffer.getLongVolatile(DROPPED_ABANDONED_OFFSET);
    }

    public long droppedContended() {
        return buffer.getLongVolatile(DROPPED_CONTENDED_OFFSET);
    }

    public long invalidCalls() {
        return buffer.getLongVolatile(INVALID_CALLS_OFFSET);
    }

    public long stringsOverflow() {
        return buffer.getLongVolatile(STRINGS_OVERFLOW_OFFSET);
    }

    public long commsOverflow() {
        return buffer.getLongVolatile(COMMS_OVERFLOW_OFFSET);
    }

    /**
     * The string at {@code index}, or null for index 0, an index outside the table, or an entry not yet
     * published. Allocates: callers cache the result ({@link RecordView} does).
     */
    public String string(final int index) {
        if (index <= NO_STRING || index >= stringCapacity) {
            return null;
        }
        final int entry = stringEntryOffset(index);
        final int length = buffer.getIntVolatile(entry + STRING_LENGTH_OFFSET);
        if (length <= 0) {
            return null;
        }
        final byte[] bytes = new byte[Math.min(length, STRING_NAME_MAX)];
        buffer.getBytes(entry + STRING_NAME_OFFSET, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** The state of communicator entry {@code index}: 0 not published (or out of the table), 1 active, 2 finalized. */
    public int commState(final int index) {
        if (index < 0 || index >= commCapacity) {
            return COMM_STATE_UNPUBLISHED;
        }
        return buffer.getIntVolatile(commEntryOffset(index) + COMM_STATE_OFFSET);
    }

    /** Reads communicator entry {@code index} (allocates); null when not published or out of the table. */
    public CommInfo comm(final int index) {
        final int state = commState(index);
        if (state == COMM_STATE_UNPUBLISHED) {
            return null;
        }
        final int entry = commEntryOffset(index);
        final boolean hasDevice = layoutMinor(layoutVersion) >= COMM_DEVICE_SINCE_MINOR;
        return new CommInfo(
                index,
                buffer.getLong(entry + COMM_HASH_OFFSET),
                state,
                buffer.getInt(entry + COMM_RANK_OFFSET),
                buffer.getInt(entry + COMM_NRANKS_OFFSET),
                buffer.getInt(entry + COMM_NNODES_OFFSET),
                buffer.getLong(entry + COMM_INIT_MONOTONIC_NS_OFFSET),
                buffer.getLongVolatile(entry + COMM_FINALIZE_MONOTONIC_NS_OFFSET),
                cString(buffer, entry + COMM_NAME_OFFSET, hasDevice ? COMM_NAME_LENGTH : COMM_NAME_LENGTH_1_0),
                hasDevice ? buffer.getInt(entry + COMM_CUDA_DEV_OFFSET) : CommInfo.NO_DEVICE,
                hasDevice ? cString(buffer, entry + COMM_PCI_BUS_ID_OFFSET, COMM_PCI_BUS_ID_LENGTH) : "",
                layoutMinor(layoutVersion) >= GPU_UUID_SINCE_MINOR
                        ? gpuUuid(buffer, GPU_UUID_TABLE_OFFSET + GPU_UUID_SIZE * index)
                        : "");
    }

    /**
     * The 16 UUID bytes at {@code offset} as nvidia-smi prints them ({@code GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx});
     * "" when all zero.
     */
    static String gpuUuid(final DirectBuffer buffer, final int offset) {
        final StringBuilder b = new StringBuilder(40).append("GPU-");
        boolean zero = true;
        for (int i = 0; i < GPU_UUID_SIZE; i++) {
            final int v = buffer.getByte(offset + i) & 0xFF;
            zero &= v == 0;
            if (i == 4 || i == 6 || i == 8 || i == 10) {
                b.append('-');
            }
            b.append(Character.forDigit(v >> 4, 16)).append(Character.forDigit(v & 0xF, 16));
        }
        return zero ? "" : b.toString();
    }

    /**
     * One communicator table entry.
     *
     * @param cudaDevice the CUDA device ordinal of this process's rank in it ({@link #NO_DEVICE}: unknown, or a
     *                   layout 1.0 ring), numbered as that process sees them (within its CUDA_VISIBLE_DEVICES)
     * @param pciBusId   that device's PCI bus id as CUDA gives it ("0000:19:00.0"; nvidia-smi and DCGM print the
     *                   domain with 8 digits), the identity that holds across processes and tools; empty when
     *                   unknown
     * @param gpuUuid    that device's UUID as nvidia-smi prints it ({@code GPU-1a2b3c4d-...}, the same under every
     *                   process's numbering and across hosts); empty when unknown or before layout 1.2
     */
    public record CommInfo(
            int index,
            long commHash,
            int state,
            int rank,
            int nranks,
            int nnodes,
            long initMonotonicNs,
            long finalizeMonotonicNs,
            String name,
            int cudaDevice,
            String pciBusId,
            String gpuUuid) {
        /** {@link #cudaDevice} when the producer could not tell it. */
        public static final int NO_DEVICE = -1;

        public boolean hasDevice() {
            return cudaDevice >= 0;
        }
    }

    public String toString() {
        return "RingHeader{path=" + path + ", layout=" + layoutVersionString(layoutVersion) + ", capacity=" + capacity
                + ", lanes="
                + laneCount + 'x' + laneCapacity + ", pid="
                + producerPid + ", host=" + hostname + '}';
    }
}
