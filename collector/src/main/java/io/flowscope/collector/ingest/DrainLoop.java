package io.flowscope.collector.ingest;

import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.EngineSettings;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.Detector;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.pipeline.ProducerDrops;
import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.collector.pipeline.TrafficCounters;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's dedicated drain thread (not a Vert.x event loop): opens the journal, catches up on what an earlier
 * run journaled (the engines' state is rebuilt; anomalies it had announced are not announced again), then loops:
 * poll the source into the {@link Pipeline}, end the batch (journal write, anomaly stage clock), publish a
 * {@link Snapshot} every {@code publish.intervalMs}. Everything the engines own stays on this thread; the HTTP side
 * reads the latest snapshot and receives anomaly events through {@code anomalyListener} (which must hand them over,
 * e.g. {@code Context.runOnContext}).
 * <p>
 * No input stops the loop: an exception in a batch is caught where it was thrown (the {@link Pipeline} isolates the
 * window engine, the anomaly stage and the outputs from each other; the source's poll and the loop's own work are
 * caught here), counted by stage in {@link IngestFailures} ({@code flowscope_ingest_failures_total}, {@code
 * failures} in {@code /api/health}), logged rate-limited, and the next batch is drained. What a failing poll handed
 * over before it threw is still journaled. Only an {@link Error} (out of memory) ends the loop: DOWN in health.
 */
public final class DrainLoop implements Detector {
    private static final Logger LOG = LoggerFactory.getLogger(DrainLoop.class);

    private final CollectorConfig config;
    private final Source source;
    private final Function<AnomalySink, AnomalyStage> stageFactory;
    private final Consumer<AnomalyEvent> anomalyListener;
    private final AtomicReference<Snapshot> snapshot = new AtomicReference<>(Snapshot.empty());
    private final CountDownLatch ready = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    private volatile boolean isReady;
    private volatile String journalFailure;
    private volatile long lastIterationMs = System.currentTimeMillis();
    private volatile Throwable crashed;
    private volatile long recoveredEntries;
    private Thread thread;
    private ServiceSinks sinks;
    /** /metrics' per-link, per-QP and collective counters, on this thread; a view of them in each Stats. */
    private final TrafficCounters traffic = new TrafficCounters();

    public DrainLoop(
            final CollectorConfig config,
            final Source source,
            final Function<AnomalySink, AnomalyStage> stageFactory,
            final Consumer<AnomalyEvent> anomalyListener) {
        this.config = config;
        this.source = source;
        this.stageFactory = stageFactory;
        this.anomalyListener = anomalyListener;
    }

    /** Starts the thread; the summaries made after the journal catch-up go to {@code sinks} too. */
    @Override
    public void start(final ServiceSinks sinks) {
        this.sinks = sinks;
        thread = new Thread(this::run, "flowscope-drain");
        thread.setDaemon(true);
        thread.start();
    }

    /** Waits until the journal is caught up and draining started (or the loop died). */
    @Override
    public boolean awaitReady(final long timeout, final TimeUnit unit) throws InterruptedException {
        return ready.await(timeout, unit) && isReady;
    }

    @Override
    public Snapshot snapshot() {
        return snapshot.get();
    }

    public boolean isReady() {
        return isReady;
    }

    /** Null while alive; the error that ended the loop otherwise. */
    public Throwable crashed() {
        return crashed;
    }

    public long lastIterationMs() {
        return lastIterationMs;
    }

    @Override
    public String describe() {
        return source.describe();
    }

    @Override
    public Throwable failure() {
        return crashed;
    }

    /** A host id's name where the source knows it (a ring's hostname, a simulated node's name), else null. */
    @Override
    public String hostName(final long hostId) {
        return source.hostName(hostId);
    }

    public long recoveredEntries() {
        return recoveredEntries;
    }

    @Override
    public boolean finished() {
        return stopped.getCount() == 0;
    }

    public void stop() throws InterruptedException {
        running = false;
        if (thread != null) {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    /** Stops the loop, which closes the source; a loop never started closes its source here. */
    @Override
    public void close() throws InterruptedException {
        final boolean started = thread != null;
        stop();
        if (!started) {
            source.close();
        }
    }

    /**
     * What {@code /api/health} says of the node (without the sinks): status UP, DEGRADED (journal failure, input
     * that made a stage throw lately, a producer dropping records, a source behind its clock) or DOWN (the loop
     * died), the reasons, the journal, failures, producers and the source's own figures.
     */
    @Override
    public Map<String, Object> health() {
        final Map<String, Object> h = new LinkedHashMap<>();
        final Snapshot s = snapshot();
        final Throwable died = crashed;
        final String jf = s.stats().journalFailure();
        final IngestFailures.Counts failures = s.stats().failures();
        // input that made a stage throw lately: detection may have missed what that input carried
        final boolean recentFailures = failures.recent(System.currentTimeMillis());
        // a ring that fills up is never silent: its producer drops records the engines will never see
        final String dropping = ProducerDrops.reason(s.stats().producers(), System.currentTimeMillis());
        final String status =
                died != null ? "DOWN" : jf != null || recentFailures || dropping != null ? "DEGRADED" : "UP";
        h.put("status", status);
        // Why it is not UP, one line each (the console prints them when the status changes).
        final List<String> reasons = new ArrayList<>();
        if (died != null) {
            reasons.add("the drain loop stopped: " + died);
        }
        if (jf != null) {
            reasons.add("journal: " + jf);
        }
        if (recentFailures) {
            reasons.add("input that made a stage throw lately (see failures)");
        }
        if (dropping != null) {
            reasons.add(dropping);
        }
        h.put("reasons", reasons);
        h.put("ready", isReady());
        h.put("source", s.stats().source());
        h.put("drainLoopLagMs", System.currentTimeMillis() - lastIterationMs());
        h.put("eventsTotal", s.stats().eventsTotal());
        h.put("ringsAttached", s.stats().ringsAttached());
        final Map<String, Object> j = new LinkedHashMap<>();
        j.put("enabled", config.journalEnabled());
        j.put("dir", config.journalDir().toString());
        j.put("bytes", s.stats().journalBytes());
        j.put("maxBytes", config.journalMaxBytes());
        j.put("failure", jf);
        j.put("recoveredEntries", recoveredEntries());
        h.put("journal", j);
        h.put("failures", failures.toHealth(System.currentTimeMillis()));
        h.put("producers", ProducerDrops.health(s.stats().producers(), System.currentTimeMillis()));
        if (died != null) {
            h.put("error", died.toString());
        }
        final String late = source.behind();
        if (late != null) {
            if ("UP".equals(h.get("status"))) {
                h.put("status", "DEGRADED");
            }
            reasons.add(late);
        }
        final Map<String, Object> own = source.health();
        if (own != null) {
            h.put(source instanceof SimulatorSource ? "simulator" : "source", own);
        }
        return h;
    }

    private void run() {
        JournalWriter journal = null;
        try {
            final Pipeline pipeline = new Pipeline(Pipeline.windowConfig(config), stageFactory, anomalyListener);
            // Culprits named by their rings' hostnames, which the journal keeps (ring attachments): a replay names
            // them the same. A simulated cluster's node names are not journaled, so it names none.
            if (source instanceof RingSource) {
                pipeline.hostNames(source::hostName);
            }
            if (config.journalEnabled()) {
                if (!JournalWriter.cycleFiles(config.journalDir()).isEmpty()) {
                    catchUp(pipeline);
                }
                try {
                    journal = new JournalWriter(
                            config.journalDir(),
                            config.journalRollCycle(),
                            config.journalMaxBytes(),
                            TimeUnit.HOURS.toMillis(config.journalRetentionHours()));
                    journal.engineSettings(EngineSettings.of(config), System.currentTimeMillis() * 1_000_000L);
                    pipeline.journal(journal);
                    if (source instanceof RingSource rings) {
                        rings.journal(journal);
                    }
                    if (source instanceof SimulatorSource sim) {
                        journal.source(sim.describe());
                    }
                } catch (final RuntimeException e) {
                    journalFailure = "journal could not be opened in " + config.journalDir() + ": " + e.getMessage();
                    LOG.error("{}; serving live data without a journal", journalFailure);
                }
            }
            // /metrics' traffic counters count the live run (after the catch-up), as the sinks do
            if (sinks != null && !sinks.isEmpty()) {
                sinks.rankNames(pipeline.rankNames());
                pipeline.tap(
                        s -> {
                            traffic.onSummary(s);
                            sinks.onSummary(s);
                        },
                        c -> {
                            traffic.onCollective(c);
                            sinks.onCollective(c);
                        });
            } else {
                pipeline.tap(traffic, traffic);
            }
            // the API serves what the catch-up rebuilt from the moment the service is ready, not from the loop's
            // first publish (a request right after start saw an empty snapshot)
            snapshot.set(pipeline.snapshot(System.currentTimeMillis(), stats(pipeline, journal, 0)));
            isReady = true;
            ready.countDown();
            loop(pipeline, journal);
        } catch (final Throwable t) {
            crashed = t;
            LOG.error("drain loop failed", t);
        } finally {
            ready.countDown();
            try {
                source.close();
            } finally {
                if (journal != null) {
                    try {
                        journal.close();
                    } catch (final RuntimeException e) {
                        LOG.warn("journal close: {}", e.toString());
                    }
                }
                stopped.countDown();
            }
        }
    }

    private void catchUp(final Pipeline pipeline) {
        pipeline.beginCatchUp();
        try (JournalReader reader = new JournalReader(config.journalDir())) {
            final JournalReader.Meta meta = new JournalReader.Meta() {
                @Override
                public void onAnomaly(final long id, final boolean opened, final String summary) {
                    if (opened) {
                        pipeline.announcedBefore(id);
                    }
                }

                @Override
                public void onEnd() {
                    pipeline.finish();
                }
            };
            while (running && reader.read(pipeline, meta, 256) > 0) {
                pipeline.endBatch(System.currentTimeMillis() * 1_000_000L);
            }
            recoveredEntries = reader.entries();
            LOG.info(
                    "journal {}: caught up on {} entries of an earlier run ({} corrupt documents skipped)",
                    config.journalDir(),
                    reader.entries(),
                    reader.corruptDocuments());
        } catch (final RuntimeException e) {
            LOG.warn(
                    "journal {}: could not be read back ({}); starting from the rings' current state",
                    config.journalDir(),
                    e.toString());
        }
        pipeline.endCatchUp();
    }

    private void loop(final Pipeline pipeline, final JournalWriter journal) {
        final long intervalNs = TimeUnit.MILLISECONDS.toNanos(config.publishIntervalMs());
        final IngestFailures failures = pipeline.failures();
        long nextPublish = System.nanoTime();
        long lastEvents = 0;
        long lastPublishNs = System.nanoTime();
        int idle = 0;
        while (running && !source.finished()) {
            int n = 0;
            try {
                n = source.poll(pipeline);
            } catch (final RuntimeException e) {
                failures.record(IngestFailures.Stage.SOURCE, "poll of " + source.describe(), e);
            }
            final long nowMono = System.nanoTime();
            try {
                // also after a failed poll: what it handed over before it threw is journaled with this batch
                pipeline.endBatch(System.currentTimeMillis() * 1_000_000L);
                lastIterationMs = System.currentTimeMillis();
                if (nowMono - nextPublish >= 0) {
                    final double rate = (pipeline.events() - lastEvents) * 1e9 / Math.max(1, nowMono - lastPublishNs);
                    lastEvents = pipeline.events();
                    lastPublishNs = nowMono;
                    nextPublish = nowMono + intervalNs;
                    if (pipeline.lastEventNs() != Long.MIN_VALUE) {
                        pipeline.expireBefore(pipeline.lastEventNs() - TimeUnit.SECONDS.toNanos(30));
                    }
                    snapshot.set(pipeline.snapshot(System.currentTimeMillis(), stats(pipeline, journal, rate)));
                }
            } catch (final RuntimeException e) {
                failures.record(IngestFailures.Stage.DRAIN, "end of batch", e);
            }
            if (n == 0) {
                idle++;
                LockSupport.parkNanos(idle < 100 ? 20_000L : 200_000L);
            } else {
                idle = 0;
            }
        }
        if (pipeline.finish() && journal != null) {
            journal.end(); // a reader of the journal ends the last period here too, as the finish above did
        }
        pipeline.endBatch(System.currentTimeMillis() * 1_000_000L);
        snapshot.set(pipeline.snapshot(System.currentTimeMillis(), stats(pipeline, journal, 0)));
    }

    private Stats stats(final Pipeline p, final JournalWriter journal, final double rate) {
        final Source.RingFigures rf = source.ringFigures();
        final WindowEngine e = p.engine();
        final long engineDrops = e.droppedStepTableFull()
                + e.droppedOpTableFull()
                + e.droppedFlowTableFull()
                + e.droppedAggregateTableFull()
                + e.droppedCollectiveTableFull()
                + e.droppedHostTableFull();
        final String jf = journal != null ? journal.failure() : journalFailure;
        final long open = p.snapshotOpenCount();
        return new Stats(
                p.events(),
                rate,
                rf.records(),
                rf.attached(),
                rf.corrupt(),
                rf.producerDrops(),
                rf.lag(),
                engineDrops,
                journal != null ? journal.bytesOnDisk() : 0,
                journal != null ? journal.entriesWritten() : 0,
                journal != null ? journal.entriesDropped() : 0,
                jf,
                System.currentTimeMillis() - lastIterationMs,
                p.summaries(),
                open,
                source.describe(),
                p.failures().counts(),
                rf.producers(),
                traffic.publish(e));
    }
}
