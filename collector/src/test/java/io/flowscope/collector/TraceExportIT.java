package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.input.TelemetryListener;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.replay.Replay;
import io.flowscope.collector.replay.TraceClock;
import io.flowscope.collector.replay.TraceExport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Perfetto export (issue #18, item 6) on real NCCL recordings (../shared/traces: a socket run with proxy steps,
 * an NVLink run with KernelCh), checked against the recordings themselves: on the epoch of the recording, one process
 * per rank, collectives by op, size and algorithm, wait phases as slices inside their steps, GPU channel slices
 * where the GPU clock puts them physically possible, a file that keeps the trace format's rules
 * ({@link ChromeTraceCheck}); and the ring clock anchor through the journal, a trace and back.
 */
class TraceExportIT {
    private static final Path TRACES = Path.of(System.getProperty("user.dir"))
            .resolve("../../shared/traces")
            .normalize();
    private static final Pattern OP = Pattern.compile(
            "(AllReduce|AllGather|ReduceScatter|Broadcast|Reduce|Send|Recv|SendRecv) [0-9.]+ (B|KiB|MiB|GiB) "
                    + "(Tree|Ring|CollNetDirect|CollNetChain|NVLS|NVLSTree|PAT)/(LL|LL128|Simple)");
    private static final Set<String> PHASES =
            Set.of("SendGPUWait", "SendPeerWait", "SendWait", "RecvWait", "RecvFlushWait", "RecvGPUWait");
    /** The batch-wall estimate's bound: whole-millisecond batch times, plus the live drain's lag. */
    private static final long ESTIMATE_BOUND_NS = 5_000_000L;

    @TempDir
    Path dir;

    /** Every line of a recording, parsed. */
    private static List<JsonNode> lines(final Path events) throws IOException {
        final List<JsonNode> all = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(
                new InputStreamReader(new GZIPInputStream(Files.newInputStream(events)), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                all.add(Json.MAPPER.readTree(l));
            }
        }
        return all;
    }

    private static Path recording(final String name) {
        final Path p = TRACES.resolve(name).resolve("events.jsonl.gz");
        assumeTrue(Files.exists(p), "recording " + p + " not here");
        return p;
    }

    private JsonNode export(final Path input, final long from, final long to, final long cap) throws IOException {
        final Path out = dir.resolve("trace.json");
        try (TraceExport export = new TraceExport(out, TraceClock.of(input), cap)) {
            final Replay.Result r = Replay.run(input, CollectorConfig.defaults(), from, to, export, export, n -> {});
            final Map<Long, io.flowscope.api.anomaly.Anomaly> last = new HashMap<>();
            r.events().forEach(e -> last.put(e.anomaly().id(), e.anomaly()));
            export.finish(List.copyOf(last.values()), from, to);
        }
        final JsonNode trace = ChromeTraceCheck.EXACT.readTree(out.toFile());
        assertThat(ChromeTraceCheck.violations(trace)).isEmpty();
        return trace;
    }

    /** An event's Unix time (ns): the file's base plus its ts. */
    private static long wall(final JsonNode trace, final JsonNode event) {
        return trace.get("baseTimeNanoseconds").asLong() + ChromeTraceCheck.ns(event.get("ts"));
    }

    private static List<JsonNode> events(final JsonNode trace, final String ph, final String cat) {
        final List<JsonNode> l = new ArrayList<>();
        trace.get("traceEvents").forEach(e -> {
            if (e.path("ph").asText().equals(ph)
                    && (cat == null || e.path("cat").asText().equals(cat))) {
                l.add(e);
            }
        });
        return l;
    }

    private static Map<Integer, String> processes(final JsonNode trace) {
        final Map<Integer, String> m = new HashMap<>();
        for (final JsonNode e : events(trace, "M", null)) {
            if (e.path("name").asText().equals("process_name")) {
                m.put(e.get("pid").asInt(), e.path("args").path("name").asText());
            }
        }
        return m;
    }

