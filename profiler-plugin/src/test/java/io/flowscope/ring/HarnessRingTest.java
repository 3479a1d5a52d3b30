package io.flowscope.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java reader against rings written by the real C plugin, driven by the C harness
 * ({@code ${flowscope.native.dir}/fs_harness}, which calls the plugin's {@code ncclProfiler_vN} exactly as
 * NCCL does and writes, with {@code --expect}, the records the plugin must produce). Fails when the harness
 * is missing, unless {@code -Dflowscope.harness.optional=true}.
 */
class HarnessRingTest {
    private static final Pattern SUMMARY =
            Pattern.compile("harness: abi=(\\d+) records=(\\d+) invalid=(\\d+) ring=(\\S+)");
    private static Path harness;
    private static Path plugin;

    @TempDir
    Path dir;

    @BeforeAll
    static void findHarness() {
        final Path nativeDir = Path.of(System.getProperty("flowscope.native.dir", "build"));
        harness = nativeDir.resolve("fs_harness");
        plugin = nativeDir.resolve("libnccl-profiler-flowscope.so");
        final boolean present = Files.isExecutable(harness) && Files.isRegularFile(plugin);
        if (Boolean.getBoolean("flowscope.harness.optional")) {
            Assumptions.assumeTrue(present, "no harness in " + nativeDir);
        }
        assertThat(present).as("%s and %s (built by make all)", harness, plugin).isTrue();
    }

    private record Summary(int abi, long records, long invalid, Path ring) {}

    private record Expected(int hthread, int n, EventKind kind, RecordOp op, Map<String, String> keys) {
        String ref() {
            return hthread + ":" + n;
        }
    }

