package io.flowscope.ring;

/**
 * Layout 1.0 of one 64-byte slot / record, the id bits and the payload of every kind and op
 * ({@code RING.md}, "Slot / record"). Offsets are from the start of the slot.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+  0
 * |                     seq (u64, slot sequence)                  |
 * +---------------+---------------+-------------------------------+  8
 * |   kind (u8)   |    op (u8)    |        thread (u16)           |
 * +---------------+---------------+-------------------------------+ 12
 * |                        checksum (u32)                         |
 * +---------------------------------------------------------------+ 16
 * |                     time_ns (u64, CLOCK_MONOTONIC)            |
 * +---------------------------------------------------------------+ 24
 * |                     id (u64, the event's handle)              |
 * +---------------------------------------------------------------+ 32
 * |                     parent (u64, parent event id, 0 = none)   |
 * +---------------------------------------------------------------+ 40
 * |                     payload (24 bytes, by kind and op)        |
 * +---------------------------------------------------------------+ 64
 * </pre>
 *
 * Id bits:
 *
 * <pre>
 *   bit 63..60  kind
 *   bit 59..48  communicator table index (4095 = unknown)
 *   bit 47..0   serial, unique within the process (never 0)
 * </pre>
 *
 * START payloads ({@code str} = u8 string-table index):
 *
 * <pre>
 *  1 Coll       40 u64 seq48_ch8_warps8 (seqNumber | nChannels &lt;&lt; 48 | nWarps &lt;&lt; 56), 48 u64 count,
 *               56 i32 root, 60 str func, 61 str datatype, 62 str algo, 63 str proto
 *  2 P2p        40 u64 count, 48 i32 peer, 52 str func, 53 str datatype, 54 u8 nChannels
 *  3 ProxyOp    40 i32 pid, 44 i32 peer, 48 i32 nSteps, 52 i32 chunkSize, 56 u8 channel, 57 u8 isSend
 *  4 ProxyStep  40 i32 step
 *  6 KernelCh   40 u8 channel, 48 u64 pTimer
 *  7 NetPlugin  40 u32 pluginId, 44 u8 netType;
 *               IB (1): 45 u8 opcode, 46 u16 device, 48 u32 qpNum, 52 u32 length, 56 u64 wrId
 *               socket (2): 45 u8 sockOp, 48 i32 fd, 56 u64 length
 *  8 GroupApi   40 u8 graphCaptured, 44 i32 groupDepth
 *  9 CollApi    40 u64 count, 48 i32 root, 52 str func, 53 str datatype, 54 u8 graphCaptured, 56 u64 stream
 * 10 P2pApi     40 u64 count, 52 str func, 53 str datatype, 54 u8 graphCaptured, 56 u64 stream
 * 11 KernelLaunch 56 u64 stream
 * 12 CeColl     40 u64 seqNumber, 48 u64 count, 56 i32 root, 60 str func, 61 str datatype,
 *               62 str syncStrategy, 63 u8 intraBatchSync
 * 13 CeSync     40 u8 isComplete, 44 i32 nRanks
 * 14 CeBatch    40 i32 numOps, 44 u8 useIntraSync, 48 u64 totalBytes
 *  0 Group, 5 ProxyCtrl: none
 * </pre>
 *
 * STOP: no payload. STATE: 40 u32 state, 48 u64 arg.
 */
public final class RecordLayout {
    public static final int RECORD_SIZE = 64;

    public static final int SEQ_OFFSET = 0;
    public static final int KIND_OFFSET = 8;
    public static final int OP_OFFSET = 9;
    public static final int THREAD_OFFSET = 10;
    public static final int CHECKSUM_OFFSET = 12;
    public static final int TIME_NS_OFFSET = 16;
    public static final int ID_OFFSET = 24;
    public static final int PARENT_OFFSET = 32;
    public static final int PAYLOAD_OFFSET = 40;
    public static final int PAYLOAD_LENGTH = 24;

    public static final int OP_START = 1;
    public static final int OP_STOP = 2;
    public static final int OP_STATE = 3;

    public static final int ID_KIND_SHIFT = 60;
    public static final int ID_COMM_SHIFT = 48;
    public static final long ID_COMM_MASK = 0xFFFL;
    public static final long ID_SERIAL_MASK = (1L << 48) - 1;

    // Coll
    public static final int COLL_SEQ48_CH8_WARPS8_OFFSET = 40;
    public static final int COLL_COUNT_OFFSET = 48;
    public static final int COLL_ROOT_OFFSET = 56;
    public static final int COLL_FUNC_OFFSET = 60;
    public static final int COLL_DATATYPE_OFFSET = 61;
    public static final int COLL_ALGO_OFFSET = 62;
    public static final int COLL_PROTO_OFFSET = 63;
    public static final long COLL_SEQ_NUMBER_MASK = (1L << 48) - 1;
    public static final int COLL_N_CHANNELS_SHIFT = 48;
    public static final int COLL_N_WARPS_SHIFT = 56;