    /** Least (batch wall − event time) over a recording: the estimate's value, computed here independently. */
    private static long leastWallMinusEvent(final List<JsonNode> raw) {
        long least = Long.MAX_VALUE;
        for (final JsonNode o : raw) {
            if (o.has("timeNs") && o.path("batchWallNs").asLong() > 0) {
                least = Math.min(
                        least, o.get("batchWallNs").asLong() - o.get("timeNs").asLong());
            }
        }
        return least;
    }

    @Test
    void aSocketRecordingGoesOnTheEpochWithOneProcessPerRankNamedCollectivesAndWaitPhases() throws Exception {
        final Path input = recording("clean");
        final JsonNode truth =
                Json.MAPPER.readTree(TRACES.resolve("clean/truth.json").toFile());
        final long from = truth.get("slow_start_mono_ns").asLong();
        final long to = from + 300_000_000L;
        final List<JsonNode> raw = lines(input);
        final JsonNode trace = export(input, from, to, TraceExport.DEFAULT_MAX_EVENTS);

        // the clock: no ring anchor in this recording (made before issue #18): the batch-wall estimate, said so
        final JsonNode other = trace.get("otherData");
        assertThat(other.path("clockSource").asText()).isEqualTo("batch-wall-estimate");
        assertThat(other.path("clock").asText()).contains("estimated from the journal's batch wall times");
        final long offset =
                other.path("hosts").elements().next().path("offsetNs").asLong();
        final long least = leastWallMinusEvent(raw);
        assertThat(offset).isBetween(least, least + ESTIMATE_BOUND_NS);
        long minWall = Long.MAX_VALUE;
        long maxWall = Long.MIN_VALUE;
        for (final JsonNode o : raw) {
            if (o.has("timeNs")
                    && o.get("timeNs").asLong() >= from
                    && o.get("timeNs").asLong() <= to) {
                minWall = Math.min(minWall, o.get("batchWallNs").asLong());
                maxWall = Math.max(maxWall, o.get("batchWallNs").asLong());
            }
        }
        // every slice within the batches' wall times of its events (they were written after the events)
        for (final JsonNode e : events(trace, "X", null)) {
            if (!e.path("cat").asText().equals("anomaly")) {
                final long ts = wall(trace, e);
                assertThat(ts).as(e.toString()).isBetween(minWall - 1_000_000_000L, maxWall + ESTIMATE_BOUND_NS);
            }
        }
        // the recording's date: the batch wall times are the epoch (2026 or later), not a monotonic clock
        assertThat(minWall).isGreaterThan(1_767_225_600_000_000_000L);

        // one process per rank
        final Map<Integer, String> procs = processes(trace);
        assertThat(procs.values())
                .filteredOn(n -> !n.equals("anomalies"))
                .hasSize(2)
                .anySatisfy(n -> assertThat(n).startsWith("vm rank 0 comm 0x"))
                .anySatisfy(n -> assertThat(n).startsWith("vm rank 1 comm 0x"));

        // collectives by op: every one of the range, per rank, named with size and algorithm
        final Set<String> expected = new HashSet<>();
        for (final JsonNode o : raw) {
            if (o.path("type").asText().equals("collStart")
                    && o.get("timeNs").asLong() >= from
                    && o.get("timeNs").asLong() <= to - 10_000_000L) {
                expected.add(o.get("rank").asInt() + "/" + o.get("seqNumber").asLong());
            }
        }
        final List<JsonNode> colls = events(trace, "X", "collective");
        final Set<String> got = new HashSet<>();
        for (final JsonNode c : colls) {
            assertThat(c.get("name").asText()).matches(OP);
            assertThat(c.get("args").fieldNames()).toIterable().contains("seq", "comm", "rank", "nranks", "channels");
            got.add(c.path("args").path("rank").asInt() + "/"
                    + c.path("args").path("seq").asLong());
        }
        assertThat(expected).hasSizeGreaterThan(100);
        assertThat(got).containsAll(expected);
        // the workload's all_reduce of 4 MiB (truth.json: size)
        assertThat(truth.get("size").asLong()).isEqualTo(4L << 20);
        assertThat(colls).anySatisfy(c -> assertThat(c.get("name").asText()).startsWith("AllReduce 4 MiB "));

        // wait phases: slices on the proxy tracks, inside their step (the nesting check above), durations >= 0
        final List<JsonNode> waits = events(trace, "X", "wait");
        assertThat(waits)
                .extracting(w -> w.get("name").asText())
                .allMatch(PHASES::contains)
                .contains("SendGPUWait", "SendWait", "RecvWait", "RecvGPUWait");
        assertThat(waits).allSatisfy(w -> assertThat(w.get("dur").asDouble()).isGreaterThanOrEqualTo(0));
        assertThat(events(trace, "X", "proxy")).hasSizeGreaterThan(1000);
        final Map<Integer, String> threads = new HashMap<>();
        for (final JsonNode e : events(trace, "M", null)) {
            if (e.path("name").asText().equals("thread_name")) {
                threads.put(e.get("tid").asInt(), e.path("args").path("name").asText());
            }
        }
        assertThat(waits).allSatisfy(w -> assertThat(threads.get(w.get("tid").asInt()))
                .matches("ch \\d+ (send→|recv←)\\d+( #\\d+)?"));

        // exactly on the offset: the first step of the range starts at its event time + the host's offset
        final JsonNode firstStep = raw.stream()
                .filter(o -> o.path("type").asText().equals("proxyStepStart")
                        && o.get("timeNs").asLong() >= from)
                .findFirst()
                .orElseThrow();
        // by default ts count from the host's boot instant to the second (as PyTorch's profiler bases its traces)
        final long base = trace.get("baseTimeNanoseconds").asLong();
        assertThat(base).isEqualTo(Math.floorDiv(offset, 1_000_000_000L) * 1_000_000_000L);
        final String ts = TraceExport.micros(firstStep.get("timeNs").asLong() + offset - base);
        assertThat(events(trace, "X", "proxy"))
                .anySatisfy(s -> assertThat(s.get("ts").decimalValue()).isEqualByComparingTo(ts));
    }

