package io.flowscope.sink.influx;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.RankNames;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * The flowscope schema in InfluxDB (documented in sinks/README.md, tested against it): measurements
 * {@value #FLOW}, {@value #COLLECTIVE} and {@value #ANOMALY}. Tags are only bounded dimensions (host by name,
 * comm, rank, the rank's gpu, peer, channel, direction, kind, NIC device and QP, collective func/algo/proto,
 * anomaly kind/severity/state); identities that grow without bound (flowKey, collKey, sequence numbers, anomaly ids,
 * a rank's pid: a new one each run) are fields, and so are the hex host id, the GPU's PCI bus id and UUID beside
 * the names (anomaly points). A tag whose value does not apply (-1) or is unknown is left out.
 */
public final class InfluxSchema {
    public static final String FLOW = "flow";
    public static final String COLLECTIVE = "collective";
    public static final String ANOMALY = "anomaly";

    private static final String[] KINDS = {"step", "qp", "rank", "link", "comm"};
    private static final String[] FUNCS = {
        "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", "Recv", "SendRecv"
    };
    private static final String[] ALGOS = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
    private static final String[] PROTOS = {"LL", "LL128", "Simple"};
    private static final String[][] PHASE_FIELDS = new String[Phase.COUNT][];

    static {
        for (int phase = 0; phase < Phase.COUNT; phase++) {
            final String name = Phase.name(phase);
            PHASE_FIELDS[phase] = new String[] {name + "_count", name + "_sum_ns", name + "_max_ns"};
        }
    }

    private record RankKey(long hostId, long commHash, int rank) {}

    private final LongFunction<String> hostNames;
    private final RankNames rankNames;
    private final EventClock clock;
    /** A rank's {@code gpu} tag, once known (a rank's GPU does not change; an unknown one is asked again). */
    private final Map<RankKey, String> gpuTags = new ConcurrentHashMap<>();
    /** Tag values per host id and per communicator, built once: the hot path formats no numbers as hex. */
    private final Map<Long, String> hostTags = new ConcurrentHashMap<>();

    private final Map<Long, String> commTags = new ConcurrentHashMap<>();

    /**
     * @param hostNames the {@code host} tag for a host id (e.g. its hostname; {@link #hexHost} by default)
     * @param clock     event time → Unix-epoch ns of the points
     */
    public InfluxSchema(final LongFunction<String> hostNames, final EventClock clock) {
        this(hostNames, RankNames.NONE, clock);
    }

    /** @param rankNames a rank's process and GPU: the {@code gpu} tag, and the anomaly points' name fields */
    public InfluxSchema(final LongFunction<String> hostNames, final RankNames rankNames, final EventClock clock) {
        this.hostNames = hostNames;
        this.rankNames = rankNames;
        this.clock = clock;
    }

    public static String hexHost(final long hostId) {
        return String.format("%016x", hostId);
    }

    public static String comm(final long commHash) {
        return "0x" + Long.toHexString(commHash);
    }

    public static String kindName(final int kind) {
        return kind >= 0 && kind < KINDS.length ? KINDS[kind] : "kind" + kind;
    }

    static String name(final String[] names, final int code) {
        return code >= 0 && code < names.length ? names[code] : "unknown";
    }

    private String host(final long hostId) {
        final String cached = hostTags.get(hostId);
        return cached != null
                ? cached
                : hostTags.computeIfAbsent(hostId, h -> LineProtocol.escapeTagValue(hostNames.apply(h)));
    }

    private String commTag(final long commHash) {
        final String cached = commTags.get(commHash);
        return cached != null ? cached : commTags.computeIfAbsent(commHash, InfluxSchema::comm);
    }

    /** The rank's CUDA device ordinal, null when unknown or not a rank. */
    private String gpuTag(final long hostId, final long commHash, final int rank) {
        if (rank < 0 || commHash == 0) {
            return null;
        }
        final RankKey key = new RankKey(hostId, commHash, rank);
        final String cached = gpuTags.get(key);
        if (cached != null) {
            return cached;
        }
        final RankNames.Name name = rankNames.of(hostId, commHash, rank);
        if (name == null || name.gpu() < 0) {
            return null;
        }
        final String tag = Integer.toString(name.gpu());
        gpuTags.put(key, tag);
        return tag;
    }

    private static String id(final int v) {
        return v < 0 ? null : Integer.toString(v);
    }

    /** One {@value #FLOW} point at the period's end. */
    public void flow(final FlowSummary s, final LineProtocol p) {
        final boolean qp = s.kind() == FlowSummary.KIND_QP;
        p.measurement(FLOW)
                .tagEscaped("channel", id(s.channel()))
                .tagEscaped("comm", qp ? null : commTag(s.commHash()))
                .tagEscaped("device", qp ? id(s.device()) : null)
                .tagEscaped("direction", qp ? null : (s.isSend() ? "send" : "recv"))
                .tagEscaped("gpu", qp ? null : gpuTag(s.hostId(), s.commHash(), s.rank()))
                .tagEscaped("host", host(s.hostId()))
                .tagEscaped("kind", kindName(s.kind()))
                .tagEscaped("peer", id(s.peer()))
                .tagEscaped("qp", qp && s.qpNum() >= 0 ? Long.toString(s.qpNum()) : null)
                .tagEscaped("rank", id(s.rank()))
                .field("flows", s.flows())
                .field("posts", s.posts())
                .field("completions", s.completions())
                .field("bytes", s.bytes())
                .field("bw_period", s.periodBandwidthBytesPerSecond())
                .field("bw_window", s.windowBandwidthBytesPerSecond())
                .field("window_completions", s.windowCompletions())
                .field("window_bytes", s.windowBytes())
                .field("window_span_ns", s.windowSpanNs())
                .field("outstanding_steps", s.outstandingSteps())
                .field("outstanding_bytes", s.outstandingBytes())
                .field("period_ns", s.periodEndNs() - s.periodStartNs());
        for (int phase = 0; phase < Phase.COUNT; phase++) {
            if (s.phaseCount(phase) > 0) {
                final String[] names = PHASE_FIELDS[phase];
                p.field(names[0], s.phaseCount(phase))
                        .field(names[1], s.phaseSumNs(phase))
                        .field(names[2], s.phaseMaxNs(phase));
            }
        }
        p.end(clock.toEpochNanos(s.hostId(), s.periodEndNs()));
    }

    /** One {@value #COLLECTIVE} point at the collective's host stop time. */
    public void collective(final CollectiveSummary c, final LineProtocol p) {
        p.measurement(COLLECTIVE)
                .tagEscaped("algo", name(ALGOS, c.algo()))
                .tagEscaped("comm", commTag(c.commHash()))
                .tagEscaped("func", name(FUNCS, c.func()))
                .tagEscaped("gpu", gpuTag(c.hostId(), c.commHash(), c.rank()))
                .tagEscaped("host", host(c.hostId()))
                .tagEscaped("proto", name(PROTOS, c.proto()))
                .tagEscaped("rank", id(c.rank()))
                .field("nranks", c.nranks())
                .field("seq", c.seqNumber())
                .field("count", c.count())
                .field("bytes", c.bytes())
                .field("channels", c.nChannels())
                .field("kernel_channels", c.kernelChannels())
                .field("complete", c.complete())
                .field("gpu_timed", c.gpuTimed())
                .field("duration_ns", c.durationNs())
                .field("alg_bw", c.algBandwidthBytesPerSecond())
                .field("bus_bw", c.busBandwidthBytesPerSecond())
                .field("coll_key", c.collKey())
                .end(clock.toEpochNanos(c.hostId(), c.hostStopNs()));
    }

    /**
     * One {@value #ANOMALY} event (a Grafana annotation): at its onset when opened, at its decision time when
     * updated, at its resolution when resolved.
     */
    public void anomaly(final Anomaly a, final String state, final LineProtocol p) {
        final Culprit c = a.culprit();
        p.measurement(ANOMALY)
                .tagEscaped("channel", id(c.channel()))
                .tagEscaped("comm", c.commHash() == 0 ? null : commTag(c.commHash()))
                .tagEscaped("device", id(c.device()))
                .tagEscaped("gpu", gpuTag(c.hostId(), c.commHash(), c.rank()))
                .tagEscaped("host", host(c.hostId()))
                .tagEscaped("kind", a.kind().name().toLowerCase(Locale.ROOT))
                .tagEscaped("peer", id(c.peer()))
                .tagEscaped("rank", id(c.rank()))
                .tagEscaped("severity", a.severity().name().toLowerCase(Locale.ROOT))
                .tagEscaped("state", state)
                .field("id", "0x" + Long.toHexString(a.id()))
                .field("host_id", "0x" + Long.toHexString(c.hostId()))
                .field("summary", a.summary())
                .field("start_ns", a.startNs())
                .field("detected_ns", a.detectedNs())
                .field("resolved_ns", a.resolvedNs())
                .field("window_start_ns", a.windowStartNs())
                .field("window_end_ns", a.windowEndNs());
        if (c.qpNum() >= 0) {
            p.field("qp", c.qpNum());
        }
        final RankNames.Name who =
                c.rank() >= 0 && c.commHash() != 0 ? rankNames.of(c.hostId(), c.commHash(), c.rank()) : null;
        if (who != null) {
            p.field("pid", who.pid());
            if (!who.pciBusId().isEmpty()) {
                p.field("pci_bus_id", who.pciBusId());
            }
            if (!who.gpuUuid().isEmpty()) {
                p.field("gpu_uuid", who.gpuUuid());
            }
        }
        if (!a.isOpen()) {
            p.field("duration_ns", a.resolvedNs() - a.startNs());
        }
        for (final Map.Entry<String, Double> e : a.evidence().entrySet()) {
            p.field(LineProtocol.escapeKey("ev_" + e.getKey()), e.getValue());
        }
        final long t =
                "resolved".equals(state) ? a.resolvedNs() : "updated".equals(state) ? a.detectedNs() : a.startNs();
        p.end(clock.toEpochNanos(c.hostId(), t));
    }
}