    // P2p
    public static final int P2P_COUNT_OFFSET = 40;
    public static final int P2P_PEER_OFFSET = 48;
    public static final int P2P_FUNC_OFFSET = 52;
    public static final int P2P_DATATYPE_OFFSET = 53;
    public static final int P2P_N_CHANNELS_OFFSET = 54;

    // ProxyOp
    public static final int PROXY_OP_PID_OFFSET = 40;
    public static final int PROXY_OP_PEER_OFFSET = 44;
    public static final int PROXY_OP_N_STEPS_OFFSET = 48;
    public static final int PROXY_OP_CHUNK_SIZE_OFFSET = 52;
    public static final int PROXY_OP_CHANNEL_OFFSET = 56;
    public static final int PROXY_OP_IS_SEND_OFFSET = 57;

    // ProxyStep
    public static final int PROXY_STEP_STEP_OFFSET = 40;

    // KernelCh
    public static final int KERNEL_CH_CHANNEL_OFFSET = 40;
    public static final int KERNEL_CH_P_TIMER_OFFSET = 48;

    // NetPlugin
    public static final int NET_PLUGIN_ID_OFFSET = 40;
    public static final int NET_TYPE_OFFSET = 44;
    public static final int NET_IB_OPCODE_OFFSET = 45;
    public static final int NET_IB_DEVICE_OFFSET = 46;
    public static final int NET_IB_QP_NUM_OFFSET = 48;
    public static final int NET_IB_LENGTH_OFFSET = 52;
    public static final int NET_IB_WR_ID_OFFSET = 56;
    public static final int NET_SOCK_OP_OFFSET = 45;
    public static final int NET_SOCK_FD_OFFSET = 48;
    public static final int NET_SOCK_LENGTH_OFFSET = 56;
    public static final int NET_TYPE_UNKNOWN = 0;
    public static final int NET_TYPE_IB = 1;
    public static final int NET_TYPE_SOCKET = 2;
    public static final long NET_PLUGIN_ID_IB = 0x10001L;
    public static final long NET_PLUGIN_ID_SOCKET = 0x20001L;

    // GroupApi
    public static final int GROUP_API_GRAPH_CAPTURED_OFFSET = 40;
    public static final int GROUP_API_GROUP_DEPTH_OFFSET = 44;

    // CollApi
    public static final int COLL_API_COUNT_OFFSET = 40;
    public static final int COLL_API_ROOT_OFFSET = 48;
    public static final int COLL_API_FUNC_OFFSET = 52;
    public static final int COLL_API_DATATYPE_OFFSET = 53;
    public static final int COLL_API_GRAPH_CAPTURED_OFFSET = 54;
    public static final int COLL_API_STREAM_OFFSET = 56;

    // P2pApi
    public static final int P2P_API_COUNT_OFFSET = 40;
    public static final int P2P_API_FUNC_OFFSET = 52;
    public static final int P2P_API_DATATYPE_OFFSET = 53;
    public static final int P2P_API_GRAPH_CAPTURED_OFFSET = 54;
    public static final int P2P_API_STREAM_OFFSET = 56;

    // KernelLaunch
    public static final int KERNEL_LAUNCH_STREAM_OFFSET = 56;

    // CeColl
    public static final int CE_COLL_SEQ_NUMBER_OFFSET = 40;
    public static final int CE_COLL_COUNT_OFFSET = 48;
    public static final int CE_COLL_ROOT_OFFSET = 56;
    public static final int CE_COLL_FUNC_OFFSET = 60;
    public static final int CE_COLL_DATATYPE_OFFSET = 61;
    public static final int CE_COLL_SYNC_STRATEGY_OFFSET = 62;
    public static final int CE_COLL_INTRA_BATCH_SYNC_OFFSET = 63;

    // CeSync
    public static final int CE_SYNC_IS_COMPLETE_OFFSET = 40;
    public static final int CE_SYNC_N_RANKS_OFFSET = 44;

    // CeBatch
    public static final int CE_BATCH_NUM_OPS_OFFSET = 40;
    public static final int CE_BATCH_USE_INTRA_SYNC_OFFSET = 44;
    public static final int CE_BATCH_TOTAL_BYTES_OFFSET = 48;

    // STATE
    public static final int STATE_STATE_OFFSET = 40;
    public static final int STATE_ARG_OFFSET = 48;

    private RecordLayout() {}

    public static int idKind(final long id) {
        return (int) (id >>> ID_KIND_SHIFT);
    }

    public static int idCommIndex(final long id) {
        return (int) ((id >>> ID_COMM_SHIFT) & ID_COMM_MASK);
    }

    public static long idSerial(final long id) {
        return id & ID_SERIAL_MASK;
    }

    public static long id(final int kind, final int commIndex, final long serial) {
        return (long) kind << ID_KIND_SHIFT | (commIndex & ID_COMM_MASK) << ID_COMM_SHIFT | serial & ID_SERIAL_MASK;
    }
}