    @Test
    void anNvlinkRecordingPutsEachGpuChannelWhereTheEnginesGpuClockSaysWithinItsBound() throws Exception {
        final Path input = recording("nvlink-k-clean");
        final JsonNode truth =
                Json.MAPPER.readTree(TRACES.resolve("nvlink-k-clean/truth.json").toFile());
        final long from = truth.get("slow_start_mono_ns").asLong();
        final long to = from + 200_000_000L;
        final List<JsonNode> raw = lines(input);
        final JsonNode trace = export(input, from, to, TraceExport.DEFAULT_MAX_EVENTS);
        final long offset = trace.get("otherData")
                .path("hosts")
                .elements()
                .next()
                .path("offsetNs")
                .asLong();

        // the recording: each channel's collective host start (launch) and the host time its stop was seen
        final Map<Long, JsonNode> collByKey = new HashMap<>();
        final Map<Long, JsonNode> chByKey = new HashMap<>();
        final Map<String, long[]> hostBounds = new HashMap<>();
        for (final JsonNode o : raw) {
            switch (o.path("type").asText()) {
                case "collStart" -> collByKey.put(o.get("collKey").asLong(), o);
                case "kernelChStart" -> chByKey.put(o.get("chKey").asLong(), o);
                case "kernelChStop" -> {
                    final JsonNode start = chByKey.get(o.get("chKey").asLong());
                    final JsonNode coll = start == null
                            ? null
                            : collByKey.get(start.get("collKey").asLong());
                    if (coll != null) {
                        hostBounds.put(
                                coll.get("rank").asInt() + "/"
                                        + coll.get("seqNumber").asLong() + "/"
                                        + start.get("channel").asInt(),
                                new long[] {
                                    coll.get("timeNs").asLong() + offset,
                                    o.get("timeNs").asLong() + offset
                                });
                    }
                }
                default -> {}
            }
        }
        final List<JsonNode> kernels = events(trace, "X", "kernel");
        assertThat(kernels).hasSizeGreaterThan(1000);
        for (final JsonNode k : kernels) {
            final JsonNode a = k.get("args");
            final long[] b = hostBounds.get(a.get("rank").asInt() + "/"
                    + a.get("seq").asLong() + "/" + a.get("channel").asInt());
            assertThat(b).as(k.toString()).isNotNull();
            final long bound = a.get("clockBoundNs").asLong();
            assertThat(bound).isPositive().isLessThanOrEqualTo(1_000_000L);
            final long start = wall(trace, k);
            final long end = start + ChromeTraceCheck.ns(k.get("dur"));
            // a kernel starts after its launch began, and ends before the host saw it end (± the clock's bound)
            assertThat(start).as(k.toString()).isGreaterThanOrEqualTo(b[0] - bound);
            assertThat(end).as(k.toString()).isLessThanOrEqualTo(b[1] + bound);
            assertThat(k.get("name").asText()).matches(OP);
        }
        // its GPU tracks: one per channel used
        final Set<String> gpuTracks = new HashSet<>();
        for (final JsonNode e : events(trace, "M", null)) {
            if (e.path("name").asText().equals("thread_name")
                    && e.path("args").path("name").asText().startsWith("GPU ch ")) {
                gpuTracks.add(e.get("pid").asInt() + e.path("args").path("name").asText());
            }
        }
        assertThat(gpuTracks).hasSizeGreaterThanOrEqualTo(2 * 2);
        assertThat(events(trace, "X", "collective"))
                .anySatisfy(c ->
                        assertThat(c.path("args").path("gpuTimed").asBoolean()).isTrue());
    }

