package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.RingEventSource;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.collector.replay.Replay;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A culprit an operator can act on (issue #15): an anomaly's summary opens with the culprit's host by name, and for
 * a rank its pid, rank and GPU (ordinal and PCI bus id) from the rings' communicator entries; the hex host id only in
 * the structured fields. The same text live and in a replay of the live run's journal.
 */
class CulpritNamingTest {
    private static final long HOST = RingEventSource.hostId("gpu-node-17");
    private static final long OTHER_HOST = RingEventSource.hostId("gpu-node-18");
    private static final long UNNAMED_HOST = 0x5eed5eedL;
    private static final long COMM = 0xc0ffee1234L;

    @TempDir
    Path dir;

    private static Anomaly anomaly(final long id, final AnomalyKind kind, final Culprit c, final String summary) {
        return new Anomaly(
                id, kind, c, Severity.WARNING, 1_000, 2_000, -1, new TreeMap<>(Map.of("x", 1.0)), 0, 2_000, summary);
    }

    /** What the engines would raise: a straggler, a slow link, a NIC stall, culprits on an unknown host and rank. */
    private static final List<Anomaly> RAISED = List.of(
            anomaly(
                    1,
                    AnomalyKind.SLOW_NODE,
                    Culprit.rank(HOST, COMM, 1),
                    "rank 1 holds up comm 0xc0ffee1234: its own GPU takes 1.60 ms to its first data"),
            anomaly(
                    2,
                    AnomalyKind.SLOW_LINK,
                    Culprit.link(OTHER_HOST, COMM, 2, 3),
                    "link rank 2 → 3 of comm 0xc0ffee1234 moves data at 40% of its usual rate"),
            anomaly(
                    3,
                    AnomalyKind.NIC_STALL,
                    Culprit.nic(HOST, 2),
                    String.format("NIC 2 of host 0x%x stopped completing work (12 work requests outstanding)", HOST)),
            anomaly(
                    4,
                    AnomalyKind.HANG,
                    Culprit.rank(UNNAMED_HOST, COMM, 7),
                    "comm 0xc0ffee1234 hung: rank 7 does not " + "progress"),
            anomaly(
                    5,
                    AnomalyKind.HANG,
                    Culprit.rank(HOST, COMM, 0),
                    "comm 0xc0ffee1234 hung: rank 0 does not progress"));

    /** A stage that raises {@link #RAISED} when a host's time first reaches 2 µs. */
    private static Function<AnomalySink, AnomalyStage> raising() {
        return sink -> new AnomalyStage() {
            private boolean raised;

            @Override
            public void advanceTo(final long hostId, final long timeNs) {
                if (!raised && timeNs >= 2_000) {
                    raised = true;
                    RAISED.forEach(sink::onOpened);
                }
            }

            @Override
            public List<Anomaly> openAnomalies() {
                return List.of();
            }

            @Override
            public void onSummary(final FlowSummary s) {}

            @Override
            public void onCollective(final CollectiveSummary s) {}
        };
    }

    /** The live run: the rings' communicator entries, then time passes and the stage raises. */
    private static void feed(final Pipeline p) {
        p.onRingComm(HOST, "gpu-node-17", 48213, COMM, 1, 4, 1, "0000:19:00.0");
        p.onRingComm(HOST, "gpu-node-17", 48214, COMM, 0, 4, -1, ""); // no device known (no CUDA context)
        p.onRingComm(OTHER_HOST, "gpu-node-18", 9001, COMM, 2, 4, 0, "0000:3B:00.0");
        p.advanceTo(HOST, 1_000);
        p.endBatch(1);
        p.advanceTo(HOST, 2_000);
        p.endBatch(2);
    }

    @Test
    void aSummaryOpensWithTheCulpritsHostPidRankAndGpuAndNamesNoHexHost() {
        final List<AnomalyEvent> events = new ArrayList<>();
        final Pipeline p = new Pipeline(Pipeline.windowConfig(CollectorConfig.defaults()), raising(), events::add);
        feed(p);

        assertThat(events)
                .extracting(e -> e.anomaly().summary())
                .containsExactly(
                        "host gpu-node-17 pid 48213 rank 1 GPU 1 (0000:19:00.0): rank 1 holds up comm 0xc0ffee1234: its own GPU "
                                + "takes 1.60 ms to its first data",
                        // a link: its sending rank, wherever its ring is
                        "host gpu-node-18 pid 9001 rank 2 GPU 0 (0000:3B:00.0): link rank 2 → 3 of comm 0xc0ffee1234 moves data "
                                + "at 40% of its usual rate",
                        // a NIC: its host by name, not by id
                        "host gpu-node-17: NIC 2 stopped completing work (12 work requests outstanding)",
                        // nothing known of the culprit: as the engine said it
                        "comm 0xc0ffee1234 hung: rank 7 does not progress",
                        "host gpu-node-17 pid 48214 rank 0: comm 0xc0ffee1234 hung: rank 0 does not progress");
        assertThat(events).allSatisfy(e -> assertThat(e.anomaly().summary()).doesNotContain(Long.toHexString(HOST)));
        // the structured fields: the hex id as before, the names beside it
        @SuppressWarnings("unchecked")
        final Map<String, Object> culprit = (Map<String, Object>)
                ((Map<String, Object>) Json.event(events.get(0)).get("anomaly")).get("culprit");
        assertThat(culprit)
                .containsEntry("host", FlowRow.hex(HOST))
                .containsEntry("hostname", "gpu-node-17")
                .containsEntry("pid", 48213)
                .containsEntry("rank", 1)
                .containsEntry("gpu", 1)
                .containsEntry("gpuBusId", "0000:19:00.0");
        final Snapshot s = p.snapshot(0, Stats.ZERO);
        assertThat(Json.culprit(RAISED.get(2).culprit(), s.culprits().get(3L)))
                .containsEntry("hostname", "gpu-node-17")
                .doesNotContainKeys("pid", "gpu", "gpuBusId");
        assertThat(Json.culprit(RAISED.get(4).culprit(), s.culprits().get(5L)))
                .containsEntry("pid", 48214)
                .doesNotContainKeys("gpu", "gpuBusId");
        assertThat(s.culprits()).doesNotContainKey(4L);
    }

    @Test
    void aReplayOfTheLiveRunsJournalNamesEveryCulpritWithTheSameWords() {
        final Path journal = dir.resolve("journal");
        final List<AnomalyEvent> live = new ArrayList<>();
        try (JournalWriter w = new JournalWriter(journal, RollCycles.FAST_HOURLY, 0, 0)) {
            final Pipeline p = new Pipeline(Pipeline.windowConfig(CollectorConfig.defaults()), raising(), live::add);
            p.journal(w);
            feed(p);
        }
        final Replay.Result replay = Replay.run(
                journal, CollectorConfig.defaults(), Long.MIN_VALUE, Long.MAX_VALUE, null, null, n -> {}, raising());

        assertThat(live).hasSize(RAISED.size());
        assertThat(replay.events())
                .extracting(e -> e.anomaly().summary())
                .containsExactlyElementsOf(
                        live.stream().map(e -> e.anomaly().summary()).toList());
        assertThat(replay.events())
                .extracting(AnomalyEvent::culprit)
                .containsExactlyElementsOf(
                        live.stream().map(AnomalyEvent::culprit).toList());
    }
}
