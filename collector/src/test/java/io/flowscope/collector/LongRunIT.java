package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.replay.Replay;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, "runs for days": the service on hosts whose clocks pass 2^40 ns while it runs (18.3 minutes: the
 * simulator once packed absolute times into 40 bits and died there; every host of a long job is past it), still
 * naming a fault after the crossing, journaled and replayed to the same anomaly.
 */
class LongRunIT {
    private static final long TWO_TO_THE_40 = 1L << 40;

    @TempDir
    Path dir;

    @Test
    void shouldNameAFaultAfterTheHostsClocksPassTwoToTheForty() throws Exception {
        // The hosts' clocks start 4.5 s short of 2^40 ns; rank 5 stops at 6 s (past it), the run lasts 8 s.
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("simulate.scenario", "clean-ring-2x4,epoch=1095s,fault=hang,rank=5,at=6s");
        o.put("simulate.speed", "2");
        o.put("simulate.durationSeconds", "8");
        final List<AnomalyEvent> console = new CopyOnWriteArrayList<>();
        try (CollectorService s = CollectorService.start(CollectorConfig.load(null, Map.of(), o), console::add)) {
            await().atMost(Duration.ofSeconds(90)).until(() -> s.finished());
        }
        assertThat(console)
                .filteredOn(e -> "opened".equals(e.type()))
                .extracting(e -> e.anomaly().kind())
                .containsExactly(AnomalyKind.HANG);
        final var hang = console.get(0).anomaly();
        assertThat(hang.culprit().rank()).isEqualTo(5);
        assertThat(hang.detectedNs()).as("on a host clock past 2^40 ns").isGreaterThan(TWO_TO_THE_40);

        final Replay.Result replay = Replay.run(
                dir.resolve("journal"),
                CollectorConfig.load(null, Map.of(), o),
                Long.MIN_VALUE,
                Long.MAX_VALUE,
                null,
                null,
                d -> {});
        assertThat(replay.events())
                .filteredOn(e -> "opened".equals(e.type()))
                .extracting(e -> e.anomaly().id())
                .containsExactly(hang.id());
    }
}