    @Test
    void aCapLeavesOutDetailButKeepsEveryCollectiveAndSaysSo() throws Exception {
        final Path input = recording("clean");
        final JsonNode truth =
                Json.MAPPER.readTree(TRACES.resolve("clean/truth.json").toFile());
        final long from = truth.get("slow_start_mono_ns").asLong();
        final JsonNode full = export(input, from, from + 100_000_000L, TraceExport.DEFAULT_MAX_EVENTS);
        final JsonNode capped = export(input, from, from + 100_000_000L, 500);
        assertThat(events(capped, "X", "collective")).hasSameSizeAs(events(full, "X", "collective"));
        assertThat(events(capped, "X", "wait").size()
                        + events(capped, "X", "proxy").size())
                .isLessThanOrEqualTo(500);
        assertThat(capped.get("otherData").get("detailEventsLeftOut").asLong()).isPositive();
        assertThat(full.get("otherData").get("detailEventsLeftOut").asLong()).isZero();
    }

    @Test
    void theRingClockAnchorGoesThroughTheJournalAndItsTraceAndPutsEventsExactlyOnTheEpoch() throws Exception {
        final Path journal = dir.resolve("journal");
        final long host = 0x1234L;
        final long realtime = 1_795_641_700_123_456_789L;
        final long monotonic = 40_000_000_000L;
        try (JournalWriter w = new JournalWriter(journal, RollCycles.FAST_HOURLY, 0, 0)) {
            w.ringAttached(host, 77, "gpu-node-1", "/dev/shm/r");
            w.ringClock(host, 77, realtime, monotonic);
            w.onRingComm(host, "gpu-node-1", 77, 0xC0FFEEL, 0, 2, 3, "0000:1b:00.0");
            w.onHost(host);
            w.onCollStart(1, 0xC0FFEEL, 0, 2, 0, 1, 2, 1L << 20, 4, 1, 0, monotonic + 5_000_000L);
            w.onCollStop(1, monotonic + 5_010_000L);
            w.flush(realtime + 6_000_000L);
        }
        // the anchor comes last in its batch (a reader that does not know the entry loses nothing before it)
        final List<String> order = new ArrayList<>();
        try (EventLog r = EventLog.open(journal)) {
            r.read(
                    new TelemetryListener() {
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
                            order.add("collStart");
                        }

                        @Override
                        public void onProxyOpStart(
                                final long a,
                                final long b,
                                final int c,
                                final int d,
                                final int e,
                                final boolean f,
                                final long g) {}

                        @Override
                        public void onProxyOpStop(final long a, final long b) {}

                        @Override
                        public void onProxyStepStart(final long a, final long b, final int c, final long d) {}

                        @Override
                        public void onProxyStepState(final long a, final int b, final long c, final long d) {}

                        @Override
                        public void onProxyStepStop(final long a, final long b) {}
                    },
                    new JournalReader.Meta() {
                        @Override
                        public void onRingClock(
                                final long hostId, final int pid, final long realtimeNs, final long monotonicNs) {
                            order.add("ringClock " + Long.toHexString(hostId) + " " + pid + " " + realtimeNs + " "
                                    + monotonicNs);
                        }
                    },
                    10);
        }
        assertThat(order).containsExactly("collStart", "ringClock 1234 77 " + realtime + " " + monotonic);

