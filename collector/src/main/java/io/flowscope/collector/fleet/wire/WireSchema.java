package io.flowscope.collector.fleet.wire;

import java.nio.ByteOrder;

/**
 * The layout of the fleet's binary summary records (schema {@value #SCHEMA_ID}, version {@value #VERSION}), in the
 * style of SBE: a fixed message header, a fixed-size root block, repeating groups, then variable-length data. All
 * integers little-endian; {@code u8}/{@code u16} unsigned, the rest signed. Design, measurements and the evolution
 * rules with their reasons: {@code docs/fleet-wire.md}.
 *
 * <pre>
 * Message header (every record, {@value #HEADER_LENGTH} bytes)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |      blockLength (u16)        |       templateId (u16)        |
 *  +-------------------------------+-------------------------------+
 *  |       schemaId (u16)          |        version (u16)          |
 *  +-------------------------------+-------------------------------+
 *  |                 root block (blockLength bytes)              ...
 *  +---------------------------------------------------------------+
 *  |  groups (flow: phases), each: blockLength u16, numInGroup u16,
 *  |  numInGroup entries of blockLength bytes                    ...
 *  +---------------------------------------------------------------+
 *  |  var data, each: length u16, bytes (UTF-8): agent, hostName ...
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Evolution, in one paragraph (details in the design doc): fields are only ever appended to a block (never
 * removed, reordered, resized or given a new meaning); a reader takes the block length from the record, so it
 * skips fields appended after its version and reads its own fields missing from an older record as their null
 * value; groups and var data follow the same rule with their own headers; new flag bits and new phase ids are
 * ignored by older readers. An incompatible change takes a new schema id, which readers refuse record by record.
 */
public final class WireSchema {
    /** "fs" as a little-endian u16: not what a JSON record ({@code {"v":...}}) has at offset 4 ({@code ":}). */
    public static final int SCHEMA_ID = 0x7366;
    /** The version this code writes; it reads every version from 1 on. */
    public static final int VERSION = 1;

    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    public static final int HEADER_LENGTH = 8;
    public static final int BLOCK_LENGTH_OFFSET = 0;
    public static final int TEMPLATE_ID_OFFSET = 2;
    public static final int SCHEMA_ID_OFFSET = 4;
    public static final int VERSION_OFFSET = 6;

    public static final int GROUP_HEADER_LENGTH = 4;
    public static final int GROUP_BLOCK_LENGTH_OFFSET = 0;
    public static final int GROUP_COUNT_OFFSET = 2;
    public static final int VAR_LENGTH_LENGTH = 2;
    public static final int MAX_VAR_LENGTH = 0xFFFF;

    /** Template 1: one {@code FlowSummary} of one period, with the agent's sequence number. */
    public static final int FLOW_TEMPLATE_ID = 1;
    /** Template 2: one {@code CollectiveSummary}, with the agent's sequence number. */
    public static final int COLLECTIVE_TEMPLATE_ID = 2;
    /**
     * Template 3: a frame, many records of templates 1 and 2 of one agent and one partition in one Kafka record, in
     * the order of their sequence numbers (Kafka's costs are per record: docs/fleet-wire.md, "Frames").
     * <pre>
     *   header (template 3, blockLength 4) | count u32 | count × ( length u32 | record: header, block, ... )
     * </pre>
     * A frame holds no frame; a reader that meets a damaged entry applies the records before it and skips the rest.
     */
    public static final int FRAME_TEMPLATE_ID = 3;

    public static final int FRAME_BLOCK_LENGTH_V1 = 4;
    public static final int FRAME_COUNT = 0;
    public static final int FRAME_ENTRY_LENGTH_LENGTH = 4;

    /**
     * Flow root block, version 1 ({@value #FLOW_BLOCK_LENGTH_V1} bytes): the 8-byte fields first, then the 4-byte,
     * then the 1-byte ones, so every field of a record placed at an 8-byte boundary is aligned.
     * <pre>
     *   0 seq                  i64     88 windowBytes          i64    144 device             i32
     *   8 periodStartNs        i64     96 windowSpanNs         i64    148 rank               i32
     *  16 periodEndNs          i64    104 windowBandwidth      f64    152 peer               i32
     *  24 hostId               i64    112 outstandingSteps     i64    156 channel            i32
     *  32 qpNum                i64    120 outstandingBytes     i64    160 flows              i32
     *  40 flowKey              i64    128 firstSteps           i64    164 windowCompletions  i32
     *  48 commHash             i64    136 firstStepWaitSumNs   i64    168 kind               u8
     *  56 periodBandwidth      f64                                    169 flags              u8  bit 0: isSend
     *  64 posts                i64
     *  72 completions          i64
     *  80 bytes                i64
     * </pre>
     * Group {@code phases} (entry {@value #PHASE_ENTRY_LENGTH_V1} bytes): only the phases whose values are not all
     * the "nothing measured" ones (count, sum, max 0; percentiles {@code Phase.ABSENT}), in phase order.
     * <pre>
     *   0 phase u8   1 count i64   9 sumNs i64   17 maxNs i64   25 p50Ns i64   33 p90Ns i64   41 p99Ns i64
     * </pre>
     * Var data: {@code agent} (the publishing agent's id), {@code hostName} (length 0: not known to the agent).
     */
    public static final int FLOW_BLOCK_LENGTH_V1 = 170;

