package io.flowscope.collector;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import net.openhft.chronicle.queue.RollCycles;

/**
 * The service's configuration, read once: defaults, then a YAML or JSON file (nested objects or dotted keys),
 * then environment variables ({@code FLOWSCOPE_} + the key in upper case with dots as underscores, e.g.
 * {@code FLOWSCOPE_HTTP_PORT}), then command-line overrides. Immutable. Every value is validated; an unknown
 * key or a bad value is a {@link ConfigException} naming the key, where it came from and what is expected.
 */
public record CollectorConfig(
    Path ringDir, long ringScanMs, boolean ringDeleteDrained,
    String httpHost, int httpPort,
    boolean journalEnabled, Path journalDir, RollCycles journalRollCycle, long journalRetentionHours,
    long journalMaxBytes,
    long windowPeriodMs, int windowSize,
    long publishIntervalMs,
    String simulateScenario, double simulateSpeed, long simulateDurationSeconds)
{
    /** A configuration error, with a message for a human. */
    public static final class ConfigException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        public ConfigException(final String message)
        {
            super(message);
        }
    }

    /** Every key with its default, in the order of the README table. */
    public static final Map<String, String> DEFAULTS;

    static
    {
        final Map<String, String> d = new LinkedHashMap<>();
        d.put("ring.dir", "/dev/shm/flowscope");
        d.put("ring.scanMs", "100");
        d.put("ring.deleteDrained", "false");
        d.put("http.host", "127.0.0.1");
        d.put("http.port", "7070");
        d.put("journal.enabled", "true");
        d.put("journal.dir", Path.of(System.getProperty("java.io.tmpdir"), "flowscope-journal").toString());
        d.put("journal.rollCycle", "FAST_HOURLY");
        d.put("journal.retentionHours", "24");
        d.put("journal.maxBytes", "1073741824");
        d.put("window.periodMs", "1");
        d.put("window.windowSize", "8");
        d.put("publish.intervalMs", "200");
        d.put("simulate.scenario", "");
        d.put("simulate.speed", "1.0");
        d.put("simulate.durationSeconds", "0");
        DEFAULTS = java.util.Collections.unmodifiableMap(d);
    }

    /** The environment variable of a key. */
    public static String envName(final String key)
    {
        final StringBuilder sb = new StringBuilder("FLOWSCOPE_");
        for (final char c : key.toCharArray())
        {
            if (c == '.')
            {
                sb.append('_');
            }
            else if (Character.isUpperCase(c))
            {
                sb.append('_').append(c);
            }
            else
            {
                sb.append(Character.toUpperCase(c));
            }
        }
        return sb.toString();
    }

    /** Defaults only. */
    public static CollectorConfig defaults()
    {
        return load(null, Map.of(), Map.of());
    }

    /**
     * @param file      a YAML or JSON file, or null
     * @param env       the environment (System.getenv() in the service)
     * @param overrides key → value from the command line (highest precedence)
     */
    public static CollectorConfig load(final Path file, final Map<String, String> env,
        final Map<String, String> overrides)
    {
        final Map<String, String> values = new LinkedHashMap<>(DEFAULTS);
        final Map<String, String> origin = new TreeMap<>();
        DEFAULTS.keySet().forEach(k -> origin.put(k, "default"));
        if (file != null)
        {
            final Map<String, String> fromFile = readFile(file);
            for (final Map.Entry<String, String> e : fromFile.entrySet())
            {
                requireKnown(e.getKey(), "file " + file);
                values.put(e.getKey(), e.getValue());
                origin.put(e.getKey(), "file " + file);
            }
        }
        for (final String key : DEFAULTS.keySet())
        {
            final String v = env.get(envName(key));
            if (v != null)
            {
                values.put(key, v);
                origin.put(key, "env " + envName(key));
            }
        }
        for (final Map.Entry<String, String> e : overrides.entrySet())
        {
            requireKnown(e.getKey(), "the command line");
            values.put(e.getKey(), e.getValue());
            origin.put(e.getKey(), "the command line");
        }
        // a simulated run journals into a fresh directory unless one is configured: a new simulation starts its
        // clock at 0 again, so it must not resume the journal of another run
        if (!values.get("simulate.scenario").trim().isEmpty() && "default".equals(origin.get("journal.dir")))
        {
            values.put("journal.dir", Path.of(System.getProperty("java.io.tmpdir"), "flowscope-sim-journal",
                java.time.LocalDateTime.now().format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) +
                "-" + ProcessHandle.current().pid()).toString());
        }
        final Parser p = new Parser(values, origin);
        final CollectorConfig c = new CollectorConfig(
            p.path("ring.dir"), p.longIn("ring.scanMs", 1, 60_000), p.bool("ring.deleteDrained"),
            p.host("http.host"), (int)p.longIn("http.port", 0, 65535),
            p.bool("journal.enabled"), p.path("journal.dir"), p.rollCycle("journal.rollCycle"),
            p.longIn("journal.retentionHours", 0, 24L * 365), p.longIn("journal.maxBytes", 0, Long.MAX_VALUE),
            p.longIn("window.periodMs", 1, 60_000), (int)p.longIn("window.windowSize", 1, 4096),
            p.longIn("publish.intervalMs", 10, 60_000),
            p.scenario("simulate.scenario"), p.doubleIn("simulate.speed", 0.001, 1000),
            p.longIn("simulate.durationSeconds", 0, 365L * 86400));
        return c;
    }

    private static void requireKnown(final String key, final String where)
    {
        // fleet.* keys: the fleet section, validated by io.flowscope.collector.fleet.FleetConfig
        if (!DEFAULTS.containsKey(key) && !key.startsWith("fleet."))
        {
            throw new ConfigException("config: unknown key '" + key + "' in " + where + " (known keys: " +
                String.join(", ", DEFAULTS.keySet()) + ")");
        }
    }

    private static Map<String, String> readFile(final Path file)
    {
        final JsonNode root;
        try
        {
            final String text = Files.readString(file);
            final ObjectMapper mapper = text.stripLeading().startsWith("{") ? new ObjectMapper() :
                new ObjectMapper(new YAMLFactory());
            root = mapper.readTree(text);
        }
        catch (final IOException e)
        {
            throw new ConfigException("config: cannot read " + file + ": " + e.getMessage().lines().findFirst()
                .orElse(e.toString()));
        }
        final Map<String, String> out = new LinkedHashMap<>();
        if (root == null || root.isMissingNode() || root.isNull())
        {
            return out;
        }
        if (!root.isObject())
        {
            throw new ConfigException("config: " + file + " must hold an object of keys (got " +
                root.getNodeType().toString().toLowerCase(Locale.ROOT) + ")");
        }
        flatten("", root, out, file);
        return out;
    }

    private static void flatten(final String prefix, final JsonNode node, final Map<String, String> out,
        final Path file)
    {
        final Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext())
        {
            final Map.Entry<String, JsonNode> e = it.next();
            final String key = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            if (e.getValue().isObject())
            {
                flatten(key, e.getValue(), out, file);
            }
            else if (e.getValue().isArray())
            {
                throw new ConfigException("config: '" + key + "' in file " + file + " is a list; expected a value");
            }
            else
            {
                out.put(key, e.getValue().isNull() ? "" : e.getValue().asText());
            }
        }
    }

    private record Parser(Map<String, String> values, Map<String, String> origin)
    {
        private ConfigException bad(final String key, final String expected)
        {
            return new ConfigException("config: " + key + " = '" + values.get(key) + "' (from " + origin.get(key) +
                "): expected " + expected);
        }

        long longIn(final String key, final long min, final long max)
        {
            final long v;
            try
            {
                v = Long.parseLong(values.get(key).trim().replace("_", ""));
            }
            catch (final NumberFormatException e)
            {
                throw bad(key, "an integer in " + min + ".." + max);
            }
            if (v < min || v > max)
            {
                throw bad(key, "an integer in " + min + ".." + max);
            }
            return v;
        }

        double doubleIn(final String key, final double min, final double max)
        {
            final double v;
            try
            {
                v = Double.parseDouble(values.get(key).trim());
            }
            catch (final NumberFormatException e)
            {
                throw bad(key, "a number in " + min + ".." + max);
            }
            if (!(v >= min && v <= max))
            {
                throw bad(key, "a number in " + min + ".." + max);
            }
            return v;
        }

        boolean bool(final String key)
        {
            final String v = values.get(key).trim().toLowerCase(Locale.ROOT);
            return switch (v)
            {
                case "true", "yes", "on", "1" -> true;
                case "false", "no", "off", "0" -> false;
                default -> throw bad(key, "true or false");
            };
        }

        Path path(final String key)
        {
            final String v = values.get(key).trim();
            if (v.isEmpty())
            {
                throw bad(key, "a path");
            }
            return Path.of(v);
        }

        String host(final String key)
        {
            final String v = values.get(key).trim();
            if (v.isEmpty() || v.contains(" ") || v.contains("/"))
            {
                throw bad(key, "a host name or IP address to bind (e.g. 127.0.0.1)");
            }
            return v;
        }

        RollCycles rollCycle(final String key)
        {
            final String v = values.get(key).trim().toUpperCase(Locale.ROOT);
            for (final String ok : new String[] {"FIVE_MINUTELY", "TEN_MINUTELY", "HALF_HOURLY", "FAST_HOURLY",
                "TWO_HOURLY", "SIX_HOURLY", "FAST_DAILY", "WEEKLY"})
            {
                if (ok.equals(v))
                {
                    return RollCycles.valueOf(v);
                }
            }
            throw bad(key, "one of FIVE_MINUTELY, TEN_MINUTELY, HALF_HOURLY, FAST_HOURLY, TWO_HOURLY, SIX_HOURLY, " +
                "FAST_DAILY, WEEKLY");
        }

        String scenario(final String key)
        {
            return values.get(key).trim();
        }
    }

    @Override
    public String toString()
    {
        return "ring.dir=" + ringDir + " ring.scanMs=" + ringScanMs + " ring.deleteDrained=" + ringDeleteDrained +
            " http=" + httpHost + ":" + httpPort + " journal.enabled=" + journalEnabled + " journal.dir=" +
            journalDir + " journal.rollCycle=" + journalRollCycle + " journal.retentionHours=" +
            journalRetentionHours + " journal.maxBytes=" + journalMaxBytes + " window.periodMs=" + windowPeriodMs +
            " window.windowSize=" + windowSize + " publish.intervalMs=" + publishIntervalMs +
            " simulate.scenario=" + (simulateScenario.isEmpty() ? "(off)" : simulateScenario) +
            " simulate.speed=" + simulateSpeed + " simulate.durationSeconds=" + simulateDurationSeconds;
    }
}
