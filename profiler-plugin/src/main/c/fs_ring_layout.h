/*
 * fs_ring_layout.h - the flowscope ring file layout 1.3 (RING.md), as named
 * offsets. The Java side (io.flowscope.ring.RingLayout / RecordLayout) uses
 * the same names. No call site writes a bare offset.
 *
 * Versions: a reader refuses another major version and reads every minor
 * version of its major (a minor version only adds, in bytes older writers
 * left zero or that older readers do not need).
 *   1.0  the first layout.
 *   1.1  each communicator entry gets the CUDA device of the rank: cuda_dev
 *        (i32, -1 unknown) at 96 and pci_bus_id (char[28]) at 100; the name
 *        shrinks from 88 to 56 bytes (NUL-terminated inside them, so a 1.0
 *        reader still reads it whole). A 1.1 reader of a 1.0 ring reads the
 *        88-byte name and reports the device unknown.
 *   1.2  each communicator entry's GPU UUID (16 bytes, all zero unknown) in
 *        a table beside the entries, gpu_uuid[i] at 163840 + 16*i, in header
 *        bytes older writers left zero and older readers skip: the entry
 *        itself is as in 1.1, so older readers read names whole. A 1.2
 *        reader of an older ring finds zeros there: UUID unknown.
 *
 *   file:  [ HEADER: header_size (262144) bytes ][ lane 0 ][ lane 1 ] ... [ lane lane_count-1 ]
 *   lane l: lane_capacity slots; slot i of lane l at header_size + 64*(l*lane_capacity + i)
 *   (lane_count a power of two in [1, 64], lane_capacity a power of two >= 2,
 *   capacity = lane_count * lane_capacity). Thread t writes lane t % lane_count.
 *
 *   header
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+   0
 *   |                 magic "FSRING1\n" (u64 0x0A31474E49525346)    |
 *   +-------------------------------+-------------------------------+   8
 *   |   layout_version (u32)        |       record_size (u32) = 64  |
 *   +-------------------------------+-------------------------------+  16
 *   |                       capacity (u64, slots)                   |
 *   +---------------------------------------------------------------+  24
 *   |                    header_size (u64, bytes)                   |
 *   +-------------------------------+-------------------------------+  32
 *   |     producer_pid (i32)        |     abi_version (u32)         |
 *   +-------------------------------+-------------------------------+  40
 *   |     nccl_version (i32)        |     event_mask (u32)          |
 *   +-------------------------------+-------------------------------+  48
 *   |                 anchor_realtime_ns (u64)                      |
 *   +---------------------------------------------------------------+  56
 *   |                 anchor_monotonic_ns (u64)                     |
 *   +-------------------------------+-------------------------------+  64
 *   |   producer_state (u32)        |     clock_source (u32)        |
 *   +-------------------------------+-------------------------------+  72
 *   |                 closed_monotonic_ns (u64)                     |
 *   +-------------------------------+-------------------------------+  80
 *   |   string_capacity (u32)       |     string_count (u32)        |
 *   +-------------------------------+-------------------------------+  88
 *   |   comm_capacity (u32)         |     comm_count (u32)          |
 *   +-------------------------------+-------------------------------+  96
 *   |                 hostname (char[64])                           |
 *   +---------------------------------------------------------------+ 160
 *   |                 plugin_version (char[32])                     |
 *   +-------------------------------+-------------------------------+ 192
 *   |     lane_count (u32)          |     reserved (u32)            |
 *   +-------------------------------+-------------------------------+ 200
 *   |                 lane_capacity (u64, slots per lane)           |
 *   +---------------------------------------------------------------+ 208 .. 768 reserved
 *   |   consumer block (heartbeat, pid, skipped_stale, corrupt)     | 768
 *   |   producer counters (dropped_full, _abandoned, _contended,    | 896
 *   |     invalid_calls, strings_overflow, comms_overflow)          |
 *   +---------------------------------------------------------------+ 1024 .. 4096 reserved
 *   |   string table: 256 entries x 32 B  {u32 length; char[28]}   | 4096
 *   +---------------------------------------------------------------+ 12288 .. 16384 reserved
 *   |   comm table: 1024 entries x 128 B                            | 16384
 *   |     +0 comm_hash (u64)  +8 state (u32)  +12 rank  +16 nranks  |
 *   |     +20 nnodes (i32 each)  +24 init_monotonic_ns (u64)        |
 *   |     +32 finalize_monotonic_ns (u64)  +40 name (char[56])      |
 *   |     +96 cuda_dev (i32)  +100 pci_bus_id (char[28])            |
 *   +---------------------------------------------------------------+ 147456
 *   |   lane table: lane_count (<= 64) entries x 256 B              |
 *   |     +0 tail (u64, alone on 128 B)  +128 head (u64, alone on 128 B)
 *   +---------------------------------------------------------------+ 163840
 *   |   gpu uuid table (1.2): 1024 entries x 16 B, comm entry i's    |
 *   |     GPU UUID (cuDeviceGetUuid bytes; all zero = unknown)      |
 *   +---------------------------------------------------------------+ 180224 .. 262144 reserved
 *
 *   slot / record (64 bytes, one cache line)
 *   +---------------------------------------------------------------+  0
 *   |                     seq (u64, slot sequence)                  |
 *   +---------------+---------------+-------------------------------+  8
 *   |   kind (u8)   |    op (u8)    |        thread (u16)           |
 *   +---------------+---------------+-------------------------------+ 12
 *   |                        checksum (u32)                         |
 *   +---------------------------------------------------------------+ 16
 *   |                     time_ns (u64, CLOCK_MONOTONIC)            |
 *   +---------------------------------------------------------------+ 24
 *   |                     id (u64, the event's handle)              |
 *   +---------------------------------------------------------------+ 32
 *   |                     parent (u64, parent event id, 0 = none)   |
 *   +---------------------------------------------------------------+ 40
 *   |                     payload (24 bytes, by kind and op)        |
 *   +---------------------------------------------------------------+ 64
 */
