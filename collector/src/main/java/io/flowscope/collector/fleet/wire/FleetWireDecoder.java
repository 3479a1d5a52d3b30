package io.flowscope.collector.fleet.wire;

import static io.flowscope.collector.fleet.wire.WireSchema.*;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.nio.charset.StandardCharsets;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Reads fleet wire records (layout: {@link WireSchema}) of any version from 1 on. {@link #wrap} checks the whole
 * record's structure once (header, block, group and var-data bounds) and throws a {@link WireFormatException}
 * naming what is wrong; after it the accessors cannot read outside the record. A reused decoder fills a caller's
 * reused summary (through its builder) and allocates nothing in steady state (agent and host names come from a
 * small cache).
 *
 * <p>Evolution: the record's own block lengths place everything, so fields a newer writer appended are skipped,
 * and {@link #int64} reads a field appended after version 1 as its null value from a record that lacks it.
 */
public final class FleetWireDecoder {
    private final UnsafeBuffer buffer = new UnsafeBuffer(0, 0);
    private final Utf8Cache names = new Utf8Cache();
    private int offset;
    private int length;
    private int templateId;
    private int version;
    private int blockLength;
    private int phaseEntries;
    private int phaseEntryLength;
    private int phasesAt;
    private int agentAt;
    private int agentLength;
    private int hostAt;
    private int hostLength;
    /** The builders of the caller's reused summaries (a caller fills one record again and again). */
    private FlowSummary flowTarget;

    private FlowSummary.Builder flowBuilder;
    private CollectiveSummary collectiveTarget;
    private CollectiveSummary.Builder collectiveBuilder;

    /** Wraps a record value; returns its template id ({@link WireSchema#FLOW_TEMPLATE_ID}, ...). */
    public int wrap(final byte[] value) {
        if (value == null) {
            throw new WireFormatException("fleet wire: a record without a value");
        }
        buffer.wrap(value);
        return check(0, value.length);
    }

    public int wrap(final DirectBuffer source, final int offset, final int length) {
        buffer.wrap(source, offset, length);
        return check(0, length);
    }

    private int check(final int at, final int size) {
        offset = at;
        length = size;
        if (size < HEADER_LENGTH) {
            throw new WireFormatException(
                    "fleet wire: record of " + size + " bytes, shorter than the " + HEADER_LENGTH + "-byte header");
        }
        final int schema = u16(at + SCHEMA_ID_OFFSET);
        if (schema != SCHEMA_ID) {
            throw new WireFormatException(String.format(
                    "fleet wire: unknown schema id 0x%04x (this reader knows "
                            + "0x%04x, versions 1-%d); record of %d bytes skipped",
                    schema, SCHEMA_ID, VERSION, size));
        }
        templateId = u16(at + TEMPLATE_ID_OFFSET);
        version = u16(at + VERSION_OFFSET);
        blockLength = u16(at + BLOCK_LENGTH_OFFSET);
        if (version == 0) {
            throw new WireFormatException(
                    "fleet wire: version 0 (versions start at 1); record of " + size + " bytes skipped");
        }
        final int minBlock =
                switch (templateId) {
                    case FLOW_TEMPLATE_ID -> FLOW_BLOCK_LENGTH_V1;
                    case COLLECTIVE_TEMPLATE_ID -> COLLECTIVE_BLOCK_LENGTH_V1;
                    case FRAME_TEMPLATE_ID ->
                        throw new WireFormatException("fleet wire: a frame where a summary record belongs (a frame "
                                + "inside a frame?); record of " + size + " bytes skipped");
                    default ->
                        throw new WireFormatException(
                                "fleet wire: unknown template id " + templateId + " (schema version "
                                        + version + "; this reader knows 1 flow, 2 collective): written by a newer "
                                        + "agent? record of "
                                        + size + " bytes skipped");
                };
        if (blockLength < minBlock) {
            throw new WireFormatException("fleet wire: template " + templateId + " block of " + blockLength
                    + " bytes, below version 1's " + minBlock + "; record skipped");
        }
        int pos = at + HEADER_LENGTH + blockLength;
        need(pos, ROOT_BLOCK, 0);
        phaseEntries = 0;
        if (templateId == FLOW_TEMPLATE_ID) {
            need(pos + GROUP_HEADER_LENGTH, GROUP_HEADER, 0);
            phaseEntryLength = u16(pos + GROUP_BLOCK_LENGTH_OFFSET);
            phaseEntries = u16(pos + GROUP_COUNT_OFFSET);
            if (phaseEntryLength < PHASE_ENTRY_LENGTH_V1) {
                throw new WireFormatException("fleet wire: phase entries of " + phaseEntryLength
                        + " bytes, below version 1's " + PHASE_ENTRY_LENGTH_V1 + "; record skipped");
            }
            phasesAt = pos + GROUP_HEADER_LENGTH;
            pos = phasesAt + phaseEntries * phaseEntryLength;
            need(pos, PHASE_ENTRIES, phaseEntries);
        }
        agentAt = pos + VAR_LENGTH_LENGTH;
        need(agentAt, AGENT_LENGTH, 0);
        agentLength = u16(pos);
        pos = agentAt + agentLength;
        need(pos, AGENT_BYTES, agentLength);
        hostLength = 0;
        if (templateId == FLOW_TEMPLATE_ID) {
            hostAt = pos + VAR_LENGTH_LENGTH;
            need(hostAt, HOST_LENGTH, 0);
            hostLength = u16(pos);
            pos = hostAt + hostLength;
            need(pos, HOST_BYTES, hostLength);
        }
        // bytes after the last var-data field this reader knows: appended by a newer version, skipped
        return templateId;
    }

    private static final int ROOT_BLOCK = 0;
    private static final int GROUP_HEADER = 1;
    private static final int PHASE_ENTRIES = 2;
    private static final int AGENT_LENGTH = 3;
    private static final int AGENT_BYTES = 4;
    private static final int HOST_LENGTH = 5;
    private static final int HOST_BYTES = 6;

    /** {@code what} and {@code n} name the part; the message is built only when the record is short. */
    private void need(final int end, final int what, final int n) {
        if (end > offset + length) {
            final String part =
                    switch (what) {
                        case ROOT_BLOCK -> "the root block";
                        case GROUP_HEADER -> "the phases group header";
                        case PHASE_ENTRIES -> n + " phase entries";
                        case AGENT_LENGTH -> "the agent's length";
                        case AGENT_BYTES -> "the agent's " + n + " bytes";
                        case HOST_LENGTH -> "the host name's length";
                        default -> "the host name's " + n + " bytes";
                    };
            throw new WireFormatException("fleet wire: truncated record of " + length + " bytes (template " + templateId
                    + ", version " + version + "): " + part + " would end at byte " + (end - offset)
                    + "; record skipped");
        }
    }

    private int u16(final int at) {
        return buffer.getShort(at, ORDER) & 0xFFFF;
    }

    public int templateId() {
        return templateId;
    }

    /** The version of the schema the record was written with (may be above this reader's). */
    public int version() {
        return version;
    }

    /** The record's root block length: this reader's own for its version, more from a newer writer. */
    public int blockLength() {
        return blockLength;
    }

    /** The agent's sequence number of the record. */
    public long seq() {
        return buffer.getLong(offset + HEADER_LENGTH, ORDER);
    }

    /**
     * A root-block field at {@code fieldOffset} appended after version 1, or {@code nullValue} when the record's
     * block ends before it (written by an older version). Every field a later version adds is read so.
     */
    public long int64(final int fieldOffset, final long nullValue) {
        return fieldOffset + Long.BYTES <= blockLength
                ? buffer.getLong(offset + HEADER_LENGTH + fieldOffset, ORDER)
                : nullValue;
    }

    public String agent() {
        return names.get(buffer, agentAt, agentLength);
    }

    /** The host's name as the agent knew it; null when it did not (or for a collective record). */
    public String hostName() {
        return hostLength == 0 ? null : names.get(buffer, hostAt, hostLength);
    }

    /** Fills {@code into} from a flow record ({@link #templateId()} {@link WireSchema#FLOW_TEMPLATE_ID}). */
    public FlowSummary flowInto(final FlowSummary into) {
        if (templateId != FLOW_TEMPLATE_ID) {
            throw new IllegalStateException("fleet wire: flowInto on a record of template " + templateId);
        }
        final int r = offset + HEADER_LENGTH;
        final UnsafeBuffer b = buffer;
        final FlowSummary.Builder f = flowBuilder(into)
                .periodStartNs(b.getLong(r + FLOW_PERIOD_START, ORDER))
                .periodEndNs(b.getLong(r + FLOW_PERIOD_END, ORDER))
                .hostId(b.getLong(r + FLOW_HOST_ID, ORDER))
                .qpNum(b.getLong(r + FLOW_QP_NUM, ORDER))
                .flowKey(b.getLong(r + FLOW_FLOW_KEY, ORDER))
                .commHash(b.getLong(r + FLOW_COMM_HASH, ORDER))
                .periodBandwidthBytesPerSecond(b.getDouble(r + FLOW_PERIOD_BANDWIDTH, ORDER))
                .posts(b.getLong(r + FLOW_POSTS, ORDER))
                .completions(b.getLong(r + FLOW_COMPLETIONS, ORDER))
                .bytes(b.getLong(r + FLOW_BYTES, ORDER))
                .windowBytes(b.getLong(r + FLOW_WINDOW_BYTES, ORDER))
                .windowSpanNs(b.getLong(r + FLOW_WINDOW_SPAN, ORDER))
                .windowBandwidthBytesPerSecond(b.getDouble(r + FLOW_WINDOW_BANDWIDTH, ORDER))
                .outstandingSteps(b.getLong(r + FLOW_OUTSTANDING_STEPS, ORDER))
                .outstandingBytes(b.getLong(r + FLOW_OUTSTANDING_BYTES, ORDER))
                .firstSteps(b.getLong(r + FLOW_FIRST_STEPS, ORDER))
                .firstStepWaitSumNs(b.getLong(r + FLOW_FIRST_STEP_WAIT_SUM, ORDER))
                .device(b.getInt(r + FLOW_DEVICE, ORDER))
                .rank(b.getInt(r + FLOW_RANK, ORDER))
                .peer(b.getInt(r + FLOW_PEER, ORDER))
                .channel(b.getInt(r + FLOW_CHANNEL, ORDER))
                .flows(b.getInt(r + FLOW_FLOWS, ORDER))
                .windowCompletions(b.getInt(r + FLOW_WINDOW_COMPLETIONS, ORDER))
                .kind(b.getByte(r + FLOW_KIND) & 0xFF)
                .isSend((b.getByte(r + FLOW_FLAGS) & FLOW_FLAG_SEND) != 0)
                .clearPhases();
        for (int i = 0, e = phasesAt; i < phaseEntries; i++, e += phaseEntryLength) {
            final int p = b.getByte(e + PHASE_ID) & 0xFF;
            if (p >= Phase.COUNT) {
                continue; // a phase a newer engine measures: not one this reader's summary has
            }
            f.phase(
                    p,
                    b.getLong(e + PHASE_COUNT, ORDER),
                    b.getLong(e + PHASE_SUM, ORDER),
                    b.getLong(e + PHASE_MAX, ORDER));
            f.phasePercentiles(
                    p,
                    b.getLong(e + PHASE_P50, ORDER),
                    b.getLong(e + PHASE_P90, ORDER),
                    b.getLong(e + PHASE_P99, ORDER));
        }
        return into;
    }

    /** Fills {@code into} from a collective record ({@link WireSchema#COLLECTIVE_TEMPLATE_ID}). */
    public CollectiveSummary collectiveInto(final CollectiveSummary into) {
        if (templateId != COLLECTIVE_TEMPLATE_ID) {
            throw new IllegalStateException("fleet wire: collectiveInto on a record of template " + templateId);
        }
        final int r = offset + HEADER_LENGTH;
        final UnsafeBuffer b = buffer;
        final int flags = b.getByte(r + COLL_FLAGS) & 0xFF;
        collectiveBuilder(into)
                .hostId(b.getLong(r + COLL_HOST_ID, ORDER))
                .collKey(b.getLong(r + COLL_COLL_KEY, ORDER))
                .commHash(b.getLong(r + COLL_COMM_HASH, ORDER))
                .seqNumber(b.getLong(r + COLL_SEQ_NUMBER, ORDER))
                .count(b.getLong(r + COLL_COUNT, ORDER))
                .bytes(b.getLong(r + COLL_BYTES, ORDER))
                .hostStartNs(b.getLong(r + COLL_HOST_START, ORDER))
                .hostStopNs(b.getLong(r + COLL_HOST_STOP, ORDER))
                .gpuStartNs(b.getLong(r + COLL_GPU_START, ORDER))
                .gpuEndNs(b.getLong(r + COLL_GPU_END, ORDER))
                .gpuStartHostNs(b.getLong(r + COLL_GPU_START_HOST, ORDER))
                .durationNs(b.getLong(r + COLL_DURATION, ORDER))
                .algBandwidthBytesPerSecond(b.getDouble(r + COLL_ALG_BANDWIDTH, ORDER))
                .busBandwidthBytesPerSecond(b.getDouble(r + COLL_BUS_BANDWIDTH, ORDER))
                .rank(b.getInt(r + COLL_RANK, ORDER))
                .nranks(b.getInt(r + COLL_NRANKS, ORDER))
                .func(b.getInt(r + COLL_FUNC, ORDER))
                .algo(b.getInt(r + COLL_ALGO, ORDER))
                .proto(b.getInt(r + COLL_PROTO, ORDER))
                .datatypeSize(b.getInt(r + COLL_DATATYPE_SIZE, ORDER))
                .nChannels(b.getInt(r + COLL_N_CHANNELS, ORDER))
                .kernelChannels(b.getInt(r + COLL_KERNEL_CHANNELS, ORDER))
                .complete((flags & COLL_FLAG_COMPLETE) != 0)
                .gpuTimed((flags & COLL_FLAG_GPU_TIMED) != 0)
                .gpuStartHostKnown((flags & COLL_FLAG_GPU_START_HOST_KNOWN) != 0);
        return into;
    }

    private FlowSummary.Builder flowBuilder(final FlowSummary into) {
        if (into != flowTarget) {
            flowTarget = into;
            flowBuilder = FlowSummary.into(into);
        }
        return flowBuilder;
    }

    private CollectiveSummary.Builder collectiveBuilder(final CollectiveSummary into) {
        if (into != collectiveTarget) {
            collectiveTarget = into;
            collectiveBuilder = CollectiveSummary.into(into);
        }
        return collectiveBuilder;
    }

    /**
     * Strings by their UTF-8 bytes: a handful of agents and hosts repeat on every record of a partition, so a hit
     * costs a hash and a compare and no String.
     */
    static final class Utf8Cache {
        private static final int SLOTS = 256;
        private final byte[][] keys = new byte[SLOTS][];
        private final String[] values = new String[SLOTS];

        String get(final DirectBuffer b, final int at, final int length) {
            int h = length;
            for (int i = 0; i < length; i++) {
                h = 31 * h + b.getByte(at + i);
            }
            final int slot = (h ^ h >>> 16) & (SLOTS - 1);
            final byte[] k = keys[slot];
            if (k != null && k.length == length && equal(k, b, at)) {
                return values[slot];
            }
            final byte[] bytes = new byte[length];
            b.getBytes(at, bytes);
            final String s = new String(bytes, StandardCharsets.UTF_8);
            keys[slot] = bytes;
            values[slot] = s;
            return s;
        }

        private static boolean equal(final byte[] k, final DirectBuffer b, final int at) {
            for (int i = 0; i < k.length; i++) {
                if (k[i] != b.getByte(at + i)) {
                    return false;
                }
            }
            return true;
        }
    }
}
