package io.flowscope.collector.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.pipeline.Json;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fleet's wire encoding (version 1): one UTF-8 JSON object per Kafka record value,
 * {@code {"v":1,"agent":A,"seq":N,"type":T,...}}. {@code seq} numbers the agent's outputs (summaries,
 * collectives, anomaly events, sampled events share one counter) deterministically from its journal, so a
 * record resent after a failure carries the same {@code (agent, seq)} and consumers drop it.
 * <ul>
 * <li>{@code type:"flow"}, {@code "s"}: every field of {@link FlowSummary} by its name (arrays as arrays);
 * {@code type:"coll"}, {@code "s"}: every field of {@link CollectiveSummary}. Fields are copied by name, so a
 * newer schema that adds fields is read by an older reader (unknown names ignored) and the reverse (missing
 * names stay 0).</li>
 * <li>{@code type:"anomaly"}: {@code "event"} opened / updated / resolved, {@code "anomaly"}: as {@code /api/anomalies}.</li>
 * <li>{@code type:"event"}: {@code "call"} the window-engine input call, {@code "args"} its arguments.</li>
 * </ul>
 * Keys: {@code commHash:rank} (hex commHash, decimal rank) for step, rank, link, communicator and collective
 * summaries; {@code host:device} for QP flows; the anomaly id (hex) for anomaly events.
 */
public final class FleetCodec {
    public static final int VERSION = 1;
    static final ObjectMapper MAPPER = new ObjectMapper();

    private static final Field[] FLOW_FIELDS = fields(FlowSummary.class);
    private static final Field[] COLL_FIELDS = fields(CollectiveSummary.class);

    private FleetCodec() {}

    private static Field[] fields(final Class<?> c) {
        final List<Field> out = new ArrayList<>();
        for (final Field f : c.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                f.setAccessible(true);
                out.add(f);
            }
        }
        return out.toArray(new Field[0]);
    }

    public static String key(final FlowSummary s) {
        return s.kind() == FlowSummary.KIND_QP
                ? Long.toHexString(s.hostId()) + ":" + s.device()
                : Long.toHexString(s.commHash()) + ":" + s.rank();
    }

    public static String key(final CollectiveSummary s) {
        return Long.toHexString(s.commHash()) + ":" + s.rank();
    }

    /** Partition of a record: by communicator (all ranks of one on one partition: cross-node detection), QP by host. */
    public static int partition(final FlowSummary s, final int partitions) {
        return spread(s.kind() == FlowSummary.KIND_QP ? s.hostId() : s.commHash(), partitions);
    }

    public static int partition(final CollectiveSummary s, final int partitions) {
        return spread(s.commHash(), partitions);
    }

    static int spread(final long v, final int partitions) {
        long x = v * 0x9E3779B97F4A7C15L;
        x ^= x >>> 31;
        return (int) Math.floorMod(x, (long) partitions);
    }

    private static Map<String, Object> header(final String agent, final long seq, final String type) {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", VERSION);
        m.put("agent", agent);
        m.put("seq", seq);
        m.put("type", type);
        return m;
    }

    /** {@code hostName}: the summary's host by name where the agent knows it (null: left out). */
    public static byte[] flow(final String agent, final long seq, final FlowSummary s, final String hostName) {
        final Map<String, Object> m = header(agent, seq, "flow");
        if (hostName != null) {
            m.put("hostName", hostName);
        }
        m.put("s", fieldsOf(s, FLOW_FIELDS));
        return bytes(m);
    }

    public static byte[] collective(final String agent, final long seq, final CollectiveSummary s) {
        final Map<String, Object> m = header(agent, seq, "coll");
        m.put("s", fieldsOf(s, COLL_FIELDS));
        return bytes(m);
    }

    public static byte[] anomaly(final String agent, final long seq, final String event, final Anomaly a) {
        final Map<String, Object> m = header(agent, seq, "anomaly");
        m.put("event", event);
        m.put("anomaly", Json.anomaly(a));
        return bytes(m);
    }

    public static byte[] event(final String agent, final long seq, final String call, final Map<String, Object> args) {
        final Map<String, Object> m = header(agent, seq, "event");
        m.put("call", call);
        m.put("args", args);
        return bytes(m);
    }

    static byte[] bytes(final Object o) {
        try {
            return MAPPER.writeValueAsBytes(o);
        } catch (final IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static JsonNode read(final byte[] value) {
        try {
            final JsonNode n = MAPPER.readTree(value);
            if (n == null || n.path("v").asInt() != VERSION) {
                throw new IllegalArgumentException("not a fleet record of version " + VERSION + ": "
                        + (value == null ? "null" : new String(value, StandardCharsets.UTF_8)));
            }
            return n;
        } catch (final IOException e) {
            throw new IllegalArgumentException("undecodable fleet record: " + e.getMessage(), e);
        }
    }

    /** Fills {@code into} from a {@code "flow"} record's {@code "s"}. */
    public static FlowSummary flowInto(final JsonNode s, final FlowSummary into) {
        setFields(into, FLOW_FIELDS, s);
        return into;
    }

    public static CollectiveSummary collectiveInto(final JsonNode s, final CollectiveSummary into) {
        setFields(into, COLL_FIELDS, s);
        return into;
    }

    private static Map<String, Object> fieldsOf(final Object o, final Field[] fields) {
        final Map<String, Object> m = new LinkedHashMap<>();
        try {
            for (final Field f : fields) {
                m.put(f.getName(), f.get(o));
            }
        } catch (final IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        return m;
    }

    private static void setFields(final Object o, final Field[] fields, final JsonNode s) {
        try {
            for (final Field f : fields) {
                final JsonNode v = s.get(f.getName());
                final Class<?> t = f.getType();
                if (t == long[].class) {
                    final long[] a = (long[]) f.get(o);
                    java.util.Arrays.fill(a, 0);
                    if (v != null && v.isArray()) {
                        final Iterator<JsonNode> it = v.elements();
                        for (int i = 0; i < a.length && it.hasNext(); i++) {
                            a[i] = it.next().asLong();
                        }
                    }
                } else if (t == long.class) {
                    f.setLong(o, v == null ? 0 : v.asLong());
                } else if (t == int.class) {
                    f.setInt(o, v == null ? 0 : v.asInt());
                } else if (t == double.class) {
                    f.setDouble(o, v == null ? 0 : v.asDouble());
                } else if (t == boolean.class) {
                    f.setBoolean(o, v != null && v.asBoolean());
                } else {
                    throw new IllegalStateException("fleet codec: unsupported field type " + t + " of " + f);
                }
            }
        } catch (final IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