    private static Process start(final Path ringDir, final String... args) throws IOException {
        final List<String> command = new ArrayList<>(
                List.of(harness.toString(), "--plugin", plugin.toString(), "--ring-dir", ringDir.toString()));
        command.addAll(Arrays.asList(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static Summary finish(final Process process) throws Exception {
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue())
                .as("harness exit code; output:%n%s", output)
                .isZero();
        final Matcher m = SUMMARY.matcher(output);
        if (!m.find()) {
            fail("no 'harness: abi=<v> records=<n> invalid=<n> ring=<path>' line in:%n%s", output);
        }
        return new Summary(
                Integer.parseInt(m.group(1)),
                Long.parseLong(m.group(2)),
                Long.parseLong(m.group(3)),
                Path.of(m.group(4)));
    }

    private static List<Expected> readExpect(final Path file) throws IOException {
        final List<Expected> lines = new ArrayList<>();
        for (final String line : Files.readAllLines(file)) {
            if (line.isBlank()) {
                continue;
            }
            final String[] f = line.trim().split(" ");
            final Map<String, String> keys = new LinkedHashMap<>();
            for (int i = 4; i < f.length; i++) {
                final int eq = f[i].indexOf('=');
                keys.put(f[i].substring(0, eq), f[i].substring(eq + 1));
            }
            lines.add(new Expected(
                    Integer.parseInt(f[0]),
                    Integer.parseInt(f[1]),
                    EventKind.ofLabel(f[2]),
                    RecordOp.valueOf(f[3]),
                    keys));
        }
        return lines;
    }

    private static List<RingEvent> drain(final Path ring) throws IOException {
        final List<RingEvent> events = new ArrayList<>();
        try (RingReader reader = RingReader.open(ring)) {
            while (reader.poll(r -> events.add(r.toEvent()), 4096) > 0) {
                // all
            }
            assertThat(reader.isDrained()).isTrue();
            assertThat(reader.corrupt()).isZero();
            assertThat(reader.skippedStale()).isZero();
        }
        return events;
    }

    static Stream<Arguments> abis() {
        return Stream.of(
                Arguments.of(4, false),
                Arguments.of(5, false),
                Arguments.of(6, false),
                Arguments.of(4, true),
                Arguments.of(5, true),
                Arguments.of(6, true));
    }

    @ParameterizedTest(name = "abi {0}, abuse {1}")
    @MethodSource("abis")
    void everyExpectedRecordArrivesOnceWithItsPayloadLinksAndPerThreadOrder(final int abi, final boolean abuse)
            throws Exception {
        final Path expectFile = dir.resolve("expect.txt");
        final List<String> args = new ArrayList<>(List.of(
                "--abi",
                Integer.toString(abi),
                "--comms",
                "3",
                "--ops",
                "6",
                "--seed",
                "11",
                "--expect",
                expectFile.toString()));
        if (abi == 6) {
            args.addAll(List.of("--mask", "all"));
        }
        if (abuse) {
            args.add("--abuse");
        }
        final Summary summary = finish(start(dir, args.toArray(String[]::new)));
        final List<Expected> expected = readExpect(expectFile);

        final List<RingEvent> events = drain(summary.ring());

        assertThat(summary.abi()).isEqualTo(abi);
        assertThat(expected).hasSize((int) summary.records());
        assertThat(events).hasSize(expected.size());
        try (RingReader reader = RingReader.open(summary.ring())) {
            final RingHeader header = reader.header();
            assertThat(header.abiVersion()).isEqualTo(abi);
            assertThat(header.invalidCalls()).isEqualTo(summary.invalid());
            assertThat(header.droppedFull() + header.droppedContended() + header.droppedAbandoned())
                    .isZero();
            assertThat(header.producerPid()).isEqualTo(events.get(0).producerPid());
        }
        if (abuse) {
            assertThat(summary.invalid()).as("--abuse makes invalid calls").isPositive();
        } else {
            assertThat(summary.invalid()).isZero();
        }
        matchThreadsAndCheck(expected, events);
    }

    /** Maps ring threads to harness threads by their record sequences, then checks every record and link. */
    private static void matchThreadsAndCheck(final List<Expected> expected, final List<RingEvent> events) {
        final Map<Integer, List<Expected>> byHthread = new TreeMap<>();
        expected.forEach(e ->
                byHthread.computeIfAbsent(e.hthread(), k -> new ArrayList<>()).add(e));
        final Map<Integer, List<RingEvent>> byThread = new TreeMap<>();
        events.forEach(e ->
                byThread.computeIfAbsent(e.thread(), k -> new ArrayList<>()).add(e));
        assertThat(byThread).as("producing threads").hasSameSizeAs(byHthread);
        byHthread.forEach((h, lines) -> assertThat(lines)
                .extracting(Expected::n)
                .as("hthread %d numbering", h)
                .containsExactlyElementsOf(java.util.stream.IntStream.range(0, lines.size())
                        .boxed()
                        .toList()));

        final Map<Integer, Integer> threadOf = new HashMap<>();
        for (final Map.Entry<Integer, List<RingEvent>> ring : byThread.entrySet()) {
            final List<String> mismatches = new ArrayList<>();
            for (final Map.Entry<Integer, List<Expected>> h : byHthread.entrySet()) {
                if (threadOf.containsValue(h.getKey())) {
                    continue;
                }
                final String mismatch = firstMismatch(h.getValue(), ring.getValue());
                if (mismatch == null) {
                    threadOf.put(ring.getKey(), h.getKey());
                    break;
                }
                mismatches.add("hthread " + h.getKey() + ": " + mismatch);
            }
            if (!threadOf.containsKey(ring.getKey())) {
                fail(
                        "ring thread %d matches no harness thread in order:%n%s",
                        ring.getKey(), String.join("\n", mismatches));
            }
        }

        final Map<String, Long> ids = new HashMap<>();
        for (final Map.Entry<Integer, List<RingEvent>> ring : byThread.entrySet()) {
            final List<Expected> lines = byHthread.get(threadOf.get(ring.getKey()));
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).op() == RecordOp.START) {
                    ids.put(lines.get(i).ref(), ring.getValue().get(i).id());
                }
            }
        }
        assertThat(ids.values()).as("START ids are unique").doesNotHaveDuplicates();
        for (final Map.Entry<Integer, List<RingEvent>> ring : byThread.entrySet()) {
            final List<Expected> lines = byHthread.get(threadOf.get(ring.getKey()));
            for (int i = 0; i < lines.size(); i++) {
                final Expected line = lines.get(i);
                final RingEvent event = ring.getValue().get(i);
                if (line.op() == RecordOp.START) {
                    final String parent = line.keys().get("parent");
                    final long expectedParent = "none".equals(parent)
                            ? 0
                            : parent.startsWith("raw:") ? Long.parseUnsignedLong(parent.substring(4)) : ids.get(parent);
                    assertThat(event.parent())
                            .as("parent of %s %s", line.ref(), line.keys())
                            .isEqualTo(expectedParent);
                    assertThat(RecordLayout.idKind(event.id()))
                            .as("kind bits of the id of %s", line.ref())
                            .isEqualTo(line.kind().code());
                    assertThat(event.commIndex())
                            .as("comm bits of the id of %s", line.ref())
                            .isEqualTo(RecordLayout.idCommIndex(event.id()));
                } else {
                    final String of = line.keys().get("of");
                    assertThat(ids).as("START of %s", line.ref()).containsKey(of);
                    assertThat(event.id())
                            .as("id of %s (of=%s)", line.ref(), of)
                            .isEqualTo(ids.get(of));
                    assertThat(event.parent()).isZero();
                }
            }
        }
    }

    private static String firstMismatch(final List<Expected> lines, final List<RingEvent> events) {
        if (lines.size() != events.size()) {
            return lines.size() + " lines, " + events.size() + " records";
        }
        for (int i = 0; i < lines.size(); i++) {
            final Expected line = lines.get(i);
            final RingEvent event = events.get(i);
            if (line.kind() != event.kind() || line.op() != event.op()) {
                return "line " + line.ref() + " " + line.kind().label() + " " + line.op() + " vs " + event;
            }
            for (final Map.Entry<String, String> key : line.keys().entrySet()) {
                final String name = key.getKey();
                if (name.equals("parent") || name.equals("of")) {
                    continue;
                }
                final String actual = field(event, name);
                if (!key.getValue().equals(actual)) {
                    return "line " + line.ref() + " " + name + "=" + key.getValue() + " but the record has " + actual
                            + " in " + event;
                }
            }
        }
        return null;
    }

    /** A field of a decoded event, formatted as the expect file writes it. */
    private static String field(final RingEvent event, final String name) {
        switch (name) {
            case "comm":
                return "0x" + Long.toHexString(event.commHash());
            case "rank":
                return Integer.toString(event.rank());
            default:
                break;
        }
        for (final var component : event.payload().getClass().getRecordComponents()) {
            if (component.getName().equals(name)) {
                final Object value;
                try {
                    value = component.getAccessor().invoke(event.payload());
                } catch (final ReflectiveOperationException ex) {
                    throw new IllegalStateException(ex);
                }
                if (value == null) {
                    return "-";
                }
                if (value instanceof Boolean) {
                    return (Boolean) value ? "1" : "0";
                }
                if (value instanceof Long) {
                    return Long.toUnsignedString((Long) value);
                }
                return value.toString();
            }
        }
        return "<no field " + name + " in " + event.payload().getClass().getSimpleName() + ">";
    }

    @Test
    void aTinySingleLaneRingWithoutConsumerKeepsExactlyCapacityRecordsAndCountsTheRestAsDroppedFull() throws Exception {
        final Summary summary = finish(
                start(dir, "--abi", "5", "--comms", "2", "--ops", "20", "--ring-lanes", "1", "--ring-size", "1K"));

        final List<RingEvent> events = drain(summary.ring());

        try (RingReader reader = RingReader.open(summary.ring())) {
            final RingHeader header = reader.header();
            assertThat(header.capacity()).isEqualTo(16);
            assertThat(header.laneCount()).isEqualTo(1);
            assertThat(header.laneCapacity()).isEqualTo(16);
            assertThat(summary.records()).isGreaterThan(16);
            assertThat(events).hasSize(16);
            assertThat(header.droppedFull()).isEqualTo(summary.records() - 16);
            assertThat(header.droppedContended() + header.droppedAbandoned()).isZero();
        }
    }

    @Test
    void aSmallRingWithDefaultLanesWithoutConsumerAccountsForEveryRecordAsReceivedOrDroppedFull() throws Exception {
        final Summary summary =
                finish(start(dir, "--abi", "6", "--mask", "all", "--comms", "2", "--ops", "300", "--ring-size", "8K"));

        final List<RingEvent> events = drain(summary.ring());

        try (RingReader reader = RingReader.open(summary.ring())) {
            final RingHeader header = reader.header();
            assertThat(header.capacity()).isEqualTo(128);
            assertThat(header.laneCount()).as("default lanes").isGreaterThan(1);
            assertThat(header.laneCount() * header.laneCapacity()).isEqualTo(128);
            assertThat(summary.records()).isGreaterThan(128);
            assertThat(header.droppedFull()).isPositive();
            assertThat(events.size() + header.droppedFull()).isEqualTo(summary.records());
            assertThat(header.droppedContended() + header.droppedAbandoned()).isZero();
            for (final RingEvent event : events) {
                assertThat(event.lane())
                        .as("lane of thread %d", event.thread())
                        .isEqualTo(event.thread() % header.laneCount());
            }
        }
    }

    @Test
    void aJavaReaderDrainingWhileTheHarnessRunsReceivesEveryRecordThatWasNotDroppedFull() throws Exception {
        final Process process =
                start(dir, "--abi", "6", "--mask", "all", "--comms", "4", "--ops", "3000", "--ring-size", "16K");
        final long[] received = {0};
        final RecordHandler handler = r -> received[0]++;
        RingReader reader = null;
        try {
            while (reader == null) {
                try (Stream<Path> files = Files.list(dir)) {
                    final Path ring = files.filter(p -> p.toString().endsWith(".ring"))
                            .findFirst()
                            .orElse(null);
                    if (ring != null) {
                        reader = RingReader.open(ring);
                    }
                } catch (final RingFormatException ex) {
                    if (!ex.isTransient()) {
                        throw ex;
                    }
                }
                if (reader == null && !process.isAlive()) {
                    fail(
                            "the harness ended before a ring appeared: %s",
                            new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
                }
            }
            long concurrently = 0;
            while (process.isAlive()) {
                concurrently += reader.poll(handler, 4096);
            }
            final Summary summary = finish(process);
            while (reader.poll(handler, 4096) > 0) {
                // the rest
            }

            final RingHeader header = reader.header();
            assertThat(summary.records()).isGreaterThan(header.capacity() * 10);
            assertThat(concurrently).as("records read while the harness ran").isPositive();
            assertThat(reader.corrupt()).isZero();
            assertThat(reader.skippedStale()).isZero();
            assertThat(header.droppedContended() + header.droppedAbandoned()).isZero();
            assertThat(received[0] + header.droppedFull()).isEqualTo(summary.records());
        } finally {
            if (reader != null) {
                reader.close();
            }
            process.destroy();
        }
    }
    /**
     * The plugin's communicator entries carry the CUDA device of each rank: the harness loads the stand-in driver
     * ({@code fakecuda/libcuda.so.1}, soname {@code libcuda.so.1}) and makes device i current on communicator i's
     * init thread, as NCCL's comm init does; the abuse communicators' threads have no context. The reader sees
     * each device, bus id and UUID (layout 1.2, "GPU-..." as nvidia-smi prints it); a run without the driver says
     * unknown.
     */
    @Test
    void theReaderSeesTheCudaDeviceAndBusIdOfEachCommunicatorsRank() throws Exception {
        final Path fakeCuda =
                harness.getParent().resolve("fakecuda/libcuda.so.1").toAbsolutePath();
        assertThat(fakeCuda).as("the stand-in CUDA driver (make all)").isRegularFile();
        final Summary s = finish(
                start(dir, "--abi", "5", "--comms", "3", "--abuse", "--ops", "10", "--fake-cuda", fakeCuda.toString()));
        final Map<String, String> gpus = new TreeMap<>();
        try (RingReader reader = RingReader.open(s.ring())) {
            final RingHeader h = reader.header();
            assertThat(h.layoutVersion()).isEqualTo(RingLayout.LAYOUT_VERSION);
            for (int i = 0; i < h.commCount(); i++) {
                final RingHeader.CommInfo c = h.comm(i);
                gpus.merge(c.name(), c.cudaDevice() + " " + c.pciBusId() + " " + c.gpuUuid(), (a, b) -> a + ", " + b);
            }
        }
        assertThat(gpus)
                .hasSize(3 + 16) // the run's communicators, then the 16 abuse ones
                .containsEntry("harness-comm-0", "0 0000:18:00.0 GPU-f5ca0000-0000-4000-8000-000000000000")
                .containsEntry("harness-comm-1", "1 0000:19:00.0 GPU-f5ca0000-0000-4000-8000-000000000001")
                .containsEntry("harness-comm-2", "2 0000:1A:00.0 GPU-f5ca0000-0000-4000-8000-000000000002")
                .containsEntry("harness-comm-3", "-1  ")
                .containsEntry("harness-comm-18", "-1  ");
        final Summary without = finish(start(dir.resolve("without"), "--abi", "5", "--comms", "2", "--ops", "10"));
        try (RingReader reader = RingReader.open(without.ring())) {
            assertThat(reader.header().comm(0).cudaDevice()).isEqualTo(RingHeader.CommInfo.NO_DEVICE);
            assertThat(reader.header().comm(0).pciBusId()).isEmpty();
        }
    }
}
