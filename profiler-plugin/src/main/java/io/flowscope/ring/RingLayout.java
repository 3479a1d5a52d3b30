package io.flowscope.ring;

/**
 * Layout 1.3 of a flowscope ring file: the header, the string and communicator tables, and where the
 * slots start. The single source of these offsets on the Java side; {@code RING.md} is the contract and
 * {@code fs_ring_layout.h} the C twin (same names, static asserts). All integers are little-endian.
 * <p>
 * Versions: a reader refuses another major version and reads every minor version of its major; a minor version
 * only adds. 1.0: the first layout. 1.1: each communicator entry gets the CUDA device of the rank
 * ({@code cuda_dev} at 96, {@code pci_bus_id} at 100) and its name shrinks from 88 to 56 bytes (NUL-terminated
 * inside them, so a 1.0 reader still reads it whole); this reader reads a 1.0 entry's 88-byte name and reports
 * its device unknown. 1.2: each communicator entry's GPU UUID, 16 bytes in a table beside the entries
 * ({@link #GPU_UUID_TABLE_OFFSET}, in header bytes older writers left zero and older readers skip: the entries
 * are as in 1.1); all zero, or an older ring: unknown. 1.3: protocol only (owned lanes publish by a store, so a late
 * publication may land on a skipped slot: {@link RingReader} frees it a lap later; RING.md, "Late publication").
 *
 * <pre>
 *   0                                   HEADER (header_size bytes, 262144 in 1.x)
 *   header_size                         lane 0: slot 0 .. slot lane_capacity-1
 *   header_size + 64*lane_capacity      lane 1: slot 0 .. slot lane_capacity-1
 *   ...                                 lane lane_count-1
 * </pre>
 *
 * Slot {@code i} of lane {@code l} is at {@code header_size + 64*(l*lane_capacity + i)}; {@code lane_capacity}
 * is a power of two &gt;= 2, {@code lane_count} a power of two in [1, 64], {@code capacity = lane_count *
 * lane_capacity}. Each lane is an independent MPSC ring with its own tail and head (in the lane table).
 *
 * Header:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+   0
 * |                 magic "FSRING1\n" (u64 0x0A31474E49525346)    |
 * +-------------------------------+-------------------------------+   8
 * |   layout_version (u32)        |       record_size (u32) = 64  |
 * +-------------------------------+-------------------------------+  16
 * |                       capacity (u64, slots)                   |
 * +---------------------------------------------------------------+  24
 * |                    header_size (u64, bytes)                   |
 * +-------------------------------+-------------------------------+  32
 * |     producer_pid (i32)        |     abi_version (u32)         |
 * +-------------------------------+-------------------------------+  40
 * |     nccl_version (i32)        |     event_mask (u32)          |
 * +-------------------------------+-------------------------------+  48
 * |                 anchor_realtime_ns (u64)                      |
 * +---------------------------------------------------------------+  56
 * |                 anchor_monotonic_ns (u64)                     |
 * +-------------------------------+-------------------------------+  64
 * |   producer_state (u32)        |     clock_source (u32)        |
 * +-------------------------------+-------------------------------+  72
 * |                 closed_monotonic_ns (u64)                     |
 * +-------------------------------+-------------------------------+  80
 * |   string_capacity (u32)       |     string_count (u32)        |
 * +-------------------------------+-------------------------------+  88
 * |   comm_capacity (u32)         |     comm_count (u32)          |
 * +-------------------------------+-------------------------------+  96
 * |                 hostname (char[64], NUL-terminated)           |
 * +---------------------------------------------------------------+ 160
 * |                 plugin_version (char[32], NUL-terminated)     |
 * +-------------------------------+-------------------------------+ 192
 * |     lane_count (u32)          |     reserved (u32)            |
 * +-------------------------------+-------------------------------+ 200
 * |                 lane_capacity (u64, slots per lane)           |
 * +---------------------------------------------------------------+ 208
 * |                 reserved (zero) up to 768                     |
 * +---------------------------------------------------------------+ 768
 * |   consumer block (128 bytes, written only by the consumer):   |
 * |     768 consumer_heartbeat_ns (u64, consumer's CLOCK_MONOTONIC)|
 * |     776 consumer_pid (i32), 780 reserved (u32)                |
 * |     784 consumer_skipped_stale (u64)                          |
 * |     792 consumer_corrupt (u64)                                |
 * +---------------------------------------------------------------+ 896
 * |   producer counters (128 bytes, atomic adds by producers):    |
 * |     896 dropped_full, 904 dropped_abandoned,                  |
 * |     912 dropped_contended, 920 invalid_calls,                 |
 * |     928 strings_overflow, 936 comms_overflow (u64 each)       |
 * +---------------------------------------------------------------+ 1024
 * |   reserved (zero) up to 4096                                  |
 * +---------------------------------------------------------------+ 4096
 * |   string table: string_capacity (256) entries of 32 bytes     |
 * +---------------------------------------------------------------+ 12288
 * |   reserved (zero) up to 16384                                 |
 * +---------------------------------------------------------------+ 16384
 * |   communicator table: comm_capacity (1024) entries of 128 B   |
 * +---------------------------------------------------------------+ 147456
 * |   lane table: lane_count (&lt;= 64) entries of 256 bytes         |
 * |     +0   tail (u64): next position a producer claims (alone on 128 bytes)
 * |     +128 head (u64): next position the consumer reads (alone on 128 bytes)
 * +---------------------------------------------------------------+ 163840
 * |   reserved (zero) up to header_size (262144)                  |
 * +---------------------------------------------------------------+
 * </pre>
 *
 * String table entry (32 bytes at {@link #STRING_TABLE_OFFSET} + 32*i):
 *
 * <pre>
 *  0 u32 length   bytes in name; 0 = not yet published (written last, release)
 *  4 char[28]     name (not NUL-terminated when length = 28)
 * </pre>
 *
 * Communicator table entry (128 bytes at {@link #COMM_TABLE_OFFSET} + 128*i):
 *
 * <pre>
 *   0 u64 comm_hash            8 u32 state (0 unpublished, 1 active, 2 finalized; written last)
 *  12 i32 rank                16 i32 nranks               20 i32 nnodes
 *  24 u64 init_monotonic_ns   32 u64 finalize_monotonic_ns
 *  40 char[56] name (NUL-terminated, may be empty; char[88] up to 128 in 1.0)
 *  96 i32 cuda_dev            the CUDA device ordinal of the rank, -1 unknown (1.1)
 * 100 char[28] pci_bus_id     its PCI bus id as CUDA gives it ("0000:19:00.0"), NUL-terminated,
 *                             empty when unknown (1.1)
 * </pre>
 */