        // inspect writes it as a ringClock line; the trace reads back to the same export
        final Path jsonl = dir.resolve("run.jsonl");
        TraceReplayTest.inspectTo(journal, jsonl);
        assertThat(Files.readString(jsonl))
                .contains("\"type\":\"ringClock\"", "\"realtimeNs\":" + realtime, "\"monotonicNs\":" + monotonic);
        for (final Path input : List.of(journal, jsonl)) {
            final JsonNode trace = export(input, Long.MIN_VALUE, Long.MAX_VALUE, TraceExport.DEFAULT_MAX_EVENTS);
            assertThat(trace.get("otherData").get("clockSource").asText())
                    .as(input.toString())
                    .isEqualTo("ring-anchor");
            final JsonNode coll = events(trace, "X", "collective").get(0);
            assertThat(coll.get("name").asText()).isEqualTo("AllReduce 4 MiB Ring/Simple");
            assertThat(wall(trace, coll)).isEqualTo(realtime + 5_000_000L);
            assertThat(trace.get("baseTimeNanoseconds").asLong()).isEqualTo(1_795_641_660_000_000_000L);
            assertThat(ChromeTraceCheck.ns(coll.get("dur"))).isEqualTo(10_000L);
            assertThat(processes(trace).get(coll.get("pid").asInt())).isEqualTo("gpu-node-1 pid 77 rank 0 GPU 3");
        }