#ifndef FS_RING_LAYOUT_H
#define FS_RING_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define FS_RING_MAGIC          0x0A31474E49525346ULL /* "FSRING1\n" little-endian */
#define FS_RING_LAYOUT_MAJOR   1u
#define FS_RING_LAYOUT_MINOR   3u
#define FS_RING_LAYOUT_VERSION ((FS_RING_LAYOUT_MAJOR << 16) | FS_RING_LAYOUT_MINOR)
#define FS_RING_RECORD_SIZE    64u
#define FS_RING_HEADER_SIZE    262144u

/* header fields */
#define FS_HDR_MAGIC_OFFSET                  0
#define FS_HDR_LAYOUT_VERSION_OFFSET         8
#define FS_HDR_RECORD_SIZE_OFFSET            12
#define FS_HDR_CAPACITY_OFFSET               16
#define FS_HDR_HEADER_SIZE_OFFSET            24
#define FS_HDR_PRODUCER_PID_OFFSET           32
#define FS_HDR_ABI_VERSION_OFFSET            36
#define FS_HDR_NCCL_VERSION_OFFSET           40
#define FS_HDR_EVENT_MASK_OFFSET             44
#define FS_HDR_ANCHOR_REALTIME_NS_OFFSET     48
#define FS_HDR_ANCHOR_MONOTONIC_NS_OFFSET    56
#define FS_HDR_PRODUCER_STATE_OFFSET         64
#define FS_HDR_CLOCK_SOURCE_OFFSET           68
#define FS_HDR_CLOSED_MONOTONIC_NS_OFFSET    72
#define FS_HDR_STRING_CAPACITY_OFFSET        80
#define FS_HDR_STRING_COUNT_OFFSET           84
#define FS_HDR_COMM_CAPACITY_OFFSET          88
#define FS_HDR_COMM_COUNT_OFFSET             92
#define FS_HDR_HOSTNAME_OFFSET               96
#define FS_HDR_HOSTNAME_LENGTH               64
#define FS_HDR_PLUGIN_VERSION_OFFSET         160
#define FS_HDR_PLUGIN_VERSION_LENGTH         32
#define FS_HDR_LANE_COUNT_OFFSET             192
#define FS_HDR_LANE_CAPACITY_OFFSET          200
#define FS_HDR_CONSUMER_HEARTBEAT_NS_OFFSET  768
#define FS_HDR_CONSUMER_PID_OFFSET           776
#define FS_HDR_CONSUMER_SKIPPED_STALE_OFFSET 784
#define FS_HDR_CONSUMER_CORRUPT_OFFSET       792
#define FS_HDR_DROPPED_FULL_OFFSET           896
#define FS_HDR_DROPPED_ABANDONED_OFFSET      904
#define FS_HDR_DROPPED_CONTENDED_OFFSET      912
#define FS_HDR_INVALID_CALLS_OFFSET          920
#define FS_HDR_STRINGS_OVERFLOW_OFFSET       928
#define FS_HDR_COMMS_OVERFLOW_OFFSET         936

