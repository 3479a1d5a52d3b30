package io.flowscope.collector.journal;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.Main;
import io.flowscope.collector.NoopListener;
import io.flowscope.collector.SimulatedInput;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.replay.Replay;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import net.openhft.chronicle.queue.rollcycles.LegacyRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, acceptance 3: a real journal (Chronicle files written by {@link JournalWriter}) with bytes flipped in a
 * batch's payload, in Chronicle's document headers and in the queue's index. Every damaged range is reported with
 * where it is and why, reading goes on after it, and not one entry of a damaged batch reaches the listener.
 */
class JournalDamageTest {
    private static final int BATCHES = 300;

    @TempDir
    Path dir;

    /** Records, per batch number (the host id of its first entry), whether and how whole it came back. */
    static final class Batches extends NoopListener implements JournalReader.Meta {
        final List<Long> hosts = new ArrayList<>();
        final List<String> calls = new ArrayList<>();

        @Override
        public void onHost(final long hostId) {
            hosts.add(hostId);
            calls.add("host " + hostId);
        }

        @Override
        public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
            calls.add("state " + stepKey + " " + state + " " + transSize + " " + timeNs);
        }

        @Override
        public void onQpStart(
                final long wrKey,
                final int device,
                final long qpNum,
                final int opcode,
                final long length,
                final long timeNs) {
            calls.add("qp " + wrKey + " " + device + " " + qpNum + " " + opcode + " " + length + " " + timeNs);
        }
    }

    /** Batch b: host b, then 20 step states and 20 QP starts whose fields all derive from b. */
    private List<Long> write() throws Exception {
        final List<Long> indexes = new ArrayList<>();
        try (JournalWriter w = new JournalWriter(dir, LegacyRollCycles.MINUTELY, 0, 0)) {
            for (long b = 0; b < BATCHES; b++) {
                w.onHost(b);
                for (int i = 0; i < 20; i++) {
                    w.onProxyStepState(b * 100 + i, 9, 4096 * b, 1_000_000L * b + i);
                    w.onQpStart(b * 100 + i, 1, 77, 2, 4096, 1_000_000L * b + i);
                }
                w.flush(System.currentTimeMillis() * 1_000_000L);
            }
        }
        try (JournalReader r = new JournalReader(dir)) {
            while (r.read(new Batches(), new JournalReader.Meta() {}, 1) > 0) {
                indexes.add(r.index());
            }
            assertThat(indexes).hasSize(BATCHES);
            assertThat(r.corruptDocuments()).isZero();
            return indexes;
        }
    }

    private Path cycle() {
        final List<Path> cycles = JournalWriter.cycleFiles(dir);
        assertThat(cycles)
                .as("one cycle file (a minutely roll during the test is possible: rerun)")
                .hasSize(1);
        return cycles.get(0);
    }

    /** Where batch {@code k}'s document header (Chronicle's 4 bytes) is in the cycle file. */
    private static int header(final byte[] file, final long index) {
        final byte[] needle = ByteBuffer.allocate(8)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(index)
                .array();
        final int at = indexOf(file, needle, 0);
        assertThat(at).as("batch index in the file").isPositive();
        return at - 8 - 4; // the stored index follows the 8-byte head; Chronicle's header precedes the document
    }

    private static int indexOf(final byte[] hay, final byte[] needle, final int from) {
        outer:
        for (int i = from; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void flip(final byte[] file, final int at, final int n) {
        for (int i = 0; i < n; i++) {
            file[at + i] ^= (byte) 0xA5;
        }
    }

    private record Read(Batches rec, long corrupt, List<String> damage) {
        TreeSet<Long> got() {
            return new TreeSet<>(rec.hosts);
        }
    }

    private Read readAll() {
        try (JournalReader r = new JournalReader(dir)) {
            final Batches rec = new Batches();
            final List<String> said = new ArrayList<>();
            r.onDamage(said::add);
            while (r.read(rec, rec, 7) > 0) {
                // all
            }
            assertThat(said).isEqualTo(r.damage());
            return new Read(rec, r.corruptDocuments(), r.damage());
        }
    }

    private static TreeSet<Long> allBut(final long... missing) {
        final TreeSet<Long> s = new TreeSet<>();
        for (long b = 0; b < BATCHES; b++) {
            s.add(b);
        }
        for (final long m : missing) {
            s.remove(m);
        }
        return s;
    }

    /** Every entry of every batch that came back is whole (no batch came back in part). */
    private static void assertWhole(final Read r) {
        for (final long b : r.got()) {
            assertThat(r.rec.calls.stream()
                            .filter(c -> c.startsWith("state ") && c.endsWith(" " + (1_000_000L * b + 19)))
                            .count())
                    .as("batch " + b + " whole")
                    .isGreaterThanOrEqualTo(1);
        }
        assertThat(r.rec.calls).hasSize(r.got().size() * 41);
    }

    @Test
    void shouldSkipAndReportABatchWhosePayloadIsDamagedAndReadOnWithoutHandingOnAnyOfIt() throws Exception {
        final List<Long> idx = write();
        final Path cycle = cycle();
        final byte[] file = Files.readAllBytes(cycle);
        flip(file, header(file, idx.get(100)) + 4 + 20 + 300, 64); // 64 bytes in batch 100's entries
        Files.write(cycle, file);

        final Read r = readAll();
        assertThat(r.got()).isEqualTo(allBut(100));
        assertWhole(r);
        assertThat(r.corrupt).isEqualTo(1);
        assertThat(r.damage)
                .singleElement()
                .asString()
                .contains("batch 100 of cycle " + cycle.getFileName(), "checksum mismatch");
    }

    @Test
    void shouldStepOverADamagedDocumentHeaderByTheIndexAndReportIt() throws Exception {
        final List<Long> idx = write();
        final Path cycle = cycle();
        final byte[] file = Files.readAllBytes(cycle);
        flip(file, header(file, idx.get(150)), 4); // Chronicle's length and flags of batch 150
        Files.write(cycle, file);

        final Read r = readAll();
        assertThat(r.got()).isEqualTo(allBut(150));
        assertWhole(r);
        assertThat(r.corrupt).isEqualTo(1);
    }

    @Test
    void shouldReportAndReadOnWhen64BytesSpanTwoBatchesAndTheHeaderBetween() throws Exception {
        final List<Long> idx = write();
        final Path cycle = cycle();
        final byte[] file = Files.readAllBytes(cycle);
        flip(file, header(file, idx.get(201)) - 32, 64);
        Files.write(cycle, file);

        final Read r = readAll();
        assertThat(r.got()).isEqualTo(allBut(200, 201));
        assertWhole(r);
        assertThat(r.corrupt).isEqualTo(2);
    }

    @Test
    void shouldReadOnPastAZeroedHeaderThatLooksLikeTheEnd() throws Exception {
        final List<Long> idx = write();
        final Path cycle = cycle();
        final byte[] file = Files.readAllBytes(cycle);
        final int h = header(file, idx.get(250));
        for (int i = 0; i < 4; i++) {
            file[h + i] = 0;
        }
        Files.write(cycle, file);

        final Read r = readAll();
        assertThat(r.got()).isEqualTo(allBut(250));
        assertWhole(r);
    }

    @Test
    void shouldFindABatchHiddenAsMetadata() throws Exception {
        final List<Long> idx = write();
        final Path cycle = cycle();
        final byte[] file = Files.readAllBytes(cycle);
        file[header(file, idx.get(50)) + 3] |= 0x40; // Chronicle's meta-data bit
        Files.write(cycle, file);

        final Read r = readAll();
        assertThat(r.got()).isEqualTo(allBut(50));
        assertWhole(r);
        assertThat(r.corrupt).isEqualTo(1);
    }

    @Test
    void shouldReadEveryBatchWhenOnlyTheIndexIsDamaged() throws Exception {
        final List<Long> idx = write();
        final Path cycle = cycle();
        final byte[] file = Files.readAllBytes(cycle);
        final int h = header(file, idx.get(120));
        final byte[] pos =
                ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(h).array();
        final int entry = indexOf(file, pos, 0);
        assertThat(entry).as("batch 120's position in the index").isPositive();
        flip(file, entry - 32, 64);
        Files.write(cycle, file);

        final Read r = readAll();
        assertThat(r.got()).isEqualTo(allBut());
        assertWhole(r);
    }

    @Test
    void replayAndInspectShouldSayEveryRangeAndExitNonZeroUnlessTolerated() throws Exception {
        final List<Long> idx = write();
        final Path cycle = cycle();
        final byte[] file = Files.readAllBytes(cycle);
        flip(file, header(file, idx.get(100)) + 4 + 20 + 300, 64);
        flip(file, header(file, idx.get(150)), 4);
        Files.write(cycle, file);
        final String name = cycle.getFileName().toString();

        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Main.run(
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                "replay",
                dir.toString(),
                "--no-progress");
        String said = err.toString(StandardCharsets.UTF_8);
        assertThat(rc).as(said).isEqualTo(Main.EXIT_DAMAGED);
        assertThat(said)
                .contains(
                        "flowscope replay: damaged, skipped: batch 100 of cycle " + name,
                        "checksum mismatch",
                        "flowscope replay: damaged, skipped: batch 150 of cycle " + name,
                        "replay: 298 batches, " + (298 * 41) + " entries",
                        "2 corrupt batches skipped in 2 damaged ranges: batch 100",
                        " | batch 150 of cycle",
                        "exit status 4 (--tolerate-corruption: 0)");

        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        err = new ByteArrayOutputStream();
        rc = Main.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                "inspect",
                dir.toString());
        said = err.toString(StandardCharsets.UTF_8);
        assertThat(rc).as(said).isEqualTo(Main.EXIT_DAMAGED);
        assertThat(out.toString(StandardCharsets.UTF_8).split("\n")).hasSize(298 * 41);
        assertThat(said)
                .contains(
                        "flowscope inspect: damaged, skipped: batch 100 of cycle " + name,
                        "flowscope inspect: damaged, skipped: batch 150 of cycle " + name,
                        "flowscope inspect: 298 batches read; " + "2 corrupt batches skipped in 2 damaged ranges");

        assertThat(Main.run(
                        new PrintStream(new ByteArrayOutputStream()),
                        new PrintStream(new ByteArrayOutputStream()),
                        "replay",
                        dir.toString(),
                        "--no-progress",
                        "--tolerate-corruption"))
                .isZero();
        assertThat(Main.run(
                        new PrintStream(new ByteArrayOutputStream()),
                        new PrintStream(new ByteArrayOutputStream()),
                        "inspect",
                        dir.toString(),
                        "--tolerate-corruption"))
                .isZero();
    }

    /**
     * A simulated run with a slow link, a slow GPU and a hang, journaled; 64 bytes flipped in ten of its batches
     * (payload and headers). The replay of the damaged journal reports ten ranges, accounts for every batch and reads
     * on to its end, and it finds no anomaly the undamaged journal's replay does not (the damaged batch made
     * 111 NIC stalls): a damaged batch produces nothing, neither by what it held (never handed on) nor by what it
     * lost (a completion lost with its batch read as a stalled NIC until the replay's engines started over after a
     * damaged range).
     */
    @Test
    void shouldNotInventAnomaliesFromDamagedBatchesOfASimulatedRun() throws Exception {
        final CollectorConfig config = CollectorConfig.load(
                null, java.util.Map.of(), java.util.Map.of("http.port", "0", "journal.dir", dir.toString()));
        SimulatedInput.journal(dir, config, SimulatedInput.FAULTS);
        final Replay.Result clean = Replay.run(dir, config, Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        assertThat(clean.corruptDocuments()).isZero();
        assertThat(clean.events()).isNotEmpty();

        final List<Path> cycles = JournalWriter.cycleFiles(dir);
        final Path cycle = cycles.get(cycles.size() - 1);
        final byte[] file = Files.readAllBytes(cycle);
        final java.util.Random random = new java.util.Random(16);
        final long documents = clean.documents();
        final List<Long> picked = new ArrayList<>();
        try (JournalReader r = new JournalReader(dir)) {
            long n = 0;
            while (r.read(new NoopListener(), new JournalReader.Meta() {}, 1) > 0) {
                if (n++ % (documents / 10) == documents / 20 && picked.size() < 10) {
                    picked.add(r.index());
                }
            }
        }
        for (int i = 0; i < picked.size(); i++) {
            final int h = header(file, picked.get(i));
            flip(file, i % 3 == 0 ? h : h + 4 + 20 + random.nextInt(200), 64);
        }
        Files.write(cycle, file);

        final List<String> said = new ArrayList<>();
        final java.util.function.Consumer<String> sayer = said::add;
        final Replay.Result damaged =
                Replay.run(dir, config, Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {}, sayer);
        assertThat(damaged.damagedRanges()).isEqualTo(10);
        assertThat(said).hasSize(10);
        assertThat(damaged.corruptDocuments()).as(String.join("\n", said)).isGreaterThanOrEqualTo(10L);
        assertThat(damaged.documents() + damaged.corruptDocuments()).isEqualTo(clean.documents());
        assertThat(damaged.lastEventNs()).isEqualTo(clean.lastEventNs());
        final java.util.Set<String> known = new java.util.HashSet<>();
        clean.events()
                .forEach(e -> known.add(e.anomaly().kind() + " " + e.anomaly().culprit()));
        for (final AnomalyEvent e : damaged.events()) {
            assertThat(known)
                    .as("an anomaly of the damaged replay")
                    .contains(e.anomaly().kind() + " " + e.anomaly().culprit());
        }
    }
}
