package io.flowscope.collector.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.SimulatedInput;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.replay.Replay;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One stage throwing costs what it touched, never the rest (issue #15, acceptance 4): the window engine's summaries
 * all come out, the journal takes every input, the listeners hear every announcement, failures are counted by
 * stage, and a replay goes past them as the live service does, without calling the input corrupt.
 */
class PipelineFailureTest {
    @TempDir
    Path dir;

    private final CollectorConfig config = CollectorConfig.load(null, Map.of(), Map.of());

    /** Counts the window engine's output through the taps: [flow summaries, collective summaries]. */
    private static long[] tap(final Pipeline p) {
        final long[] n = {0, 0};
        p.tap(s -> n[0]++, s -> n[1]++);
        return n;
    }

    @Test
    void shouldKeepTheWindowEnginesOutputAndTheJournalsInputWhenTheAnomalyStageThrows() {
        final Pipeline healthy = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        final long[] healthyOut = tap(healthy);
        SimulatedInput.drive(healthy, SimulatedInput.FAULTS);

        // throws on every summary of rank 3 and whenever it is told the time of rank 3's host (node 1)
        final AtomicLong thrown = new AtomicLong();
        final long[] victim = {0};
        final Pipeline failing = new Pipeline(
                Pipeline.windowConfig(config),
                FailingStage.factory(
                        s -> {
                            victim[0] = s.rank() == 3 ? s.hostId() : victim[0];
                            return s.rank() == 3;
                        },
                        host -> host == victim[0],
                        thrown),
                e -> {});
        final long[] failingOut = tap(failing);
        try (JournalWriter w = new JournalWriter(dir.resolve("journal"), RollCycles.FAST_HOURLY, 0, 0)) {
            failing.journal(w);
            SimulatedInput.drive(failing, SimulatedInput.FAULTS);
            failing.endBatch(0);
        }

        assertThat(thrown.get()).isGreaterThan(500);
        assertThat(failing.failures().of(IngestFailures.Stage.ANOMALY)).isEqualTo(thrown.get());
        assertThat(failing.failures().total()).isEqualTo(thrown.get());
        assertThat(failing.failures().counts().last())
                .startsWith("anomaly (")
                .contains("NullPointerException: injected by the test");
        // the window engine did all its work: every summary of every period came out
        assertThat(failing.events()).isEqualTo(healthy.events());
        assertThat(failingOut).containsExactly(healthyOut);
        assertThat(failing.summaries()).isEqualTo(healthy.summaries());
        // the journal has every input call, so a replay (with the stage fixed) loses nothing
        assertThat(SimulatedInput.telemetryCalls(dir.resolve("journal"))).isEqualTo(failing.events());
        // and the stage still judged what it was given (which anomalies a stage missing a rank's summaries names is the
        // anomaly module's business)
        assertThat(failing.history()).isNotEmpty();
    }

    @Test
    void shouldAnnounceEveryAnomalyToTheOtherListenersWhenOneListenerOrATapThrows() {
        final List<AnomalyEvent> heard = new java.util.ArrayList<>();
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {
            heard.add(e);
            throw new IllegalStateException("listener broken");
        });
        final long[] summaries = {0};
        p.tap(
                s -> {
                    if (++summaries[0] % 100 == 0) {
                        throw new IllegalArgumentException("tap broken");
                    }
                },
                null);
        SimulatedInput.drive(p, SimulatedInput.FAULTS);

        final long announced = p.history().stream().filter(e -> !e.recovered()).count();
        assertThat(heard).hasSize((int) announced).isNotEmpty();
        assertThat(p.failures().of(IngestFailures.Stage.OUTPUT)).isEqualTo(announced + summaries[0] / 100);
        assertThat(p.failures().of(IngestFailures.Stage.ANOMALY)).isZero();
        assertThat(p.failures().of(IngestFailures.Stage.WINDOW)).isZero();
    }

    @Test
    void shouldReplayPastAStageThatThrowsCountingTheFailuresNotCallingTheInputCorrupt() {
        final Path journal = dir.resolve("journal");
        SimulatedInput.journal(journal, config, SimulatedInput.FAULTS);
        final long documents = Replay.countDocuments(journal);

        final AtomicLong thrown = new AtomicLong();
        final Replay.Result r = Replay.run(
                journal,
                config,
                Long.MIN_VALUE,
                Long.MAX_VALUE,
                null,
                null,
                d -> {},
                FailingStage.factory(s -> s.rank() == 2, h -> false, thrown));
        assertThat(thrown.get()).isPositive();
        assertThat(r.failures().of(IngestFailures.Stage.ANOMALY)).isEqualTo(thrown.get());
        assertThat(r.corruptDocuments()).isZero();
        assertThat(r.lastCorruption()).isNull();
        assertThat(r.documents()).isEqualTo(documents);
        assertThat(r.describe())
                .contains(
                        documents + " batches",
                        "0 corrupt batches skipped",
                        thrown.get() + " engine failures counted and skipped (anomaly " + thrown.get()
                                + ", last: anomaly "
                                + "(flow summary): java.lang.NullPointerException: injected by the test");
        // the other ranks were judged all the same
        assertThat(r.events()).isNotEmpty();

        final Replay.Result clean = Replay.run(journal, config, Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        assertThat(clean.failures().total()).isZero();
        assertThat(clean.describe()).doesNotContain("engine failures");
    }
}
