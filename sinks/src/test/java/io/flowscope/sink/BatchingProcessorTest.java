package io.flowscope.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BatchingProcessorTest {
    private final List<BatchingProcessor<?>> started = new ArrayList<>();

    private <T> BatchingProcessor<T> start(final ProcessorConfig config, final Exporter<T> exporter) {
        final BatchingProcessor<T> p = new BatchingProcessor<>(config, exporter);
        started.add(p);
        return p;
    }

    @AfterEach
    void stopEveryProcessor() {
        started.forEach(p -> p.shutdown(Duration.ofSeconds(1)));
    }

    private static ProcessorConfig.Builder fast() {
        return ProcessorConfig.builder()
                .name("test")
                .flushInterval(Duration.ofMillis(10))
                .initialBackoff(Duration.ofMillis(1))
                .maxBackoff(Duration.ofMillis(4));
    }

    /** An exporter whose first export waits until released, so the queue behind it fills deterministically. */
    private static final class GateExporter implements Exporter<Integer> {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final List<Integer> received = new CopyOnWriteArrayList<>();

        @Override
        public ExportResult export(final List<Integer> batch) {
            entered.countDown();
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            received.addAll(batch);
            return ExportResult.SUCCESS;
        }

        @Override
        public void shutdown() {
            release.countDown();
        }
    }

    @Test
    void batchesNeverExceedMaxBatchAndKeepTheOfferedOrder() {
        final InMemoryExporter<Integer> memory = new InMemoryExporter<>();
        final BatchingProcessor<Integer> p = start(fast().maxBatch(7).build(), memory);

        IntStream.range(0, 100).forEach(p::offer);

        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();
        assertThat(memory.received())
                .containsExactlyElementsOf(IntStream.range(0, 100).boxed().toList());
        assertThat(memory.batchSizes()).allSatisfy(size -> assertThat(size).isBetween(1, 7));
        assertThat(p.counters().exported()).isEqualTo(100);
    }

    @Test
    void aFullQueueUnderDropOldestEvictsTheOldestItemsAndCountsThem() throws Exception {
        final GateExporter gate = new GateExporter();
        final BatchingProcessor<Integer> p =
                start(fast().maxBatch(1).queueCapacity(10).build(), gate);
        p.offer(-1);
        assertThat(gate.entered.await(60, TimeUnit.SECONDS)).isTrue();

        IntStream.range(0, 25).forEach(p::offer);
        gate.release.countDown();

        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();
        assertThat(gate.received)
                .containsExactlyElementsOf(IntStream.concat(IntStream.of(-1), IntStream.range(15, 25))
                        .boxed()
                        .toList());
        final SinkCounters c = p.counters();
        assertThat(c.offered()).isEqualTo(26);
        assertThat(c.droppedQueueFull()).isEqualTo(15);
        assertThat(c.exported()).isEqualTo(11);
    }

    @Test
    void aFullQueueUnderBlockWithTimeoutDropsTheNewItemAfterTheTimeoutAndCountsIt() throws Exception {
        final GateExporter gate = new GateExporter();
        final BatchingProcessor<Integer> p = start(
                fast().maxBatch(1)
                        .queueCapacity(3)
                        .backPressure(BackPressure.BLOCK_WITH_TIMEOUT)
                        .blockTimeout(Duration.ofMillis(1))
                        .build(),
                gate);
        p.offer(-1);
        assertThat(gate.entered.await(60, TimeUnit.SECONDS)).isTrue();

        final List<Boolean> accepted = IntStream.range(0, 5).mapToObj(p::offer).toList();
        gate.release.countDown();

        assertThat(accepted).containsExactly(true, true, true, false, false);
        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();
        assertThat(gate.received).containsExactly(-1, 0, 1, 2);
        assertThat(p.counters().droppedQueueFull()).isEqualTo(2);
    }

    @Test
    void aRetryableFailureIsRetriedAndTheBatchArrivesOnce() {
        final InMemoryExporter<Integer> memory = new InMemoryExporter<>();
        memory.failNext(2, ExportResult.RETRYABLE);
        final BatchingProcessor<Integer> p = start(fast().maxAttempts(5).build(), memory);

        IntStream.range(0, 4).forEach(p::offer);

        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();
        assertThat(memory.received()).containsExactly(0, 1, 2, 3);
        assertThat(p.counters().retries()).isEqualTo(2);
        assertThat(p.counters().droppedAfterRetries()).isZero();
    }

    @Test
    void aBatchStillFailingAfterTheLastAttemptIsDroppedCountedAndTheNextBatchIsSent() {
        final InMemoryExporter<Integer> memory = new InMemoryExporter<>();
        memory.failNext(3, ExportResult.RETRYABLE);
        final BatchingProcessor<Integer> p = start(fast().maxAttempts(3).build(), memory);

        IntStream.range(0, 4).forEach(p::offer);
        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();
        p.offer(99);
        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();

        assertThat(memory.received()).containsExactly(99);
        final SinkCounters c = p.counters();
        assertThat(c.droppedAfterRetries()).isEqualTo(4);
        assertThat(c.retries()).isEqualTo(2);
        assertThat(c.exported()).isEqualTo(1);
    }

    @Test
    void aBatchTheDestinationRejectsIsNotRetriedButCountedAsRejected() {
        final InMemoryExporter<Integer> memory = new InMemoryExporter<>();
        memory.failNext(1, ExportResult.FAILED);
        final BatchingProcessor<Integer> p = start(fast().maxAttempts(5).build(), memory);

        IntStream.range(0, 3).forEach(p::offer);

        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();
        assertThat(memory.calls()).isEqualTo(1);
        assertThat(p.counters().rejected()).isEqualTo(3);
        assertThat(p.counters().retries()).isZero();
    }

    @Test
    void anExporterThatThrowsIsTreatedAsARetryableFailureWithItsMessageKept() {
        final List<Integer> received = new CopyOnWriteArrayList<>();
        final int[] calls = {0};
        final Exporter<Integer> throwing = new Exporter<>() {
            @Override
            public ExportResult export(final List<Integer> batch) {
                if (calls[0]++ == 0) {
                    throw new IllegalStateException("boom at the destination");
                }
                received.addAll(batch);
                return ExportResult.SUCCESS;
            }

            @Override
            public void shutdown() {}
        };
        final BatchingProcessor<Integer> p = start(fast().build(), throwing);

        p.offer(1);

        assertThat(p.flush(Duration.ofSeconds(60))).isTrue();
        assertThat(received).containsExactly(1);
        assertThat(p.lastFailure()).contains("boom at the destination");
    }

    @Test
    void itemsOfferedAfterShutdownAreDroppedAndCounted() {
        final InMemoryExporter<Integer> memory = new InMemoryExporter<>();
        final BatchingProcessor<Integer> p = start(fast().build(), memory);
        p.offer(1);
        assertThat(p.shutdown(Duration.ofSeconds(60))).isTrue();

        assertThat(p.offer(2)).isFalse();

        assertThat(memory.received()).containsExactly(1);
        assertThat(p.counters().droppedQueueFull()).isEqualTo(1);
    }

    @Test
    void itemsStillQueuedWhenShutdownGivesUpAreCountedAsDropped() throws Exception {
        final GateExporter gate = new GateExporter();
        final BatchingProcessor<Integer> p =
                new BatchingProcessor<>(fast().maxBatch(1).build(), gate);
        p.offer(-1);
        assertThat(gate.entered.await(60, TimeUnit.SECONDS)).isTrue();
        IntStream.range(0, 4).forEach(p::offer);

        assertThat(p.shutdown(Duration.ZERO)).isFalse();

        final SinkCounters c = p.counters();
        assertThat(c.exported() + c.droppedQueueFull() + c.droppedAfterRetries())
                .isEqualTo(c.offered());
        assertThat(c.queued()).isZero();
        assertThat(c.droppedQueueFull() + c.droppedAfterRetries()).isGreaterThanOrEqualTo(4);
    }

    @Test
    void theBackoffDoublesPerAttemptUpToTheCeilingAndJitterOnlyShortensIt() {
        final ProcessorConfig c = ProcessorConfig.builder()
                .initialBackoff(Duration.ofMillis(100))
                .maxBackoff(Duration.ofSeconds(1))
                .jitter(0.5)
                .build();

        assertThat(BatchingProcessor.backoffNanos(c, 1, 0)).isEqualTo(100_000_000L);
        assertThat(BatchingProcessor.backoffNanos(c, 2, 0)).isEqualTo(200_000_000L);
        assertThat(BatchingProcessor.backoffNanos(c, 4, 0)).isEqualTo(800_000_000L);
        assertThat(BatchingProcessor.backoffNanos(c, 5, 0)).isEqualTo(1_000_000_000L);
        assertThat(BatchingProcessor.backoffNanos(c, 200, 0)).isEqualTo(1_000_000_000L);
        assertThat(BatchingProcessor.backoffNanos(c, 2, 0.999)).isBetween(100_000_000L, 200_000_000L);
        assertThat(BatchingProcessor.backoffNanos(c, 200, 0.999)).isBetween(500_000_000L, 1_000_000_000L);
    }

    @Test
    void aConfigurationThatCannotWorkIsRefusedWithTheOffendingValues() {
        assertThatThrownBy(() -> ProcessorConfig.builder().queueCapacity(0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0");
        assertThatThrownBy(() -> ProcessorConfig.builder().jitter(1.5).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1.5");
    }
}