public final class RingLayout {
    /** "FSRING1\n" read as a little-endian u64. */
    public static final long MAGIC = 0x0A31474E49525346L;
    /** The major version this reader understands. */
    public static final int LAYOUT_MAJOR = 1;
    /** The minor version this reader was written against (it reads every earlier one). */
    public static final int LAYOUT_MINOR = 3;
    /** {@code major << 16 | minor}. */
    public static final int LAYOUT_VERSION = LAYOUT_MAJOR << 16 | LAYOUT_MINOR;

    public static final int MAGIC_OFFSET = 0;
    public static final int LAYOUT_VERSION_OFFSET = 8;
    public static final int RECORD_SIZE_OFFSET = 12;
    public static final int CAPACITY_OFFSET = 16;
    public static final int HEADER_SIZE_OFFSET = 24;
    public static final int PRODUCER_PID_OFFSET = 32;
    public static final int ABI_VERSION_OFFSET = 36;
    public static final int NCCL_VERSION_OFFSET = 40;
    public static final int EVENT_MASK_OFFSET = 44;
    public static final int ANCHOR_REALTIME_NS_OFFSET = 48;
    public static final int ANCHOR_MONOTONIC_NS_OFFSET = 56;
    public static final int PRODUCER_STATE_OFFSET = 64;
    public static final int CLOCK_SOURCE_OFFSET = 68;
    public static final int CLOSED_MONOTONIC_NS_OFFSET = 72;
    public static final int STRING_CAPACITY_OFFSET = 80;
    public static final int STRING_COUNT_OFFSET = 84;
    public static final int COMM_CAPACITY_OFFSET = 88;
    public static final int COMM_COUNT_OFFSET = 92;
    public static final int HOSTNAME_OFFSET = 96;
    public static final int HOSTNAME_LENGTH = 64;
    public static final int PLUGIN_VERSION_OFFSET = 160;
    public static final int PLUGIN_VERSION_LENGTH = 32;

    public static final int LANE_COUNT_OFFSET = 192;
    public static final int LANE_CAPACITY_OFFSET = 200;

    public static final int CONSUMER_HEARTBEAT_NS_OFFSET = 768;
    public static final int CONSUMER_PID_OFFSET = 776;
    public static final int CONSUMER_SKIPPED_STALE_OFFSET = 784;
    public static final int CONSUMER_CORRUPT_OFFSET = 792;

    public static final int DROPPED_FULL_OFFSET = 896;
    public static final int DROPPED_ABANDONED_OFFSET = 904;
    public static final int DROPPED_CONTENDED_OFFSET = 912;
    public static final int INVALID_CALLS_OFFSET = 920;
    public static final int STRINGS_OVERFLOW_OFFSET = 928;
    public static final int COMMS_OVERFLOW_OFFSET = 936;

    public static final int STRING_TABLE_OFFSET = 4096;
    public static final int STRING_ENTRY_SIZE = 32;
    public static final int STRING_LENGTH_OFFSET = 0;
    public static final int STRING_NAME_OFFSET = 4;
    public static final int STRING_NAME_MAX = 28;
    /** Entries in 1.0; also the most a u8 index can name. */
    public static final int STRING_CAPACITY = 256;
    /** String index 0: "no string" (NULL, or the table was full). */
    public static final int NO_STRING = 0;

