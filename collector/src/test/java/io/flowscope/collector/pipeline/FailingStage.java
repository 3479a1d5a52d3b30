package io.flowscope.collector.pipeline;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongPredicate;
import java.util.function.Predicate;

/**
 * The service's anomaly stage, except that it throws (a NullPointerException, as the real stage's judgeHang did on
 * multi-host input) on the inputs the test picks, instead of handling them: a fault the tests cannot cause
 * otherwise once the real bugs are fixed.
 */
public final class FailingStage implements AnomalyStage {
    private final AnomalyStage real;
    private final Predicate<FlowSummary> onSummary;
    private final LongPredicate onAdvance;
    private final AtomicLong thrown;
    private final AtomicLong judgedAfter;

    private FailingStage(
            final AnomalySink sink,
            final Predicate<FlowSummary> onSummary,
            final LongPredicate onAdvance,
            final AtomicLong thrown,
            final AtomicLong judgedAfter) {
        this.real = AnomalyStages.create(sink);
        this.onSummary = onSummary;
        this.onAdvance = onAdvance;
        this.thrown = thrown;
        this.judgedAfter = judgedAfter;
    }

    /** A factory for Pipeline / DrainLoop; {@code thrown} counts the exceptions thrown (any thread may read it). */
    public static Function<AnomalySink, AnomalyStage> factory(
            final Predicate<FlowSummary> onSummary, final LongPredicate onAdvanceOfHost, final AtomicLong thrown) {
        return factory(onSummary, onAdvanceOfHost, thrown, new AtomicLong());
    }

    /** The same, and {@code judgedAfter} counts the summaries the real stage judged after the first one thrown. */
    public static Function<AnomalySink, AnomalyStage> factory(
            final Predicate<FlowSummary> onSummary,
            final LongPredicate onAdvanceOfHost,
            final AtomicLong thrown,
            final AtomicLong judgedAfter) {
        return sink -> new FailingStage(sink, onSummary, onAdvanceOfHost, thrown, judgedAfter);
    }

    private RuntimeException fail(final String where) {
        thrown.incrementAndGet();
        return new NullPointerException(
                "injected by the test: Cannot read field \"peer\" because \"best\" is null (" + where + ")");
    }

    @Override
    public void onSummary(final FlowSummary s) {
        if (onSummary.test(s)) {
            throw fail("summary of rank " + s.rank());
        }
        if (thrown.get() > 0) {
            judgedAfter.incrementAndGet();
        }
        real.onSummary(s);
    }

    @Override
    public void onCollective(final CollectiveSummary s) {
        real.onCollective(s);
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        if (onAdvance.test(hostId)) {
            throw fail("advanceTo");
        }
        real.advanceTo(hostId, timeNs);
    }

    @Override
    public List<Anomaly> openAnomalies() {
        return real.openAnomalies();
    }
}