/* producer_state, clock_source */
#define FS_PRODUCER_STATE_OPEN        1u
#define FS_PRODUCER_STATE_CLOSED      2u
#define FS_CLOCK_SOURCE_TSC           1u
#define FS_CLOCK_SOURCE_CLOCK_GETTIME 2u

/* string table */
#define FS_STRING_TABLE_OFFSET  4096
#define FS_STRING_CAPACITY      256u
#define FS_STRING_ENTRY_SIZE    32u
#define FS_STRING_LENGTH_OFFSET 0
#define FS_STRING_NAME_OFFSET   4
#define FS_STRING_NAME_MAX      28u

/* communicator table */
#define FS_COMM_TABLE_OFFSET                 16384
#define FS_COMM_CAPACITY                     1024u
#define FS_COMM_ENTRY_SIZE                   128u
#define FS_COMM_HASH_OFFSET                  0
#define FS_COMM_STATE_OFFSET                 8
#define FS_COMM_RANK_OFFSET                  12
#define FS_COMM_NRANKS_OFFSET                16
#define FS_COMM_NNODES_OFFSET                20
#define FS_COMM_INIT_MONOTONIC_NS_OFFSET     24
#define FS_COMM_FINALIZE_MONOTONIC_NS_OFFSET 32
#define FS_COMM_NAME_OFFSET                  40
#define FS_COMM_NAME_LENGTH                  56u /* 88 in layout 1.0 */
#define FS_COMM_NAME_LENGTH_1_0              88u
#define FS_COMM_CUDA_DEV_OFFSET              96  /* since 1.1: CUDA device ordinal of the rank, -1 unknown */
#define FS_COMM_PCI_BUS_ID_OFFSET            100 /* since 1.1: its PCI bus id as CUDA gives it, "" unknown */
#define FS_COMM_PCI_BUS_ID_LENGTH            28u /* NUL-terminated */
/* since 1.2: communicator entry i's GPU UUID, 16 bytes at FS_GPU_UUID_TABLE_OFFSET + 16*i, written before
 * the entry's state (release); all zero = unknown */
#define FS_GPU_UUID_TABLE_OFFSET 163840
#define FS_GPU_UUID_SIZE         16u
#define FS_GPU_UUID_TABLE_END    (FS_GPU_UUID_TABLE_OFFSET + FS_COMM_CAPACITY * FS_GPU_UUID_SIZE)
#define FS_COMM_STATE_ACTIVE     1u
#define FS_COMM_STATE_FINALIZED  2u
#define FS_COMM_INDEX_UNKNOWN    4095u

/* lane table: one 256-byte entry per lane, tail and head each alone on 128 bytes */
#define FS_LANE_TABLE_OFFSET 147456
#define FS_LANE_ENTRY_SIZE   256u
#define FS_LANE_ENTRY_SHIFT  8
#define FS_LANE_TAIL_OFFSET  0
#define FS_LANE_HEAD_OFFSET  128
#define FS_LANE_MAX          64u
#define FS_LANE_TABLE_END    (FS_LANE_TABLE_OFFSET + FS_LANE_MAX * FS_LANE_ENTRY_SIZE)

