package io.flowscope.collector.replay;

import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.TraceReader;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.Pipeline;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

/**
 * Runs the service's engines over a journal or a JSON-lines trace ({@link EventLog}) as fast as they go (no
 * pacing): the same window configuration and anomaly stage as the live service, so the same input gives the same
 * anomalies. A trace that {@code inspect} wrote from a journal gives the anomalies of that journal.
 */
public final class Replay {
    /**
     * What a replay found.
     *
     * @param corruptDocuments damaged input skipped: journal batches or trace lines ({@code corruptionUnit})
     * @param failures         exceptions the engines threw on well-formed input: counted, the replay went on
     * @param engineSettings   the distinct engine settings entries the input holds, in order (one per run that
     *                         journaled them, when they differ)
     */
    public record Result(
            List<AnomalyEvent> events,
            long documents,
            long entries,
            long corruptDocuments,
            String lastCorruption,
            long firstEventNs,
            long lastEventNs,
            double seconds,
            String corruptionUnit,
            IngestFailures.Counts failures,
            long damagedRanges,
            List<String> damage,
            List<String> engineSettings) {
        /** Damaged ranges named in {@link #describe()} (all of them are said on stderr as they are found). */
        static final int RANGES_IN_SUMMARY = 10;

        /** One line for humans: what was read, how fast, what was skipped and what failed. */
        public String describe() {
            final long span = lastEventNs - firstEventNs;
            final StringBuilder b = new StringBuilder(String.format(
                    java.util.Locale.ROOT,
                    "replay: %d batches, %d entries in %.2f s (%.1f M entries/s; %.1fx real time over %.3f s of "
                            + "events); %d corrupt %s skipped",
                    documents,
                    entries,
                    seconds,
                    entries / Math.max(1e-9, seconds) / 1e6,
                    span / 1e9 / Math.max(1e-9, seconds),
                    span / 1e9,
                    corruptDocuments,
                    corruptionUnit));
            b.append(damageSummary(corruptDocuments, corruptionUnit, damagedRanges, damage));
            if (failures.total() > 0) {
                b.append("; ").append(failures.total()).append(" engine failures counted and skipped (");
                for (final IngestFailures.Stage s : IngestFailures.Stage.values()) {
                    if (failures.of(s) > 0) {
                        b.append(s.label()).append(' ').append(failures.of(s)).append(", ");
                    }
                }
                b.append("last: ").append(failures.last()).append(')');
            }
            return b.toString();
        }
    }

    private Replay() {}

    /**
     * What follows "N corrupt batches skipped" in a summary line: in how many damaged ranges, and the first
     * {@link Result#RANGES_IN_SUMMARY} of them (where and why); empty when nothing was skipped.
     */
    public static String damageSummary(
            final long corrupt, final String unit, final long ranges, final List<String> damage) {
        if (corrupt == 0 || damage.isEmpty()) {
            return "";
        }
        final StringBuilder b =
                new StringBuilder(" in ").append(ranges).append(ranges == 1 ? " damaged range: " : " damaged ranges: ");
        final int shown = (int) Math.min(damage.size(), Result.RANGES_IN_SUMMARY);
        b.append(String.join(" | ", damage.subList(0, shown)));
        if (ranges > shown) {
            b.append(" | and ").append(ranges - shown).append(" more (each said above)");
        }
        return b.toString();
    }

    /** Batches read at most, from the start, for the run's engine settings (they are in its first batch). */
    private static final int SETTINGS_SCAN_BATCHES = 64;

    /**
     * The engine settings entry of the first run of a journal or trace (its text), or null when it has none within
     * its first batches (written before the entry existed): what a replay builds its engines with.
     */
    public static String journaledSettings(final Path journal) {
        final String[] found = {null};
        try (EventLog reader = EventLog.open(journal)) {
            final JournalReader.Meta meta = new JournalReader.Meta() {
                @Override
                public void onEngineSettings(final String settings) {
                    if (found[0] == null) {
                        found[0] = settings;
                    }
                }
            };
            // the input calls are not wanted here: only the metadata
            final io.flowscope.api.input.TelemetryListener none = io.flowscope.api.input.TelemetryListener.IGNORE;
            for (int i = 0; i < SETTINGS_SCAN_BATCHES && found[0] == null && reader.read(none, meta, 1) > 0; i++) {
                // reading
            }
        }
        return found[0];
    }

