package io.flowscope.sink.webhook;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.influx.InfluxSchema;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Builds webhook bodies (both formats are shown in sinks/README.md). */
public final class WebhookPayloads {
    public static final String GENERIC_SCHEMA = "flowscope.alerts.v1";

    private final ObjectMapper mapper = new ObjectMapper();
    private final WebhookConfig config;

    public WebhookPayloads(final WebhookConfig config) {
        this.config = config;
    }

    public byte[] body(final List<Notification> batch) {
        try {
            return mapper.writeValueAsBytes(
                    config.format() == WebhookFormat.ALERTMANAGER ? alertmanager(batch) : generic(batch));
        } catch (final JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise notifications", e);
        }
    }

    /** {@code FlowscopeSlowLink} for SLOW_LINK. */
    public static String alertName(final Anomaly a) {
        final StringBuilder sb = new StringBuilder("Flowscope");
        for (final String part : a.kind().name().split("_")) {
            sb.append(part.charAt(0)).append(part.substring(1).toLowerCase(Locale.ROOT));
        }
        return sb.toString();
    }

    /** {@code slow_link} for SLOW_LINK: the {@code kind} label and the runbook's anchor. */
    public static String kindName(final AnomalyKind kind) {
        return kind.name().toLowerCase(Locale.ROOT);
    }

    /**
     * The labels of an anomaly's Alertmanager alert, which are its identity there (Alertmanager fingerprints,
     * groups, routes, silences and inhibits on labels): what the anomaly stage itself tells anomalies apart by
     * (kind; a link by communicator, rank and peer; a rank by communicator and rank; a NIC by host and device),
     * its host, and its severity. Only bounded values: no anomaly id (an annotation), no evidence. A hang's
     * {@code peer} is one of the ranks waiting on it, not part of what the hang is: it goes to the description.
     * Static labels last.
     */
    public Map<String, String> labels(final Anomaly a) {
        final Culprit c = a.culprit();
        final Map<String, String> labels = new LinkedHashMap<>();
        labels.put("alertname", alertName(a));
        labels.put("source", "flowscope");
        labels.put("severity", a.severity().name().toLowerCase(Locale.ROOT));
        labels.put("kind", kindName(a.kind()));
        labels.put("host", config.hostNames().apply(c.hostId()));
        if (c.commHash() != 0) {
            labels.put("comm", InfluxSchema.comm(c.commHash()));
        }
        putIfSet(labels, "rank", c.rank());
        if (a.kind() == AnomalyKind.SLOW_LINK) {
            putIfSet(labels, "peer", c.peer());
        }
        putIfSet(labels, "device", c.device());
        if (c.qpNum() >= 0) {
            labels.put("qp", Long.toString(c.qpNum()));
        }
        labels.putAll(config.staticLabels());
        labels.values().removeIf(v -> v == null || v.isEmpty()); // Alertmanager drops empty labels: keep keys equal
        return labels;
    }

    /** A rank culprit's process and GPU, null when not a rank or unknown. */
    private RankNames.Name rankName(final Culprit c) {
        return c.rank() >= 0 && c.commHash() != 0 ? config.rankNames().of(c.hostId(), c.commHash(), c.rank()) : null;
    }

    /** The label set as one comparable key: two anomalies with the same key are one alert in Alertmanager. */
    public String identity(final Anomaly a) {
        return new TreeMap<>(labels(a)).toString();
    }

