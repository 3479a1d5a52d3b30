package io.flowscope.sink;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one shared plumbing of every sink: a bounded queue filled by any thread ({@link #offer}, which never
 * blocks under {@link BackPressure#DROP_OLDEST}), drained by one daemon worker into batches of at most
 * {@code maxBatch} items, exported through an {@link Exporter} with exponential back-off and jitter between
 * attempts, and counted ({@link #counters()}). Items of a batch still failing after {@code maxAttempts} are
 * dropped and counted; the worker then goes on with the next batch, so a destination that comes back is used
 * again at once.
 */
public final class BatchingProcessor<T> implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(BatchingProcessor.class.getName());

    private final ProcessorConfig config;
    private final Exporter<T> exporter;
    private final ArrayDeque<T> queue;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final Condition notFull = lock.newCondition();
    private final Condition progress = lock.newCondition();
    private final Thread worker;

    private final AtomicLong offered = new AtomicLong();
    private final AtomicLong exported = new AtomicLong();
    private final AtomicLong droppedQueueFull = new AtomicLong();
    private final AtomicLong droppedAfterRetries = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();

    /** Guarded by lock: items accepted into the queue, items finished (any outcome) or evicted. */
    private long enqueued;

    private long finished;
    private boolean flushRequested;
    private volatile boolean closing;
    private volatile boolean stopNow;
    private volatile String lastFailure = "";

    public BatchingProcessor(final ProcessorConfig config, final Exporter<T> exporter) {
        this.config = config;
        this.exporter = exporter;
        this.queue = new ArrayDeque<>(Math.min(config.queueCapacity(), 1 << 16));
        this.worker = new Thread(this::run, config.name());
        this.worker.setDaemon(true);
        this.worker.start();
    }

    /**
     * Queues one item. Under drop-oldest it never waits: a full queue evicts its oldest item (counted). Under
     * block-with-timeout it waits at most {@code blockTimeout}, then drops this item (counted).
     *
     * @return false when this item was dropped (queue full and no room in time, or the processor is closed)
     */
    public boolean offer(final T item) {
        offered.incrementAndGet();
        if (closing) {
            droppedQueueFull.incrementAndGet();
            return false;
        }
        lock.lock();
        try {
            if (queue.size() >= config.queueCapacity()) {
                if (config.backPressure() == BackPressure.DROP_OLDEST) {
                    queue.pollFirst();
                    droppedQueueFull.incrementAndGet();
                    finished++;
                } else {
                    long waitNs = config.blockTimeout().toNanos();
                    while (queue.size() >= config.queueCapacity() && waitNs > 0 && !closing) {
                        waitNs = notFull.awaitNanos(waitNs);
                    }
                    if (queue.size() >= config.queueCapacity() || closing) {
                        droppedQueueFull.incrementAndGet();
                        return false;
                    }
                }
            }
            queue.addLast(item);
            enqueued++;
            if (queue.size() >= config.maxBatch()) {
                notEmpty.signal();
            }
            return true;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            droppedQueueFull.incrementAndGet();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Exports what is queued now and waits until every item queued before this call is finished (exported,
     * dropped or rejected), or the timeout passes.
     *
     * @return true when everything queued before the call was finished in time
     */
    public boolean flush(final Duration timeout) {
        lock.lock();
        try {
            final long target = enqueued;
            flushRequested = true;
            notEmpty.signal();
            long waitNs = timeout.toNanos();
            while (finished < target && waitNs > 0) {
                waitNs = progress.awaitNanos(waitNs);
            }
            return finished >= target;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops accepting items, exports what is queued (with retries) for at most {@code timeout}, then stops the
     * worker and shuts the exporter down.
     *
     * @return true when everything queued was finished in time
     */
    public boolean shutdown(final Duration timeout) {
        final boolean drained = flush(timeout);
        closing = true;
        stopNow = true;
        lock.lock();
        try {
            notEmpty.signalAll();
            notFull.signalAll();
        } finally {
            lock.unlock();
        }
        worker.interrupt();
        try {
            worker.join(TimeUnit.SECONDS.toMillis(5));
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
        try {
            // items that raced in after the final flush: never exported, so counted as dropped
            droppedQueueFull.addAndGet(queue.size());
            finished += queue.size();
            queue.clear();
            progress.signalAll();
        } finally {
            lock.unlock();
        }
        exporter.shutdown();
        return drained;
    }

    @Override
    public void close() {
        shutdown(Duration.ofSeconds(5));
    }

    public SinkCounters counters() {
        final long queued;
        lock.lock();
        try {
            queued = queue.size();
        } finally {
            lock.unlock();
        }
        return new SinkCounters(
                offered.get(),
                exported.get(),
                droppedQueueFull.get(),
                droppedAfterRetries.get(),
                rejected.get(),
                retries.get(),
                batches.get(),
                queued,
                0);
    }

    /** The message of the last failed attempt ("" when none failed yet). */
    public String lastFailure() {
        return lastFailure;
    }

    public ProcessorConfig config() {
        return config;
    }

    /**
     * The back-off before attempt {@code attempt + 1}: {@code min(maxBackoff, initialBackoff × 2^(attempt−1))},
     * less up to {@code jitter} of it: {@code × (1 − jitter × random)}, random in [0, 1).
     */
    public static long backoffNanos(final ProcessorConfig config, final int attempt, final double random) {
        final long initial = config.initialBackoff().toNanos();
        final long max = config.maxBackoff().toNanos();
        final int shift = Math.min(Math.max(attempt - 1, 0), 62);
        final long base = initial > (max >> shift) ? max : Math.min(max, initial << shift);
        return (long) (base * (1.0 - config.jitter() * random));
    }

    private void run() {
        final List<T> batch = new ArrayList<>(config.maxBatch());
        while (!stopNow) {
            batch.clear();
            lock.lock();
            try {
                long waitNs = config.flushInterval().toNanos();
                while (queue.size() < config.maxBatch() && !flushRequested && waitNs > 0 && !stopNow) {
                    waitNs = notEmpty.awaitNanos(waitNs);
                }
                while (batch.size() < config.maxBatch() && !queue.isEmpty()) {
                    batch.add(queue.pollFirst());
                }
                if (queue.isEmpty()) {
                    flushRequested = false;
                }
                notFull.signalAll();
                if (batch.isEmpty()) {
                    progress.signalAll();
                    continue;
                }
            } catch (final InterruptedException e) {
                if (stopNow) {
                    break;
                }
                continue;
            } finally {
                lock.unlock();
            }
            exportWithRetries(batch);
            lock.lock();
            try {
                finished += batch.size();
                progress.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private void exportWithRetries(final List<T> batch) {
        for (int attempt = 1; ; attempt++) {
            ExportResult result;
            try {
                result = exporter.export(batch);
            } catch (final RuntimeException e) {
                lastFailure = e.toString();
                result = ExportResult.RETRYABLE;
            }
            if (result != ExportResult.SUCCESS && !exporter.lastError().isEmpty()) {
                lastFailure = exporter.lastError();
            }
            if (result == ExportResult.SUCCESS) {
                exported.addAndGet(batch.size());
                batches.incrementAndGet();
                return;
            }
            if (result == ExportResult.FAILED) {
                rejected.addAndGet(batch.size());
                LOG.log(
                        System.Logger.Level.WARNING,
                        "{0}: {1} items rejected by the destination: {2}",
                        config.name(),
                        batch.size(),
                        lastFailure);
                return;
            }
            if (attempt >= config.maxAttempts() || stopNow) {
                droppedAfterRetries.addAndGet(batch.size());
                LOG.log(
                        System.Logger.Level.WARNING,
                        "{0}: {1} items dropped after {2} attempts: {3}",
                        config.name(),
                        batch.size(),
                        attempt,
                        lastFailure);
                return;
            }
            retries.incrementAndGet();
            final long sleepNs =
                    backoffNanos(config, attempt, ThreadLocalRandom.current().nextDouble());
            try {
                TimeUnit.NANOSECONDS.sleep(sleepNs);
            } catch (final InterruptedException e) {
                if (stopNow) {
                    droppedAfterRetries.addAndGet(batch.size());
                    return;
                }
            }
        }
    }

    @Override
    public String toString() {
        return "BatchingProcessor{" + config + ", exporter=" + exporter + '}';
    }
}
