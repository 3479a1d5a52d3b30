package io.flowscope.sim;

import io.flowscope.api.input.TelemetryListener;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * A real trace for the calibration tests: its {@code events.jsonl.gz} (what {@code flowscope inspect} writes, one
 * flat JSON object a line) fed to a {@link TelemetryListener} (proxy ops and steps only, which is all that
 * {@link TracePhases} reads), and its {@code truth.json}. A minimal reader of flat objects (strings, numbers,
 * booleans), so that this module's tests need no JSON library; the collector's {@code TraceReader} is the
 * complete one.
 */
final class JsonTrace {
    /** Where the real traces are: the repository's testdata and the shared folder beside the checkout. */
    static final List<Path> ROOTS = List.of(
            Path.of("../testdata/traces"),
            Path.of("testdata/traces"),
            Path.of("../../shared/traces"),
            Path.of("../shared/traces"),
            Path.of("/work/shared/traces"));

    private JsonTrace() {}

    /** The folder of a trace by name, from the first root that has it, or null. */
    static Path find(final String name) {
        for (final Path root : ROOTS) {
            final Path p = root.resolve(name);
            if (Files.isRegularFile(p.resolve("events.jsonl.gz")) && Files.isRegularFile(p.resolve("truth.json"))) {
                return p;
            }
        }
        return null;
    }

    /** Feeds a trace's proxy events to {@code out}. */
    static void replay(final Path dir, final TelemetryListener out) {
        try (InputStream raw = Files.newInputStream(dir.resolve("events.jsonl.gz"));
                BufferedReader in = new BufferedReader(
                        new InputStreamReader(new GZIPInputStream(raw, 1 << 16), StandardCharsets.UTF_8), 1 << 16)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.startsWith("{\"type\":\"proxy")) {
                    continue;
                }
                final Map<String, String> o = parse(line);
                final long t = num(o, "timeNs");
                switch (o.get("type")) {
                    case "proxyOpStart" ->
                        out.onProxyOpStart(
                                num(o, "opKey"),
                                0,
                                (int) num(o, "rank"),
                                (int) num(o, "peer"),
                                (int) num(o, "channel"),
                                "true".equals(o.get("isSend")),
                                t);
                    case "proxyOpStop" -> out.onProxyOpStop(num(o, "opKey"), t);
                    case "proxyStepStart" ->
                        out.onProxyStepStart(num(o, "stepKey"), num(o, "opKey"), (int) num(o, "step"), t);
                    case "proxyStepState" ->
                        out.onProxyStepState(num(o, "stepKey"), (int) num(o, "state"), num(o, "transSize"), t);
                    case "proxyStepStop" -> out.onProxyStepStop(num(o, "stepKey"), t);
                    default -> {}
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** truth.json's fields (flat; the {@code us_per_op} array is kept as its text). */
    static Map<String, String> truth(final Path dir) {
        try {
            final String text = Files.readString(dir.resolve("truth.json"))
                    .replaceAll("\\s+", " ")
                    .replaceAll("\\[([^\\]]*)\\]", "\"$1\"");
            return parse(text.trim());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static long num(final Map<String, String> o, final String key) {
        final String v = o.get(key);
        if (v == null) {
            throw new IllegalArgumentException("no " + key + " in " + o);
        }
        return v.indexOf('.') >= 0 || v.indexOf('e') >= 0 ? (long) Double.parseDouble(v) : Long.parseLong(v);
    }

    /** A flat JSON object's members as text (strings unquoted; no escapes inside the strings read here). */
    static Map<String, String> parse(final String s) {
        final Map<String, String> out = new HashMap<>();
        int i = s.indexOf('{') + 1;
        final int n = s.length();
        while (i < n) {
            final int k0 = s.indexOf('"', i);
            if (k0 < 0) {
                break;
            }
            final int k1 = s.indexOf('"', k0 + 1);
            final String key = s.substring(k0 + 1, k1);
            int j = s.indexOf(':', k1) + 1;
            while (s.charAt(j) == ' ') {
                j++;
            }
            final String value;
            if (s.charAt(j) == '"') {
                final int v1 = s.indexOf('"', j + 1);
                value = s.substring(j + 1, v1);
                i = v1 + 1;
            } else {
                int e = j;
                while (e < n && s.charAt(e) != ',' && s.charAt(e) != '}') {
                    e++;
                }
                value = s.substring(j, e).trim();
                i = e;
            }
            out.put(key, value);
            final int comma = s.indexOf(',', i);
            if (comma < 0) {
                break;
            }
            i = comma + 1;
        }
        return out;
    }
}
