package io.flowscope.collector.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Counting by stage, the last failure, and the log: the first at once, then one per interval with a tally. */
class IngestFailuresTest {
    private final long[] nanos = {1_000};
    private final List<String> logged = new ArrayList<>();
    private final List<Throwable> causes = new ArrayList<>();
    private final IngestFailures failures = new IngestFailures(() -> nanos[0], () -> 5_000L, (m, t) -> {
        logged.add(m);
        causes.add(t);
    });

    @Test
    void shouldCountByStageAndLogTheFirstThenAtMostOnePerIntervalWithHowManyWereNotLogged() {
        final NullPointerException npe = new NullPointerException("best is null");
        failures.record(IngestFailures.Stage.ANOMALY, "flow summary", npe);
        assertThat(logged).hasSize(1);
        assertThat(logged.get(0)).contains("ingest failure 1", "anomaly stage threw on flow summary", "goes on");
        assertThat(causes.get(0)).isSameAs(npe); // with its stack trace

        for (int i = 0; i < 999; i++) {
            nanos[0] += 1_000_000; // 1 ms apart: a stage failing on every summary
            failures.record(IngestFailures.Stage.ANOMALY, "flow summary", npe);
        }
        assertThat(logged).hasSize(1);

        nanos[0] += IngestFailures.LOG_INTERVAL_NS;
        failures.record(IngestFailures.Stage.WINDOW, "ProxyStep stop", new IllegalStateException("x"));
        assertThat(logged).hasSize(2);
        assertThat(logged.get(1))
                .contains("ingest failure 1001", "999 not logged", "window stage threw on ProxyStep stop");

        final IngestFailures.Counts c = failures.counts();
        assertThat(c.total()).isEqualTo(1001);
        assertThat(c.of(IngestFailures.Stage.ANOMALY)).isEqualTo(1000);
        assertThat(c.of(IngestFailures.Stage.WINDOW)).isEqualTo(1);
        assertThat(c.of(IngestFailures.Stage.SOURCE)).isZero();
        assertThat(c.last()).isEqualTo("window (ProxyStep stop): java.lang.IllegalStateException: x");
        assertThat(c.lastWallMs()).isEqualTo(5_000L);
        assertThat(c.recent(5_000L + IngestFailures.RECENT_MS - 1)).isTrue();
        assertThat(c.recent(5_000L + IngestFailures.RECENT_MS)).isFalse();
        assertThat(failures.counts()).isSameAs(c); // nothing new: the same copy
        assertThat(IngestFailures.Counts.NONE.recent(5_000L)).isFalse();
    }
}