/* record */
#define FS_REC_SEQ_OFFSET      0
#define FS_REC_KIND_OFFSET     8
#define FS_REC_OP_OFFSET       9
#define FS_REC_THREAD_OFFSET   10
#define FS_REC_CHECKSUM_OFFSET 12
#define FS_REC_TIME_NS_OFFSET  16
#define FS_REC_ID_OFFSET       24
#define FS_REC_PARENT_OFFSET   32
#define FS_REC_PAYLOAD_OFFSET  40

#define FS_OP_START 1u
#define FS_OP_STOP  2u
#define FS_OP_STATE 3u

/* record kinds = NCCL event bit index */
enum {
    FS_KIND_GROUP = 0,
    FS_KIND_COLL = 1,
    FS_KIND_P2P = 2,
    FS_KIND_PROXY_OP = 3,
    FS_KIND_PROXY_STEP = 4,
    FS_KIND_PROXY_CTRL = 5,
    FS_KIND_KERNEL_CH = 6,
    FS_KIND_NET_PLUGIN = 7,
    FS_KIND_GROUP_API = 8,
    FS_KIND_COLL_API = 9,
    FS_KIND_P2P_API = 10,
    FS_KIND_KERNEL_LAUNCH = 11,
    FS_KIND_CE_COLL = 12,
    FS_KIND_CE_SYNC = 13,
    FS_KIND_CE_BATCH = 14,
    FS_KIND_COUNT = 15,
};

/* event id: kind << 60 | comm << 48 | serial */
#define FS_ID_KIND_SHIFT  60
#define FS_ID_COMM_SHIFT  48
#define FS_ID_COMM_MASK   0xFFFULL
#define FS_ID_SERIAL_MASK 0xFFFFFFFFFFFFULL

/* NetPlugin netType */
#define FS_NET_TYPE_UNKNOWN 0u
#define FS_NET_TYPE_IB_QP   1u
#define FS_NET_TYPE_SOCKET  2u

/* payload offsets (absolute, in the record) */
#define FS_PL_COLL_SEQ48_CH8_WARPS8    40
#define FS_PL_COLL_COUNT               48
#define FS_PL_COLL_ROOT                56
#define FS_PL_COLL_FUNC                60
#define FS_PL_COLL_DATATYPE            61
#define FS_PL_COLL_ALGO                62
#define FS_PL_COLL_PROTO               63
#define FS_PL_P2P_COUNT                40
#define FS_PL_P2P_PEER                 48
#define FS_PL_P2P_FUNC                 52
#define FS_PL_P2P_DATATYPE             53
#define FS_PL_P2P_NCHANNELS            54
#define FS_PL_PROXY_OP_PID             40
#define FS_PL_PROXY_OP_PEER            44
#define FS_PL_PROXY_OP_NSTEPS          48
#define FS_PL_PROXY_OP_CHUNK_SIZE      52
#define FS_PL_PROXY_OP_CHANNEL         56
#define FS_PL_PROXY_OP_IS_SEND         57
#define FS_PL_PROXY_STEP_STEP          40
#define FS_PL_KERNEL_CH_CHANNEL        40
#define FS_PL_KERNEL_CH_PTIMER         48
#define FS_PL_NET_PLUGIN_ID            40
#define FS_PL_NET_TYPE                 44
#define FS_PL_NET_IB_OPCODE            45
#define FS_PL_NET_IB_DEVICE            46
#define FS_PL_NET_IB_QPNUM             48
#define FS_PL_NET_IB_LENGTH            52
#define FS_PL_NET_IB_WRID              56
#define FS_PL_NET_SOCK_OP              45
#define FS_PL_NET_SOCK_FD              48
#define FS_PL_NET_SOCK_LENGTH          56
#define FS_PL_GROUP_API_GRAPH_CAPTURED 40
#define FS_PL_GROUP_API_GROUP_DEPTH    44
#define FS_PL_COLL_API_COUNT           40
#define FS_PL_COLL_API_ROOT            48
#define FS_PL_COLL_API_FUNC            52
#define FS_PL_COLL_API_DATATYPE        53
#define FS_PL_COLL_API_GRAPH_CAPTURED  54
#define FS_PL_COLL_API_STREAM          56
#define FS_PL_P2P_API_COUNT            40
#define FS_PL_P2P_API_FUNC             52
#define FS_PL_P2P_API_DATATYPE         53
#define FS_PL_P2P_API_GRAPH_CAPTURED   54
#define FS_PL_P2P_API_STREAM           56
#define FS_PL_KERNEL_LAUNCH_STREAM     56
#define FS_PL_CE_COLL_SEQ_NUMBER       40
#define FS_PL_CE_COLL_COUNT            48
#define FS_PL_CE_COLL_ROOT             56
#define FS_PL_CE_COLL_FUNC             60
#define FS_PL_CE_COLL_DATATYPE         61
#define FS_PL_CE_COLL_SYNC_STRATEGY    62
#define FS_PL_CE_COLL_INTRA_BATCH_SYNC 63
#define FS_PL_CE_SYNC_IS_COMPLETE      40
#define FS_PL_CE_SYNC_NRANKS           44
#define FS_PL_CE_BATCH_NUM_OPS         40
#define FS_PL_CE_BATCH_USE_INTRA_SYNC  44
#define FS_PL_CE_BATCH_TOTAL_BYTES     48
#define FS_PL_STATE_STATE              40
#define FS_PL_STATE_ARG                48

