package io.flowscope.collector.pipeline;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.flowscope.api.summary.FlowSummary;

/**
 * An immutable copy of one {@link FlowSummary} for the HTTP side (JSON as is). {@code host} is the engines' hex id;
 * beside it the names people use, each present only when known: {@code hostname} (the ring header's), and for a
 * row of a rank (step, link, rank rows) that rank's {@code pid}, {@code gpu} (CUDA device ordinal in its process),
 * {@code gpuBusId} (PCI bus id) and {@code gpuUuid} ("GPU-..." as nvidia-smi prints it).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FlowRow(
        String kind,
        String host,
        String hostname,
        String comm,
        int rank,
        Integer pid,
        Integer gpu,
        String gpuBusId,
        String gpuUuid,
        int peer,
        int channel,
        String direction,
        int device,
        long qpNum,
        long periodStartNs,
        long periodEndNs,
        int flows,
        long posts,
        long completions,
        long bytes,
        double periodBandwidthBytesPerSecond,
        double windowBandwidthBytesPerSecond,
        long outstandingSteps,
        long outstandingBytes) {
    static final String[] KINDS = {"step", "qp", "rank", "link", "comm"};

    static FlowRow of(final FlowSummary s) {
        return of(s, null, null);
    }

    /**
     * @param hostname the host's name, null or empty when unknown
     * @param who      the row's rank as the rings described it, null when unknown (or the row is no rank's)
     */
    static FlowRow of(final FlowSummary s, final String hostname, final RankIdentity who) {
        final boolean rank = who != null && who.isRank();
        final String name = hostname != null && !hostname.isEmpty()
                ? hostname
                : who != null && !who.hostname().isEmpty() ? who.hostname() : null;
        return new FlowRow(
                KINDS[s.kind()],
                hex(s.hostId()),
                name,
                hex(s.commHash()),
                s.rank(),
                rank ? who.pid() : null,
                rank && who.cudaDevice() >= 0 ? who.cudaDevice() : null,
                rank && !who.pciBusId().isEmpty() ? who.pciBusId() : null,
                rank && !who.gpuUuid().isEmpty() ? who.gpuUuid() : null,
                s.peer(),
                s.channel(),
                s.isSend() ? "send" : "recv",
                s.device(),
                s.qpNum(),
                s.periodStartNs(),
                s.periodEndNs(),
                s.flows(),
                s.posts(),
                s.completions(),
                s.bytes(),
                finite(s.periodBandwidthBytesPerSecond()),
                finite(s.windowBandwidthBytesPerSecond()),
                s.outstandingSteps(),
                s.outstandingBytes());
    }

    public static double finite(final double v) {
        return Double.isFinite(v) ? v : 0.0;
    }

    public static String hex(final long v) {
        return "0x" + Long.toHexString(v);
    }
}
