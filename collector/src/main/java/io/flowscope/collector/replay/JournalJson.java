package io.flowscope.collector.replay;

import io.flowscope.api.input.TelemetryListener;
import io.flowscope.collector.config.EngineSettings;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Prints a journal's entries as JSON lines ({@code flowscope inspect <journal>}): field names as in the format. */
public final class JournalJson implements TelemetryListener, JournalReader.Meta {
    private final PrintStream out;
    private long wallNs;
    /** The batch (journal document) of the lines being written: 0, 1, 2, ... in reading order. */
    private long batch = -1;

    private long lines;
    private final long limit;

    public JournalJson(final PrintStream out, final long limit) {
        this.out = out;
        this.limit = limit;
    }

    public long lines() {
        return lines;
    }

    private void emit(final String type, final Object... kv) {
        if (lines >= limit) {
            return;
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", type);
        m.put("batch", batch);
        m.put("batchWallNs", wallNs);
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        try {
            out.println(Json.MAPPER.writeValueAsString(m));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        lines++;
    }

    @Override
    public void onBatch(final long wallNs) {
        this.wallNs = wallNs;
        batch++;
    }

    @Override
    public void onRingAttached(final long hostId, final int pid, final String hostname, final String path) {
        emit("ringAttached", "hostId", FlowRow.hex(hostId), "pid", pid, "hostname", hostname, "path", path);
    }

    @Override
    public void onRingClock(final long hostId, final int pid, final long realtimeNs, final long monotonicNs) {
        emit(
                "ringClock",
                "hostId",
                FlowRow.hex(hostId),
                "pid",
                pid,
                "realtimeNs",
                realtimeNs,
                "monotonicNs",
                monotonicNs);
    }

    @Override
    public void onRingComm(
            final long hostId,
            final String hostname,
            final int pid,
            final long commHash,
            final int rank,
            final int nranks,
            final int cudaDevice,
            final String pciBusId) {
        emit(
                "ringComm",
                "hostId",
                FlowRow.hex(hostId),
                "hostname",
                hostname,
                "pid",
                pid,
                "commHash",
                FlowRow.hex(commHash),
                "rank",
                rank,
                "nranks",
                nranks,
                "cudaDevice",
                cudaDevice,
                "pciBusId",
                pciBusId);
    }

    @Override
    public void onRingGpuUuid(
            final long hostId, final int pid, final long commHash, final int rank, final String gpuUuid) {
        emit(
                "ringGpuUuid",
                "hostId",
                FlowRow.hex(hostId),
                "pid",
                pid,
                "commHash",
                FlowRow.hex(commHash),
                "rank",
                rank,
                "gpuUuid",
                gpuUuid);
    }

    @Override
    public void onRingDetached(final int pid, final String path, final String reason) {
        emit("ringDetached", "pid", pid, "path", path, "reason", reason);
    }

    @Override
    public void onAnomaly(final long id, final boolean opened, final String summary) {
        emit("anomaly", "id", FlowRow.hex(id), "state", opened ? "opened" : "resolved", "summary", summary);
    }

    @Override
    public void onSource(final String spec) {
        emit("source", "spec", spec);
    }

    @Override
    public void onEngineSettings(final String settings) {
        emit("engineSettings", "settings", EngineSettings.parse(settings));
    }

    @Override
    public void onEnd() {
        emit("end");
    }

    @Override
    public void onHost(final long hostId) {
        emit("host", "hostId", FlowRow.hex(hostId));
    }

    @Override
    public void onProxyOpStart(
            final long opKey,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {
        emit(
                "proxyOpStart",
                "opKey",
                opKey,
                "commHash",
                FlowRow.hex(commHash),
                "rank",
                rank,
                "peer",
                peer,
                "channel",
                channel,
                "isSend",
                isSend,
                "timeNs",
                timeNs);
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        emit("proxyOpStop", "opKey", opKey, "timeNs", timeNs);
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        emit("advanceTo", "hostId", FlowRow.hex(hostId), "timeNs", timeNs);
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        emit("proxyStepStart", "stepKey", stepKey, "opKey", opKey, "step", step, "timeNs", timeNs);
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        emit("proxyStepState", "stepKey", stepKey, "state", state, "transSize", transSize, "timeNs", timeNs);
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        emit("proxyStepStop", "stepKey", stepKey, "timeNs", timeNs);
    }

    @Override
    public void onQpStart(
            final long wrKey,
            final int device,
            final long qpNum,
            final int opcode,
            final long length,
            final long timeNs) {
        emit(
                "qpStart", "wrKey", wrKey, "device", device, "qpNum", qpNum, "opcode", opcode, "length", length,
                "timeNs", timeNs);
    }

    @Override
    public void onQpStop(final long wrKey, final long timeNs) {
        emit("qpStop", "wrKey", wrKey, "timeNs", timeNs);
    }

    @Override
    public void onCollStart(
            final long collKey,
            final long commHash,
            final int rank,
            final int nranks,
            final int func,
            final int algo,
            final int proto,
            final long count,
            final int datatypeSize,
            final int nChannels,
            final long seqNumber,
            final long timeNs) {
        emit(
                "collStart",
                "collKey",
                collKey,
                "commHash",
                FlowRow.hex(commHash),
                "rank",
                rank,
                "nranks",
                nranks,
                "func",
                func,
                "algo",
                algo,
                "proto",
                proto,
                "count",
                count,
                "datatypeSize",
                datatypeSize,
                "nChannels",
                nChannels,
                "seqNumber",
                seqNumber,
                "timeNs",
                timeNs);
    }

    @Override
    public void onCollStop(final long collKey, final long timeNs) {
        emit("collStop", "collKey", collKey, "timeNs", timeNs);
    }

    @Override
    public void onKernelChStart(
            final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
        emit(
                "kernelChStart",
                "chKey",
                chKey,
                "collKey",
                collKey,
                "channel",
                channel,
                "pTimerNs",
                pTimerNs,
                "timeNs",
                timeNs);
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
        emit("kernelChStop", "chKey", chKey, "pTimerNs", pTimerNs, "timeNs", timeNs);
    }
}