/* checksum multipliers (RING.md "Checksum") */
#define FS_CK_M0 0x9E3779B97F4A7C15ULL
#define FS_CK_M1 0xC2B2AE3D27D4EB4FULL
#define FS_CK_M2 0x165667B19E3779F9ULL
#define FS_CK_M3 0xD6E8FEB86659FD93ULL
#define FS_CK_M4 0xFF51AFD7ED558CCDULL
#define FS_CK_M5 0xC4CEB9FE1A85EC53ULL
#define FS_CK_M6 0x94D049BB133111EBULL
#define FS_CK_M7 0xBF58476D1CE4E5B9ULL

/* The record as a C struct: bytes 8..63 are seven u64 words w1..w7. */
typedef struct {
    uint64_t seq;
    uint8_t kind;
    uint8_t op;
    uint16_t thread;
    uint32_t checksum;
    uint64_t time_ns;
    uint64_t id;
    uint64_t parent;
    uint8_t payload[24];
} fs_record_t;

_Static_assert(sizeof(fs_record_t) == FS_RING_RECORD_SIZE, "record is 64 bytes");
_Static_assert(offsetof(fs_record_t, seq) == FS_REC_SEQ_OFFSET, "seq");
_Static_assert(offsetof(fs_record_t, kind) == FS_REC_KIND_OFFSET, "kind");
_Static_assert(offsetof(fs_record_t, op) == FS_REC_OP_OFFSET, "op");
_Static_assert(offsetof(fs_record_t, thread) == FS_REC_THREAD_OFFSET, "thread");
_Static_assert(offsetof(fs_record_t, checksum) == FS_REC_CHECKSUM_OFFSET, "checksum");
_Static_assert(offsetof(fs_record_t, time_ns) == FS_REC_TIME_NS_OFFSET, "time_ns");
_Static_assert(offsetof(fs_record_t, id) == FS_REC_ID_OFFSET, "id");
_Static_assert(offsetof(fs_record_t, parent) == FS_REC_PARENT_OFFSET, "parent");
_Static_assert(offsetof(fs_record_t, payload) == FS_REC_PAYLOAD_OFFSET, "payload");

_Static_assert(FS_HDR_PLUGIN_VERSION_OFFSET + FS_HDR_PLUGIN_VERSION_LENGTH == FS_HDR_LANE_COUNT_OFFSET,
               "lane_count after plugin_version");
_Static_assert(FS_HDR_LANE_CAPACITY_OFFSET == FS_HDR_LANE_COUNT_OFFSET + 8 &&
                   FS_HDR_LANE_CAPACITY_OFFSET % 8 == 0,
               "lane_capacity at 200");
_Static_assert(FS_HDR_LANE_CAPACITY_OFFSET + 8 <= FS_HDR_CONSUMER_HEARTBEAT_NS_OFFSET,
               "lane fields before the consumer block");
