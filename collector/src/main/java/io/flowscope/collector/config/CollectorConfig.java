package io.flowscope.collector.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.flowscope.collector.security.SecurityConfig;
import io.flowscope.sink.webhook.WebhookFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.rollcycles.LegacyRollCycles;

/**
 * The service's configuration, read once: defaults, then a YAML or JSON file (nested objects or dotted keys),
 * then environment variables ({@code FLOWSCOPE_} + the key in upper case with dots as underscores, e.g.
 * {@code FLOWSCOPE_HTTP_PORT}), then command-line overrides. Immutable. Every value is validated; an unknown
 * key or a bad value is a {@link ConfigException} naming the key, where it came from and what is expected.
 */
public record CollectorConfig(
        Path ringDir,
        long ringScanMs,
        boolean ringDeleteDrained,
        String httpHost,
        int httpPort,
        boolean journalEnabled,
        Path journalDir,
        RollCycle journalRollCycle,
        long journalRetentionHours,
        long journalMaxBytes,
        long windowPeriodMs,
        int windowSize,
        long publishIntervalMs,
        String simulateScenario,
        double simulateSpeed,
        long simulateDurationSeconds,
        SinksConfig sinks,
        SecurityConfig security,
        boolean journalTemporary,
        FleetConfig fleet) {
    /**
     * The default journal directory's place in {@link #DEFAULTS} (and the README's table): per user and per
     * instance, {@code ${XDG_STATE_HOME:-~/.local/state}/flowscope/journal-<http.port>}; see {@link #load}.
     */
    public static final String DEFAULT_JOURNAL_DIR = "${XDG_STATE_HOME:-~/.local/state}/flowscope/journal-<http.port>";

    /** A simulated run's default {@code journal.maxBytes}: 40 GiB, over ten minutes of the demo's input. */
    public static final long SIMULATED_JOURNAL_MAX_BYTES = 40L << 30;

    /** Where a simulated run's own journals go when none is named: {@code $TMPDIR/flowscope-<user>}. */
    public static Path temporaryRoot() {
        return Path.of(
                System.getProperty("java.io.tmpdir"),
                "flowscope-" + System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    /** A simulated run's own journal directory under {@link #temporaryRoot()}: {@code sim-journal-<time>-<pid>}. */
    public static final java.util.regex.Pattern TEMPORARY_JOURNAL =
            java.util.regex.Pattern.compile("sim-journal-\\d{8}-\\d{6}-(\\d+)(-\\d+)?");

    /** {@code $XDG_STATE_HOME} when set to an absolute path, else {@code ~/.local/state} (XDG base directories). */
    static Path stateHome(final Map<String, String> env) {
        final String xdg = env.get("XDG_STATE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg);
        }
        return Path.of(System.getProperty("user.home"), ".local", "state");
    }

    private static final java.util.concurrent.atomic.AtomicInteger TEMPORARY_JOURNALS =
            new java.util.concurrent.atomic.AtomicInteger();

    /** A new directory name for a simulated run's own journal (not created here). */
    private static Path freshTemporaryJournal() {
        final String base = "sim-journal-"
                + java.time.LocalDateTime.now().format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))
                + "-" + ProcessHandle.current().pid();
        final int n = TEMPORARY_JOURNALS.incrementAndGet(); // two runs started in one second by one JVM (tests)
        return temporaryRoot().resolve(n == 1 ? base : base + "-" + n);
    }

    /** A configuration error, with a message for a human. */
    public static final class ConfigException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public ConfigException(final String message) {
            super(message);
        }
    }

    /** Webhooks configurable ({@code sinks.webhooks[0]} .. {@code [MAX_WEBHOOKS-1]}). */
    public static final int MAX_WEBHOOKS = 8;

    /** The fields of one webhook ({@code sinks.webhooks.<i>.<field>}) with their defaults (url empty: unused). */
    public static final Map<String, String> WEBHOOK_FIELDS;

    static {
        final Map<String, String> f = new LinkedHashMap<>();
        for (final String[] kv : new String[][] {
            {"url", ""},
            {"format", "alertmanager"},
            {"secret", ""},
            {"secretFile", ""},
            {"maxAttempts", "8"},
            {"resendIntervalMs", "60000"},
            {"runbookUrl", ""},
            {"bearerToken", ""},
            {"bearerTokenFile", ""},
            {"basicAuthUser", ""},
            {"basicAuthPassword", ""},
            {"basicAuthPasswordFile", ""},
            {"caFile", ""},
            {"certFile", ""},
            {"keyFile", ""},
            {"insecureSkipVerify", "false"},
            {"queueCapacity", "4096"},
            {"maxBatch", "64"},
            {"flushIntervalMs", "100"},
            {"initialBackoffMs", "200"},
            {"maxBackoffMs", "10000"},
            {"jitter", "0.5"}
        }) {
            f.put(kv[0], kv[1]);
        }
        WEBHOOK_FIELDS = java.util.Collections.unmodifiableMap(f);
    }

    /** Keys whose values are never printed. */
    public static boolean isSecret(final String key) {
        return key.equals("security.token")
                || key.equals("security.tls.keystorePassword")
                || key.equals("sinks.influxdb.password")
                || key.equals("sinks.influxdb.token")
                || key.startsWith("sinks.webhooks.")
                        && (key.endsWith(".secret")
                                || key.endsWith(".bearerToken")
                                || key.endsWith(".basicAuthPassword"))
                || key.startsWith(FleetConfig.KAFKA_PREFIX) && FleetConfig.isSecretKafkaKey(key);
    }

    public static String webhookKey(final int index, final String field) {
        return "sinks.webhooks." + index + "." + field;
    }

    /** Every key with its default, in the order of the README table (webhook keys last, indexed). */
    public static final Map<String, String> DEFAULTS;

    static {
        final Map<String, String> d = new LinkedHashMap<>();
        d.put("ring.dir", "/dev/shm/flowscope");
        d.put("ring.scanMs", "100");
        d.put("ring.deleteDrained", "false");
        d.put("http.host", "127.0.0.1");
        d.put("http.port", "7070");
        d.put("http.publicUrl", "");
        d.put("journal.enabled", "true");
        d.put("journal.dir", DEFAULT_JOURNAL_DIR);
        d.put("journal.rollCycle", "MINUTELY");
        d.put("journal.retentionHours", "24");
        d.put("journal.maxBytes", Long.toString(4L << 30));
        d.put("window.periodMs", "1");
        d.put("window.windowSize", "8");
        d.put("publish.intervalMs", "200");
        d.put("simulate.scenario", "");
        d.put("simulate.speed", "1.0");
        d.put("simulate.durationSeconds", "0");
        d.put("sinks.influxdb.enabled", "false");
        d.put("sinks.influxdb.url", "http://127.0.0.1:8086");
        d.put("sinks.influxdb.database", "flowscope");
        d.put("sinks.influxdb.batchSize", "5000");
        d.put("sinks.influxdb.queueCapacity", "65536");
        d.put("sinks.influxdb.maxAttempts", "5");
        d.put("sinks.influxdb.maxSeries", "100000");
        d.put("sinks.influxdb.username", "");
        d.put("sinks.influxdb.password", "");
        d.put("sinks.influxdb.passwordFile", "");
        d.put("sinks.influxdb.token", "");
        d.put("sinks.influxdb.tokenFile", "");
        d.put("sinks.influxdb.caFile", "");
        d.put("sinks.influxdb.insecureSkipVerify", "false");
        d.put("security.token", "");
        d.put("security.tokenFile", "");
        d.put("security.tls.certFile", "");
        d.put("security.tls.keyFile", "");
        d.put("security.tls.keystoreFile", "");
        d.put("security.tls.keystorePassword", "");
        d.put("security.tls.keystorePasswordFile", "");
        d.put("security.maxBodyBytes", "65536");
        d.put("security.maxHeaderBytes", "8192");
        d.put("security.maxUriBytes", "4096");
        d.putAll(FleetConfig.DEFAULTS);
        for (int i = 0; i < MAX_WEBHOOKS; i++) {
            for (final Map.Entry<String, String> f : WEBHOOK_FIELDS.entrySet()) {
                d.put(webhookKey(i, f.getKey()), f.getValue());
            }
        }
        DEFAULTS = java.util.Collections.unmodifiableMap(d);
    }

    /** The environment variable of a key. */
    public static String envName(final String key) {
        final StringBuilder sb = new StringBuilder("FLOWSCOPE_");
        for (final char c : key.toCharArray()) {
            if (c == '.') {
                sb.append('_');
            } else if (Character.isUpperCase(c)) {
                sb.append('_').append(c);
            } else {
                sb.append(Character.toUpperCase(c));
            }
        }
        return sb.toString();
    }

    /** Defaults only. */
    public static CollectorConfig defaults() {
        return load(null, Map.of(), Map.of());
    }

    /**
     * Where each key's value comes from, layered as {@link #load} layers them: {@code default}, {@code file F},
     * {@code env NAME} or {@code the command line} (a replay asks whether the user gave the engine settings).
     */
    public static Map<String, String> origins(
            final Path file, final Map<String, String> env, final Map<String, String> overrides) {
        final Map<String, String> origin = new TreeMap<>();
        DEFAULTS.keySet().forEach(k -> origin.put(k, "default"));
        if (file != null) {
            readFile(file).keySet().forEach(k -> origin.put(k, "file " + file));
        }
        for (final String key : DEFAULTS.keySet()) {
            if (env.get(envName(key)) != null) {
                origin.put(key, "env " + envName(key));
            }
        }
        overrides.keySet().forEach(k -> origin.put(k, "the command line"));
        return origin;
    }

    /**
     * @param file      a YAML or JSON file, or null
     * @param env       the environment (System.getenv() in the service)
     * @param overrides key → value from the command line (highest precedence)
     */
    public static CollectorConfig load(
            final Path file, final Map<String, String> env, final Map<String, String> overrides) {
        final Map<String, String> values = new LinkedHashMap<>(DEFAULTS);
        final Map<String, String> origin = new TreeMap<>();
        DEFAULTS.keySet().forEach(k -> origin.put(k, "default"));
        if (file != null) {
            final Map<String, String> fromFile = readFile(file);
            for (final Map.Entry<String, String> e : fromFile.entrySet()) {
                requireKnown(e.getKey(), "file " + file);
                values.put(e.getKey(), e.getValue());
                origin.put(e.getKey(), "file " + file);
            }
        }
        for (final String key : DEFAULTS.keySet()) {
            final String v = env.get(envName(key));
            if (v != null) {
                values.put(key, v);
                origin.put(key, "env " + envName(key));
            }
        }
        for (final Map.Entry<String, String> e : overrides.entrySet()) {
            requireKnown(e.getKey(), "the command line");
            values.put(e.getKey(), e.getValue());
            origin.put(e.getKey(), "the command line");
        }
        // a simulated run journals into a fresh directory of its own unless one is configured (a new simulation
        // starts its clock at 0 again, so it must not resume the journal of another run), removed when it ends;
        // anything else by default into the user's state directory, one per instance (port): two services never
        // share a journal by default
        final boolean temporary =
                !values.get("simulate.scenario").trim().isEmpty() && "default".equals(origin.get("journal.dir"));
        if (temporary) {
            values.put("journal.dir", freshTemporaryJournal().toString());
        }
        // the demo's simulated cluster journals 62 MB per simulated second: by default a simulated run's journal
        // holds ten minutes of it and more (its journal is its own and removed at the end: no restart reads it back);
        // a service on rings reads its whole journal back at start, so its default stays smaller
        if (!values.get("simulate.scenario").trim().isEmpty() && "default".equals(origin.get("journal.maxBytes"))) {
            values.put("journal.maxBytes", Long.toString(SIMULATED_JOURNAL_MAX_BYTES));
        } else if ("default".equals(origin.get("journal.dir"))) {
            values.put(
                    "journal.dir",
                    stateHome(env)
                            .resolve("flowscope")
                            .resolve("journal-" + values.get("http.port").trim().replaceAll("[^0-9]", "_"))
                            .toString());
        }
        final Parser p = new Parser(values, origin);
        final CollectorConfig c = new CollectorConfig(
                p.path("ring.dir"),
                p.longIn("ring.scanMs", 1, 60_000),
                p.bool("ring.deleteDrained"),
                p.host("http.host"),
                (int) p.longIn("http.port", 0, 65535),
                p.bool("journal.enabled"),
                p.path("journal.dir"),
                p.rollCycle("journal.rollCycle"),
                p.longIn("journal.retentionHours", 0, 24L * 365),
                p.longIn("journal.maxBytes", 0, Long.MAX_VALUE),
                p.longIn("window.periodMs", 1, 60_000),
                (int) p.longIn("window.windowSize", 1, 4096),
                p.longIn("publish.intervalMs", 10, 60_000),
                p.scenario("simulate.scenario"),
                p.doubleIn("simulate.speed", 0.001, 1000),
                p.longIn("simulate.durationSeconds", 0, 365L * 86400),
                p.sinks(),
                p.security(),
                temporary,
                FleetConfig.parse(values, origin));
        if (!c.security().authenticate() && !isLoopback(c.httpHost())) {
            throw new ConfigException("config: http.host = '" + c.httpHost() + "' (from " + origin.get("http.host")
                    + ") is not a loopback address and no API token is set: serving other hosts needs security.token "
                    + "(env FLOWSCOPE_SECURITY_TOKEN) or security.tokenFile (FLOWSCOPE_SECURITY_TOKEN_FILE)");
        }
        return c;
    }

    /** True for a loopback address or a name that resolves only to loopback addresses. */
    static boolean isLoopback(final String host) {
        try {
            final java.net.InetAddress[] all = java.net.InetAddress.getAllByName(host);
            for (final java.net.InetAddress a : all) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return all.length > 0;
        } catch (final java.net.UnknownHostException e) {
            return false;
        }
    }

    private static void requireKnown(final String key, final String where) {
        if (!DEFAULTS.containsKey(key)
                && !(key.startsWith(FleetConfig.KAFKA_PREFIX) && key.length() > FleetConfig.KAFKA_PREFIX.length())) {
            throw new ConfigException("config: unknown key '" + key + "' in " + where + " (known keys: "
                    + String.join(
                            ", ",
                            DEFAULTS.keySet().stream()
                                    .filter(k -> !k.startsWith("sinks.webhooks.") || k.startsWith("sinks.webhooks.0."))
                                    .toList())
                    + "; webhooks 0.." + (MAX_WEBHOOKS - 1) + "; fleet.kafka.<Kafka client property>)");
        }
    }

    private static Map<String, String> readFile(final Path file) {
        final JsonNode root;
        try {
            final String text = Files.readString(file);
            final ObjectMapper mapper =
                    text.stripLeading().startsWith("{") ? new ObjectMapper() : new ObjectMapper(new YAMLFactory());
            root = mapper.readTree(text);
        } catch (final java.nio.file.NoSuchFileException e) {
            throw new ConfigException("config: no such configuration file: " + file);
        } catch (final IOException e) {
            throw new ConfigException("config: cannot read " + file + ": "
                    + (e.getMessage() == null
                            ? e.toString()
                            : e.getMessage().lines().findFirst().orElse(e.toString())));
        }
        final Map<String, String> out = new LinkedHashMap<>();
        if (root == null || root.isMissingNode() || root.isNull()) {
            return out;
        }
        if (!root.isObject()) {
            throw new ConfigException("config: " + file + " must hold an object of keys (got "
                    + root.getNodeType().toString().toLowerCase(Locale.ROOT) + ")");
        }
        flatten("", root, out, file);
        return out;
    }

    private static void flatten(
            final String prefix, final JsonNode node, final Map<String, String> out, final Path file) {
        final Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            final Map.Entry<String, JsonNode> e = it.next();
            final String key = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            if (e.getValue().isObject()) {
                flatten(key, e.getValue(), out, file);
            } else if (e.getValue().isArray() && key.equals("sinks.webhooks")) {
                for (int i = 0; i < e.getValue().size(); i++) {
                    if (!e.getValue().get(i).isObject()) {
                        throw new ConfigException("config: 'sinks.webhooks' item " + i + " in file " + file
                                + " must be an object (" + String.join(", ", WEBHOOK_FIELDS.keySet()) + ")");
                    }
                    flatten(key + "." + i, e.getValue().get(i), out, file);
                }
            } else if (e.getValue().isArray()) {
                throw new ConfigException("config: '" + key + "' in file " + file + " is a list; expected a value");
            } else {
                out.put(key, e.getValue().isNull() ? "" : e.getValue().asText());
            }
        }
    }

    private record Parser(Map<String, String> values, Map<String, String> origin) {
        private ConfigException bad(final String key, final String expected) {
            return new ConfigException("config: " + key + " = '" + values.get(key) + "' (from " + origin.get(key)
                    + "): expected " + expected);
        }

        long longIn(final String key, final long min, final long max) {
            final long v;
            try {
                v = Long.parseLong(values.get(key).trim().replace("_", ""));
            } catch (final NumberFormatException e) {
                throw bad(key, "an integer in " + min + ".." + max);
            }
            if (v < min || v > max) {
                throw bad(key, "an integer in " + min + ".." + max);
            }
            return v;
        }

        double doubleIn(final String key, final double min, final double max) {
            final double v;
            try {
                v = Double.parseDouble(values.get(key).trim());
            } catch (final NumberFormatException e) {
                throw bad(key, "a number in " + min + ".." + max);
            }
            if (!(v >= min && v <= max)) {
                throw bad(key, "a number in " + min + ".." + max);
            }
            return v;
        }

        boolean bool(final String key) {
            final String v = values.get(key).trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "true", "yes", "on", "1" -> true;
                case "false", "no", "off", "0" -> false;
                default -> throw bad(key, "true or false");
            };
        }

        Path path(final String key) {
            final String v = values.get(key).trim();
            if (v.isEmpty()) {
                throw bad(key, "a path");
            }
            return Path.of(v);
        }

        String host(final String key) {
            final String v = values.get(key).trim();
            if (v.isEmpty() || v.contains(" ") || v.contains("/")) {
                throw bad(key, "a host name or IP address to bind (e.g. 127.0.0.1)");
            }
            return v;
        }

        RollCycle rollCycle(final String key) {
            final String v = values.get(key).trim().toUpperCase(Locale.ROOT);
            if ("MINUTELY".equals(v)) {
                return LegacyRollCycles.MINUTELY;
            }
            for (final String ok : new String[] {
                "FIVE_MINUTELY",
                "TEN_MINUTELY",
                "HALF_HOURLY",
                "FAST_HOURLY",
                "TWO_HOURLY",
                "SIX_HOURLY",
                "FAST_DAILY",
                "WEEKLY"
            }) {
                if (ok.equals(v)) {
                    return RollCycles.valueOf(v);
                }
            }
            throw bad(
                    key,
                    "one of MINUTELY, FIVE_MINUTELY, TEN_MINUTELY, HALF_HOURLY, FAST_HOURLY, TWO_HOURLY, "
                            + "SIX_HOURLY, FAST_DAILY, WEEKLY");
        }

        String scenario(final String key) {
            return values.get(key).trim();
        }

        int intIn(final String key, final int min, final int max) {
            return (int) longIn(key, min, max);
        }

        java.net.URI httpUrl(final String key) {
            final String v = values.get(key).trim();
            try {
                final java.net.URI u = new java.net.URI(v);
                if (("http".equals(u.getScheme()) || "https".equals(u.getScheme())) && u.getHost() != null) {
                    return u;
                }
            } catch (final java.net.URISyntaxException e) {
                // reported below
            }
            throw bad(key, "an http:// or https:// URL with a host");
        }

        /** An optional readable file ("" = none). */
        Path file(final String key) {
            final String v = values.get(key).trim();
            if (v.isEmpty()) {
                return null;
            }
            final Path f = Path.of(v);
            if (!Files.isReadable(f)) {
                throw bad(key, "a readable file");
            }
            return f;
        }

        /** A secret given inline or as a file (its content, trailing newline removed); never in a message. */
        String secret(final String key, final String fileKey) {
            final String inline = values.get(key);
            final Path f = file(fileKey);
            if (!inline.isEmpty() && f != null) {
                throw new ConfigException("config: " + key + " (from " + origin.get(key) + ") and " + fileKey
                        + " (from " + origin.get(fileKey) + ") are both set: give one");
            }
            if (f == null) {
                return inline.strip();
            }
            try {
                final String s = Files.readString(f).strip();
                if (s.isEmpty()) {
                    throw bad(fileKey, "a file holding the secret (it is empty)");
                }
                return s;
            } catch (final IOException e) {
                throw bad(fileKey, "a readable file (" + e.getClass().getSimpleName() + ")");
            }
        }

        SinksConfig sinks() {
            SinksConfig.Influx influx = null;
            if (bool("sinks.influxdb.enabled")) {
                final String db = values.get("sinks.influxdb.database").trim();
                if (db.isEmpty() || db.contains("\"")) {
                    throw bad("sinks.influxdb.database", "a database name without quotes");
                }
                final java.net.URI url = httpUrl("sinks.influxdb.url");
                influx = new SinksConfig.Influx(
                        url,
                        db,
                        intIn("sinks.influxdb.batchSize", 1, 100_000),
                        intIn("sinks.influxdb.queueCapacity", 1, 16_777_216),
                        intIn("sinks.influxdb.maxAttempts", 1, 100),
                        intIn("sinks.influxdb.maxSeries", 1, 100_000_000),
                        influxAuth(),
                        influxTls(url));
            }
            final java.util.List<SinksConfig.Webhook> hooks = new java.util.ArrayList<>();
            for (int i = 0; i < MAX_WEBHOOKS; i++) {
                final String urlKey = webhookKey(i, "url");
                if (values.get(urlKey).trim().isEmpty()) {
                    for (final String f : WEBHOOK_FIELDS.keySet()) {
                        final String k = webhookKey(i, f);
                        if (!"default".equals(origin.get(k)) && !values.get(k).isEmpty()) {
                            throw bad(urlKey, "a URL: " + k + " is set for this webhook");
                        }
                    }
                    continue;
                }
                final WebhookFormat format =
                        switch (values.get(webhookKey(i, "format")).trim().toLowerCase(Locale.ROOT)) {
                            case "generic" -> WebhookFormat.GENERIC;
                            case "alertmanager" -> WebhookFormat.ALERTMANAGER;
                            default -> throw bad(webhookKey(i, "format"), "generic or alertmanager");
                        };
                hooks.add(webhook(i, format));
            }
            return new SinksConfig(influx, hooks, liveUrl());
        }

        /** {@code sinks.influxdb.username} + password (basic; 2.x / 3.x: a token as the password), or a token. */
        private io.flowscope.sink.http.HttpAuth influxAuth() {
            final String user = values.get("sinks.influxdb.username").trim();
            final String password = secret("sinks.influxdb.password", "sinks.influxdb.passwordFile");
            final String token = secret("sinks.influxdb.token", "sinks.influxdb.tokenFile");
            if (!token.isEmpty() && (!user.isEmpty() || !password.isEmpty())) {
                throw new ConfigException("config: sinks.influxdb.token and sinks.influxdb.username are both set: "
                        + "give a token or a username with its password, not both");
            }
            if (user.isEmpty() != password.isEmpty()) {
                throw bad(
                        user.isEmpty() ? "sinks.influxdb.username" : "sinks.influxdb.password",
                        "a value: InfluxDB basic auth needs both username and password (or passwordFile)");
            }
            try {
                return !token.isEmpty()
                        ? io.flowscope.sink.http.HttpAuth.token(token)
                        : !user.isEmpty()
                                ? io.flowscope.sink.http.HttpAuth.basic(user, password)
                                : io.flowscope.sink.http.HttpAuth.NONE;
            } catch (final IllegalArgumentException e) {
                throw new ConfigException("config: sinks.influxdb: " + e.getMessage()); // never the secret itself
            }
        }

        /** {@code sinks.influxdb.caFile} / {@code insecureSkipVerify}, for an https:// URL only; read now. */
        private io.flowscope.sink.http.ClientTls influxTls(final java.net.URI url) {
            final io.flowscope.sink.http.ClientTls tls = new io.flowscope.sink.http.ClientTls(
                    file("sinks.influxdb.caFile"), null, null, bool("sinks.influxdb.insecureSkipVerify"));
            if (!tls.isDefault()) {
                if (!"https".equals(url.getScheme())) {
                    throw bad("sinks.influxdb.url", "an https:// URL: TLS settings are given for InfluxDB");
                }
                try {
                    tls.sslContext(); // an unreadable CA file is a configuration error, found now
                } catch (final IllegalArgumentException e) {
                    throw new ConfigException("config: sinks.influxdb: " + e.getMessage());
                }
            }
            return tls;
        }

        /** Webhook {@code i}'s Alertmanager, auth and TLS settings, each checked with the others. */
        private SinksConfig.Webhook webhook(final int i, final WebhookFormat format) {
            final java.net.URI url = httpUrl(webhookKey(i, "url"));
            final String resendKey = webhookKey(i, "resendIntervalMs");
            if (format != WebhookFormat.ALERTMANAGER && !"default".equals(origin.get(resendKey))) {
                throw bad(resendKey, "no value: only the alertmanager format re-sends open alerts");
            }
            final long resendMs = longIn(resendKey, 100, 3_600_000);
            final String runbook = values.get(webhookKey(i, "runbookUrl")).trim();
            final String token = secret(webhookKey(i, "bearerToken"), webhookKey(i, "bearerTokenFile"));
            final String user = values.get(webhookKey(i, "basicAuthUser")).trim();
            final String password = secret(webhookKey(i, "basicAuthPassword"), webhookKey(i, "basicAuthPasswordFile"));
            final io.flowscope.sink.http.HttpAuth auth;
            if (!token.isEmpty() && (!user.isEmpty() || !password.isEmpty())) {
                throw new ConfigException(
                        "config: " + webhookKey(i, "bearerToken") + " and " + webhookKey(i, "basicAuthUser")
                                + " are both set: give a bearer token or basic auth, not both");
            }
            if (user.isEmpty() != password.isEmpty()) {
                throw bad(
                        webhookKey(i, user.isEmpty() ? "basicAuthUser" : "basicAuthPassword"),
                        "a value: basic auth needs both basicAuthUser and basicAuthPassword (or basicAuthPasswordFile)");
            }
            try {
                auth = !token.isEmpty()
                        ? io.flowscope.sink.http.HttpAuth.bearer(token)
                        : !user.isEmpty()
                                ? io.flowscope.sink.http.HttpAuth.basic(user, password)
                                : io.flowscope.sink.http.HttpAuth.NONE;
            } catch (final IllegalArgumentException e) {
                throw new ConfigException("config: webhook " + i + ": " + e.getMessage()); // never the secret itself
            }
            final Path ca = file(webhookKey(i, "caFile"));
            final Path cert = file(webhookKey(i, "certFile"));
            final Path key = file(webhookKey(i, "keyFile"));
            final boolean insecure = bool(webhookKey(i, "insecureSkipVerify"));
            if ((cert == null) != (key == null)) {
                throw bad(
                        webhookKey(i, cert == null ? "certFile" : "keyFile"),
                        "a PEM file: a client certificate needs both certFile and keyFile");
            }
            final io.flowscope.sink.http.ClientTls tls = new io.flowscope.sink.http.ClientTls(ca, cert, key, insecure);
            if (!tls.isDefault()) {
                if (!"https".equals(url.getScheme())) {
                    throw bad(webhookKey(i, "url"), "an https:// URL: TLS settings are given for this webhook");
                }
                try {
                    tls.sslContext(); // an unreadable certificate or key is a configuration error, found now
                } catch (final IllegalArgumentException e) {
                    throw new ConfigException("config: webhook " + i + ": " + e.getMessage());
                }
            }
            return new SinksConfig.Webhook(
                    url,
                    format,
                    secret(webhookKey(i, "secret"), webhookKey(i, "secretFile")),
                    intIn(webhookKey(i, "maxAttempts"), 1, 100),
                    resendMs,
                    runbook.isEmpty() ? null : httpUrl(webhookKey(i, "runbookUrl")),
                    auth,
                    tls,
                    delivery(i));
        }

        /** Webhook {@code i}'s queue, batches and back-off ({@link SinksConfig.Delivery}). */
        private SinksConfig.Delivery delivery(final int i) {
            final long initial = longIn(webhookKey(i, "initialBackoffMs"), 1, 600_000);
            final long max = longIn(webhookKey(i, "maxBackoffMs"), 1, 3_600_000);
            if (max < initial) {
                throw bad(
                        webhookKey(i, "maxBackoffMs"),
                        "at least " + webhookKey(i, "initialBackoffMs") + " (" + initial + ")");
            }
            return new SinksConfig.Delivery(
                    intIn(webhookKey(i, "queueCapacity"), 1, 16_777_216),
                    intIn(webhookKey(i, "maxBatch"), 1, 100_000),
                    longIn(webhookKey(i, "flushIntervalMs"), 1, 60_000),
                    initial,
                    max,
                    doubleIn(webhookKey(i, "jitter"), 0, 1));
        }

        /**
         * The live page's address as alert receivers link to it: {@code http.publicUrl}, else this service's own
         * scheme, host and port (a wildcard bind: this machine's name); null when the port is chosen at start (0).
         */
        private java.net.URI liveUrl() {
            final String v = values.get("http.publicUrl").trim();
            if (!v.isEmpty()) {
                final java.net.URI u = httpUrl("http.publicUrl");
                return u.getPath() == null || !u.getPath().endsWith("/") ? java.net.URI.create(u + "/") : u;
            }
            final long port = longIn("http.port", 0, 65535);
            if (port == 0) {
                return null;
            }
            String host = values.get("http.host").trim();
            if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
                try {
                    host = java.net.InetAddress.getLocalHost().getCanonicalHostName();
                } catch (final java.net.UnknownHostException e) {
                    host = "localhost";
                }
            }
            final boolean tls = !values.get("security.tls.certFile").trim().isEmpty()
                    || !values.get("security.tls.keystoreFile").trim().isEmpty();
            return java.net.URI.create((tls ? "https" : "http") + "://"
                    + (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port + "/");
        }

        SecurityConfig security() {
            final String token = secret("security.token", "security.tokenFile");
            if (!token.isEmpty() && token.length() < 16) {
                throw new ConfigException("config: security.token (from " + origin.get("security.token") + " / "
                        + origin.get("security.tokenFile") + ") is too short: expected at least 16 characters");
            }
            final Path cert = file("security.tls.certFile");
            final Path key = file("security.tls.keyFile");
            final Path ks = file("security.tls.keystoreFile");
            final String ksPassword = secret("security.tls.keystorePassword", "security.tls.keystorePasswordFile");
            SecurityConfig.Tls tls = null;
            if ((cert == null) != (key == null)) {
                throw bad(
                        cert == null ? "security.tls.certFile" : "security.tls.keyFile",
                        "both security.tls.certFile and security.tls.keyFile (PEM), or neither");
            }
            if (cert != null && ks != null) {
                throw bad("security.tls.keystoreFile", "either a PEM pair (certFile, keyFile) or a keystore, not both");
            }
            if (cert != null) {
                tls = new SecurityConfig.Tls(cert, key, null, "");
            } else if (ks != null) {
                tls = new SecurityConfig.Tls(null, null, ks, ksPassword);
            }
            return new SecurityConfig(
                    token,
                    tls,
                    intIn("security.maxBodyBytes", 0, 64 << 20),
                    intIn("security.maxHeaderBytes", 1024, 1 << 20),
                    intIn("security.maxUriBytes", 256, 1 << 20));
        }
    }

    @Override
    public String toString() {
        return "ring.dir=" + ringDir + " ring.scanMs=" + ringScanMs + " ring.deleteDrained=" + ringDeleteDrained
                + " http="
                + httpHost + ":" + httpPort + " journal.enabled=" + journalEnabled + " journal.dir=" + journalDir
                + " journal.rollCycle=" + journalRollCycle + " journal.retentionHours=" + journalRetentionHours
                + " journal.maxBytes=" + journalMaxBytes + " window.periodMs=" + windowPeriodMs + " window.windowSize="
                + windowSize + " publish.intervalMs=" + publishIntervalMs + " simulate.scenario="
                + (simulateScenario.isEmpty() ? "(off)" : simulateScenario) + " simulate.speed="
                + simulateSpeed + " simulate.durationSeconds=" + simulateDurationSeconds + " sinks: "
                + sinks + " security: " + security + " " + fleet;
    }
}
