package io.flowscope.collector.config;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code fleet} section of the configuration (keys {@code fleet.*}, environment {@code FLOWSCOPE_FLEET_...}),
 * loaded with the rest by {@link CollectorConfig#load} ({@link CollectorConfig#fleet()}). Immutable.
 *
 * @param role             {@code standalone} (no Kafka), {@code agent} or {@code aggregator}
 * @param bootstrap        Kafka bootstrap servers
 * @param topicPrefix      topics are {@code <prefix>.summaries}, {@code .anomalies}, {@code .events},
 *                         {@code .fleet-anomalies}
 * @param partitions       partitions of the topics this process creates when they are missing
 * @param agentId          the agent's name in every record, stable across restarts (empty: host name + "-" + a
 *                         hash of the journal directory; see {@link #agentIdFor})
 * @param eventSampleEvery publish every N-th raw engine input call to the events topic (0: none)
 * @param group            the aggregators' consumer group
 * @param bufferBytes      the producer's buffer.memory (bounded)
 * @param wire             the agent's encoding of summaries: binary (docs/fleet-wire.md) or json (one release,
 *                         for debugging); aggregators read both
 * @param publishAll       true ({@code fleet.publish = all}): the agent sends every summary; false
 *                         ({@code central}, the default): only what the aggregators' stage reads
 *                         (docs/fleet-wire.md)
 * @param collectiveEvery  with {@code central}: a collective travels when its sequence number is a multiple of
 *                         this (1: every one); the agent judges all of them ({@code CentralSelection})
 * @param checkpointRecords an aggregator writes a partition's checkpoint (its stage's state, the agents' marks)
 *                         after this many records since the last one; a partition taken over replays at most
 *                         these from its tail (fleet.checkpoint.records)
 * @param checkpointMs     ... or after this many milliseconds of wall-clock time with records since the last one
 *                         (fleet.checkpoint.ms)
 * @param tailInStore      true ({@code fleet.checkpoint.tail = store}): the records since a partition's checkpoint
 *                         are also kept in the aggregator's {@code tail} state store (its changelog: the summaries
 *                         written to Kafka a second time); false ({@code topic}, the default: half the cost, see
 *                         docs/benchmarks.md section 8): a takeover reads them again from the summaries topic
 * @param kafka            Kafka client properties given as {@code fleet.kafka.<property>} (TLS, SASL, timeouts...),
 *                         applied to every producer, consumer and admin client of the fleet after its own settings;
 *                         an {@code @file:PATH} value already replaced by the file's content. Sorted, unmodifiable.
 */
