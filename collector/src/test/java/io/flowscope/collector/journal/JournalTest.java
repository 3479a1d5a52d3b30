package io.flowscope.collector.journal;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.Main;
import io.flowscope.collector.NoopListener;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The journal on real Chronicle files: what goes in comes out, and corrupt bytes are skipped, not fatal. */
class JournalTest {
    private static final long MARKER = 0x1122334455667788L;

    @TempDir
    Path dir;

    /** Records every call as a line. */
    static final class Recorder extends NoopListener implements JournalReader.Meta {
        final List<String> calls = new ArrayList<>();

        @Override
        public void onHost(final long hostId) {
            calls.add("host " + hostId);
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
            calls.add("opStart " + opKey + " " + commHash + " " + rank + " " + peer + " " + channel + " " + isSend + " "
                    + timeNs);
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
            calls.add("coll " + collKey + " " + commHash + " " + rank + " " + nranks + " " + func + " " + algo + " "
                    + proto + " " + count + " " + datatypeSize + " " + nChannels + " " + seqNumber + " " + timeNs);
        }

        @Override
        public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
            calls.add("kchStop " + chKey + " " + pTimerNs + " " + timeNs);
        }

        @Override
        public void onRingAttached(final long hostId, final int pid, final String hostname, final String path) {
            calls.add("attach " + hostId + " " + pid + " " + hostname + " " + path);
        }

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
            calls.add("comm " + hostId + " " + hostname + " " + pid + " " + commHash + " " + rank + " " + nranks + " "
                    + cudaDevice + " '" + pciBusId + "'");
        }

        @Override
        public void onRingGpuUuid(
                final long hostId, final int pid, final long commHash, final int rank, final String gpuUuid) {
            calls.add("uuid " + hostId + " " + pid + " " + commHash + " " + rank + " " + gpuUuid);
        }

        @Override
        public void onAnomaly(final long id, final boolean opened, final String summary) {
            calls.add("anomaly " + id + " " + opened + " " + summary);
        }

        @Override
        public void onEnd() {
            calls.add("end");
        }
    }

    private void writeBatches(final int batches) {
        try (JournalWriter w = new JournalWriter(dir, RollCycles.FAST_HOURLY, 0, 0)) {
            for (int b = 0; b < batches; b++) {
                w.ringAttached(7, 42, "node-\u00e9", "/dev/shm/flowscope/r.ring");
                w.onHost(b == 1 ? MARKER : 7);
                w.onProxyOpStart(-5, 0xABCDEFL, 3, 4, 1, true, 1000 + b);
                w.onProxyStepState(9, 20, 65536, 1100 + b);
                w.onQpStart(11, 1, 0x77, 2, 4096, 1200 + b);
                w.onCollStart(13, 0xABCDEFL, 3, 8, 0, 1, 2, 1024, 4, 4, 99, 1300 + b);
                w.onKernelChStop(15, 123456789L, 1400 + b);
                w.anomaly(-1L, true, "rank 3 \u2192 4 slow");
                if (b == batches - 1) {
                    w.end();
                }
                w.flush(System.currentTimeMillis() * 1_000_000L);
            }
        }
    }

    private Recorder readAll(final JournalReader r) {
        final Recorder rec = new Recorder();
        while (r.read(rec, rec, 10) > 0) {
            // all
        }
        return rec;
    }

    @Test
    void shouldGiveBackEveryEntryWrittenWithItsFieldsAndOrder() {
        writeBatches(3);
        try (JournalReader r = new JournalReader(dir)) {
            final Recorder rec = readAll(r);
            assertThat(r.documents()).isEqualTo(3);
            assertThat(r.corruptDocuments()).isZero();
            assertThat(rec.calls).hasSize(25);
            assertThat(rec.calls.get(24)).isEqualTo("end");
            assertThat(rec.calls.subList(0, 8))
                    .containsExactly(
                            "attach 7 42 node-\u00e9 /dev/shm/flowscope/r.ring",
                            "host 7",
                            "opStart -5 11259375 3 4 1 true 1000",
                            "state 9 20 65536 1100",
                            "qp 11 1 119 2 4096 1200",
                            "coll 13 11259375 3 8 0 1 2 1024 4 4 99 1300",
                            "kchStop 15 123456789 1400",
                            "anomaly -1 true rank 3 \u2192 4 slow");
        }
    }

    /**
     * The rings' communicator ranks (process, GPU) come back from the journal and from its trace
     * ({@code inspect}), whatever the time range: a replay of either names culprits as the live run did.
     */
    @Test
    void shouldGiveBackTheRingsCommunicatorRanksFromTheJournalAndItsTraceWhateverTheTimeRange() throws Exception {
        try (JournalWriter w = new JournalWriter(dir, RollCycles.FAST_HOURLY, 0, 0)) {
            w.ringAttached(7, 48213, "gpu-node-17", "/dev/shm/flowscope/flowscope-48213-0.ring");
            w.onRingComm(7, "gpu-node-17", 48213, 0xABCDEFL, 1, 2, 1, "0000:19:00.0");
            w.onRingGpuUuid(7, 48213, 0xABCDEFL, 1, "GPU-1a2b3c4d-0000-4000-8000-00000000beef");
            w.onRingComm(7, "gpu-node-17", 48213, -2L, 0, 1, -1, "");
            w.onHost(7);
            w.onProxyOpStart(-5, 0xABCDEFL, 1, 0, 0, true, 5000);
            w.flush(System.currentTimeMillis() * 1_000_000L);
        }
        final List<String> want = List.of(
                "comm 7 gpu-node-17 48213 11259375 1 2 1 '0000:19:00.0'",
                "comm 7 gpu-node-17 48213 -2 0 1 -1 ''",
                "uuid 7 48213 11259375 1 GPU-1a2b3c4d-0000-4000-8000-00000000beef"); // type 28: last in its batch
        try (JournalReader r = new JournalReader(dir).timeRange(1, 2)) {
            final Recorder rec = readAll(r);
            assertThat(r.corruptDocuments()).isZero();
            assertThat(rec.calls)
                    .filteredOn(c -> c.startsWith("comm ") || c.startsWith("uuid "))
                    .containsExactlyElementsOf(want);
            assertThat(rec.calls).filteredOn(c -> c.startsWith("opStart")).isEmpty();
        }
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(Main.run(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(new ByteArrayOutputStream()),
                        "inspect",
                        dir.toString()))
                .isZero();
        final String trace = out.toString(StandardCharsets.UTF_8);
        assertThat(trace)
                .contains(
                        "\"type\":\"ringComm\"",
                        "\"hostname\":\"gpu-node-17\"",
                        "\"pid\":48213",
                        "\"commHash\":\"0xabcdef\"",
                        "\"rank\":1",
                        "\"nranks\":2",
                        "\"cudaDevice\":1",
                        "\"pciBusId\":\"0000:19:00.0\"",
                        "\"type\":\"ringGpuUuid\"",
                        "\"gpuUuid\":\"GPU-1a2b3c4d-0000-4000-8000-00000000beef\"");
        final Path file = dir.resolveSibling(dir.getFileName() + "-trace.jsonl");
        Files.writeString(file, trace);
        try (io.flowscope.collector.journal.EventLog log =
                io.flowscope.collector.journal.EventLog.open(file).timeRange(1, 2)) {
            final Recorder rec = new Recorder();
            while (log.read(rec, rec, 10) > 0) {
                // all
            }
            assertThat(log.corruptDocuments()).isZero();
            assertThat(rec.calls)
                    .filteredOn(c -> c.startsWith("comm ") || c.startsWith("uuid "))
                    .containsExactlyElementsOf(want);
        }
    }

    @Test
    void shouldFilterTelemetryByEventTimeRange() {
        writeBatches(3);
        try (JournalReader r = new JournalReader(dir).timeRange(1001, 1001)) {
            final Recorder rec = readAll(r);
            assertThat(rec.calls)
                    .filteredOn(c -> c.startsWith("opStart"))
                    .containsExactly("opStart -5 11259375 3 4 1 true 1001");
            assertThat(rec.calls).filteredOn(c -> c.startsWith("state")).isEmpty();
        }
    }

    @Test
    void shouldSkipACorruptBatchWholeAndReadTheOthers() throws Exception {
        writeBatches(3);
        final Path cycle = JournalWriter.cycleFiles(dir).get(0);
        final byte[] bytes = Files.readAllBytes(cycle);
        final byte[] marker = ByteBuffer.allocate(8)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(MARKER)
                .array();
        final int at = indexOf(bytes, marker);
        assertThat(at).isPositive();
        bytes[at - 1] = 0x7F; // the HOST entry's type byte of batch 2 becomes an unknown type
        Files.write(cycle, bytes);

        try (JournalReader r = new JournalReader(dir)) {
            final Recorder rec = readAll(r);
            assertThat(r.documents()).isEqualTo(2);
            assertThat(r.corruptDocuments()).isEqualTo(1);
            assertThat(r.lastCorruption()).contains("batch 1 of cycle " + cycle.getFileName(), "checksum mismatch");
            // batch 1 and 3 (with the end marker) whole, nothing of batch 2 (its attach entry came before the damage)
            assertThat(rec.calls).hasSize(8 + 9);
        }

        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                "replay",
                dir.toString(),
                "--no-progress");
        assertThat(rc).isEqualTo(Main.EXIT_DAMAGED);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(
                        "2 batches",
                        "1 corrupt batches skipped in 1 damaged " + "range: batch 1 of cycle " + cycle.getFileName(),
                        "checksum mismatch",
                        "--tolerate-corruption");
        assertThat(Main.run(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        "replay",
                        dir.toString(),
                        "--no-progress",
                        "--tolerate-corruption"))
                .isZero();
    }

    /**
     * A journal written before checksums (format 1: no format file, documents of wallNs and entries) is read as it
     * was, and a batch of it whose structure is damaged is skipped whole.
     */
    @Test
    void shouldReadAJournalWrittenBeforeChecksumsAndSkipABatchWhoseStructureIsDamaged() throws Exception {
        try (net.openhft.chronicle.queue.ChronicleQueue q = net.openhft.chronicle.queue.ChronicleQueue.singleBuilder(
                                dir)
                        .rollCycle(RollCycles.FAST_HOURLY)
                        .build();
                net.openhft.chronicle.queue.ExcerptAppender a = q.createAppender()) {
            final net.openhft.chronicle.bytes.Bytes<?> b = net.openhft.chronicle.bytes.Bytes.allocateElasticDirect();
            for (int i = 0; i < 3; i++) {
                b.clear();
                b.writeLong(System.currentTimeMillis() * 1_000_000L);
                b.writeByte(io.flowscope.collector.journal.JournalFormat.HOST).writeLong(i == 1 ? MARKER : 7);
                b.writeByte(io.flowscope.collector.journal.JournalFormat.PROXY_OP_START)
                        .writeLong(-5)
                        .writeLong(0xABCDEFL)
                        .writeInt(3)
                        .writeInt(4)
                        .writeInt(1)
                        .writeByte((byte) 1)
                        .writeLong(1000 + i);
                a.writeBytes(b);
            }
            b.releaseLast();
        }
        assertThat(dir.resolve(io.flowscope.collector.journal.JournalFormat.FORMAT_FILE))
                .doesNotExist();
        try (JournalReader r = new JournalReader(dir)) {
            final Recorder rec = readAll(r);
            assertThat(r.documents()).isEqualTo(3);
            assertThat(r.corruptDocuments()).isZero();
            assertThat(rec.calls)
                    .containsExactly(
                            "host 7",
                            "opStart -5 11259375 3 4 1 true 1000",
                            "host " + MARKER,
                            "opStart -5 11259375 3 4 1 true 1001",
                            "host 7",
                            "opStart -5 11259375 3 4 1 true 1002");
        }
        final Path cycle = JournalWriter.cycleFiles(dir).get(0);
        final byte[] bytes = Files.readAllBytes(cycle);
        final int at = indexOf(
                bytes,
                ByteBuffer.allocate(8)
                        .order(ByteOrder.LITTLE_ENDIAN)
                        .putLong(MARKER)
                        .array());
        bytes[at + 8] = 0x7F; // batch 2's second entry becomes an unknown type: no checksum, but no valid structure
        Files.write(cycle, bytes);
        try (JournalReader r = new JournalReader(dir)) {
            final Recorder rec = readAll(r);
            assertThat(r.documents()).isEqualTo(2);
            assertThat(r.corruptDocuments()).isEqualTo(1);
            assertThat(r.lastCorruption()).contains("unknown entry type 127");
            assertThat(rec.calls).doesNotContain("host " + MARKER).hasSize(4);
        }

        // written on by this version: its new batches carry checksums from the index the format file names
        try (JournalWriter w = new JournalWriter(dir, RollCycles.FAST_HOURLY, 0, 0)) {
            w.onHost(9);
            w.flush(System.currentTimeMillis() * 1_000_000L);
        }
        assertThat(io.flowscope.collector.journal.JournalFormat.checksummedFrom(dir))
                .isPositive()
                .isNotEqualTo(io.flowscope.collector.journal.JournalFormat.NEVER);
        try (JournalReader r = new JournalReader(dir)) {
            final Recorder rec = readAll(r);
            assertThat(r.documents()).isEqualTo(3);
            assertThat(rec.calls).endsWith("host 9");
        }
    }

    @Test
    void shouldDeleteCycleFilesOlderThanTheRetentionButNeverTheCurrentOne() throws Exception {
        try (JournalWriter w = new JournalWriter(dir, RollCycles.FAST_HOURLY, 0, 3_600_000L)) {
            w.onHost(1);
            final long now = System.currentTimeMillis() * 1_000_000L;
            w.flush(now);
            final Path current = JournalWriter.cycleFiles(dir).get(0);
            final Path old = dir.resolve("20000101-00.cq4");
            Files.write(old, new byte[4096]);
            Files.setLastModifiedTime(old, java.nio.file.attribute.FileTime.fromMillis(946_684_800_000L));
            Files.setLastModifiedTime(current, java.nio.file.attribute.FileTime.fromMillis(946_684_800_000L));
            w.onHost(2);
            w.flush(now + 2_000_000_000L); // housekeeping runs once a second of wall time
            assertThat(old).doesNotExist();
            assertThat(current).exists();
        }
    }

    @Test
    void shouldRefuseADirectoryThatIsNotAJournalClearly() {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int rc = Main.run(
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true), "replay", dir.toString());
        assertThat(rc).isEqualTo(Main.EXIT_INPUT);
        assertThat(err.toString()).contains("not a journal (no .cq4 cycle files)");
    }

    private static int indexOf(final byte[] hay, final byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
