package io.flowscope.collector.journal;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.NoopListener;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.replay.Replay;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, acceptance 1 (the journal): bounded by retiring its oldest cycles, never by stopping; the write of a
 * batch allocates nothing.
 */
class JournalBoundTest {
    @TempDir
    Path dir;

    private CollectorConfig config() {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("journal.dir", dir.resolve("journal").toString());
        return CollectorConfig.load(null, Map.of(), o);
    }

    /**
     * The simulator's slow-link cluster through the pipeline into a journal of one-second cycles bounded at 16 MiB,
     * for six seconds of wall time (~25 MB/s on the build VM, so the bound is passed many times): the journal never
     * holds more than its bound plus the cycle being written, retires whole old cycles as it goes, never stops
     * (nothing dropped), and what is left replays: no damage, its last event the last event written.
     */
    @Test
    void shouldStayWithinItsBoundPastSeveralRollsAndReplayWhatIsLeft() throws Exception {
        final Path journal = dir.resolve("journal");
        final long bound = 16L << 20;
        final CollectorConfig config = config();
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        long most = 0;
        long perSecond;
        try (JournalWriter w = new JournalWriter(journal, TestRollCycles.TEST_SECONDLY, bound, 0)) {
            p.journal(w);
            final SimulatorSource source = new SimulatorSource("default", 1e12, 0);
            w.source(source.describe());
            final long start = System.nanoTime();
            final long end = start + TimeUnit.SECONDS.toNanos(6);
            long nextLook = 0;
            while (System.nanoTime() - end < 0) {
                source.poll(p);
                p.endBatch(System.currentTimeMillis() * 1_000_000L);
                if (System.nanoTime() - nextLook >= 0) {
                    nextLook = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
                    most = Math.max(most, JournalWriter.sizeOnDisk(journal));
                }
            }
            if (p.finish()) {
                w.end();
            }
            p.endBatch(System.currentTimeMillis() * 1_000_000L);
            assertThat(w.failure()).isNull();
            assertThat(w.entriesDropped()).isZero();
            assertThat(w.retiredCycles()).as("cycles retired").isGreaterThanOrEqualTo(2);
            final long all = w.retiredBytes() + JournalWriter.sizeOnDisk(journal);
            assertThat(all).as("written in all").isGreaterThan(2 * bound);
            perSecond = all * 1_000_000_000L / (System.nanoTime() - start);
        }
        // the bound, give or take the cycle being written (a second of input: cycles are retired whole, the newest
        // never), a second of input between two checks, and a second's burst over the run's mean rate (CI: 391 MB
        // at most on disk against 16 MiB + 2 x 184 MB/s = 385 MB); unbounded, the six seconds would hold ~1.1 GB
        final long allowed = bound + 3 * perSecond;
        assertThat(most).as("most on disk (" + perSecond + " B/s written)").isLessThanOrEqualTo(allowed);
        assertThat(JournalWriter.sizeOnDisk(journal)).isLessThanOrEqualTo(allowed);

        final long[] last = {Long.MIN_VALUE};
        try (JournalReader r = new JournalReader(journal)) {
            while (r.read(new NoopListener(), new JournalReader.Meta() {}, 256) > 0) {
                last[0] = r.lastEventNs();
            }
            assertThat(r.corruptDocuments()).isZero();
            assertThat(r.lastEventNs()).as("the newest event").isEqualTo(p.lastEventNs());
        }
        final Replay.Result replay = Replay.run(journal, config, Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        assertThat(replay.corruptDocuments()).isZero();
        assertThat(replay.documents()).isPositive();
        assertThat(replay.entries()).isPositive();
        assertThat(replay.failures().total()).isZero();
        assertThat(replay.lastEventNs()).isEqualTo(p.lastEventNs());
    }

    /**
     * The write of a batch (checksum included) allocates nothing: 20,000 batches after a warm-up, in one daily
     * cycle and within one second of wall time (the once-a-second housekeeping, which lists the cycle files, is not
     * the write path), measured by the thread's allocation counter. The free-space check when another MiB of the file
     * is backed allocates a little; it is counted, and stays well under 1 byte a batch.
     */
    @Test
    void shouldWriteABatchWithoutAllocating() {
        final com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (JournalWriter w = new JournalWriter(dir.resolve("journal"), RollCycles.FAST_DAILY, 0, 0)) {
            final long t0 = System.currentTimeMillis() * 1_000_000L;
            for (int b = 0; b < 20_000; b++) {
                batch(w, b, t0 + b * 1_000_000L);
            }
            final long t1 = t0 + 20_000 * 1_000_000L;
            batch(w, 20_000, t1 - 1_000_000L); // housekeeping now, then not for a second of wall time
            // The fewest bytes of up to three rounds: on a loaded machine the JIT may still be compiling the write
            // path during the first round (interpreted or C1 code allocates what C2's escape analysis removes: CI saw
            // 23,200 bytes once). An allocation in the write path itself shows in every round.
            long allocated = Long.MAX_VALUE;
            int b = 20_001;
            for (int round = 0; round < 3 && allocated >= 20_000; round++) {
                final long before = mx.getCurrentThreadAllocatedBytes();
                for (final int end = b + 20_000; b < end; b++) {
                    batch(w, b, t1); // the wall time stays at t1
                }
                allocated = Math.min(allocated, mx.getCurrentThreadAllocatedBytes() - before);
            }
            assertThat(w.failure()).isNull();
            assertThat(w.batchesWritten()).isEqualTo(b);
            assertThat(allocated).as("bytes allocated by 20,000 batch writes").isLessThan(20_000);
        }
    }

    /** A batch of 41 entries, flushed at wall time {@code wallNs}. */
    private static void batch(final JournalWriter w, final long b, final long wallNs) {
        w.onHost(b);
        for (int i = 0; i < 20; i++) {
            w.onProxyStepState(b * 100 + i, 9, 4096, b * 1000 + i);
            w.onQpStart(b * 100 + i, 1, 7, 2, 4096, b * 1000 + i);
        }
        w.flush(wallNs);
    }
}