public record FleetConfig(
        String role,
        String bootstrap,
        String topicPrefix,
        int partitions,
        String agentId,
        long eventSampleEvery,
        String group,
        long bufferBytes,
        Encoding wire,
        boolean publishAll,
        long collectiveEvery,
        long checkpointRecords,
        long checkpointMs,
        boolean tailInStore,
        Map<String, String> kafka) {
    /** The prefix of the Kafka client pass-through keys. */
    public static final String KAFKA_PREFIX = "fleet.kafka.";

    /** A pass-through value that names a file whose content (trailing newline removed) is the value. */
    public static final String FILE_VALUE_PREFIX = "@file:";

    /**
     * Kafka client properties the fleet owns (its serializers, ids, transactions and reading guarantees): given as
     * {@code fleet.kafka.*} they are refused, each with the key that configures it where there is one.
     */
    public static final Map<String, String> OWNED_KAFKA_PROPERTIES = Map.ofEntries(
            Map.entry("bootstrap.servers", "set fleet.bootstrap"),
            Map.entry("group.id", "set fleet.group"),
            Map.entry("buffer.memory", "set fleet.bufferBytes"),
            Map.entry("client.id", "the fleet names its clients by agent id"),
            Map.entry("transactional.id", "the fleet names its transactions"),
            Map.entry("enable.idempotence", "the fleet publishes exactly once"),
            Map.entry("acks", "the fleet publishes exactly once"),
            Map.entry("isolation.level", "aggregators read committed records only"),
            Map.entry("enable.auto.commit", "aggregators commit offsets in their transactions"),
            Map.entry("key.serializer", "the fleet's own"),
            Map.entry("value.serializer", "the fleet's own"),
            Map.entry("key.deserializer", "the fleet's own"),
            Map.entry("value.deserializer", "the fleet's own"));

    /** True for a key (any configuration key) whose value is a secret: never printed, logged or served. */
    public static boolean isSecretKafkaKey(final String key) {
        final String k = key.toLowerCase(Locale.ROOT);
        return k.contains("password")
                || k.contains("jaas")
                || k.contains("secret")
                || k.contains("key")
                || k.contains("token")
                || k.contains("credential");
    }

    /** {@code key=value} pairs of {@link #kafka}, secrets masked as {@code ****}: what may be printed. */
    public String kafkaPrintable() {
        final StringBuilder b = new StringBuilder();
        kafka.forEach((k, v) -> b.append(b.length() == 0 ? "" : " ")
                .append(KAFKA_PREFIX)
                .append(k)
                .append('=')
                .append(isSecretKafkaKey(k) ? "****" : v));
        return b.toString();
    }

    /** Applies the pass-through properties over a client's own settings (each client of the fleet calls this). */
    public java.util.Properties withKafka(final java.util.Properties own) {
        own.putAll(kafka);
        return own;
    }

    /** {@code fleet.wire}: the summaries topic's encodings (the fleet's {@code FleetWire} reads both). */
    public enum Encoding {
        BINARY,
        JSON;

        /** {@code binary} or {@code json} (any case); anything else is one line naming the key and the choices. */
        public static Encoding parse(final String key, final String value) {
            return switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "binary" -> BINARY;
                case "json" -> JSON;
                default -> throw new IllegalArgumentException(key + " = " + value + ": binary or json");
            };
        }
    }

    /** Every key with its default, in the order of the README table. */
    public static final Map<String, String> DEFAULTS;

    static {
        final Map<String, String> d = new LinkedHashMap<>();
        d.put("fleet.role", "standalone");
        d.put("fleet.bootstrap", "127.0.0.1:19092");
        d.put("fleet.topicPrefix", "flowscope");
        d.put("fleet.partitions", "4");
        d.put("fleet.agentId", "");
        d.put("fleet.eventSampleEvery", "1000");
        d.put("fleet.group", "flowscope-aggregators");
        d.put("fleet.bufferBytes", "33554432");
        d.put("fleet.wire", "binary");
        d.put("fleet.publish", "central");
        d.put("fleet.collectiveEvery", "1");
        d.put("fleet.checkpoint.records", "20000");
        d.put("fleet.checkpoint.ms", "2000");
        d.put("fleet.checkpoint.tail", "topic");
        DEFAULTS = Collections.unmodifiableMap(d);
    }

    public String summariesTopic() {
        return topicPrefix + ".summaries";
    }

    public String anomaliesTopic() {
        return topicPrefix + ".anomalies";
    }

    public String eventsTopic() {
        return topicPrefix + ".events";
    }

    /** The aggregators' output: cross-node anomalies, written in transactions. */
    public String fleetAnomaliesTopic() {
        return topicPrefix + ".fleet-anomalies";
    }

    public boolean isAgent() {
        return "agent".equals(role);
    }

    public boolean isAggregator() {
        return "aggregator".equals(role);
    }

    /**
     * The section from the configuration's values as {@link CollectorConfig#load} layered them (each key's value
     * and where it came from), validated: the file is read once, there.
     */
    static FleetConfig parse(final Map<String, String> values, final Map<String, String> origin) {
        final String role = values.get("fleet.role").trim().toLowerCase(Locale.ROOT);
        if (!role.equals("standalone") && !role.equals("agent") && !role.equals("aggregator")) {
            throw bad("fleet.role", values, origin, "standalone, agent or aggregator");
        }
        final String agentId = values.get("fleet.agentId").trim();
        if (agentId.contains(":") || agentId.contains(" ")) {
            throw bad("fleet.agentId", values, origin, "a name without ':' or spaces");
        }
        final String bootstrap = values.get("fleet.bootstrap").trim();
        if (bootstrap.isEmpty()) {
            throw bad("fleet.bootstrap", values, origin, "host:port[,host:port...]");
        }
        final String prefix = values.get("fleet.topicPrefix").trim();
        if (!prefix.matches("[A-Za-z0-9._-]+")) {
            throw bad("fleet.topicPrefix", values, origin, "letters, digits, '.', '_' or '-'");
        }
        return new FleetConfig(
                role,
                bootstrap,
                prefix,
                (int) longIn("fleet.partitions", values, origin, 1, 1024),
                agentId,
                longIn("fleet.eventSampleEvery", values, origin, 0, Long.MAX_VALUE),
                values.get("fleet.group").trim(),
                longIn("fleet.bufferBytes", values, origin, 1 << 20, 1L << 31),
                wire(values, origin),
                publishAll(values, origin),
                longIn("fleet.collectiveEvery", values, origin, 1, 1 << 20),
                longIn("fleet.checkpoint.records", values, origin, 1, 100_000_000),
                longIn("fleet.checkpoint.ms", values, origin, 10, 3_600_000),
                tailInStore(values, origin),
                kafka(values, origin));
    }

    /** The {@code fleet.kafka.*} values: owned properties refused, {@code @file:} values read. Never in a message. */
    private static Map<String, String> kafka(final Map<String, String> values, final Map<String, String> origin) {
        final Map<String, String> out = new java.util.TreeMap<>();
        for (final Map.Entry<String, String> e : values.entrySet()) {
            if (!e.getKey().startsWith(KAFKA_PREFIX)) {
                continue;
            }
            final String property = e.getKey().substring(KAFKA_PREFIX.length());
            final String why = OWNED_KAFKA_PROPERTIES.get(property);
            if (why != null) {
                throw new CollectorConfig.ConfigException("config: " + e.getKey() + " (from " + origin.get(e.getKey())
                        + ") is the fleet's own Kafka setting and cannot be passed through: " + why);
            }
            final String v = e.getValue().strip();
            out.put(property, v.startsWith(FILE_VALUE_PREFIX) ? fileValue(e.getKey(), v, origin) : v);
        }
        return Collections.unmodifiableMap(out);
    }

    private static String fileValue(final String key, final String value, final Map<String, String> origin) {
        final Path f = Path.of(value.substring(FILE_VALUE_PREFIX.length()));
        try {
            final String s = java.nio.file.Files.readString(f).strip();
            if (s.isEmpty()) {
                throw new CollectorConfig.ConfigException(
                        "config: " + key + " (from " + origin.get(key) + "): the file " + f + " is empty");
            }
            return s;
        } catch (final IOException e) {
            throw new CollectorConfig.ConfigException("config: " + key + " (from " + origin.get(key)
                    + "): cannot read the file " + f + " (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** The configured agent id, or host name + "-" + hash of the journal directory (stable across restarts). */
    public String agentIdFor(final Path journalDir) {
        if (!agentId.isEmpty()) {
            return agentId;
        }
        long h = 0xcbf29ce484222325L;
        for (final byte b :
                journalDir.toAbsolutePath().normalize().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return hostName() + "-" + Long.toHexString(h).substring(0, 8);
    }

    public static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName().replace(':', '_').replace(' ', '_');
        } catch (final IOException e) {
            return ManagementFactory.getRuntimeMXBean()
                    .getName()
                    .replace(':', '_')
                    .replace(' ', '_');
        }
    }

    private static CollectorConfig.ConfigException bad(
            final String key,
            final Map<String, String> values,
            final Map<String, String> origin,
            final String expected) {
        return new CollectorConfig.ConfigException(
                "config: " + key + " = '" + values.get(key) + "' (from " + origin.get(key) + "): expected " + expected);
    }

    private static Encoding wire(final Map<String, String> values, final Map<String, String> origin) {
        try {
            return Encoding.parse("fleet.wire", values.get("fleet.wire"));
        } catch (final IllegalArgumentException e) {
            throw bad("fleet.wire", values, origin, "binary or json");
        }
    }

    private static boolean tailInStore(final Map<String, String> values, final Map<String, String> origin) {
        return switch (values.get("fleet.checkpoint.tail").trim().toLowerCase(Locale.ROOT)) {
            case "store" -> true;
            case "topic" -> false;
            default -> throw bad("fleet.checkpoint.tail", values, origin, "store or topic");
        };
    }

    private static boolean publishAll(final Map<String, String> values, final Map<String, String> origin) {
        return switch (values.get("fleet.publish").trim().toLowerCase(Locale.ROOT)) {
            case "all" -> true;
            case "central" -> false;
            default -> throw bad("fleet.publish", values, origin, "all or central");
        };
    }

    private static long longIn(
            final String key,
            final Map<String, String> values,
            final Map<String, String> origin,
            final long min,
            final long max) {
        try {
            final long v = Long.parseLong(values.get(key).trim().replace("_", ""));
            if (v >= min && v <= max) {
                return v;
            }
        } catch (final NumberFormatException e) {
            // reported below
        }
        throw bad(key, values, origin, "an integer in " + min + ".." + max);
    }

    @Override
    public String toString() {
        return "fleet.role=" + role + " fleet.bootstrap=" + bootstrap + " fleet.topicPrefix=" + topicPrefix
                + " fleet.partitions="
                + partitions + " fleet.agentId=" + agentId + " fleet.eventSampleEvery=" + eventSampleEvery
                + " fleet.wire=" + wire.name().toLowerCase(Locale.ROOT) + " fleet.publish="
                + (publishAll ? "all" : "central") + " fleet.collectiveEvery=" + collectiveEvery
                + " fleet.group=" + group + " fleet.bufferBytes=" + bufferBytes
                + " fleet.checkpoint.records=" + checkpointRecords + " fleet.checkpoint.ms=" + checkpointMs
                + " fleet.checkpoint.tail=" + (tailInStore ? "store" : "topic")
                + (kafka.isEmpty() ? "" : " " + kafkaPrintable());
    }
}