_Static_assert(FS_HDR_CONSUMER_HEARTBEAT_NS_OFFSET == 768, "consumer block at 768");
_Static_assert(FS_LANE_ENTRY_SIZE == 1u << FS_LANE_ENTRY_SHIFT, "lane entry shift");
_Static_assert(FS_LANE_TABLE_OFFSET == FS_COMM_TABLE_OFFSET + FS_COMM_CAPACITY * FS_COMM_ENTRY_SIZE,
               "lane table right after the comm table");
_Static_assert(FS_LANE_TABLE_OFFSET % 128 == 0 && FS_LANE_TAIL_OFFSET == 0 && FS_LANE_HEAD_OFFSET == 128 &&
                   FS_LANE_ENTRY_SIZE == 256,
               "tail and head of a lane each alone on 128 bytes");
_Static_assert(FS_LANE_TABLE_END == 163840, "lane table ends at 163840");
_Static_assert(FS_LANE_TABLE_END <= FS_RING_HEADER_SIZE, "lane table inside the header");
_Static_assert(FS_GPU_UUID_TABLE_OFFSET == FS_LANE_TABLE_END && FS_GPU_UUID_TABLE_END == 180224 &&
                   FS_GPU_UUID_TABLE_END <= FS_RING_HEADER_SIZE,
               "gpu uuid table after the lane table, inside the header");
_Static_assert(FS_HDR_DROPPED_FULL_OFFSET == 768 + 128, "producer counters after consumer block");
_Static_assert(FS_STRING_TABLE_OFFSET + FS_STRING_CAPACITY * FS_STRING_ENTRY_SIZE == 12288,
               "string table ends at 12288");
_Static_assert(FS_COMM_TABLE_OFFSET + FS_COMM_CAPACITY * FS_COMM_ENTRY_SIZE == 147456,
               "comm table ends at 147456");
_Static_assert(FS_COMM_NAME_OFFSET + FS_COMM_NAME_LENGTH == FS_COMM_CUDA_DEV_OFFSET,
               "cuda_dev after the name");
_Static_assert(FS_COMM_CUDA_DEV_OFFSET + 4 == FS_COMM_PCI_BUS_ID_OFFSET, "pci_bus_id after cuda_dev");
_Static_assert(FS_COMM_PCI_BUS_ID_OFFSET + FS_COMM_PCI_BUS_ID_LENGTH == FS_COMM_ENTRY_SIZE, "comm entry");
_Static_assert(FS_COMM_NAME_OFFSET + FS_COMM_NAME_LENGTH_1_0 == FS_COMM_ENTRY_SIZE, "comm entry 1.0");
_Static_assert(FS_STRING_NAME_OFFSET + FS_STRING_NAME_MAX == FS_STRING_ENTRY_SIZE, "string entry");
_Static_assert(FS_RING_HEADER_SIZE % 4096 == 0, "slots start page-aligned");

/* Byte offset of slot i of lane l (RING.md "File"). */
static inline uint64_t fs_slot_offset(uint64_t header_size, uint64_t lane_capacity, uint32_t lane,
                                      uint64_t i) {
    return header_size + FS_RING_RECORD_SIZE * ((uint64_t)lane * lane_capacity + i);
}

/* The checksum of a record: pos = its position in its lane, bytes 8..63 as
 * w1..w7, the checksum bytes as zero. */
static inline uint32_t fs_record_checksum(uint64_t pos, uint64_t w1, uint64_t w2, uint64_t w3, uint64_t w4,
                                          uint64_t w5, uint64_t w6, uint64_t w7) {
    uint64_t h = pos * FS_CK_M0 + (w1 & 0xFFFFFFFFULL) * FS_CK_M1 + w2 * FS_CK_M2 + w3 * FS_CK_M3 +
                 w4 * FS_CK_M4 + w5 * FS_CK_M5 + w6 * FS_CK_M6 + w7 * FS_CK_M7;
    return (uint32_t)(h ^ (h >> 32));
}

#endif /* FS_RING_LAYOUT_H */
