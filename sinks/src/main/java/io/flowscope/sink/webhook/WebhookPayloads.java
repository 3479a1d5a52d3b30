package io.flowscope.sink.webhook;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowscope.anomaly.Anomaly;
import io.flowscope.anomaly.Culprit;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.influx.InfluxSchema;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongFunction;

/** Builds webhook bodies (both formats are shown in sinks/README.md). */
public final class WebhookPayloads
{
    public static final String GENERIC_SCHEMA = "flowscope.alerts.v1";

    private final ObjectMapper mapper = new ObjectMapper();
    private final WebhookFormat format;
    private final Map<String, String> staticLabels;
    private final LongFunction<String> hostNames;
    private final EventClock clock;

    public WebhookPayloads(final WebhookFormat format, final Map<String, String> staticLabels,
        final LongFunction<String> hostNames, final EventClock clock)
    {
        this.format = format;
        this.staticLabels = staticLabels;
        this.hostNames = hostNames;
        this.clock = clock;
    }

    public byte[] body(final List<Notification> batch)
    {
        try
        {
            return mapper.writeValueAsBytes(format == WebhookFormat.ALERTMANAGER ? alertmanager(batch) : generic(batch));
        }
        catch (final JsonProcessingException e)
        {
            throw new IllegalStateException("cannot serialise notifications", e);
        }
    }

    /** {@code FlowscopeSlowLink} for SLOW_LINK. */
    public static String alertName(final Anomaly a)
    {
        final StringBuilder sb = new StringBuilder("Flowscope");
        for (final String part : a.kind().name().split("_"))
        {
            sb.append(part.charAt(0)).append(part.substring(1).toLowerCase(Locale.ROOT));
        }
        return sb.toString();
    }

    private String rfc3339(final long hostId, final long eventNs)
    {
        final long epochNs = clock.toEpochNanos(hostId, eventNs);
        return Instant.ofEpochSecond(Math.floorDiv(epochNs, 1_000_000_000L), Math.floorMod(epochNs, 1_000_000_000L))
            .toString();
    }

    private ArrayNode alertmanager(final List<Notification> batch)
    {
        final ArrayNode alerts = mapper.createArrayNode();
        for (final Notification n : batch)
        {
            final Anomaly a = n.anomaly();
            final Culprit c = a.culprit();
            final ObjectNode alert = alerts.addObject();
            final ObjectNode labels = alert.putObject("labels");
            labels.put("alertname", alertName(a));
            labels.put("source", "flowscope");
            labels.put("kind", a.kind().name().toLowerCase(Locale.ROOT));
            labels.put("host", hostNames.apply(c.hostId()));
            if (c.commHash() != 0)
            {
                labels.put("comm", InfluxSchema.comm(c.commHash()));
            }
            putIfSet(labels, "rank", c.rank());
            putIfSet(labels, "peer", c.peer());
            putIfSet(labels, "channel", c.channel());
            putIfSet(labels, "device", c.device());
            if (c.qpNum() >= 0)
            {
                labels.put("qp", Long.toString(c.qpNum()));
            }
            labels.put("anomaly_id", "0x" + Long.toHexString(a.id()));
            staticLabels.forEach(labels::put);
            final ObjectNode annotations = alert.putObject("annotations");
            annotations.put("summary", a.summary());
            annotations.put("severity", a.severity().name().toLowerCase(Locale.ROOT));
            annotations.put("event", n.event().label());
            annotations.put("description", evidenceText(a.evidence()));
            alert.put("startsAt", rfc3339(c.hostId(), a.startNs()));
            if (n.event() == Notification.Event.RESOLVED)
            {
                alert.put("endsAt", rfc3339(c.hostId(), a.resolvedNs()));
            }
        }
        return alerts;
    }

    private ObjectNode generic(final List<Notification> batch)
    {
        final ObjectNode root = mapper.createObjectNode();
        root.put("schema", GENERIC_SCHEMA);
        final ArrayNode list = root.putArray("notifications");
        for (final Notification n : batch)
        {
            final Anomaly a = n.anomaly();
            final Culprit c = a.culprit();
            final ObjectNode o = list.addObject();
            o.put("event", n.event().label());
            o.put("id", "0x" + Long.toHexString(a.id()));
            o.put("kind", a.kind().name());
            o.put("severity", a.severity().name());
            o.put("summary", a.summary());
            final ObjectNode culprit = o.putObject("culprit");
            culprit.put("host", hostNames.apply(c.hostId()));
            culprit.put("hostId", c.hostId());
            culprit.put("comm", InfluxSchema.comm(c.commHash()));
            culprit.put("rank", c.rank());
            culprit.put("peer", c.peer());
            culprit.put("channel", c.channel());
            culprit.put("device", c.device());
            culprit.put("qpNum", c.qpNum());
            o.put("startsAt", rfc3339(c.hostId(), a.startNs()));
            if (n.event() == Notification.Event.RESOLVED)
            {
                o.put("endsAt", rfc3339(c.hostId(), a.resolvedNs()));
            }
            o.put("startNs", a.startNs());
            o.put("detectedNs", a.detectedNs());
            o.put("resolvedNs", a.resolvedNs());
            o.put("windowStartNs", a.windowStartNs());
            o.put("windowEndNs", a.windowEndNs());
            final ObjectNode evidence = o.putObject("evidence");
            a.evidence().forEach(evidence::put);
            staticLabels.forEach((k, v) -> o.with("labels").put(k, v));
        }
        return root;
    }

    private static void putIfSet(final ObjectNode labels, final String name, final int value)
    {
        if (value >= 0)
        {
            labels.put(name, Integer.toString(value));
        }
    }

    private static String evidenceText(final Map<String, Double> evidence)
    {
        final StringBuilder sb = new StringBuilder();
        evidence.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ", ").append(k).append('=').append(v));
        return sb.toString();
    }
}