    /**
     * Counts the excerpts of a journal by its cycles' indexes (for the progress bar: fast, and past damage that
     * stops a plain read); a trace's batches are not counted (0).
     */
    public static long countDocuments(final Path journal) {
        if (TraceReader.isTrace(journal)) {
            return 0;
        }
        long n = 0;
        try (SingleChronicleQueue q = SingleChronicleQueueBuilder.single(journal.toFile())
                        .readOnly(true)
                        .build();
                ExcerptTailer t = q.createTailer()) {
            final int first = q.firstCycle();
            final int last = q.lastCycle();
            if (first > last) {
                return 0;
            }
            for (final Long c : q.listCyclesBetween(first, last)) {
                try {
                    n += Math.max(0, t.excerptsInCycle(c.intValue()));
                } catch (final RuntimeException | AssertionError e) {
                    // a cycle whose index is damaged: not counted (the bar ends early)
                }
            }
        } catch (final RuntimeException e) {
            return n;
        }
        return n;
    }

    public static Result run(
            final Path journal,
            final CollectorConfig config,
            final long fromNs,
            final long toNs,
            final FlowSummarySink summaryTap,
            final CollectiveSink collectiveTap,
            final LongConsumer progress) {
        return run(journal, config, fromNs, toNs, summaryTap, collectiveTap, progress, AnomalyStages::create, d -> {});
    }

    /** As {@link #run(Path, CollectorConfig, long, long, FlowSummarySink, CollectiveSink, LongConsumer)} (a
     * {@link TraceExport} as {@code collectiveTap} is also told the input, the batches' wall times and the rings'
     * clock anchors, and reads the engines' GPU clock), telling
     * {@code damage} of every damaged range as it is skipped (one line each: where and why). */
    public static Result run(
            final Path journal,
            final CollectorConfig config,
            final long fromNs,
            final long toNs,
            final FlowSummarySink summaryTap,
            final CollectiveSink collectiveTap,
            final LongConsumer progress,
            final Consumer<String> damage) {
        return run(journal, config, fromNs, toNs, summaryTap, collectiveTap, progress, AnomalyStages::create, damage);
    }

    /** With another anomaly stage than the service's: tests inject a stage that fails. */
    public static Result run(
            final Path journal,
            final CollectorConfig config,
            final long fromNs,
            final long toNs,
            final FlowSummarySink summaryTap,
            final CollectiveSink collectiveTap,
            final LongConsumer progress,
            final Function<AnomalySink, AnomalyStage> stageFactory) {
        return run(journal, config, fromNs, toNs, summaryTap, collectiveTap, progress, stageFactory, d -> {});
    }

    private static Result run(
            final Path journal,
            final CollectorConfig config,
            final long fromNs,
            final long toNs,
            final FlowSummarySink summaryTap,
            final CollectiveSink collectiveTap,
            final LongConsumer progress,
            final Function<AnomalySink, AnomalyStage> stageFactory,
            final Consumer<String> damage) {
        final long start = System.nanoTime();
        // Culprits by host name, as the live run named them from its rings: from the journal's ring attachments.
        final org.agrona.collections.Long2ObjectHashMap<String> names =
                new org.agrona.collections.Long2ObjectHashMap<>();
        // an engine that throws on one input is counted by the pipeline and the replay goes on, as the live service
        // does: a replay is how such an input is found, so it must get past it
        final IngestFailures failures = new IngestFailures();
        final Segments in = new Segments(() -> {
            final Pipeline p = new Pipeline(Pipeline.windowConfig(config), stageFactory, e -> {}, failures);
            p.tap(summaryTap, collectiveTap);
            p.hostNames(names::get);
            return p;
        });
        // the Perfetto export sees the input too (steps, channels; after the engines, whose GPU clock it reads)
        final TraceExport export = collectiveTap instanceof TraceExport t ? t : null;
        if (export != null) {
            in.tee = export;
            export.engine(() -> in.pipeline.engine());
        }
        try (EventLog reader = EventLog.open(journal).timeRange(fromNs, toNs)) {
            reader.onDamage(d -> {
                damage.accept(d);
                in.startOver();
            });
            long docs = 0;
            int n;
            // One document is one batch of the live run: the anomaly stage is told the hosts' times after each,
            // as the live drain loop told it, so that the replay judges at the same instants (coarser batches
            // miss a hang that the live run named).
            final List<String> settings = new java.util.ArrayList<>();
            final JournalReader.Meta meta = new JournalReader.Meta() {
                @Override
                public void onEngineSettings(final String text) {
                    if (!settings.contains(text)) {
                        settings.add(text);
                    }
                }

                @Override
                public void onEnd() {
                    in.pipeline.finish();
                }

                @Override
                public void onBatch(final long wallNs) {
                    if (export != null) {
                        export.onBatch(wallNs);
                    }
                }

                @Override
                public void onRingClock(
                        final long hostId, final int pid, final long realtimeNs, final long monotonicNs) {
                    if (export != null) {
                        export.onRingClock(hostId, realtimeNs, monotonicNs);
                    }
                }

                @Override
                public void onRingAttached(final long hostId, final int pid, final String hostname, final String path) {
                    if (hostname != null && !hostname.isEmpty()) {
                        names.put(hostId, hostname);
                    }
                    if (export != null) {
                        export.onRingAttached(hostId, hostname);
                    }
                }
            };
            while ((n = reader.read(in, meta, 1)) > 0) {
                docs += n;
                in.pipeline.endBatch(0);
                progress.accept(docs);
            }
            in.pipeline.finish();
            return new Result(
                    in.history(),
                    reader.documents(),
                    reader.entries(),
                    reader.corruptDocuments(),
                    reader.lastCorruption(),
                    reader.firstEventNs(),
                    reader.lastEventNs(),
                    (System.nanoTime() - start) / 1e9,
                    reader.corruptionUnit(),
                    failures.counts(),
                    reader.damagedRanges(),
                    reader.damage(),
                    List.copyOf(settings));
        }
    }

