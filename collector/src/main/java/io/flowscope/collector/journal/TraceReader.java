package io.flowscope.collector.journal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.flowscope.api.input.TelemetryListener;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Reads a JSON-lines trace, the text form of a journal that {@code flowscope inspect} writes (one object a line,
 * {@code docs/trace-format.md}), plain or gzipped, and feeds it to the engines as {@link JournalReader} feeds a
 * journal: the same {@link TelemetryListener} calls and {@link JournalReader.Meta} callbacks, batch by batch.
 * <p>
 * A batch is one journal document (one drain of the live run). Lines carry it as {@code batch} (its sequence
 * number, written since the format's second version); older traces have only {@code batchWallNs}, and a change
 * of it starts a new batch there (two drains in the same millisecond then read as one).
 * <p>
 * A line that is not JSON, has an unknown {@code type} or lacks a field is counted as corrupt, remembered in
 * {@link #lastCorruption()} with its line number, and skipped: the rest of the trace is read.
 */
public final class TraceReader extends EventLogCounts {
    private static final ObjectReader JSON = new ObjectMapper().reader();

    private final Path path;
    private final BufferedReader in;
    private long lineNumber;
    /** The line read ahead: the first of the next batch. */
    private JsonNode pending;

    private long currentBatch = Long.MIN_VALUE;
    private boolean atEnd;
    /** The host of the last "host" line: a legacy idle tick's host. */
    private long host;

    public TraceReader(final Path path) {
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException("not a trace file: " + path);
        }
        this.path = path;
        try {
            InputStream s = Files.newInputStream(path);
            if (isGzip(path)) {
                s = new GZIPInputStream(s, 1 << 16);
            }
            this.in = new BufferedReader(new InputStreamReader(s, StandardCharsets.UTF_8), 1 << 16);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot open trace " + path + ": " + e.getMessage(), e);
        }
    }

    /** Whether a path names a JSON-lines trace ({@code .jsonl}, {@code .json}, optionally {@code .gz}). */
    public static boolean isTrace(final Path path) {
        final String n = path.getFileName().toString();
        return Files.isRegularFile(path)
                && (n.endsWith(".jsonl")
                        || n.endsWith(".jsonl.gz")
                        || n.endsWith(".json")
                        || n.endsWith(".json.gz")
                        || n.endsWith(".ndjson")
                        || n.endsWith(".ndjson.gz"));
    }

    private static boolean isGzip(final Path path) {
        try (InputStream s = Files.newInputStream(path)) {
            return s.read() == 0x1f && s.read() == 0x8b;
        } catch (final IOException e) {
            return false;
        }
    }

    @Override
    public TraceReader timeRange(final long fromNs, final long toNs) {
        range(fromNs, toNs);
        return this;
    }

    @Override
    public int read(final TelemetryListener out, final JournalReader.Meta meta, final int maxDocuments) {
        int n = 0;
        while (n < maxDocuments && !atEnd) {
            JsonNode line = pending != null ? pending : next();
            pending = null;
            if (line == null) {
                atEnd = true;
                break;
            }
            final long batch = batchOf(line);
            currentBatch = batch;
            documents++;
            n++;
            meta.onBatch(line.path("batchWallNs").asLong(0));
            while (line != null) {
                dispatch(line, out, meta);
                line = next();
                if (line != null && batchOf(line) != batch) {
                    pending = line;
                    break;
                }
            }
            if (line == null && pending == null) {
                atEnd = true;
            }
        }
        return n;
    }

    private static long batchOf(final JsonNode line) {
        final JsonNode b = line.get("batch");
        return b != null && b.canConvertToLong()
                ? b.asLong()
                : line.path("batchWallNs").asLong(Long.MIN_VALUE);
    }

    /** The next well-formed line, or null at the end; corrupt lines are counted and skipped. */
    private JsonNode next() {
        while (true) {
            final String s;
            try {
                s = in.readLine();
            } catch (final java.io.EOFException e) {
                // A gzip stream cut short (a trace copied while written, a download stopped): what was read stands.
                corrupt("the file ends early after line " + lineNumber + " (truncated gzip?): " + e.getMessage());
                return null;
            } catch (final IOException e) {
                corrupt("read error after line " + lineNumber + ": " + e.getMessage());
                return null;
            }
            if (s == null) {
                return null;
            }
            lineNumber++;
            if (s.isBlank()) {
                continue;
            }
            try {
                final JsonNode node = JSON.readTree(s);
                if (node != null && node.isObject() && node.hasNonNull("type")) {
                    return node;
                }
                corrupt("line " + lineNumber + ": not an object with a \"type\"");
            } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
                corrupt("line " + lineNumber + ": not JSON: " + e.getOriginalMessage());
            }
        }
    }

    private void dispatch(final JsonNode o, final TelemetryListener out, final JournalReader.Meta meta) {
        final String type = o.get("type").asText();
        try {
            switch (type) {
                case "host" -> {
                    host = hex(o, "hostId");
                    out.onHost(host);
                }
                case "advanceTo" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.advanceTo(hex(o, "hostId"), t);
                    }
                }
                case "proxyOpStart" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onProxyOpStart(
                                num(o, "opKey"),
                                hex(o, "commHash"),
                                (int) num(o, "rank"),
                                (int) num(o, "peer"),
                                (int) num(o, "channel"),
                                bool(o, "isSend"),
                                t);
                    }
                }
                case "proxyOpStop" -> {
                    final long t = num(o, "timeNs");
                    final long opKey = num(o, "opKey");
                    if (inRange(t)) {
                        if (opKey == JournalFormat.LEGACY_IDLE_TICK_KEY) {
                            out.advanceTo(host, t); // traces written before advanceTo: the idle host's time
                        } else {
                            out.onProxyOpStop(opKey, t);
                        }
                    }
                }
                case "proxyStepStart" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onProxyStepStart(num(o, "stepKey"), num(o, "opKey"), (int) num(o, "step"), t);
                    }
                }
                case "proxyStepState" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onProxyStepState(num(o, "stepKey"), (int) num(o, "state"), num(o, "transSize"), t);
                    }
                }
                case "proxyStepStop" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onProxyStepStop(num(o, "stepKey"), t);
                    }
                }
                case "qpStart" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onQpStart(
                                num(o, "wrKey"),
                                (int) num(o, "device"),
                                num(o, "qpNum"),
                                (int) num(o, "opcode"),
                                num(o, "length"),
                                t);
                    }
                }
                case "qpStop" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onQpStop(num(o, "wrKey"), t);
                    }
                }
                case "collStart" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onCollStart(
                                num(o, "collKey"),
                                hex(o, "commHash"),
                                (int) num(o, "rank"),
                                (int) num(o, "nranks"),
                                (int) num(o, "func"),
                                (int) num(o, "algo"),
                                (int) num(o, "proto"),
                                num(o, "count"),
                                (int) num(o, "datatypeSize"),
                                (int) num(o, "nChannels"),
                                num(o, "seqNumber"),
                                t);
                    }
                }
                case "collStop" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onCollStop(num(o, "collKey"), t);
                    }
                }
                case "kernelChStart" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onKernelChStart(
                                num(o, "chKey"), num(o, "collKey"), (int) num(o, "channel"), num(o, "pTimerNs"), t);
                    }
                }
                case "kernelChStop" -> {
                    final long t = num(o, "timeNs");
                    if (inRange(t)) {
                        out.onKernelChStop(num(o, "chKey"), num(o, "pTimerNs"), t);
                    }
                }
                case "ringComm" ->
                    out.onRingComm(
                            hex(o, "hostId"),
                            o.path("hostname").asText(""),
                            (int) num(o, "pid"),
                            hex(o, "commHash"),
                            (int) num(o, "rank"),
                            (int) o.path("nranks").asLong(-1),
                            (int) o.path("cudaDevice").asLong(-1),
                            o.path("pciBusId").asText(""));
                case "ringGpuUuid" ->
                    out.onRingGpuUuid(
                            hex(o, "hostId"),
                            (int) num(o, "pid"),
                            hex(o, "commHash"),
                            (int) num(o, "rank"),
                            o.path("gpuUuid").asText(""));
                case "ringAttached" ->
                    meta.onRingAttached(
                            hex(o, "hostId"),
                            (int) num(o, "pid"),
                            o.path("hostname").asText(""),
                            o.path("path").asText(""));
                case "ringClock" ->
                    meta.onRingClock(
                            hex(o, "hostId"), (int) num(o, "pid"), num(o, "realtimeNs"), num(o, "monotonicNs"));
                case "ringDetached" ->
                    meta.onRingDetached(
                            (int) num(o, "pid"),
                            o.path("path").asText(""),
                            o.path("reason").asText(""));
                case "anomaly" ->
                    meta.onAnomaly(
                            hex(o, "id"),
                            "opened".equals(o.path("state").asText()),
                            o.path("summary").asText(""));
                case "source" -> meta.onSource(o.path("spec").asText(""));
                case "engineSettings" -> meta.onEngineSettings(settings(o));
                case "end" -> meta.onEnd();
                default -> {
                    corrupt("line " + lineNumber + ": unknown type \"" + type + "\"");
                    return;
                }
            }
            entries++;
        } catch (final IllegalArgumentException e) {
            corrupt("line " + lineNumber + " (" + type + "): " + e.getMessage());
        }
    }

    /** An engineSettings line's {@code settings} object as the journal entry's text: {@code key=value}, spaced. */
    private static String settings(final JsonNode o) {
        final JsonNode v = o.get("settings");
        if (v == null || !v.isObject()) {
            throw new IllegalArgumentException("missing or non-object \"settings\"");
        }
        final StringBuilder b = new StringBuilder();
        for (final java.util.Iterator<java.util.Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            final java.util.Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isValueNode()
                    || e.getKey().isEmpty()
                    || e.getKey().contains("=")
                    || e.getKey().contains(" ")
                    || e.getValue().asText().contains(" ")) {
                throw new IllegalArgumentException(
                        "\"settings\" holds a value that is not a plain key and value: " + e.getKey());
            }
            b.append(b.length() == 0 ? "" : " ")
                    .append(e.getKey())
                    .append('=')
                    .append(e.getValue().asText());
        }
        return b.toString();
    }

    private static long num(final JsonNode o, final String field) {
        final JsonNode v = o.get(field);
        if (v == null || !v.canConvertToLong()) {
            throw new IllegalArgumentException("missing or non-integer \"" + field + "\"");
        }
        return v.asLong();
    }

    private static boolean bool(final JsonNode o, final String field) {
        final JsonNode v = o.get(field);
        if (v == null || !v.isBoolean()) {
            throw new IllegalArgumentException("missing or non-boolean \"" + field + "\"");
        }
        return v.booleanValue();
    }

    /** An id written as hex text ("0x8cf3707b570dbec", as inspect writes host ids and hashes) or as a number. */
    private static long hex(final JsonNode o, final String field) {
        final JsonNode v = o.get(field);
        if (v == null) {
            throw new IllegalArgumentException("missing \"" + field + "\"");
        }
        if (v.canConvertToLong()) {
            return v.asLong();
        }
        final String s = v.asText();
        try {
            return s.startsWith("0x") || s.startsWith("0X")
                    ? Long.parseUnsignedLong(s.substring(2), 16)
                    : Long.parseLong(s);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("\"" + field + "\" is not a hex id: " + s);
        }
    }

    public Path path() {
        return path;
    }

    /** The batch being (or last) read: its {@code batch} number, or its {@code batchWallNs} in older traces. */
    @Override
    public long index() {
        return currentBatch;
    }

    @Override
    public String corruptionUnit() {
        return "lines";
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (final IOException e) {
            // nothing was written: nothing is lost
        }
    }
}
