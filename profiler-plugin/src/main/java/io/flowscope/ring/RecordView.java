package io.flowscope.ring;

import static io.flowscope.ring.RecordLayout.*;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A reusable flyweight over one record, handed to a {@link RecordHandler}. It reads a private copy of the
 * slot (the reader copies and checks the record before delivery, so a late writer cannot change what the
 * handler sees): the slot's eight words as the reader loaded them, the accessors' fields taken out of those words
 * (little-endian, as the ring is; every field lies within one word), the bytes written out only when
 * {@link #buffer()} asks for them. Typed accessors exist for every payload field of every kind; an accessor used on a record
 * of another kind or op returns whatever the bytes at its offset hold (zero for the writers we know), so
 * check {@link #kind()} and {@link #op()} first. Strings and communicators are resolved through tables
 * cached per ring: no allocation once a name has been seen.
 */
public final class RecordView {
    private static final String UNKNOWN_COMM_NAME = "unknown";

    private final UnsafeBuffer record = new UnsafeBuffer(new byte[RECORD_SIZE]);
    /** The record's words: 0 the slot's seq, 1 kind / op / thread / checksum, 2 time, ... (slot layout). */
    private final long[] words = new long[RECORD_SIZE / 8];
    /** Whether {@link #record} holds this record's bytes. */
    private boolean copied;

    private final String[] strings = new String[RingLayout.STRING_CAPACITY];
    private final long[] commHashes = new long[RingLayout.UNKNOWN_COMM_INDEX + 1];
    private final int[] commRanks = new int[RingLayout.UNKNOWN_COMM_INDEX + 1];
    private final int[] commNranks = new int[RingLayout.UNKNOWN_COMM_INDEX + 1];
    private final String[] commNames = new String[RingLayout.UNKNOWN_COMM_INDEX + 1];
    private final boolean[] commLoaded = new boolean[RingLayout.UNKNOWN_COMM_INDEX + 1];
    private final RingHeader header;
    private long position;
    private int lane;

    RecordView(final RingHeader header) {
        this.header = header;
    }

    /** The reader's checked copy of the slot at {@code position} of {@code lane}: its seq and its seven words. */
    void set(
            final int lane,
            final long position,
            final long seq,
            final long w1,
            final long w2,
            final long w3,
            final long w4,
            final long w5,
            final long w6,
            final long w7) {
        this.lane = lane;
        this.position = position;
        final long[] w = words;
        w[0] = seq;
        w[1] = w1;
        w[2] = w2;
        w[3] = w3;
        w[4] = w4;
        w[5] = w5;
        w[6] = w6;
        w[7] = w7;
        copied = false;
    }

    /** The 8-byte field at {@code offset} (a multiple of 8). */
    private long i64(final int offset) {
        return words[offset >>> 3];
    }

    /** The 4-byte field at {@code offset} (a multiple of 4). */
    private int i32(final int offset) {
        return (int) (words[offset >>> 3] >>> ((offset & 7) << 3));
    }

    /** The 2-byte field at {@code offset} (a multiple of 2), unsigned. */
    private int u16(final int offset) {
        return (int) (words[offset >>> 3] >>> ((offset & 7) << 3)) & 0xFFFF;
    }

    /** The header of the ring this record came from. */
    public RingHeader header() {
        return header;
    }

    /** The raw record bytes (64, slot layout); valid during the handler call only. */
    public UnsafeBuffer buffer() {
        if (!copied) {
            for (int i = 0; i < words.length; i++) {
                record.putLong(i * 8, words[i]);
            }
            copied = true;
        }
        return record;
    }

    /** The record's position in its lane (the {@code pos} of its checksum). */
    public long position() {
        return position;
    }

    /** The lane the record was read from (one per producer thread; RING.md, "Lanes owned by one thread"). */
    public int lane() {
        return lane;
    }

    public int kindCode() {
        return u8(KIND_OFFSET);
    }

    public EventKind kind() {
        return EventKind.of(kindCode());
    }

    public int opCode() {
        return u8(OP_OFFSET);
    }

    public RecordOp op() {
        return RecordOp.of(opCode());
    }

    public boolean isStart() {
        return opCode() == OP_START;
    }

    public boolean isStop() {
        return opCode() == OP_STOP;
    }

    public boolean isState() {
        return opCode() == OP_STATE;
    }

    public int thread() {
        return u16(THREAD_OFFSET);
    }

    public int checksum() {
        return i32(CHECKSUM_OFFSET);
    }

    /** Producer CLOCK_MONOTONIC ns. */
    public long timeNs() {
        return i64(TIME_NS_OFFSET);
    }

    /** {@link #timeNs()} as wall-clock ns since the epoch, through the ring's anchors. */
    public long wallTimeNs() {
        return header.toWallClockNs(timeNs());
    }

    public long id() {
        return i64(ID_OFFSET);
    }

    public long parent() {
        return i64(PARENT_OFFSET);
    }

    /** Communicator table index from the id bits 59..48 (4095 = unknown). */
    public int commIndex() {
        return idCommIndex(id());
    }

    public long serial() {
        return idSerial(id());
    }

    public int producerPid() {
        return header.producerPid();
    }

    public String host() {
        return header.hostname();
    }

    // Communicator.

    public long commHash() {
        final int index = commIndex();
        return commLoaded[index] || loadComm(index) ? commHashes[index] : 0;
    }

    /** This process's rank in the record's communicator, -1 when unknown. */
    public int rank() {
        final int index = commIndex();
        return commLoaded[index] || loadComm(index) ? commRanks[index] : -1;
    }

    /** The number of ranks of the record's communicator, -1 when unknown. */
    public int nranks() {
        final int index = commIndex();
        return commLoaded[index] || loadComm(index) ? commNranks[index] : -1;
    }

    /** The communicator's name (may be empty), "unknown" when unknown. */
    public String commName() {
        final int index = commIndex();
        return commLoaded[index] || loadComm(index) ? commNames[index] : UNKNOWN_COMM_NAME;
    }

    private boolean loadComm(final int index) {
        if (index == RingLayout.UNKNOWN_COMM_INDEX || header.commState(index) == RingLayout.COMM_STATE_UNPUBLISHED) {
            return false;
        }
        final RingHeader.CommInfo info = header.comm(index);
        if (info == null) {
            return false;
        }
        commHashes[index] = info.commHash();
        commRanks[index] = info.rank();
        commNranks[index] = info.nranks();
        commNames[index] = info.name();
        commLoaded[index] = true;
        return true;
    }

    /** The string-table entry {@code index}, null for "no string" or an entry not (yet) published. */
    public String string(final int index) {
        final String cached = strings[index & 0xFF];
        if (cached != null) {
            return cached;
        }
        final String loaded = header.string(index & 0xFF);
        strings[index & 0xFF] = loaded;
        return loaded;
    }

    private String stringAt(final int offset) {
        return string(u8(offset));
    }

    /** The byte at {@code offset}, unsigned. */
    private int u8(final int offset) {
        return (int) (words[offset >>> 3] >>> ((offset & 7) << 3)) & 0xFF;
    }

    // STATE.

    /** STATE: the NCCL state value. */
    public int state() {
        return i32(STATE_STATE_OFFSET);
    }

    /** STATE: transSize, pTimer, appendedProxyOps or 0 (see RING.md). */
    public long stateArg() {
        return i64(STATE_ARG_OFFSET);
    }

    // START payloads, by field name; kinds sharing a name share the accessor.

    /** Coll (bits 0..47 of seq48_ch8_warps8), CeColl. */
    public long seqNumber() {
        if (kindCode() == EventKind.CE_COLL.code()) {
            return i64(CE_COLL_SEQ_NUMBER_OFFSET);
        }
        return i64(COLL_SEQ48_CH8_WARPS8_OFFSET) & COLL_SEQ_NUMBER_MASK;
    }

    /** Coll (bits 48..55), P2p (u8 at 54). */
    public int nChannels() {
        if (kindCode() == EventKind.P2P.code()) {
            return u8(P2P_N_CHANNELS_OFFSET);
        }
        return (int) (i64(COLL_SEQ48_CH8_WARPS8_OFFSET) >>> COLL_N_CHANNELS_SHIFT) & 0xFF;
    }

    /** Coll (bits 56..63). */
    public int nWarps() {
        return (int) (i64(COLL_SEQ48_CH8_WARPS8_OFFSET) >>> COLL_N_WARPS_SHIFT) & 0xFF;
    }

    /** Coll, P2p, CollApi, P2pApi, CeColl. */
    public long count() {
        switch (kindCode()) {
            case 1: // Coll
                return i64(COLL_COUNT_OFFSET);
            case 12: // CeColl
                return i64(CE_COLL_COUNT_OFFSET);
            default: // P2p, CollApi, P2pApi: offset 40
                return i64(P2P_COUNT_OFFSET);
        }
    }

    /** Coll, CollApi, CeColl. */
    public int root() {
        return kindCode() == EventKind.COLL_API.code() ? i32(COLL_API_ROOT_OFFSET) : i32(COLL_ROOT_OFFSET);
    }

    private int funcOffset() {
        final int kind = kindCode();
        return kind == EventKind.COLL.code() || kind == EventKind.CE_COLL.code() ? COLL_FUNC_OFFSET : P2P_FUNC_OFFSET;
    }

    /** Coll, P2p, CollApi, P2pApi, CeColl: string-table index. */
    public int funcIndex() {
        return u8(funcOffset());
    }

    public String func() {
        return stringAt(funcOffset());
    }

    /** Coll, P2p, CollApi, P2pApi, CeColl: string-table index. */
    public int datatypeIndex() {
        return u8(funcOffset() + 1);
    }

    public String datatype() {
        return stringAt(funcOffset() + 1);
    }

    public int algoIndex() {
        return u8(COLL_ALGO_OFFSET);
    }

    /** Coll. */
    public String algo() {
        return stringAt(COLL_ALGO_OFFSET);
    }

    public int protoIndex() {
        return u8(COLL_PROTO_OFFSET);
    }

    /** Coll. */
    public String proto() {
        return stringAt(COLL_PROTO_OFFSET);
    }

    /** P2p, ProxyOp. */
    public int peer() {
        return kindCode() == EventKind.PROXY_OP.code() ? i32(PROXY_OP_PEER_OFFSET) : i32(P2P_PEER_OFFSET);
    }

    /** ProxyOp: the process of the proxy that runs the op (not the producer when PXN). */
    public int pid() {
        return i32(PROXY_OP_PID_OFFSET);
    }

    /** ProxyOp. */
    public int nSteps() {
        return i32(PROXY_OP_N_STEPS_OFFSET);
    }

    /** ProxyOp. */
    public int chunkSize() {
        return i32(PROXY_OP_CHUNK_SIZE_OFFSET);
    }

    /** ProxyOp, KernelCh. */
    public int channel() {
        return kindCode() == EventKind.KERNEL_CH.code() ? u8(KERNEL_CH_CHANNEL_OFFSET) : u8(PROXY_OP_CHANNEL_OFFSET);
    }

    /** ProxyOp. */
    public boolean isSend() {
        return u8(PROXY_OP_IS_SEND_OFFSET) != 0;
    }

    /** ProxyStep. */
    public int step() {
        return i32(PROXY_STEP_STEP_OFFSET);
    }

    /** KernelCh START (GPU start ns). A KernelChStop STATE carries its pTimer in {@link #stateArg()}. */
    public long pTimer() {
        return i64(KERNEL_CH_P_TIMER_OFFSET);
    }

    /** NetPlugin. */
    public long pluginId() {
        return i32(NET_PLUGIN_ID_OFFSET) & 0xFFFF_FFFFL;
    }

    /** NetPlugin: 1 IB QP, 2 socket, 0 unknown plugin. */
    public int netType() {
        return u8(NET_TYPE_OFFSET);
    }

    /** NetPlugin IB. */
    public int opcode() {
        return u8(NET_IB_OPCODE_OFFSET);
    }

    /** NetPlugin IB. */
    public int device() {
        return u16(NET_IB_DEVICE_OFFSET);
    }

    /** NetPlugin IB. */
    public long qpNum() {
        return i32(NET_IB_QP_NUM_OFFSET) & 0xFFFF_FFFFL;
    }

    /** NetPlugin: IB u32 at 52, socket u64 at 56, 0 otherwise. */
    public long length() {
        switch (netType()) {
            case NET_TYPE_IB:
                return i32(NET_IB_LENGTH_OFFSET) & 0xFFFF_FFFFL;
            case NET_TYPE_SOCKET:
                return i64(NET_SOCK_LENGTH_OFFSET);
            default:
                return 0;
        }
    }

    /** NetPlugin IB. */
    public long wrId() {
        return i64(NET_IB_WR_ID_OFFSET);
    }

    /** NetPlugin socket: 0 send, 1 recv. */
    public int sockOp() {
        return u8(NET_SOCK_OP_OFFSET);
    }

    /** NetPlugin socket. */
    public int fd() {
        return i32(NET_SOCK_FD_OFFSET);
    }

    /** GroupApi (40), CollApi and P2pApi (54). */
    public boolean graphCaptured() {
        return kindCode() == EventKind.GROUP_API.code()
                ? u8(GROUP_API_GRAPH_CAPTURED_OFFSET) != 0
                : u8(COLL_API_GRAPH_CAPTURED_OFFSET) != 0;
    }

    /** GroupApi. */
    public int groupDepth() {
        return i32(GROUP_API_GROUP_DEPTH_OFFSET);
    }

    /** CollApi, P2pApi, KernelLaunch. */
    public long stream() {
        return i64(COLL_API_STREAM_OFFSET);
    }

    /** CeColl. */
    public String syncStrategy() {
        return stringAt(CE_COLL_SYNC_STRATEGY_OFFSET);
    }

    /** CeColl. */
    public boolean intraBatchSync() {
        return u8(CE_COLL_INTRA_BATCH_SYNC_OFFSET) != 0;
    }

    /** CeSync. */
    public boolean isComplete() {
        return u8(CE_SYNC_IS_COMPLETE_OFFSET) != 0;
    }

    /** CeSync. */
    public int nRanks() {
        return i32(CE_SYNC_N_RANKS_OFFSET);
    }

    /** CeBatch. */
    public int numOps() {
        return i32(CE_BATCH_NUM_OPS_OFFSET);
    }

    /** CeBatch. */
    public boolean useIntraSync() {
        return u8(CE_BATCH_USE_INTRA_SYNC_OFFSET) != 0;
    }

    /** CeBatch. */
    public long totalBytes() {
        return i64(CE_BATCH_TOTAL_BYTES_OFFSET);
    }

    /** The record as an immutable value (allocates). */
    public RingEvent toEvent() {
        final EventKind kind = kind();
        final RecordOp op = op();
        return new RingEvent(
                producerPid(),
                host(),
                thread(),
                timeNs(),
                wallTimeNs(),
                lane,
                position,
                id(),
                parent(),
                kind,
                op,
                commIndex(),
                commHash(),
                rank(),
                payload(kind, op));
    }

    private RingEvent.Payload payload(final EventKind kind, final RecordOp op) {
        if (op == RecordOp.STOP) {
            return RingEvent.Stop.INSTANCE;
        }
        if (op == RecordOp.STATE) {
            return new RingEvent.State(state(), stateArg());
        }
        switch (kind) {
            case GROUP:
                return RingEvent.Group.INSTANCE;
            case COLL:
                return new RingEvent.Coll(
                        seqNumber(), nChannels(), nWarps(), count(), root(), func(), datatype(), algo(), proto());
            case P2P:
                return new RingEvent.P2p(count(), peer(), func(), datatype(), nChannels());
            case PROXY_OP:
                return new RingEvent.ProxyOp(pid(), peer(), nSteps(), chunkSize(), channel(), isSend());
            case PROXY_STEP:
                return new RingEvent.ProxyStep(step());
            case PROXY_CTRL:
                return RingEvent.ProxyCtrl.INSTANCE;
            case KERNEL_CH:
                return new RingEvent.KernelCh(channel(), pTimer());
            case NET_PLUGIN:
                switch (netType()) {
                    case NET_TYPE_IB:
                        return new RingEvent.NetPlugin(
                                pluginId(), NET_TYPE_IB, opcode(), device(), qpNum(), length(), wrId(), 0, 0);
                    case NET_TYPE_SOCKET:
                        return new RingEvent.NetPlugin(
                                pluginId(), NET_TYPE_SOCKET, 0, 0, 0, length(), 0, sockOp(), fd());
                    default:
                        return new RingEvent.NetPlugin(pluginId(), netType(), 0, 0, 0, 0, 0, 0, 0);
                }
            case GROUP_API:
                return new RingEvent.GroupApi(graphCaptured(), groupDepth());
            case COLL_API:
                return new RingEvent.CollApi(count(), root(), func(), datatype(), graphCaptured(), stream());
            case P2P_API:
                return new RingEvent.P2pApi(count(), func(), datatype(), graphCaptured(), stream());
            case KERNEL_LAUNCH:
                return new RingEvent.KernelLaunch(stream());
            case CE_COLL:
                return new RingEvent.CeColl(
                        seqNumber(), count(), root(), func(), datatype(), syncStrategy(), intraBatchSync());
            case CE_SYNC:
                return new RingEvent.CeSync(isComplete(), nRanks());
            case CE_BATCH:
                return new RingEvent.CeBatch(numOps(), useIntraSync(), totalBytes());
            default:
                throw new IllegalStateException("unreachable: " + kind);
        }
    }

    public String toString() {
        return EventKind.isValid(kindCode()) && RecordOp.isValid(opCode())
                ? toEvent().toString()
                : "RecordView{lane=" + lane + ", position=" + position + ", kind=" + kindCode() + ", op=" + opCode()
                        + '}';
    }
}