    /**
     * The replay's engines, started over after each damaged range: what they held across it (work in flight whose
     * end was in the damaged batches, a host's clock) cannot be trusted, and kept it would make anomalies of the
     * damage (a completion lost with its batch reads as a NIC that stalled). The anomalies of each stretch are the
     * replay's, in order; what names culprits (the rings' host names and communicator ranks) carries over.
     */
    private static final class Segments implements io.flowscope.api.input.TelemetryListener {
        private static final io.flowscope.api.input.TelemetryListener NONE =
                io.flowscope.api.input.TelemetryListener.IGNORE;

        private final java.util.function.Supplier<Pipeline> fresh;
        private final List<AnomalyEvent> before = new java.util.ArrayList<>();
        /** The rings' communicator entries seen: each new stretch is told them again. */
        private final List<Object[]> comms = new java.util.ArrayList<>();

        Pipeline pipeline;
        /** Told every input after the engines (the Perfetto export), or the no-op listener. */
        io.flowscope.api.input.TelemetryListener tee = NONE;

        private boolean used;

        Segments(final java.util.function.Supplier<Pipeline> fresh) {
            this.fresh = fresh;
            this.pipeline = fresh.get();
        }

        /** After a damaged range: the stretch so far ends (its last period too) and fresh engines take over. */
        void startOver() {
            if (!used) {
                return;
            }
            pipeline.finish();
            before.addAll(pipeline.history());
            pipeline = fresh.get();
            used = false;
            for (final Object[] c : comms) {
                if (c.length == 5) {
                    pipeline.onRingGpuUuid((Long) c[0], (Integer) c[1], (Long) c[2], (Integer) c[3], (String) c[4]);
                    continue;
                }
                pipeline.onRingComm(
                        (Long) c[0],
                        (String) c[1],
                        (Integer) c[2],
                        (Long) c[3],
                        (Integer) c[4],
                        (Integer) c[5],
                        (Integer) c[6],
                        (String) c[7]);
            }
        }

        List<AnomalyEvent> history() {
            final List<AnomalyEvent> all = new java.util.ArrayList<>(before);
            all.addAll(pipeline.history());
            return List.copyOf(all);
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
            comms.add(new Object[] {hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId});
            pipeline.onRingComm(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId);
            tee.onRingComm(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId);
        }

        /** Kept in order with the communicator entries (5 values: a GPU UUID; 8: an entry). */
        @Override
        public void onRingGpuUuid(
                final long hostId, final int pid, final long commHash, final int rank, final String gpuUuid) {
            comms.add(new Object[] {hostId, pid, commHash, rank, gpuUuid});
            pipeline.onRingGpuUuid(hostId, pid, commHash, rank, gpuUuid);
            tee.onRingGpuUuid(hostId, pid, commHash, rank, gpuUuid);
        }

        @Override
        public void onHost(final long hostId) {
            used = true;
            pipeline.onHost(hostId);
            tee.onHost(hostId);
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
            used = true;
            pipeline.onProxyOpStart(opKey, commHash, rank, peer, channel, isSend, timeNs);
            tee.onProxyOpStart(opKey, commHash, rank, peer, channel, isSend, timeNs);
        }

