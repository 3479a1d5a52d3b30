package io.flowscope.collector.replay;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.input.TelemetryListener;
import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.window.GpuClockEstimate;
import io.flowscope.window.WindowEngine;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Chrome / Perfetto trace JSON ({@code {"traceEvents": [...], "otherData": {...}}}) of a replay, on the epoch
 * ({@link TraceClock}: CLOCK_REALTIME by the rings' anchors, else estimated, said in {@code otherData}), so that it
 * overlays a PyTorch profiler or Flight Recorder trace in ui.perfetto.dev. Layout (docs/perfetto.md):
 * <ul>
 *   <li>one process per rank (the ring's host and pid when its communicator entry is known, else host, communicator
 *   and rank), named {@code "host pid P rank N GPU g"}, sorted by rank;</li>
 *   <li>its threads (tracks): {@code collectives (host)} (each Coll event's launch, Coll start to stop),
 *   {@code collectives (GPU)} (first KernelCh start to last stop, on host time through the engine's GPU clock),
 *   {@code GPU ch C} (each KernelCh), {@code ch C send→P} / {@code ch C recv←P} (each ProxyStep, its wait phases
 *   as child slices: SendGPUWait, SendPeerWait, SendWait, RecvWait, RecvFlushWait, RecvGPUWait);</li>
 *   <li>slices named by the collective ({@code "AllReduce 4 MiB Ring/Simple"}) with seq, comm, rank, nranks,
 *   channels as args; counters of send bandwidth per link; anomalies as spans in an {@code anomalies} process and
 *   as instant events on the culprit rank's process.</li>
 * </ul>
 * Slices that would overlap on a track (steps in flight together, collectives queued ahead of the GPU) go to the
 * track's next lane ({@code "ch 0 send→1 #2"}), so every track nests. At most {@code maxEvents} detail events
 * (steps, phases, channels, counters) are written; collectives, anomalies and metadata always are; what was left out
 * is counted in {@code otherData} and {@link #describe()}.
 */
public final class TraceExport implements FlowSummarySink, CollectiveSink, TelemetryListener, AutoCloseable {
    /** Detail events written at most by default: about 140 MB of JSON (use --from / --to for a range). */
    public static final long DEFAULT_MAX_EVENTS = 500_000;
    /** Overlap of two collectives on the GPU track drawn as clock error, not as a second lane (2 × 20 µs, the
     * window engine's default GPU poll-lag bound, as for the channels). */
    private static final long GPU_SLACK_NS = 40_000L;

    private static final int ANOMALY_PID = 1;
    /** Entries in flight kept at most (Coll, KernelCh, ProxyOp, ProxyStep): beyond, the oldest are forgotten. */
    private static final int MAX_PENDING = 1 << 18;

    private static final String[] FUNCS = {
        "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", "Recv", "SendRecv"
    };
    private static final String[] ALGOS = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
    private static final String[] PROTOS = {"LL", "LL128", "Simple"};

    private final JsonGenerator json;
    private final OutputStream out;
    private final TraceClock clock;
    private final long maxEvents;
    private final long baseNs;
    private Supplier<WindowEngine> engine = () -> null;
    private final GpuClockEstimate estimate = new GpuClockEstimate();

    private long events;
    private long details;
    private long detailsDropped;
    private long lastWallNs = Long.MIN_VALUE;
    private long host;

    /** Ring names by host id, and each (host, comm, rank)'s process identity from the rings' communicator entries. */
    private final Map<Long, String> hostnames = new HashMap<>();

    private final Map<String, Object[]> rankIdentity = new HashMap<>();
    private final Map<String, Proc> procs = new LinkedHashMap<>();
    private final Map<Integer, Proc> procByPid = new HashMap<>();
    private int nextTid = 1;

    private final Map<Long, Coll> colls = lru();
    private final Map<Long, long[]> channels = lru();
    private final Map<Long, Op> ops = lru();
    private final Map<Long, Step> steps = lru();

    /** A rank's process and its tracks. */
    private final class Proc {
        final int pid;
        final Map<String, List<long[]>> lanes = new HashMap<>();
        final Map<String, Integer> tids = new HashMap<>();

        Proc(final int pid) {
            this.pid = pid;
        }

        /** The thread of track {@code name} free from {@code startNs} on (a new lane when all overlap). */
        int track(final String name, final long startNs, final long endNs) throws IOException {
            return (int) place(name, startNs, endNs, 0)[0];
        }

        /** {@link #place}'s result: tid, and the start and end as placed. */
        private final long[] placed = new long[3];

        /**
         * Places a slice on track {@code name}: on the first lane free from its start, or that its last slice overlaps
         * by at most {@code slackNs}, drawn from that slice's end (converted GPU times of back-to-back kernels overlap
         * by the clock estimate's error; their raw times are in the args); else on a new lane (a larger error, e.g.
         * while the estimate is still learning, shows as a second lane instead of shifting every slice after it).
         * Returns {@link #placed}.
         */
        long[] place(final String name, final long startNs, final long endNs, final long slackNs) throws IOException {
            final List<long[]> l = lanes.computeIfAbsent(name, k -> new ArrayList<>());
            long start = startNs;
            long end = endNs;
            int lane = 0;
            while (lane < l.size() && l.get(lane)[1] > startNs) {
                if (l.get(lane)[1] - startNs <= slackNs) {
                    start = l.get(lane)[1];
                    end = Math.max(endNs, start);
                    break;
                }
                lane++;
            }
            if (lane == l.size()) {
                final String tname = lane == 0 ? name : name + " #" + (lane + 1);
                final int tid = nextTid++;
                l.add(new long[] {tid, Long.MIN_VALUE});
                tids.put(tname, tid);
                meta("thread_name", pid, tid, "name", tname);
                meta("thread_sort_index", pid, tid, "sort_index", sortIndex(name) * 1000 + lane);
            }
            l.get(lane)[1] = end;
            placed[0] = l.get(lane)[0];
            placed[1] = start;
            placed[2] = end;
            return placed;
        }
    }

    private record Coll(
            long hostId,
            long commHash,
            int rank,
            int nranks,
            String name,
            long seq,
            int nChannels,
            long bytes,
            long hostStartNs) {}

    private record Op(long hostId, long commHash, int rank, int peer, int channel, boolean isSend) {}

    private static final class Step {
        final long hostId;
        final long opKey;
        final int step;
        final long startNs;
        final int[] states = new int[8];
        final long[] times = new long[8];
        int n;

        Step(final long hostId, final long opKey, final int step, final long startNs) {
            this.hostId = hostId;
            this.opKey = opKey;
            this.step = step;
            this.startNs = startNs;
        }
    }

    private static <V> Map<Long, V> lru() {
        return new LinkedHashMap<>(1024, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(final Map.Entry<Long, V> eldest) {
                return size() > MAX_PENDING;
            }
        };
    }

    public TraceExport(final Path file, final TraceClock clock) throws IOException {
        this(file, clock, DEFAULT_MAX_EVENTS);
    }

    public TraceExport(final Path file, final TraceClock clock, final long maxEvents) throws IOException {
        this(file, clock, maxEvents, clock.defaultBaseNs());
    }

    /**
     * @param baseNs the Unix time (ns) the timestamps count from: {@code ts} = (wall − baseNs) / 1000, written as
     *               {@code baseTimeNanoseconds} as PyTorch's profiler writes it; a PyTorch trace's own base puts both
     *               files on one time axis in Perfetto ({@link #baseOf})
     */
    public TraceExport(final Path file, final TraceClock clock, final long maxEvents, final long baseNs)
            throws IOException {
        this.clock = clock;
        this.maxEvents = maxEvents;
        this.baseNs = baseNs;
        this.out = Files.newOutputStream(file);
        this.json = Json.MAPPER.getFactory().createGenerator(out, JsonEncoding.UTF8);
        json.writeStartObject();
        json.writeStringField("displayTimeUnit", "ns");
        json.writeNumberField("baseTimeNanoseconds", baseNs);
        json.writeArrayFieldStart("traceEvents");
        meta("process_name", ANOMALY_PID, 0, "name", "anomalies");
        meta("process_sort_index", ANOMALY_PID, 0, "sort_index", -1);
    }

    /** The replay's current engine (it is replaced after a damaged range): its GPU clock converts KernelCh times. */
    void engine(final Supplier<WindowEngine> current) {
        this.engine = current;
    }

    public long events() {
        return events;
    }

    /** One line for stderr: events, clock, and what the cap left out. */
    public String describe() {
        return events + " trace events " + clock.describe() + "; ts in µs from baseTimeNanoseconds " + baseNs
                + (detailsDropped == 0
                        ? ""
                        : "; " + detailsDropped + " step, channel and counter events left out past the cap of "
                                + maxEvents + " (export a shorter " + "--from/--to range for all of them)");
    }

    // ---- JSON helpers -----------------------------------------------------------------------------------------

    private void meta(final String name, final int pid, final int tid, final String key, final Object value)
            throws IOException {
        json.writeStartObject();
        json.writeStringField("ph", "M");
        json.writeStringField("name", name);
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", tid);
        json.writeObjectFieldStart("args");
        json.writeObjectField(key, value);
        json.writeEndObject();
        json.writeEndObject();
    }

    /**
     * A time base given on the command line: Unix ns, or a Chrome trace file (a PyTorch profiler trace, .json or
     * .json.gz) whose top-level {@code baseTimeNanoseconds} is taken.
     */
    public static long baseOf(final String spec) throws IOException {
        if (spec.matches("-?\\d+")) {
            return Long.parseLong(spec);
        }
        final Path f = Path.of(spec);
        if (!Files.isRegularFile(f)) {
            throw new IllegalArgumentException("--trace-base " + spec + ": neither Unix ns nor a trace file");
        }
        try (java.io.InputStream raw = Files.newInputStream(f);
                java.io.InputStream in = spec.endsWith(".gz") ? new java.util.zip.GZIPInputStream(raw) : raw;
                com.fasterxml.jackson.core.JsonParser p =
                        Json.MAPPER.getFactory().createParser(in)) {
            if (p.nextToken() != com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                throw new IllegalArgumentException("--trace-base " + spec + ": not a JSON trace object");
            }
            while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                final String name = p.currentName();
                p.nextToken();
                if (name.equals("baseTimeNanoseconds") && p.currentToken().isNumeric()) {
                    return p.getLongValue();
                }
                p.skipChildren();
            }
        } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("--trace-base " + spec + ": not JSON (" + e.getOriginalMessage() + ")");
        }
        throw new IllegalArgumentException("--trace-base " + spec + ": the trace has no baseTimeNanoseconds (its ts "
                + "are then Unix µs: give --trace-base 0)");
    }

    /** Microseconds with the nanoseconds exact (a double of epoch µs keeps only quarter microseconds). */
    public static String micros(final long ns) {
        if (ns < 0) {
            return "-" + micros(-ns);
        }
        final long us = Math.floorDiv(ns, 1000L);
        final long frac = Math.floorMod(ns, 1000L);
        return us + "." + (frac < 10 ? "00" : frac < 100 ? "0" : "") + frac;
    }

    private boolean detail() {
        if (details >= maxEvents) {
            detailsDropped++;
            return false;
        }
        details++;
        return true;
    }

    /** Starts an "X" event; the caller writes args (or not) and ends the object. */
    private void complete(
            final String name,
            final String cat,
            final int pid,
            final int tid,
            final long wallStartNs,
            final long wallEndNs)
            throws IOException {
        json.writeStartObject();
        json.writeStringField("ph", "X");
        json.writeStringField("name", name);
        json.writeStringField("cat", cat);
        json.writeNumberField("pid", pid);
        json.writeNumberField("tid", tid);
        json.writeFieldName("ts");
        json.writeNumber(micros(wallStartNs - baseNs));
        json.writeFieldName("dur");
        json.writeNumber(micros(Math.max(0, wallEndNs - wallStartNs)));
        lastWallNs = Math.max(lastWallNs, wallEndNs);
        events++;
    }

    private static int sortIndex(final String track) {
        if (track.startsWith("collectives (host)")) {
            return 0;
        }
        if (track.startsWith("collectives (GPU)")) {
            return 1;
        }
        if (track.startsWith("GPU ch ")) {
            return 2 + Integer.parseInt(track.substring(7).split(" ")[0]);
        }
        if (track.startsWith("ch ")) {
            // proxy tracks after the GPU channels (at most 64 of those)
            final int ch = Integer.parseInt(track.substring(3).split(" ")[0]);
            return 100 + ch * 2 + (track.contains("send") ? 0 : 1);
        }
        return 0;
    }

    static String opName(final int func, final long bytes, final int algo, final int proto) {
        return (func >= 0 && func < FUNCS.length ? FUNCS[func] : "func" + func) + " " + size(bytes) + " "
                + (algo >= 0 && algo < ALGOS.length ? ALGOS[algo] : "algo" + algo)
                + "/" + (proto >= 0 && proto < PROTOS.length ? PROTOS[proto] : "proto" + proto);
    }

    public static String size(final long bytes) {
        final String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return (v == Math.rint(v) ? String.valueOf((long) v) : String.format(java.util.Locale.ROOT, "%.1f", v)) + " "
                + units[u];
    }

    private static String key(final long hostId, final long commHash, final int rank) {
        return hostId + "/" + commHash + "/" + rank;
    }

    /** The process of rank {@code rank} of {@code commHash} on host {@code hostId} (named when first used). */
    private Proc proc(final long hostId, final long commHash, final int rank) throws IOException {
        final Object[] id = rankIdentity.get(key(hostId, commHash, rank));
        final String procKey = id != null ? hostId + "/pid" + id[0] : key(hostId, commHash, rank);
        Proc p = procs.get(procKey);
        if (p == null) {
            int pid = 2 + (int) ((procKey.hashCode() & 0x7FFFFFFFL) % 0x3FFFFFF);
            while (procByPid.containsKey(pid) || pid == ANOMALY_PID) {
                pid++;
            }
            p = new Proc(pid);
            procs.put(procKey, p);
            procByPid.put(pid, p);
            final String hostname = hostnames.getOrDefault(hostId, FlowRow.hex(hostId));
            final String name = id != null
                    ? hostname + " pid " + id[0] + " rank " + rank + ((Integer) id[1] >= 0 ? " GPU " + id[1] : "")
                    : hostname + " rank " + rank + " comm " + FlowRow.hex(commHash);
            meta("process_name", pid, 0, "name", name);
            meta("process_sort_index", pid, 0, "sort_index", rank);
        }
        return p;
    }

    // ---- journal metadata (Replay hands these on) -----------------------------------------------------------

    void onBatch(final long wallNs) {
        clock.onBatch(wallNs);
    }

    void onRingClock(final long hostId, final long realtimeNs, final long monotonicNs) {
        clock.onRingClock(hostId, realtimeNs, monotonicNs);
    }

    void onRingAttached(final long hostId, final String hostname) {
        if (hostname != null && !hostname.isEmpty()) {
            hostnames.putIfAbsent(hostId, hostname);
        }
    }

    // ---- the engines' input -----------------------------------------------------------------------------------

    @Override
    public void onRingComm(
            final long hostId,
            final String hostname,
            final int pid,
            final long commHash,
            final int rank,
            final int nranks,
            final int cudaDevice,
            final String pciBusId) {
        onRingAttached(hostId, hostname);
        rankIdentity.putIfAbsent(key(hostId, commHash, rank), new Object[] {pid, cudaDevice});
    }

    @Override
    public void onHost(final long hostId) {
        host = hostId;
    }

    @Override
    public void onCollStart(
            final long collKey,
            final long commHash,
            final int rank,
            final int nranks,
            final int func,
            final int algo,
            final int proto,
            final long count,
            final int datatypeSize,
            final int nChannels,
            final long seqNumber,
            final long timeNs) {
        final long bytes = Collectives.algorithmBytes(func, count, datatypeSize, nranks);
        colls.put(
                collKey,
                new Coll(
                        host,
                        commHash,
                        rank,
                        nranks,
                        opName(func, bytes, algo, proto),
                        seqNumber,
                        nChannels,
                        bytes,
                        timeNs));
    }

    /** The collective's launch on the host (Coll start to stop), named by its op, size and algorithm. */
    @Override
    public void onCollStop(final long collKey, final long timeNs) {
        final Coll c = colls.get(collKey);
        if (c == null) {
            return;
        }
        try {
            final Proc p = proc(c.hostId(), c.commHash(), c.rank());
            final long start = clock.toWallNs(c.hostId(), c.hostStartNs());
            final long stop = Math.max(start, clock.toWallNs(c.hostId(), timeNs));
            complete(c.name(), "collective", p.pid, p.track("collectives (host)", start, stop), start, stop);
            json.writeObjectFieldStart("args");
            json.writeNumberField("seq", c.seq());
            json.writeStringField("comm", FlowRow.hex(c.commHash()));
            json.writeNumberField("rank", c.rank());
            json.writeNumberField("nranks", c.nranks());
            json.writeNumberField("channels", c.nChannels());
            json.writeNumberField("bytes", c.bytes());
            json.writeEndObject();
            json.writeEndObject();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void onKernelChStart(
            final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
        channels.put(chKey, new long[] {collKey, channel, pTimerNs, timeNs});
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
        final long[] ch = channels.remove(chKey);
        final Coll c = ch == null ? null : colls.get(ch[0]);
        final WindowEngine e = engine.get();
        // the engine's estimate of this GPU at the collective's host start, as it converts the collective's start
        if (c == null || e == null || !e.gpuClock(c.hostId(), c.commHash(), c.rank(), c.hostStartNs(), estimate)) {
            return;
        }
        try {
            if (!detail()) {
                return;
            }
            final long start = clock.toWallNs(c.hostId(), estimate.toHostNs(ch[2]));
            final long end = clock.toWallNs(c.hostId(), estimate.toHostNs(pTimerNs));
            final Proc p = proc(c.hostId(), c.commHash(), c.rank());
            final long[] at = p.place("GPU ch " + ch[1], start, end, 2 * estimate.errorBoundNs());
            complete(c.name(), "kernel", p.pid, (int) at[0], at[1], at[2]);
            json.writeObjectFieldStart("args");
            json.writeNumberField("seq", c.seq());
            json.writeStringField("comm", FlowRow.hex(c.commHash()));
            json.writeNumberField("rank", c.rank());
            json.writeNumberField("channel", ch[1]);
            json.writeNumberField("gpuStartNs", ch[2]);
            json.writeNumberField("gpuStopNs", pTimerNs);
            json.writeNumberField("clockBoundNs", estimate.errorBoundNs());
            json.writeBooleanField("clockSettled", estimate.settled());
            if (at[1] != start) {
                // drawn after the kernel before it on this channel: their converted times overlapped
                json.writeNumberField("shiftedNs", at[1] - start);
            }
            json.writeEndObject();
            json.writeEndObject();
        } catch (final IOException x) {
            throw new UncheckedIOException(x);
        }
    }

    @Override
    public void onProxyOpStart(
            final long opKey,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {
        ops.put(opKey, new Op(host, commHash, rank, peer, channel, isSend));
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        // kept: its steps may stop after it (ops are forgotten by age)
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        steps.put(stepKey, new Step(host, opKey, step, timeNs));
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        final Step s = steps.get(stepKey);
        if (s != null && s.n < s.states.length && (s.n == 0 || s.states[s.n - 1] != state)) {
            // a repeated state (SendPeerWait) continues the phase it began
            s.states[s.n] = state;
            s.times[s.n] = timeNs;
            s.n++;
        }
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        final Step s = steps.remove(stepKey);
        final Op op = s == null ? null : ops.get(s.opKey);
        if (op == null) {
            return;
        }
        try {
            if (!detail()) {
                return;
            }
            final long start = clock.toWallNs(s.hostId, s.startNs);
            final long end = Math.max(start, clock.toWallNs(s.hostId, timeNs));
            final Proc p = proc(s.hostId, op.commHash(), op.rank());
            final int tid = p.track("ch " + op.channel() + (op.isSend() ? " send→" : " recv←") + op.peer(), start, end);
            complete("step " + s.step, "proxy", p.pid, tid, start, end);
            json.writeObjectFieldStart("args");
            json.writeStringField("comm", FlowRow.hex(op.commHash()));
            json.writeNumberField("rank", op.rank());
            json.writeNumberField("peer", op.peer());
            json.writeNumberField("channel", op.channel());
            json.writeEndObject();
            json.writeEndObject();
            // each state opens a phase that lasts to the next state (or the stop), clamped into the step
            long at = start;
            for (int i = 0; i < s.n; i++) {
                final long from = Math.min(end, Math.max(at, clock.toWallNs(s.hostId, s.times[i])));
                final long to =
                        i + 1 < s.n ? Math.min(end, Math.max(from, clock.toWallNs(s.hostId, s.times[i + 1]))) : end;
                at = to;
                final String phase = phaseName(s.states[i]);
                if (phase == null || !detail()) {
                    continue;
                }
                complete(phase, "wait", p.pid, tid, from, to);
                json.writeEndObject();
            }
        } catch (final IOException x) {
            throw new UncheckedIOException(x);
        }
    }

    /** The ProxyStep states' names (NCCL profiler ABI; window engine {@code Phase}); null for another state. */
    static String phaseName(final int state) {
        return switch (state) {
            case 8 -> "SendGPUWait";
            case 20 -> "SendPeerWait";
            case 9 -> "SendWait";
            case 10 -> "RecvWait";
            case 11 -> "RecvFlushWait";
            case 12 -> "RecvGPUWait";
            default -> null;
        };
    }

    // ---- the engines' output ----------------------------------------------------------------------------------

    @Override
    public void onSummary(final FlowSummary s) {
        if (s.kind() != FlowSummary.KIND_LINK || !s.isSend()) {
            return;
        }
        try {
            if (!detail()) {
                return;
            }
            final Proc p = proc(s.hostId(), s.commHash(), s.rank());
            json.writeStartObject();
            json.writeStringField("ph", "C");
            json.writeStringField("name", "send GB/s → rank " + s.peer());
            json.writeNumberField("pid", p.pid);
            json.writeFieldName("ts");
            json.writeNumber(micros(clock.toWallNs(s.hostId(), s.periodStartNs()) - baseNs));
            json.writeObjectFieldStart("args");
            json.writeNumberField("GBps", FlowRow.finite(s.periodBandwidthBytesPerSecond()) / 1e9);
            json.writeEndObject();
            json.writeEndObject();
            events++;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void onCollective(final CollectiveSummary c) {
        try {
            // the GPU span (first KernelCh start to last stop), on host time as the engine converts it
            if (c.gpuTimed() && c.gpuStartHostKnown()) {
                final Proc p = proc(c.hostId(), c.commHash(), c.rank());
                final String name = opName(c.func(), c.bytes(), c.algo(), c.proto());
                final long gpuStart = clock.toWallNs(c.hostId(), c.gpuStartHostNs());
                final long gpuEnd = gpuStart + Math.max(0, c.durationNs());
                final long[] at = p.place("collectives (GPU)", gpuStart, gpuEnd, GPU_SLACK_NS);
                complete(name, "collective", p.pid, (int) at[0], at[1], at[2]);
                args(c);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void args(final CollectiveSummary c) throws IOException {
        json.writeObjectFieldStart("args");
        json.writeNumberField("seq", c.seqNumber());
        json.writeStringField("comm", FlowRow.hex(c.commHash()));
        json.writeNumberField("rank", c.rank());
        json.writeNumberField("nranks", c.nranks());
        json.writeNumberField("channels", c.nChannels());
        json.writeNumberField("bytes", c.bytes());
        json.writeNumberField("durationNs", c.durationNs());
        json.writeBooleanField("gpuTimed", c.gpuTimed());
        json.writeNumberField("algBwGBps", FlowRow.finite(c.algBandwidthBytesPerSecond()) / 1e9);
        json.writeNumberField("busBwGBps", FlowRow.finite(c.busBandwidthBytesPerSecond()) / 1e9);
        json.writeBooleanField("complete", c.complete());
        json.writeEndObject();
        json.writeEndObject();
    }

    /** Writes the anomalies (latest state of each), as spans and as instants on the culprit's rank. */
    public void finish(final List<Anomaly> anomalies, final long fromNs, final long toNs) throws IOException {
        final Proc lanes = new Proc(ANOMALY_PID);
        for (final Anomaly a : anomalies) {
            if ((a.isOpen() ? Long.MAX_VALUE : a.resolvedNs()) < fromNs || a.startNs() > toNs) {
                continue;
            }
            final long hostId = a.culprit().hostId();
            final long start = clock.toWallNs(hostId, a.startNs());
            final long end = Math.max(
                    start,
                    a.isOpen()
                            ? Math.max(lastWallNs, clock.toWallNs(hostId, a.detectedNs()))
                            : clock.toWallNs(hostId, a.resolvedNs()));
            // a track per kind and culprit rank (a next lane when two overlap)
            final int tid = lanes.track(a.kind() + " rank " + a.culprit().rank(), start, end);
            complete(a.kind() + " " + a.summary(), "anomaly", ANOMALY_PID, tid, start, end);
            json.writeObjectField("args", Json.anomaly(a));
            json.writeEndObject();
            if (a.culprit().rank() >= 0) {
                final Proc p = proc(hostId, a.culprit().commHash(), a.culprit().rank());
                json.writeStartObject();
                json.writeStringField("ph", "i");
                json.writeStringField("s", "p");
                json.writeStringField("name", a.kind() + " " + a.summary());
                json.writeStringField("cat", "anomaly");
                json.writeNumberField("pid", p.pid);
                json.writeNumberField("tid", 0);
                json.writeFieldName("ts");
                json.writeNumber(micros(clock.toWallNs(hostId, a.detectedNs()) - baseNs));
                json.writeEndObject();
                events++;
            }
        }
    }

    @Override
    public void close() throws IOException {
        json.writeEndArray();
        json.writeObjectFieldStart("otherData");
        json.writeStringField("producer", "flowscope replay --trace");
        json.writeStringField("clockSource", clock.source().label());
        json.writeStringField("clock", clock.describe());
        json.writeStringField("time", "Unix ns = baseTimeNanoseconds + ts x 1000");
        json.writeObjectFieldStart("hosts");
        for (final Map.Entry<Long, TraceClock.Offset> h : clock.offsets().entrySet()) {
            json.writeObjectFieldStart(FlowRow.hex(h.getKey()));
            json.writeStringField("hostname", hostnames.getOrDefault(h.getKey(), ""));
            json.writeStringField("clockSource", h.getValue().source().label());
            json.writeNumberField("offsetNs", h.getValue().offsetNs());
            json.writeEndObject();
        }
        json.writeEndObject();
        json.writeNumberField("detailEventsLeftOut", detailsDropped);
        json.writeNumberField("maxDetailEvents", maxEvents);
        json.writeEndObject();
        json.writeEndObject();
        json.close();
        out.close();
    }
}
