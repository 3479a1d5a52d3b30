package io.flowscope.collector.fleet;

import io.flowscope.api.input.TelemetryListener;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What an agent derives from a journal, counted by replaying it through the engines one live batch at a time, as
 * {@link AgentPublisher} does: the reference the fleet tests and benchmarks check the topics against.
 *
 * @param events        engine input events
 * @param summaries     flow and collective summaries
 * @param anomalyEvents anomaly events (opened, updated, resolved)
 * @param sampled       raw events sampled for the events topic (one in {@code sampleEvery}; none at 0)
 * @param sent          the seqs the agent sends: every output with {@code fleet.publish = all}; with
 *                      {@code central} those {@link CentralSelection} keeps (the others' seqs are gaps)
 */
record JournalCounts(long events, long summaries, long anomalyEvents, long sampled, BitSet sent) {
    /** Every output the publisher numbers: summaries, anomaly events and sampled events. */
    long outputs() {
        return summaries + anomalyEvents + sampled;
    }

    static JournalCounts of(final CollectorConfig config, final long sampleEvery) {
        return of(config, sampleEvery, true);
    }

    /** {@code publishAll}: {@code fleet.publish = all} ({@link #sent} = every seq) or {@code central}. */
    static JournalCounts of(final CollectorConfig config, final long sampleEvery, final boolean publishAll) {
        final AtomicLong summaries = new AtomicLong();
        final AtomicLong anomalies = new AtomicLong();
        final AtomicLong sampled = new AtomicLong();
        // numbered as the publisher numbers its outputs, in the order the pipeline hands them out
        final AtomicLong seq = new AtomicLong();
        final BitSet sent = new BitSet();
        final CentralSelection selection = new CentralSelection(publishAll, 1);
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {
            anomalies.incrementAndGet();
            sent.set((int) seq.incrementAndGet());
        });
        p.tap(
                s -> {
                    summaries.incrementAndGet();
                    final long n = seq.incrementAndGet();
                    if (selection.flow(s)) {
                        sent.set((int) n);
                    }
                },
                c -> {
                    summaries.incrementAndGet();
                    final long n = seq.incrementAndGet();
                    if (selection.collective(c)) {
                        sent.set((int) n);
                    }
                });
        final TelemetryListener in = new AgentPublisher.EventSampler(
                p,
                sampleEvery,
                (h, call, args) -> {
                    sampled.incrementAndGet();
                    sent.set((int) seq.incrementAndGet());
                },
                selection);
        try (JournalReader r = new JournalReader(config.journalDir())) {
            final JournalReader.Meta meta = new JournalReader.Meta() {
                @Override
                public void onEnd() {
                    p.finish(); // as the publisher does: the live run's last period
                }
            };
            while (r.read(in, meta, 1) > 0) {
                p.endBatch(0);
            }
        }
        return new JournalCounts(p.events(), summaries.get(), anomalies.get(), sampled.get(), sent);
    }
}