        @Override
        public void onProxyOpStop(final long opKey, final long timeNs) {
            used = true;
            pipeline.onProxyOpStop(opKey, timeNs);
            tee.onProxyOpStop(opKey, timeNs);
        }

        @Override
        public void advanceTo(final long hostId, final long timeNs) {
            used = true;
            pipeline.advanceTo(hostId, timeNs);
            tee.advanceTo(hostId, timeNs);
        }

        @Override
        public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
            used = true;
            pipeline.onProxyStepStart(stepKey, opKey, step, timeNs);
            tee.onProxyStepStart(stepKey, opKey, step, timeNs);
        }

        @Override
        public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
            used = true;
            pipeline.onProxyStepState(stepKey, state, transSize, timeNs);
            tee.onProxyStepState(stepKey, state, transSize, timeNs);
        }

        @Override
        public void onProxyStepStop(final long stepKey, final long timeNs) {
            used = true;
            pipeline.onProxyStepStop(stepKey, timeNs);
            tee.onProxyStepStop(stepKey, timeNs);
        }

        @Override
        public void onQpStart(
                final long wrKey,
                final int device,
                final long qpNum,
                final int opcode,
                final long length,
                final long timeNs) {
            used = true;
            pipeline.onQpStart(wrKey, device, qpNum, opcode, length, timeNs);
            tee.onQpStart(wrKey, device, qpNum, opcode, length, timeNs);
        }

        @Override
        public void onQpStop(final long wrKey, final long timeNs) {
            used = true;
            pipeline.onQpStop(wrKey, timeNs);
            tee.onQpStop(wrKey, timeNs);
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
            used = true;
            pipeline.onCollStart(
                    collKey,
                    commHash,
                    rank,
                    nranks,
                    func,
                    algo,
                    proto,
                    count,
                    datatypeSize,
                    nChannels,
                    seqNumber,
                    timeNs);
            tee.onCollStart(
                    collKey,
                    commHash,
                    rank,
                    nranks,
                    func,
                    algo,
                    proto,
                    count,
                    datatypeSize,
                    nChannels,
                    seqNumber,
                    timeNs);
        }

        @Override
        public void onCollStop(final long collKey, final long timeNs) {
            used = true;
            pipeline.onCollStop(collKey, timeNs);
            tee.onCollStop(collKey, timeNs);
        }

        @Override
        public void onKernelChStart(
                final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
            used = true;
            pipeline.onKernelChStart(chKey, collKey, channel, pTimerNs, timeNs);
            tee.onKernelChStart(chKey, collKey, channel, pTimerNs, timeNs);
        }

        @Override
        public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
            used = true;
            pipeline.onKernelChStop(chKey, pTimerNs, timeNs);
            tee.onKernelChStop(chKey, pTimerNs, timeNs);
        }
    }

    /**
     * A progress bar on a terminal stream, redrawn at most every 100 ms; with {@code total} 0 (a trace, whose
     * batches are not counted ahead) a count of batches instead. {@link Progress#end} ends its line.
     */
    public static Progress progressBar(final PrintStream err, final long total) {
        return new Progress(err, total);
    }

    /** See {@link #progressBar}. */
    public static final class Progress implements LongConsumer {
        private final PrintStream err;
        private final long total;
        private long lastNs;
        private long done;
        private boolean open;

        private Progress(final PrintStream err, final long total) {
            this.err = err;
            this.total = total;
        }

        @Override
        public void accept(final long done) {
            this.done = done;
            final long now = System.nanoTime();
            if (open && now - lastNs < 100_000_000L && (total <= 0 || done < total)) {
                return;
            }
            lastNs = now;
            draw();
        }

        private void draw() {
            open = true;
            if (total <= 0) {
                err.print("\rreplay: " + done + " batches");
            } else {
                final int width = 40;
                final double f = Math.min(1.0, (double) done / total);
                final int filled = (int) Math.round(f * width);
                err.print("\rreplay [" + "#".repeat(filled) + " ".repeat(width - filled) + "] "
                        + String.format("%3.0f%% %d/%d batches", f * 100, done, total));
            }
            err.flush();
        }

        /** Says a line of its own (a damaged range) without tearing the bar: the bar is drawn again after it. */
        public void say(final String line) {
            if (open) {
                err.println();
            }
            err.println(line);
            err.flush();
            if (open) {
                draw();
            }
        }

        /** Draws the final figure and ends the line (once; nothing when nothing was drawn). */
        public void end() {
            if (open) {
                draw();
                err.println();
                err.flush();
                open = false;
            }
        }
    }
}
