package io.flowscope.collector;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongConsumer;

import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.TraceReader;
import io.flowscope.window.CollectiveSink;
import io.flowscope.window.FlowSummarySink;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Runs the service's engines over a journal or a JSON-lines trace ({@link EventLog}) as fast as they go (no pacing): the same window configuration and
 * anomaly stage as the live service, so the same input gives the same anomalies.
 */
public final class Replay
{
    /** What a replay found. */
    public record Result(List<AnomalyEvent> events, long documents, long entries, long corruptDocuments,
        String lastCorruption, long firstEventNs, long lastEventNs, double seconds)
    {
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
        final long start = System.nanoTime();
        final Pipeline pipeline = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> { });
        pipeline.tap(summaryTap, collectiveTap);
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
                (System.nanoTime() - start) / 1e9);
        }
    }

    /** A progress bar on a terminal stream, redrawn at most every 100 ms. */
    public static LongConsumer progressBar(final PrintStream err, final long total)
    {
        final long[] last = {0};
        return done ->
        {
            final long now = System.nanoTime();
            if (now - last[0] < 100_000_000L && done < total)
            {
                return;
            }
            last[0] = now;
            final int width = 40;
            final double f = total <= 0 ? 1.0 : Math.min(1.0, (double)done / total);
            final int filled = (int)Math.round(f * width);
            err.print("\rreplay [" + "#".repeat(filled) + " ".repeat(width - filled) + "] " +
                String.format("%3.0f%% %d/%d batches", f * 100, done, total));
            if (done >= total)
            {
                err.println();
            }
            err.flush();
        };
    }

}
