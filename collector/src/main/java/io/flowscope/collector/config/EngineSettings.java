package io.flowscope.collector.config;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The configuration keys that change what the engines derive from the same input (the window engine's period and
 * window), journaled at the start of each run ({@code JournalFormat.ENGINE_SETTINGS}) so that a replay builds its
 * engines as the live run did, and {@link #choose chosen} by a replay: the journal's own unless the user gave others.
 */
public final class EngineSettings {
    /** The keys journaled, in the order they are written. */
    public static final List<String> KEYS = List.of("window.periodMs", "window.windowSize");

    private EngineSettings() {}

    /** The journal entry's text for a configuration: {@code window.periodMs=1 window.windowSize=8}. */
    public static String of(final CollectorConfig c) {
        return "window.periodMs=" + c.windowPeriodMs() + " window.windowSize=" + c.windowSize();
    }

    /** An entry's text as key → value, in its order (tokens without '=' are ignored). */
    public static Map<String, String> parse(final String text) {
        final Map<String, String> m = new LinkedHashMap<>();
        for (final String token : text.trim().split("\\s+")) {
            final int eq = token.indexOf('=');
            if (eq > 0) {
                m.put(token.substring(0, eq), token.substring(eq + 1));
            }
        }
        return m;
    }

    /**
     * The configuration a replay runs with and the line that says where its engine settings come from.
     *
     * @param config the configuration to build the engines with
     * @param said   one line for stderr (without the command's prefix)
     */
    public record Choice(CollectorConfig config, String said) {}

    /**
     * A replay's engine settings: each key the user gave (in {@code file}, {@code env} or {@code set}) is the user's;
     * every other is the journal's ({@code journaled}: its entry's text, null when the journal has none, as journals
     * written before the entry existed), else the default. The line says which and whence, and when the user's differ
     * from the journal's that the anomalies may differ from the live run's.
     */
    public static Choice choose(
            final Path file, final Map<String, String> env, final Map<String, String> set, final String journaled) {
        final Map<String, String> origins = CollectorConfig.origins(file, env, set);
        final Map<String, String> fromJournal = journaled == null ? Map.of() : parse(journaled);
        final Map<String, String> overrides = new LinkedHashMap<>(set);
        final List<String> given =
                KEYS.stream().filter(k -> !"default".equals(origins.get(k))).toList();
        for (final String k : KEYS) {
            if (!given.contains(k) && fromJournal.containsKey(k)) {
                overrides.put(k, fromJournal.get(k));
            }
        }
        final CollectorConfig config;
        try {
            config = CollectorConfig.load(file, env, overrides);
        } catch (final CollectorConfig.ConfigException e) {
            if (journaled != null && CollectorConfig.load(file, env, set) != null) {
                // the user's configuration is valid: it is the journal's entry that is not
                throw new IllegalArgumentException("the journal's engine settings '" + journaled + "' do not read: "
                        + e.getMessage() + "; give them with --set");
            }
            throw e;
        }
        final String used = of(config);
        final String journalsOwn = journaled == null
                ? null
                : KEYS.stream()
                        .filter(fromJournal::containsKey)
                        .map(k -> k + "=" + fromJournal.get(k))
                        .reduce((a, b) -> a + " " + b)
                        .orElse("");
        if (given.isEmpty()) {
            return new Choice(
                    config,
                    journaled != null
                            ? "engine settings of the journal: " + used
                            : "engine settings: the defaults, " + used
                                    + ": the journal does not say its own (written before they "
                                    + "were journaled); if the live run used others, give them with --set");
        }
        final StringBuilder whence = new StringBuilder();
        for (final String k : given) {
            whence.append(whence.length() == 0 ? "" : ", ")
                    .append(k)
                    .append(" from ")
                    .append(origins.get(k));
        }
        if (journaled == null) {
            return new Choice(
                    config,
                    "engine settings " + used + " (" + whence + "); the journal does not say its "
                            + "own (written before they were journaled)");
        }
        if (journalsOwn.equals(used)) {
            return new Choice(config, "engine settings " + used + " (" + whence + "), the same as the journal's");
        }
        return new Choice(
                config,
                "engine settings " + used + " (" + whence + "), not the journal's (" + journalsOwn
                        + "): anomalies may differ from the live run's");
    }
}
