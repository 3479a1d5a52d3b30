package io.flowscope.collector.fleet.wire;

import static io.flowscope.collector.fleet.wire.WireSchema.*;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.nio.charset.StandardCharsets;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Writes one agent's summaries as fleet wire records (layout: {@link WireSchema}). One encoder per publishing
 * thread (it reuses its buffer); {@link #encodeFlow} / {@link #encodeCollective} write into a caller's buffer and
 * allocate nothing, {@link #flow} / {@link #collective} return the record as the exact-length array a Kafka
 * {@code ByteArraySerializer} takes (the one allocation a record needs there).
 */
public final class FleetWireEncoder {
    private final byte[] agent;
    private final ExpandableArrayBuffer scratch = new ExpandableArrayBuffer(1024);
    /** The last host name and its UTF-8 bytes: names come from a map, so the same String repeats. */
    private String lastHostName;

    private byte[] lastHostNameBytes = new byte[0];

    public FleetWireEncoder(final String agentId) {
        this.agent = agentId.getBytes(StandardCharsets.UTF_8);
        if (agent.length > MAX_VAR_LENGTH) {
            throw new IllegalArgumentException(
                    "fleet wire: agent id of " + agent.length + " bytes (at most " + MAX_VAR_LENGTH + ")");
        }
    }

    /** The record of a flow summary, exact length. {@code hostName}: the host's name, null when not known. */
    public byte[] flow(final long seq, final FlowSummary s, final String hostName) {
        final int length = encodeFlow(scratch, 0, seq, s, hostName);
        final byte[] out = new byte[length];
        scratch.getBytes(0, out);
        return out;
    }

    public byte[] collective(final long seq, final CollectiveSummary s) {
        final int length = encodeCollective(scratch, 0, seq, s);
        final byte[] out = new byte[length];
        scratch.getBytes(0, out);
        return out;
    }

    private static void header(final MutableDirectBuffer b, final int at, final int blockLength, final int template) {
        b.putShort(at + BLOCK_LENGTH_OFFSET, (short) blockLength, ORDER);
        b.putShort(at + TEMPLATE_ID_OFFSET, (short) template, ORDER);
        b.putShort(at + SCHEMA_ID_OFFSET, (short) SCHEMA_ID, ORDER);
        b.putShort(at + VERSION_OFFSET, (short) VERSION, ORDER);
    }

    /** Writes the record at {@code offset} (the buffer must hold it, or expand); returns its length. */
    public int encodeFlow(
            final MutableDirectBuffer b, final int offset, final long seq, final FlowSummary s, final String hostName) {
        header(b, offset, FLOW_BLOCK_LENGTH_V1, FLOW_TEMPLATE_ID);
        final int r = offset + HEADER_LENGTH;
        b.putLong(r + FLOW_SEQ, seq, ORDER);
        b.putLong(r + FLOW_PERIOD_START, s.periodStartNs(), ORDER);
        b.putLong(r + FLOW_PERIOD_END, s.periodEndNs(), ORDER);
        b.putLong(r + FLOW_HOST_ID, s.hostId(), ORDER);
        b.putLong(r + FLOW_QP_NUM, s.qpNum(), ORDER);
        b.putLong(r + FLOW_FLOW_KEY, s.flowKey(), ORDER);
        b.putLong(r + FLOW_COMM_HASH, s.commHash(), ORDER);
        b.putDouble(r + FLOW_PERIOD_BANDWIDTH, s.periodBandwidthBytesPerSecond(), ORDER);
        b.putLong(r + FLOW_POSTS, s.posts(), ORDER);
        b.putLong(r + FLOW_COMPLETIONS, s.completions(), ORDER);
        b.putLong(r + FLOW_BYTES, s.bytes(), ORDER);
        b.putLong(r + FLOW_WINDOW_BYTES, s.windowBytes(), ORDER);
        b.putLong(r + FLOW_WINDOW_SPAN, s.windowSpanNs(), ORDER);
        b.putDouble(r + FLOW_WINDOW_BANDWIDTH, s.windowBandwidthBytesPerSecond(), ORDER);
        b.putLong(r + FLOW_OUTSTANDING_STEPS, s.outstandingSteps(), ORDER);
        b.putLong(r + FLOW_OUTSTANDING_BYTES, s.outstandingBytes(), ORDER);
        b.putLong(r + FLOW_FIRST_STEPS, s.firstSteps(), ORDER);
        b.putLong(r + FLOW_FIRST_STEP_WAIT_SUM, s.firstStepWaitSumNs(), ORDER);
        b.putInt(r + FLOW_DEVICE, s.device(), ORDER);
        b.putInt(r + FLOW_RANK, s.rank(), ORDER);
        b.putInt(r + FLOW_PEER, s.peer(), ORDER);
        b.putInt(r + FLOW_CHANNEL, s.channel(), ORDER);
        b.putInt(r + FLOW_FLOWS, s.flows(), ORDER);
        b.putInt(r + FLOW_WINDOW_COMPLETIONS, s.windowCompletions(), ORDER);
        b.putByte(r + FLOW_KIND, (byte) s.kind());
        b.putByte(r + FLOW_FLAGS, (byte) (s.isSend() ? FLOW_FLAG_SEND : 0));

        final int group = r + FLOW_BLOCK_LENGTH_V1;
        int entry = group + GROUP_HEADER_LENGTH;
        int entries = 0;
        for (int p = 0; p < Phase.COUNT; p++) {
            final long count = s.phaseCount(p);
            final long sum = s.phaseSumNs(p);
            final long max = s.phaseMaxNs(p);
            final long p50 = s.phaseP50Ns(p);
            final long p90 = s.phaseP90Ns(p);
            final long p99 = s.phaseP99Ns(p);
            if (count == 0
                    && sum == 0
                    && max == 0
                    && p50 == Phase.ABSENT
                    && p90 == Phase.ABSENT
                    && p99 == Phase.ABSENT) {
                continue; // nothing measured: the reader's default
            }
            b.putByte(entry + PHASE_ID, (byte) p);
            b.putLong(entry + PHASE_COUNT, count, ORDER);
            b.putLong(entry + PHASE_SUM, sum, ORDER);
            b.putLong(entry + PHASE_MAX, max, ORDER);
            b.putLong(entry + PHASE_P50, p50, ORDER);
            b.putLong(entry + PHASE_P90, p90, ORDER);
            b.putLong(entry + PHASE_P99, p99, ORDER);
            entry += PHASE_ENTRY_LENGTH_V1;
            entries++;
        }
        b.putShort(group + GROUP_BLOCK_LENGTH_OFFSET, (short) PHASE_ENTRY_LENGTH_V1, ORDER);
        b.putShort(group + GROUP_COUNT_OFFSET, (short) entries, ORDER);

        int at = putVar(b, entry, agent, agent.length);
        final byte[] host = hostNameBytes(hostName);
        at = putVar(b, at, host, host.length);
        return at - offset;
    }

    public int encodeCollective(
            final MutableDirectBuffer b, final int offset, final long seq, final CollectiveSummary s) {
        header(b, offset, COLLECTIVE_BLOCK_LENGTH_V1, COLLECTIVE_TEMPLATE_ID);
        final int r = offset + HEADER_LENGTH;
        b.putLong(r + COLL_SEQ, seq, ORDER);
        b.putLong(r + COLL_HOST_ID, s.hostId(), ORDER);
        b.putLong(r + COLL_COLL_KEY, s.collKey(), ORDER);
        b.putLong(r + COLL_COMM_HASH, s.commHash(), ORDER);
        b.putLong(r + COLL_SEQ_NUMBER, s.seqNumber(), ORDER);
        b.putLong(r + COLL_COUNT, s.count(), ORDER);
        b.putLong(r + COLL_BYTES, s.bytes(), ORDER);
        b.putLong(r + COLL_HOST_START, s.hostStartNs(), ORDER);
        b.putLong(r + COLL_HOST_STOP, s.hostStopNs(), ORDER);
        b.putLong(r + COLL_GPU_START, s.gpuStartNs(), ORDER);
        b.putLong(r + COLL_GPU_END, s.gpuEndNs(), ORDER);
        b.putLong(r + COLL_GPU_START_HOST, s.gpuStartHostNs(), ORDER);
        b.putLong(r + COLL_DURATION, s.durationNs(), ORDER);
        b.putDouble(r + COLL_ALG_BANDWIDTH, s.algBandwidthBytesPerSecond(), ORDER);
        b.putDouble(r + COLL_BUS_BANDWIDTH, s.busBandwidthBytesPerSecond(), ORDER);
        b.putInt(r + COLL_RANK, s.rank(), ORDER);
        b.putInt(r + COLL_NRANKS, s.nranks(), ORDER);
        b.putInt(r + COLL_FUNC, s.func(), ORDER);
        b.putInt(r + COLL_ALGO, s.algo(), ORDER);
        b.putInt(r + COLL_PROTO, s.proto(), ORDER);
        b.putInt(r + COLL_DATATYPE_SIZE, s.datatypeSize(), ORDER);
        b.putInt(r + COLL_N_CHANNELS, s.nChannels(), ORDER);
        b.putInt(r + COLL_KERNEL_CHANNELS, s.kernelChannels(), ORDER);
        b.putByte(r + COLL_FLAGS, (byte) ((s.complete() ? COLL_FLAG_COMPLETE : 0)
                | (s.gpuTimed() ? COLL_FLAG_GPU_TIMED : 0)
                | (s.gpuStartHostKnown() ? COLL_FLAG_GPU_START_HOST_KNOWN : 0)));
        final int at = putVar(b, r + COLLECTIVE_BLOCK_LENGTH_V1, agent, agent.length);
        return at - offset;
    }

    private static int putVar(final MutableDirectBuffer b, final int at, final byte[] bytes, final int length) {
        b.putShort(at, (short) length, ORDER);
        b.putBytes(at + VAR_LENGTH_LENGTH, bytes, 0, length);
        return at + VAR_LENGTH_LENGTH + length;
    }

    private byte[] hostNameBytes(final String hostName) {
        if (hostName == null) {
            return EMPTY;
        }
        if (!hostName.equals(lastHostName)) {
            final byte[] bytes = hostName.getBytes(StandardCharsets.UTF_8);
            // a name longer than the length field holds is sent as unknown rather than cut mid-character
            lastHostNameBytes = bytes.length <= MAX_VAR_LENGTH ? bytes : EMPTY;
            lastHostName = hostName;
        }
        return lastHostNameBytes;
    }

    private static final byte[] EMPTY = new byte[0];
}
