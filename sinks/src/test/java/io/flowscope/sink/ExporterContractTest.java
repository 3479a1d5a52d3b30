package io.flowscope.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.sink.testing.Eventually;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every exporter passes (in-memory, InfluxDB, webhook): what it accepts arrives, once; after
 * shutdown it refuses; through the shared processor, batches arrive whole and are counted.
 */
public abstract class ExporterContractTest<T> {
    private Exporter<T> exporter;

    /** A fresh exporter to a fresh (empty) destination. */
    protected abstract Exporter<T> newExporter() throws Exception;

    /** {@code n} distinct items; {@code offset} keeps items of several calls distinct. */
    protected abstract List<T> items(int offset, int n);

    /** How many items the destination holds now. */
    protected abstract long delivered() throws Exception;

    private Exporter<T> exporter() throws Exception {
        if (exporter == null) {
            exporter = newExporter();
        }
        return exporter;
    }

    @AfterEach
    void shutDownTheExporter() {
        if (exporter != null) {
            exporter.shutdown();
        }
    }

    private long deliveredUnchecked() {
        try {
            return delivered();
        } catch (final Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aBatchThatIsExportedArrivesAtTheDestinationOnce() throws Exception {
        assertThat(exporter().export(items(0, 3))).isEqualTo(ExportResult.SUCCESS);

        Eventually.await(() -> deliveredUnchecked() >= 3, () -> "delivered " + deliveredUnchecked());
        assertThat(delivered()).isEqualTo(3);
    }

    @Test
    void anExporterThatWasShutDownRefusesInsteadOfSending() throws Exception {
        final Exporter<T> e = exporter();
        e.shutdown();

        assertThat(e.export(items(0, 2))).isEqualTo(ExportResult.FAILED);
        assertThat(delivered()).isZero();
    }

    @Test
    void itemsOfferedThroughTheSharedProcessorArriveInBatchesAndAreCounted() throws Exception {
        final ProcessorConfig config = ProcessorConfig.builder()
                .name("contract")
                .maxBatch(2)
                .queueCapacity(100)
                .flushInterval(Duration.ofMillis(20))
                .build();
        final BatchingProcessor<T> processor = new BatchingProcessor<>(config, exporter());
        try {
            items(10, 5).forEach(processor::offer);

            assertThat(processor.flush(Duration.ofSeconds(60))).isTrue();
            Eventually.await(() -> deliveredUnchecked() >= 5, () -> "delivered " + deliveredUnchecked());
            assertThat(delivered()).isEqualTo(5);
            final SinkCounters c = processor.counters();
            assertThat(c.exported()).isEqualTo(5);
            assertThat(c.batches()).isGreaterThanOrEqualTo(3);
            assertThat(c.lost()).isZero();
        } finally {
            processor.shutdown(Duration.ofSeconds(10));
            exporter = null;
        }
    }

    @Test
    void toStringNamesTheExporterAndItsDestination() throws Exception {
        assertThat(exporter().toString()).contains("Exporter{");
    }
}
