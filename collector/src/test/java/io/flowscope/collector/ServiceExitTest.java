package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.pipeline.AnomalyStages;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #16, acceptance 2: an error that stops the service exits non-zero. It used to exit 0 (the drain loop died
 * on the journal's SIGBUS, and `run` returned as if stopped), so {@code Restart=on-failure} never restarted it.
 */
class ServiceExitTest {
    @TempDir
    Path dir;

    /** The service's own stage, except that its 200th summary throws the Error a SIGBUS on a mapping becomes. */
    static final class ErrorStage implements AnomalyStage {
        private final AnomalyStage real;
        private final AtomicLong summaries = new AtomicLong();

        ErrorStage(final AnomalySink sink) {
            this.real = AnomalyStages.create(sink);
        }

        @Override
        public void onSummary(final FlowSummary s) {
            if (summaries.incrementAndGet() == 200) {
                throw new InternalError("a fault occurred in a recent unsafe memory access operation in compiled "
                        + "Java code (injected by the test)");
            }
            real.onSummary(s);
        }

        @Override
        public void onCollective(final CollectiveSummary s) {
            real.onCollective(s);
        }

        @Override
        public void advanceTo(final long hostId, final long timeNs) {
            real.advanceTo(hostId, timeNs);
        }

        @Override
        public List<Anomaly> openAnomalies() {
            return real.openAnomalies();
        }
    }

    @Test
    void shouldExitNonZeroWhenAnErrorStopsTheService() {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int rc;
        Main.stageForTests = ErrorStage::new;
        try {
            rc = Main.run(
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(new ByteArrayOutputStream()),
                    "run",
                    "--simulate",
                    "--port",
                    "0",
                    "--quiet",
                    "--journal-dir",
                    dir.resolve("journal").toString(),
                    "--ring-dir",
                    dir.resolve("rings").toString());
        } finally {
            Main.stageForTests = null;
        }
        final String console = out.toString(StandardCharsets.UTF_8);
        assertThat(rc).as(console).isEqualTo(Main.EXIT_FAILED).isNotZero();
        assertThat(console)
                .contains(
                        "flowscope: health DOWN: the drain loop stopped: java.lang.InternalError",
                        "flowscope: stopped by an error: java.lang.InternalError: a fault occurred",
                        "(exit status " + Main.EXIT_FAILED + ")");
    }
}
