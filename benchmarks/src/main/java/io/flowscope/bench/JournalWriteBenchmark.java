package io.flowscope.bench;

import io.flowscope.collector.journal.JournalFormat;
import io.flowscope.collector.journal.JournalWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.zip.CRC32C;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycles;

/**
 * The journal's write path per batch (issue #16, docs/benchmarks.md section 6): {@link JournalWriter#flush} (format
 * 2: index, CRC32C, pages backed ahead) against the format-1 write it replaced (the same bytes through
 * {@code ExcerptAppender.writeBytes}, no checksum), and the CRC32C alone, for a ring poll's batch (41 entries,
 * 1.2 KB) and a simulated millisecond of the demo (2,500 entries, 62 KB). Allocation per batch from the thread's
 * counter. Prints its table (Markdown). Journals go to a temporary directory on the working directory's disk
 * (argument: another directory), removed afterwards.
 * <pre>
 * benchmarks/run-main.sh JournalWriteBenchmark [dir]
 * </pre>
 */
public final class JournalWriteBenchmark {
    private static final int ROUNDS = 7;

    private final Path dir;

    private JournalWriteBenchmark(final Path dir) {
        this.dir = dir;
    }

    public static void main(final String[] args) throws IOException {
        final Path dir = Files.createTempDirectory(Path.of(args.length > 0 ? args[0] : "."), "journal-write-");
        try {
            new JournalWriteBenchmark(dir).measure();
        } finally {
            BenchFiles.removeTree(dir);
        }
    }

    private void measure() throws IOException {
        final StringBuilder out = new StringBuilder(String.format(
                Locale.ROOT,
                "| batch | format 2 flush (ns, median of %d) | format 1 writeBytes (ns) | CRC32C alone (ns) | "
                        + "CRC32C GB/s | bytes allocated per batch (format 2) |%n|---|---|---|---|---|---|%n",
                ROUNDS));
        for (final int entries : new int[] {20, 1250}) {
            out.append(row(entries));
        }
        System.out.print(out);
    }

    private String row(final int pairs) throws IOException {
        final int batches = pairs > 100 ? 4_000 : 100_000;
        final long[] v2 = new long[ROUNDS];
        final long[] v1 = new long[ROUNDS];
        final long[] crcOnly = new long[ROUNDS];
        long allocated = 0;
        long length = 0;
        final com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int round = 0; round < ROUNDS; round++) {
            final Path j2 = dir.resolve("v2-" + pairs + "-" + round);
            try (JournalWriter w = new JournalWriter(j2, RollCycles.FAST_DAILY, 0, 0)) {
                final long t0 = System.currentTimeMillis() * 1_000_000L;
                for (int b = 0; b < batches / 4; b++) {
                    batch(w, b, pairs, t0);
                }
                final long a0 = mx.getCurrentThreadAllocatedBytes();
                final long s = System.nanoTime();
                for (int b = 0; b < batches; b++) {
                    batch(w, b, pairs, t0);
                }
                v2[round] = (System.nanoTime() - s) / batches;
                allocated = mx.getCurrentThreadAllocatedBytes() - a0;
            }
            BenchFiles.removeTree(j2);
            // format 1: the same entries, written as the writer wrote them before (wallNs, entries; writeBytes)
            final Bytes<?> b1 = Bytes.allocateElasticDirect(1 << 16);
            try (ChronicleQueue q = ChronicleQueue.singleBuilder(dir.resolve("v1-" + pairs + "-" + round))
                            .rollCycle(RollCycles.FAST_DAILY)
                            .build();
                    ExcerptAppender a = q.createAppender()) {
                for (int b = 0; b < batches / 4; b++) {
                    v1(a, b1, b, pairs);
                }
                final long s = System.nanoTime();
                for (int b = 0; b < batches; b++) {
                    v1(a, b1, b, pairs);
                }
                v1[round] = (System.nanoTime() - s) / batches;
            }
            BenchFiles.removeTree(dir.resolve("v1-" + pairs + "-" + round));
            length = b1.writePosition() + 12;
            // the checksum alone, over a batch of this size in a direct buffer
            final ByteBuffer doc = ByteBuffer.allocateDirect((int) b1.writePosition() + 12);
            final CRC32C crc = new CRC32C();
            int sink = 0;
            final long s = System.nanoTime();
            for (int b = 0; b < batches; b++) {
                crc.reset();
                doc.clear();
                crc.update(doc);
                sink += (int) crc.getValue();
            }
            crcOnly[round] = (System.nanoTime() - s) / batches + (sink == 42 ? 1 : 0);
            b1.releaseLast();
        }
        final long crcNs = median(crcOnly);
        return String.format(
                Locale.ROOT,
                "| %d entries, %,d B | %,d | %,d | %,d | %.1f | %.3f |%n",
                2 * pairs + 1,
                length,
                median(v2),
                median(v1),
                crcNs,
                length / Math.max(1.0, crcNs),
                allocated / (double) batches);
    }

    private static void batch(final JournalWriter w, final long b, final int pairs, final long t0) {
        w.onHost(b);
        for (int i = 0; i < pairs; i++) {
            w.onProxyStepState(b * 10_000 + i, 9, 4096, b * 1000 + i);
            w.onQpStart(b * 10_000 + i, 1, 7, 2, 4096, b * 1000 + i);
        }
        w.flush(t0 + b * 1_000_000L);
    }

    private static void v1(final ExcerptAppender a, final Bytes<?> b1, final long b, final int pairs) {
        b1.clear();
        b1.writeLong(System.currentTimeMillis() * 1_000_000L);
        b1.writeByte(JournalFormat.HOST).writeLong(b);
        for (int i = 0; i < pairs; i++) {
            b1.writeByte(JournalFormat.PROXY_STEP_STATE)
                    .writeLong(b * 10_000 + i)
                    .writeInt(9)
                    .writeLong(4096)
                    .writeLong(b * 1000 + i);
            b1.writeByte(JournalFormat.QP_START)
                    .writeLong(b * 10_000 + i)
                    .writeInt(1)
                    .writeLong(7)
                    .writeInt(2)
                    .writeLong(4096)
                    .writeLong(b * 1000 + i);
        }
        a.writeBytes(b1);
    }

    private static long median(final long[] v) {
        final long[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
