package io.flowscope.collector.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.Culprit;
import java.util.LinkedHashMap;
import java.util.Map;

/** JSON of the API: one mapper, anomalies as flat maps with ids and hashes in hex. */
public final class Json {
    public static final ObjectMapper MAPPER = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

    private Json() {}

    public static String write(final Object o) {
        try {
            return MAPPER.writeValueAsString(o);
        } catch (final JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static Map<String, Object> anomaly(final Anomaly a) {
        return anomaly(a, null);
    }

    /** With its culprit as named ({@code who}, null when unknown): see {@link #culprit(Culprit, RankIdentity)}. */
    public static Map<String, Object> anomaly(final Anomaly a, final RankIdentity who) {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", FlowRow.hex(a.id()));
        m.put("kind", a.kind().name());
        m.put("severity", a.severity().name());
        m.put("open", a.isOpen());
        m.put("culprit", culprit(a.culprit(), who));
        m.put("startNs", a.startNs());
        m.put("detectedNs", a.detectedNs());
        m.put("resolvedNs", a.resolvedNs());
        m.put("windowStartNs", a.windowStartNs());
        m.put("windowEndNs", a.windowEndNs());
        m.put("evidence", a.evidence());
        m.put("summary", a.summary());
        return m;
    }

    public static Map<String, Object> culprit(final Culprit c) {
        return culprit(c, null);
    }

    /**
     * The culprit's fields; where it is named ({@code who}), also {@code hostname}, and for a rank {@code pid},
     * {@code gpu} (the CUDA device ordinal in that process), {@code gpuBusId} (its PCI bus id) and {@code gpuUuid}
     * (its UUID, "GPU-..." as nvidia-smi prints it), each present only when known.
     */
    public static Map<String, Object> culprit(final Culprit c, final RankIdentity who) {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("host", FlowRow.hex(c.hostId()));
        m.put("comm", FlowRow.hex(c.commHash()));
        m.put("rank", c.rank());
        m.put("peer", c.peer());
        m.put("channel", c.channel());
        m.put("device", c.device());
        m.put("qpNum", c.qpNum());
        if (who != null) {
            if (!who.hostname().isEmpty()) {
                m.put("hostname", who.hostname());
            }
            if (who.isRank()) {
                m.put("pid", who.pid());
                if (who.cudaDevice() >= 0) {
                    m.put("gpu", who.cudaDevice());
                }
                if (!who.pciBusId().isEmpty()) {
                    m.put("gpuBusId", who.pciBusId());
                }
                if (!who.gpuUuid().isEmpty()) {
                    m.put("gpuUuid", who.gpuUuid());
                }
            }
        }
        return m;
    }

    public static Map<String, Object> event(final AnomalyEvent e) {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", e.type());
        m.put("publishedWallMs", e.publishedWallMs());
        m.put("publishedMonoNs", e.publishedMonoNs());
        m.put("anomaly", anomaly(e.anomaly(), e.culprit()));
        return m;
    }

    /** One line for the console. */
    public static String line(final AnomalyEvent e) {
        final Anomaly a = e.anomaly();
        return String.format(
                "%-8s %-9s %-8s %s  [%s, detected at t=%.3f s]",
                e.type().toUpperCase(), a.kind(), a.severity(), a.summary(), FlowRow.hex(a.id()), a.detectedNs() / 1e9);
    }
}