    public static final int COMM_TABLE_OFFSET = 16384;
    public static final int COMM_ENTRY_SIZE = 128;
    public static final int COMM_HASH_OFFSET = 0;
    public static final int COMM_STATE_OFFSET = 8;
    public static final int COMM_RANK_OFFSET = 12;
    public static final int COMM_NRANKS_OFFSET = 16;
    public static final int COMM_NNODES_OFFSET = 20;
    public static final int COMM_INIT_MONOTONIC_NS_OFFSET = 24;
    public static final int COMM_FINALIZE_MONOTONIC_NS_OFFSET = 32;
    public static final int COMM_NAME_OFFSET = 40;
    /** The name's bytes since 1.1 (NUL-terminated inside them). */
    public static final int COMM_NAME_LENGTH = 56;
    /** The name's bytes in 1.0: up to the end of the entry. */
    public static final int COMM_NAME_LENGTH_1_0 = 88;
    /** i32 (1.1): the CUDA device ordinal of the rank, as its process numbers them; -1 unknown. */
    public static final int COMM_CUDA_DEV_OFFSET = 96;
    /** char[28] (1.1): the device's PCI bus id as CUDA gives it, NUL-terminated; empty when unknown. */
    public static final int COMM_PCI_BUS_ID_OFFSET = 100;

    public static final int COMM_PCI_BUS_ID_LENGTH = 28;
    /** The first minor version whose communicator entries hold the device. */
    public static final int COMM_DEVICE_SINCE_MINOR = 1;

    public static final int COMM_CAPACITY = 1024;
    /**
     * (1.2) Communicator entry i's GPU UUID, the 16 bytes cuDeviceGetUuid gives, at
     * {@code GPU_UUID_TABLE_OFFSET + GPU_UUID_SIZE * i}, written before the entry's state; all zero: unknown.
     */
    public static final int GPU_UUID_TABLE_OFFSET = 163840;

    public static final int GPU_UUID_SIZE = 16;
    /** The first minor version with the GPU UUID table. */
    public static final int GPU_UUID_SINCE_MINOR = 2;
    /** Communicator index used when the table was full. */
    public static final int UNKNOWN_COMM_INDEX = 4095;

    public static final int COMM_STATE_UNPUBLISHED = 0;
    public static final int COMM_STATE_ACTIVE = 1;
    public static final int COMM_STATE_FINALIZED = 2;

    public static final int LANE_TABLE_OFFSET = 147456;
    public static final int LANE_ENTRY_SIZE = 256;
    /** tail (u64) of a lane table entry: next position a producer claims; alone on 128 bytes. */
    public static final int LANE_TAIL_OFFSET = 0;
    /** head (u64) of a lane table entry: next position the consumer reads; alone on 128 bytes. */
    public static final int LANE_HEAD_OFFSET = 128;
    /** Most lanes a ring may have (the size of the lane table). */
    public static final int MAX_LANES = 64;

    /** Header size in 1.0. */
    public static final int HEADER_SIZE = 262144;
    /** The header must be at least this long to hold the tables. */
    public static final int MIN_HEADER_SIZE = LANE_TABLE_OFFSET + MAX_LANES * LANE_ENTRY_SIZE;

    public static final int PRODUCER_STATE_OPEN = 1;
    public static final int PRODUCER_STATE_CLOSED = 2;

    public static final int CLOCK_SOURCE_TSC = 1;
    public static final int CLOCK_SOURCE_CLOCK_GETTIME = 2;

    private RingLayout() {}

    public static int layoutMajor(final int layoutVersion) {
        return layoutVersion >>> 16;
    }

    public static int layoutMinor(final int layoutVersion) {
        return layoutVersion & 0xFFFF;
    }

    public static String layoutVersionString(final int layoutVersion) {
        return layoutMajor(layoutVersion) + "." + layoutMinor(layoutVersion);
    }

    public static int stringEntryOffset(final int index) {
        return STRING_TABLE_OFFSET + index * STRING_ENTRY_SIZE;
    }

    public static int commEntryOffset(final int index) {
        return COMM_TABLE_OFFSET + index * COMM_ENTRY_SIZE;
    }

    /** Offset of lane {@code lane}'s tail (u64). */
    public static int laneTailOffset(final int lane) {
        return LANE_TABLE_OFFSET + lane * LANE_ENTRY_SIZE + LANE_TAIL_OFFSET;
    }

    /** Offset of lane {@code lane}'s head (u64). */
    public static int laneHeadOffset(final int lane) {
        return LANE_TABLE_OFFSET + lane * LANE_ENTRY_SIZE + LANE_HEAD_OFFSET;
    }

    /** File offset of the slot holding position {@code position} of lane {@code lane}. */
    public static long slotOffset(final long headerSize, final long laneCapacity, final int lane, final long position) {
        return headerSize + (lane * laneCapacity + (position & (laneCapacity - 1))) * RecordLayout.RECORD_SIZE;
    }

    /** Total file length of a ring of {@code capacity} slots (all lanes). */
    public static long fileLength(final long headerSize, final long capacity) {
        return headerSize + capacity * RecordLayout.RECORD_SIZE;
    }
}
