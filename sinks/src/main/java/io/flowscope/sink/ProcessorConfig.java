package io.flowscope.sink;

import java.time.Duration;
import java.util.Objects;

/**
 * Batching, back-pressure and retry settings of one {@link BatchingProcessor}. Immutable; build with
 * {@link #builder()}.
 *
 * @param name           thread name and log prefix
 * @param queueCapacity  bounded queue size (items)
 * @param maxBatch       items per export call at most
 * @param flushInterval  a partial batch is exported after this long
 * @param backPressure   what a full queue does
 * @param blockTimeout   for {@link BackPressure#BLOCK_WITH_TIMEOUT}: how long the caller may wait
 * @param maxAttempts    export attempts per batch (1 = no retry)
 * @param initialBackoff back-off before the second attempt; doubles per attempt
 * @param maxBackoff     back-off ceiling
 * @param jitter         fraction in [0, 1] taken off each back-off at random (0 = none)
 */
public record ProcessorConfig(
        String name,
        int queueCapacity,
        int maxBatch,
        Duration flushInterval,
        BackPressure backPressure,
        Duration blockTimeout,
        int maxAttempts,
        Duration initialBackoff,
        Duration maxBackoff,
        double jitter) {
    public ProcessorConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(backPressure, "backPressure");
        if (queueCapacity < 1 || maxBatch < 1 || maxAttempts < 1) {
            throw new IllegalArgumentException("queueCapacity, maxBatch and maxAttempts must be >= 1: " + queueCapacity
                    + ", " + maxBatch + ", " + maxAttempts);
        }
        if (flushInterval.isNegative()
                || flushInterval.isZero()
                || blockTimeout.isNegative()
                || initialBackoff.isNegative()
                || maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException(
                    "flushInterval must be > 0, timeouts >= 0, maxBackoff >= initialBackoff: " + flushInterval + ", "
                            + blockTimeout + ", " + initialBackoff + ", " + maxBackoff);
        }
        if (!(jitter >= 0 && jitter <= 1)) {
            throw new IllegalArgumentException("jitter must be in [0, 1]: " + jitter);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder()
                .name(name)
                .queueCapacity(queueCapacity)
                .maxBatch(maxBatch)
                .flushInterval(flushInterval)
                .backPressure(backPressure)
                .blockTimeout(blockTimeout)
                .maxAttempts(maxAttempts)
                .initialBackoff(initialBackoff)
                .maxBackoff(maxBackoff)
                .jitter(jitter);
    }

    /** Defaults: 65,536 items, batches of 5,000, 1 s flush, drop-oldest, 5 attempts, 100 ms..5 s back-off, 20% jitter. */
    public static final class Builder {
        private String name = "flowscope-sink";
        private int queueCapacity = 65_536;
        private int maxBatch = 5_000;
        private Duration flushInterval = Duration.ofSeconds(1);
        private BackPressure backPressure = BackPressure.DROP_OLDEST;
        private Duration blockTimeout = Duration.ofMillis(10);
        private int maxAttempts = 5;
        private Duration initialBackoff = Duration.ofMillis(100);
        private Duration maxBackoff = Duration.ofSeconds(5);
        private double jitter = 0.2;

        Builder() {}

        public Builder name(final String v) {
            name = v;
            return this;
        }

        public Builder queueCapacity(final int v) {
            queueCapacity = v;
            return this;
        }

        public Builder maxBatch(final int v) {
            maxBatch = v;
            return this;
        }

        public Builder flushInterval(final Duration v) {
            flushInterval = v;
            return this;
        }

        public Builder backPressure(final BackPressure v) {
            backPressure = v;
            return this;
        }

        public Builder blockTimeout(final Duration v) {
            blockTimeout = v;
            return this;
        }

        public Builder maxAttempts(final int v) {
            maxAttempts = v;
            return this;
        }

        public Builder initialBackoff(final Duration v) {
            initialBackoff = v;
            return this;
        }

        public Builder maxBackoff(final Duration v) {
            maxBackoff = v;
            return this;
        }

        public Builder jitter(final double v) {
            jitter = v;
            return this;
        }

        public ProcessorConfig build() {
            return new ProcessorConfig(
                    name,
                    queueCapacity,
                    maxBatch,
                    flushInterval,
                    backPressure,
                    blockTimeout,
                    maxAttempts,
                    initialBackoff,
                    maxBackoff,
                    jitter);
        }
    }
}