    private long nowNs() {
        final Instant now = config.wallClock().instant();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    private static String rfc3339(final long epochNs) {
        return Instant.ofEpochSecond(Math.floorDiv(epochNs, 1_000_000_000L), Math.floorMod(epochNs, 1_000_000_000L))
                .toString();
    }

    /**
     * Alertmanager refuses a whole POST for one alert that ends before it starts, so the times are kept in order:
     * startsAt (the onset on the epoch) no later than now; a firing alert's endsAt {@link
     * WebhookConfig#alertValidity()} ahead of now; a resolved one's the resolution time, between startsAt and now
     * (a host clock ahead of this one must not leave it firing into the future).
     */
    private ArrayNode alertmanager(final List<Notification> batch) {
        final long now = nowNs();
        final long validity = config.alertValidity().toNanos();
        final ArrayNode alerts = mapper.createArrayNode();
        for (final Notification n : batch) {
            final Anomaly a = n.anomaly();
            final Culprit c = a.culprit();
            final ObjectNode alert = alerts.addObject();
            labels(a).forEach(alert.putObject("labels")::put);
            final ObjectNode annotations = alert.putObject("annotations");
            annotations.put("summary", a.summary());
            annotations.put("description", description(a));
            if (config.runbookUrl() != null) {
                annotations.put("runbook_url", config.runbookUrl() + "#" + kindName(a.kind()));
            }
            annotations.put("anomaly_id", "0x" + Long.toHexString(a.id()));
            annotations.put("host_id", "0x" + Long.toHexString(c.hostId()));
            final RankNames.Name who = rankName(c);
            if (who != null) {
                annotations.put("pid", Integer.toString(who.pid()));
                if (who.gpu() >= 0) {
                    annotations.put("gpu", Integer.toString(who.gpu()));
                }
                if (!who.pciBusId().isEmpty()) {
                    annotations.put("pci_bus_id", who.pciBusId());
                }
                if (!who.gpuUuid().isEmpty()) {
                    annotations.put("gpu_uuid", who.gpuUuid());
                }
            }
            final long startsAt = Math.min(config.clock().toEpochNanos(c.hostId(), a.startNs()), now);
            alert.put("startsAt", rfc3339(startsAt));
            if (n.event() == Notification.Event.RESOLVED) {
                final long resolved = config.clock().toEpochNanos(c.hostId(), a.resolvedNs());
                alert.put("endsAt", rfc3339(Math.max(startsAt, Math.min(resolved, now))));
            } else {
                alert.put("endsAt", rfc3339(now + validity));
            }
            if (config.liveUrl() != null) {
                alert.put("generatorURL", config.liveUrl() + "#anomaly=0x" + Long.toHexString(a.id()));
            }
        }
        return alerts;
    }

    private ObjectNode generic(final List<Notification> batch) {
        final ObjectNode root = mapper.createObjectNode();
        root.put("schema", GENERIC_SCHEMA);
        final ArrayNode list = root.putArray("notifications");
        for (final Notification n : batch) {
            final Anomaly a = n.anomaly();
            final Culprit c = a.culprit();
            final ObjectNode o = list.addObject();
            o.put("event", n.event().label());
            o.put("id", "0x" + Long.toHexString(a.id()));
            o.put("kind", a.kind().name());
            o.put("severity", a.severity().name());
            o.put("summary", a.summary());
            final ObjectNode culprit = o.putObject("culprit");
            culprit.put("host", config.hostNames().apply(c.hostId()));
            culprit.put("hostId", c.hostId());
            culprit.put("comm", InfluxSchema.comm(c.commHash()));
            culprit.put("rank", c.rank());
            culprit.put("peer", c.peer());
            culprit.put("channel", c.channel());
            culprit.put("device", c.device());
            culprit.put("qpNum", c.qpNum());
            final RankNames.Name who = rankName(c);
            if (who != null) {
                culprit.put("pid", who.pid());
                if (who.gpu() >= 0) {
                    culprit.put("gpu", who.gpu());
                }
                if (!who.pciBusId().isEmpty()) {
                    culprit.put("gpuBusId", who.pciBusId());
                }
                if (!who.gpuUuid().isEmpty()) {
                    culprit.put("gpuUuid", who.gpuUuid());
                }
            }
            o.put("startsAt", rfc3339(config.clock().toEpochNanos(c.hostId(), a.startNs())));
            if (n.event() == Notification.Event.RESOLVED) {
                o.put("endsAt", rfc3339(config.clock().toEpochNanos(c.hostId(), a.resolvedNs())));
            }
            o.put("startNs", a.startNs());
            o.put("detectedNs", a.detectedNs());
            o.put("resolvedNs", a.resolvedNs());
            o.put("windowStartNs", a.windowStartNs());
            o.put("windowEndNs", a.windowEndNs());
            final ObjectNode evidence = o.putObject("evidence");
            a.evidence().forEach(evidence::put);
            if (config.liveUrl() != null) {
                o.put("url", config.liveUrl() + "#anomaly=0x" + Long.toHexString(a.id()));
            }
            config.staticLabels().forEach((k, v) -> o.with("labels").put(k, v));
        }
        return root;
    }

    private static void putIfSet(final Map<String, String> labels, final String name, final int value) {
        if (value >= 0) {
            labels.put(name, Integer.toString(value));
        }
    }

    /** The evidence figures by name, and what the labels leave out: a hang's waiting rank and its channel. */
    static String description(final Anomaly a) {
        final StringBuilder sb = new StringBuilder();
        final Culprit c = a.culprit();
        if (a.kind() == AnomalyKind.HANG && c.peer() >= 0) {
            sb.append("rank ").append(c.peer()).append(" waits on it");
            if (c.channel() >= 0) {
                sb.append(" (channel ").append(c.channel()).append(')');
            }
            sb.append("; ");
        }
        sb.append("evidence: ");
        final int start = sb.length();
        a.evidence().forEach((k, v) -> sb.append(sb.length() == start ? "" : ", ")
                .append(k)
                .append('=')
                .append(v));
        return sb.toString();
    }
}
