package io.flowscope.collector;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongConsumer;

import io.flowscope.anomaly.AnomalySink;
import io.flowscope.anomaly.AnomalyStage;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.TraceReader;
import io.flowscope.window.CollectiveSink;
import io.flowscope.window.FlowSummarySink;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Runs the service's engines over a journal or a JSON-lines trace ({@link EventLog}) as fast as they go (no
 * pacing): the same window configuration and anomaly stage as the live service, so the same input gives the same
 * anomalies. A trace that {@code inspect} wrote from a journal gives the anomalies of that journal.
 */
public final class Replay
{
    /**
     * What a replay found.
     *
     * @param corruptDocuments damaged input skipped: journal batches or trace lines ({@code corruptionUnit})
     * @param failures         exceptions the engines threw on well-formed input: counted, the replay went on
     */
    public record Result(List<AnomalyEvent> events, long documents, long entries, long corruptDocuments,
        String lastCorruption, long firstEventNs, long lastEventNs, double seconds, String corruptionUnit,
        IngestFailures.Counts failures)
    {
        /** One line for humans: what was read, how fast, what was skipped and what failed. */
        public String describe()
        {
            final long span = lastEventNs - firstEventNs;
            final StringBuilder b = new StringBuilder(String.format(java.util.Locale.ROOT,
                "replay: %d batches, %d entries in %.2f s (%.1f M entries/s; %.1fx real time over %.3f s of " +
                "events); %d corrupt %s skipped", documents, entries, seconds, entries / Math.max(1e-9, seconds) / 1e6,
                span / 1e9 / Math.max(1e-9, seconds), span / 1e9, corruptDocuments, corruptionUnit));
            if (lastCorruption != null)
            {
                b.append(" (last: ").append(lastCorruption).append(')');
            }
            if (failures.total() > 0)
            {
                b.append("; ").append(failures.total()).append(" engine failures counted and skipped (");
                for (final IngestFailures.Stage s : IngestFailures.Stage.values())
                {
                    if (failures.of(s) > 0)
                    {
                        b.append(s.label()).append(' ').append(failures.of(s)).append(", ");
                    }
                }
                b.append("last: ").append(failures.last()).append(')');
            }
            return b.toString();
        }
    }

    private Replay()
    {
    }

    /** Counts the excerpts of a journal (for the progress bar); a trace's batches are not counted (0). */
    public static long countDocuments(final Path journal)
    {
        if (TraceReader.isTrace(journal))
        {
            return 0;
        }
        long n = 0;
        try (ChronicleQueue q = ChronicleQueue.singleBuilder(journal).readOnly(true).build();
            ExcerptTailer t = q.createTailer())
        {
            while (true)
            {
                try (DocumentContext dc = t.readingDocument())
                {
                    if (!dc.isPresent())
                    {
                        break;
                    }
                    n++;
                }
            }
        }
        catch (final RuntimeException e)
        {
            return n;
        }
        return n;
    }

    public static Result run(final Path journal, final CollectorConfig config, final long fromNs, final long toNs,
        final FlowSummarySink summaryTap, final CollectiveSink collectiveTap, final LongConsumer progress)
    {
        return run(journal, config, fromNs, toNs, summaryTap, collectiveTap, progress, AnomalyStages::create);
    }

    /** With another anomaly stage than the service's: tests inject a stage that fails. */
    static Result run(final Path journal, final CollectorConfig config, final long fromNs, final long toNs,
        final FlowSummarySink summaryTap, final CollectiveSink collectiveTap, final LongConsumer progress,
        final Function<AnomalySink, AnomalyStage> stageFactory)
    {
        final long start = System.nanoTime();
        // an engine that throws on one input is counted by the pipeline and the replay goes on, as the live service
        // does: a replay is how such an input is found, so it must get past it
        final Pipeline pipeline = new Pipeline(Pipeline.windowConfig(config), stageFactory, e -> { });
        pipeline.tap(summaryTap, collectiveTap);
        // Culprits by host name, as the live run named them from its rings: from the journal's ring attachments.
        final org.agrona.collections.Long2ObjectHashMap<String> names = new org.agrona.collections.Long2ObjectHashMap<>();
        pipeline.hostNames(names::get);
        try (EventLog reader = EventLog.open(journal).timeRange(fromNs, toNs))
        {
            long docs = 0;
            int n;
            // One document is one batch of the live run: the anomaly stage is told the hosts' times after each,
            // as the live drain loop told it, so that the replay judges at the same instants (coarser batches
            // miss a hang that the live run named).
            final JournalReader.Meta meta = new JournalReader.Meta()
            {
                @Override
                public void onEnd()
                {
                    pipeline.finish();
                }

                @Override
                public void onRingAttached(final long hostId, final int pid, final String hostname, final String path)
                {
                    if (hostname != null && !hostname.isEmpty())
                    {
                        names.put(hostId, hostname);
                    }
                }
            };
            while ((n = reader.read(pipeline, meta, 1)) > 0)
            {
                docs += n;
                pipeline.endBatch(0);
                progress.accept(docs);
            }
            pipeline.finish();
            return new Result(List.copyOf(pipeline.history()), reader.documents(), reader.entries(),
                reader.corruptDocuments(), reader.lastCorruption(), reader.firstEventNs(), reader.lastEventNs(),
                (System.nanoTime() - start) / 1e9, reader.corruptionUnit(), pipeline.failures().counts());
        }
    }

    /**
     * A progress bar on a terminal stream, redrawn at most every 100 ms; with {@code total} 0 (a trace, whose
     * batches are not counted ahead) a count of batches instead. {@link Progress#end} ends its line.
     */
    public static Progress progressBar(final PrintStream err, final long total)
    {
        return new Progress(err, total);
    }

    /** See {@link #progressBar}. */
    public static final class Progress implements LongConsumer
    {
        private final PrintStream err;
        private final long total;
        private long lastNs;
        private long done;
        private boolean open;

        private Progress(final PrintStream err, final long total)
        {
            this.err = err;
            this.total = total;
        }

        @Override
        public void accept(final long done)
        {
            this.done = done;
            final long now = System.nanoTime();
            if (open && now - lastNs < 100_000_000L && (total <= 0 || done < total))
            {
                return;
            }
            lastNs = now;
            draw();
        }

        private void draw()
        {
            open = true;
            if (total <= 0)
            {
                err.print("\rreplay: " + done + " batches");
            }
            else
            {
                final int width = 40;
                final double f = Math.min(1.0, (double)done / total);
                final int filled = (int)Math.round(f * width);
                err.print("\rreplay [" + "#".repeat(filled) + " ".repeat(width - filled) + "] " +
                    String.format("%3.0f%% %d/%d batches", f * 100, done, total));
            }
            err.flush();
        }

        /** Draws the final figure and ends the line (once; nothing when nothing was drawn). */
        public void end()
        {
            if (open)
            {
                draw();
                err.println();
                err.flush();
                open = false;
            }
        }
    }

}