        // on a PyTorch profiler trace's time base: both files on one axis (its base after its events, as may be)
        final Path torch = dir.resolve("torch-rank0.json");
        Files.writeString(
                torch,
                "{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"ts\": 1.5, "
                        + "\"dur\": 2}], \"baseTimeNanoseconds\": 1795641000000000000}");
        final Path out = dir.resolve("on-torch.json");
        final TraceReplayTest.Result r = TraceReplayTest.main(
                "replay",
                journal.toString(),
                "--no-progress",
                "--trace",
                out.toString(),
                "--trace-base",
                torch.toString());
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.err())
                .contains("on the epoch (CLOCK_REALTIME) by the rings' clock anchors; ts in µs from "
                        + "baseTimeNanoseconds 1795641000000000000");
        final JsonNode onTorch = ChromeTraceCheck.EXACT.readTree(out.toFile());
        assertThat(onTorch.get("baseTimeNanoseconds").asLong()).isEqualTo(1_795_641_000_000_000_000L);
        assertThat(wall(onTorch, events(onTorch, "X", "collective").get(0))).isEqualTo(realtime + 5_000_000L);
        // a trace without a base, or not a trace: one line, exit 3, no file
        Files.writeString(torch, "{\"traceEvents\": []}");
        final Path none = dir.resolve("none.json");
        final TraceReplayTest.Result bad = TraceReplayTest.main(
                "replay",
                journal.toString(),
                "--no-progress",
                "--trace",
                none.toString(),
                "--trace-base",
                torch.toString());
        assertThat(bad.rc()).isEqualTo(Main.EXIT_INPUT);
        assertThat(bad.err().strip())
                .isEqualTo("flowscope replay: --trace-base " + torch + ": the trace has no "
                        + "baseTimeNanoseconds (its ts are then Unix µs: give --trace-base 0)");
        assertThat(none).doesNotExist();
    }

    @Test
    void theServiceJournalsEachRingsClockAnchorAndTheExportUsesIt() throws Exception {
        Files.createDirectories(dir.resolve("rings"));
        final Map<String, String> o = new java.util.LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("ring.scanMs", "20");
        o.put("journal.dir", dir.resolve("journal").toString());
        final long wallMinusMono = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        try (RingTraffic ring = RingTraffic.onThisMachine(
                        dir.resolve("rings/flowscope-4242-0.ring"), 4242, "gpu-node-7", 0xABCDL, 0, 2);
                CollectorService s = CollectorService.start(CollectorConfig.load(null, Map.of(), o), e -> {})) {
            final long t0 = System.nanoTime();
            ring.sendOp(1, 0, 20, 4096, t0, 10_000);
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(TraceReplayTest.main(
                                            "inspect", dir.resolve("journal").toString())
                                    .out())
                            .contains("\"type\":\"ringClock\"")
                            .contains("\"type\":\"proxyStepStop\""));
        }
        JsonNode clockLine = null;
        for (final String l : TraceReplayTest.main(
                        "inspect", dir.resolve("journal").toString())
                .out()
                .split("\n")) {
            if (l.contains("\"type\":\"ringClock\"")) {
                clockLine = Json.MAPPER.readTree(l);
            }
        }
        assertThat(clockLine).isNotNull();
        assertThat(clockLine.get("pid").asInt()).isEqualTo(4242);
        final long offset = clockLine.get("realtimeNs").asLong()
                - clockLine.get("monotonicNs").asLong();
        // the ring's anchor is this machine's clocks, read when the ring was made
        assertThat(offset).isBetween(wallMinusMono - 50_000_000L, wallMinusMono + 50_000_000L);

        final JsonNode trace =
                export(dir.resolve("journal"), Long.MIN_VALUE, Long.MAX_VALUE, TraceExport.DEFAULT_MAX_EVENTS);
        assertThat(trace.get("otherData").get("clockSource").asText()).isEqualTo("ring-anchor");
        assertThat(trace.get("otherData")
                        .get("hosts")
                        .elements()
                        .next()
                        .get("offsetNs")
                        .asLong())
                .isEqualTo(offset);
        assertThat(processes(trace).values()).anySatisfy(n -> assertThat(n).startsWith("gpu-node-7 pid 4242 rank 0"));
        assertThat(events(trace, "X", "proxy")).hasSize(20);
        assertThat(events(trace, "X", "wait"))
                .extracting(w -> w.get("name").asText())
                .containsOnly("SendGPUWait", "SendPeerWait", "SendWait")
                .hasSize(60);
    }

    @Test
    void microsecondsKeepEveryNanosecond() {
        assertThat(TraceExport.micros(1_795_641_700_123_456_789L)).isEqualTo("1795641700123456.789");
        assertThat(TraceExport.micros(5L)).isEqualTo("0.005");
        assertThat(TraceExport.micros(-1L)).isEqualTo("-0.001");
        assertThat(TraceExport.size(4L << 20)).isEqualTo("4 MiB");
        assertThat(TraceExport.size(1536)).isEqualTo("1.5 KiB");
        assertThat(TraceExport.size(4)).isEqualTo("4 B");
    }
}
