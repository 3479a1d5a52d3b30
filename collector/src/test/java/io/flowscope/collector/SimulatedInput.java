package io.flowscope.collector;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import java.nio.file.Path;
import net.openhft.chronicle.queue.RollCycles;

/** Drives a {@link Pipeline} from the cluster simulator as fast as it goes, one 1 ms batch at a time. */
public final class SimulatedInput {
    /**
     * On a 2 x 2 ring, a slow link 1 → 2 and a slow GPU of rank 0 that open and resolve, then a hang of rank 2 that
     * stays: anomalies of three kinds, with starts, detections and resolutions, for comparisons that are not
     * vacuous; ~400,000 input calls (a quarter of a second to simulate).
     */
    public static final String FAULTS = "nodes=2,gpus=2,channels=1,size=2M,seed=5,duration=1200ms,"
            + "fault=slow-link,rank=1,peer=2,fraction=0.5,at=100ms,for=200ms,"
            + "fault=slow-gpu,rank=0,fraction=0.5,at=350ms,for=150ms,fault=hang,rank=2,at=600ms";

    private SimulatedInput() {}

    /** Feeds the whole scenario, batch by batch as the drain loop does, then ends the input. */
    public static void drive(final Pipeline p, final String scenario) {
        final SimulatorSource source = new SimulatorSource(scenario, 1e12, 0);
        while (!source.finished()) {
            source.poll(p);
            p.endBatch(System.currentTimeMillis() * 1_000_000L);
        }
        p.finish();
    }

    /** Drives a pipeline with a journal in {@code dir}, as the service does (end marker included). */
    public static Pipeline journal(final Path dir, final CollectorConfig config, final String scenario) {
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        try (JournalWriter w = new JournalWriter(dir, RollCycles.FAST_HOURLY, 0, 0)) {
            p.journal(w);
            final SimulatorSource source = new SimulatorSource(scenario, 1e12, 0);
            w.source(source.describe());
            while (!source.finished()) {
                source.poll(p);
                p.endBatch(System.currentTimeMillis() * 1_000_000L);
            }
            if (p.finish()) {
                w.end();
            }
            p.endBatch(System.currentTimeMillis() * 1_000_000L);
        }
        return p;
    }

    /** The telemetry calls of a journal or trace, host switches not counted (what {@link Pipeline#events} counts). */
    public static long telemetryCalls(final Path log) {
        final long[] n = {0};
        final NoopListener counter = new NoopListener() {
            @Override
            public void onProxyOpStart(
                    final long opKey,
                    final long commHash,
                    final int rank,
                    final int peer,
                    final int channel,
                    final boolean isSend,
                    final long timeNs) {
                n[0]++;
            }

            @Override
            public void onProxyOpStop(final long opKey, final long timeNs) {
                n[0]++;
            }

            @Override
            public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
                n[0]++;
            }

            @Override
            public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
                n[0]++;
            }

            @Override
            public void onProxyStepStop(final long stepKey, final long timeNs) {
                n[0]++;
            }

            @Override
            public void onQpStart(
                    final long wrKey,
                    final int device,
                    final long qpNum,
                    final int opcode,
                    final long length,
                    final long timeNs) {
                n[0]++;
            }

            @Override
            public void onQpStop(final long wrKey, final long timeNs) {
                n[0]++;
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
                n[0]++;
            }

            @Override
            public void onCollStop(final long collKey, final long timeNs) {
                n[0]++;
            }

            @Override
            public void onKernelChStart(
                    final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
                n[0]++;
            }

            @Override
            public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
                n[0]++;
            }
        };
        try (EventLog r = EventLog.open(log)) {
            while (r.read(counter, new JournalReader.Meta() {}, 1000) > 0) {
                // count
            }
        }
        return n[0];
    }
}