    public static final int FLOW_SEQ = 0;
    public static final int FLOW_PERIOD_START = 8;
    public static final int FLOW_PERIOD_END = 16;
    public static final int FLOW_HOST_ID = 24;
    public static final int FLOW_QP_NUM = 32;
    public static final int FLOW_FLOW_KEY = 40;
    public static final int FLOW_COMM_HASH = 48;
    public static final int FLOW_PERIOD_BANDWIDTH = 56;
    public static final int FLOW_POSTS = 64;
    public static final int FLOW_COMPLETIONS = 72;
    public static final int FLOW_BYTES = 80;
    public static final int FLOW_WINDOW_BYTES = 88;
    public static final int FLOW_WINDOW_SPAN = 96;
    public static final int FLOW_WINDOW_BANDWIDTH = 104;
    public static final int FLOW_OUTSTANDING_STEPS = 112;
    public static final int FLOW_OUTSTANDING_BYTES = 120;
    public static final int FLOW_FIRST_STEPS = 128;
    public static final int FLOW_FIRST_STEP_WAIT_SUM = 136;
    public static final int FLOW_DEVICE = 144;
    public static final int FLOW_RANK = 148;
    public static final int FLOW_PEER = 152;
    public static final int FLOW_CHANNEL = 156;
    public static final int FLOW_FLOWS = 160;
    public static final int FLOW_WINDOW_COMPLETIONS = 164;
    public static final int FLOW_KIND = 168;
    public static final int FLOW_FLAGS = 169;
    public static final int FLOW_FLAG_SEND = 1;

    public static final int PHASE_ENTRY_LENGTH_V1 = 49;
    public static final int PHASE_ID = 0;
    public static final int PHASE_COUNT = 1;
    public static final int PHASE_SUM = 9;
    public static final int PHASE_MAX = 17;
    public static final int PHASE_P50 = 25;
    public static final int PHASE_P90 = 33;
    public static final int PHASE_P99 = 41;

    /**
     * Collective root block, version 1 ({@value #COLLECTIVE_BLOCK_LENGTH_V1} bytes); no groups; var data
     * {@code agent}.
     * <pre>
     *   0 seq                  i64     64 hostStopNs           i64    120 rank               i32
     *   8 hostId               i64     72 gpuStartNs           i64    124 nranks             i32
     *  16 collKey              i64     80 gpuEndNs             i64    128 func               i32
     *  24 commHash             i64     88 gpuStartHostNs       i64    132 algo               i32
     *  32 seqNumber            i64     96 durationNs           i64    136 proto              i32
     *  40 count                i64    104 algBandwidth         f64    140 datatypeSize       i32
     *  48 bytes                i64    112 busBandwidth         f64    144 nChannels          i32
     *  56 hostStartNs          i64                                    148 kernelChannels     i32
     *                                                                 152 flags              u8  bit 0 complete,
     *                                                                     bit 1 gpuTimed, bit 2 gpuStartHostKnown
     * </pre>
     */
    public static final int COLLECTIVE_BLOCK_LENGTH_V1 = 153;

    public static final int COLL_SEQ = 0;
    public static final int COLL_HOST_ID = 8;
    public static final int COLL_COLL_KEY = 16;
    public static final int COLL_COMM_HASH = 24;
    public static final int COLL_SEQ_NUMBER = 32;
    public static final int COLL_COUNT = 40;
    public static final int COLL_BYTES = 48;
    public static final int COLL_HOST_START = 56;
    public static final int COLL_HOST_STOP = 64;
    public static final int COLL_GPU_START = 72;
    public static final int COLL_GPU_END = 80;
    public static final int COLL_GPU_START_HOST = 88;
    public static final int COLL_DURATION = 96;
    public static final int COLL_ALG_BANDWIDTH = 104;
    public static final int COLL_BUS_BANDWIDTH = 112;
    public static final int COLL_RANK = 120;
    public static final int COLL_NRANKS = 124;
    public static final int COLL_FUNC = 128;
    public static final int COLL_ALGO = 132;
    public static final int COLL_PROTO = 136;
    public static final int COLL_DATATYPE_SIZE = 140;
    public static final int COLL_N_CHANNELS = 144;
    public static final int COLL_KERNEL_CHANNELS = 148;
    public static final int COLL_FLAGS = 152;
    public static final int COLL_FLAG_COMPLETE = 1;
    public static final int COLL_FLAG_GPU_TIMED = 2;
    public static final int COLL_FLAG_GPU_START_HOST_KNOWN = 4;

    private WireSchema() {}

    /** True when a record value is a binary frame (template {@value #FRAME_TEMPLATE_ID}). */
    public static boolean isFrame(final byte[] value) {
        return isBinary(value)
                && ((value[TEMPLATE_ID_OFFSET] & 0xFF) | (value[TEMPLATE_ID_OFFSET + 1] & 0xFF) << 8)
                        == FRAME_TEMPLATE_ID;
    }

    /**
     * True when a record value is in this binary format (its schema id where the header puts it); false for
     * anything else, such as the JSON records of {@code FleetCodec} (which start with <code>{</code>).
     */
    public static boolean isBinary(final byte[] value) {
        return value != null
                && value.length >= HEADER_LENGTH
                && ((value[SCHEMA_ID_OFFSET] & 0xFF) | (value[SCHEMA_ID_OFFSET + 1] & 0xFF) << 8) == SCHEMA_ID;
    }
}
