package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.Source;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.FailingStage;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.collector.replay.Replay;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live service whose anomaly stage throws on some input and whose source throws now and then (issue #15,
 * acceptance 4): it keeps ingesting the batches after, counts the failures by stage in {@code /metrics} and
 * {@code /api/health} (DEGRADED, still live and ready), and its journal holds every input.
 */
class DrainLoopFailureTest {
    @TempDir
    Path dir;

    private CollectorConfig config() {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("journal.dir", dir.resolve("journal").toString());
        o.put("publish.intervalMs", "50");
        o.put("simulate.scenario", "default");
        o.put("simulate.durationSeconds", "2");
        return CollectorConfig.load(null, Map.of(), o);
    }

    /** The simulator, except that every {@code every}-th poll throws after it handed its batch over. */
    private static final class FlakySource implements Source {
        private final Source real;
        private final int every;
        private final AtomicLong thrown = new AtomicLong();
        private long polls;

        FlakySource(final Source real, final int every) {
            this.real = real;
            this.every = every;
        }

        @Override
        public int poll(final Pipeline out) {
            final int n = real.poll(out);
            if (n > 0 && ++polls % every == 0) {
                thrown.incrementAndGet();
                throw new IllegalStateException("injected by the test: the source failed after its batch");
            }
            return n;
        }

        @Override
        public String describe() {
            return "flaky " + real.describe();
        }

        @Override
        public boolean finished() {
            return real.finished();
        }

        @Override
        public void close() {
            real.close();
        }
    }

    private static long metric(final String metrics, final String series) {
        final Matcher m =
                Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(metrics);
        assertThat(m.find()).as(series + " in\n" + metrics).isTrue();
        return (long) Double.parseDouble(m.group(1));
    }

    @Test
    void shouldKeepIngestingCountTheFailuresAndSaySoInHealthAndMetricsWhenTheStageAndTheSourceThrow() throws Exception {
        final CollectorConfig config = config();
        final FlakySource source = new FlakySource(CollectorService.sourceOf(config), 50);
        final AtomicLong stageThrew = new AtomicLong();
        try (CollectorService s = CollectorService.start(
                config, source, FailingStage.factory(sum -> sum.rank() == 0, host -> false, stageThrew), e -> {})) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Http.json(s.url() + "api/health")
                                    .get("failures")
                                    .get("byStage")
                                    .get("anomaly")
                                    .asLong()
                            > 0);
            final long eventsAtFailure =
                    Http.json(s.url() + "api/health").get("eventsTotal").asLong();
            // ingest goes on after the failures
            await().atMost(Duration.ofSeconds(30))
                    .until(() ->
                            Http.json(s.url() + "api/health").get("eventsTotal").asLong() > eventsAtFailure + 100_000);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Http.json(s.url() + "api/health")
                                    .get("failures")
                                    .get("byStage")
                                    .get("source")
                                    .asLong()
                            > 0);

            final JsonNode h = Http.json(s.url() + "api/health");
            assertThat(h.get("status").asText()).isEqualTo("DEGRADED");
            final JsonNode f = h.get("failures");
            assertThat(f.get("total").asLong())
                    .isEqualTo(f.get("byStage").get("anomaly").asLong()
                            + f.get("byStage").get("source").asLong());
            assertThat(f.get("last").asText()).contains("injected by the test");
            assertThat(f.get("recent").asBoolean()).isTrue();
            assertThat(f.get("lastAtMs").asLong()).isPositive();
            assertThat(h.get("journal").get("failure").isNull()).isTrue();
            assertThat(Http.get(s.url() + "api/health/live").statusCode()).isEqualTo(200);
            assertThat(Http.get(s.url() + "api/health/ready").statusCode()).isEqualTo(200);

            final String metrics = Http.get(s.url() + "metrics").body();
            assertThat(metric(metrics, "flowscope_ingest_failures_total{stage=\"anomaly\"}"))
                    .isPositive();
            assertThat(metric(metrics, "flowscope_ingest_failures_total{stage=\"source\"}"))
                    .isPositive();
            assertThat(metric(metrics, "flowscope_ingest_failures_total{stage=\"window\"}"))
                    .isZero();

            await().atMost(Duration.ofSeconds(60)).until(() -> s.finished());
            assertThat(s.failure()).isNull();
            final Stats end = s.snapshot().stats();
            assertThat(end.failures().of(IngestFailures.Stage.ANOMALY)).isEqualTo(stageThrew.get());
            assertThat(end.failures().of(IngestFailures.Stage.SOURCE)).isEqualTo(source.thrown.get());
            assertThat(source.thrown.get()).isGreaterThan(5);
            // the simulated 2 s were all ingested (1 ms a batch), failures or not
            assertThat(end.eventsTotal()).isGreaterThan(eventsAtFailure);
        }
        // what the failing polls handed over before they threw was journaled with the rest
        final long events = SimulatedInput.telemetryCalls(dir.resolve("journal"));
        final Replay.Result r =
                Replay.run(dir.resolve("journal"), config, Long.MIN_VALUE, Long.MAX_VALUE, null, null, d -> {});
        assertThat(r.corruptDocuments()).isZero();
        final Pipeline reference = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
        SimulatedInput.drive(reference, "default,duration=2s");
        assertThat(events).isEqualTo(reference.events());
    }
}
