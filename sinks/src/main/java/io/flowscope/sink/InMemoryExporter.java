package io.flowscope.sink;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Keeps what it is given, for tests; can be told to fail its next exports. */
public final class InMemoryExporter<T> implements Exporter<T> {
    private final List<T> received = new CopyOnWriteArrayList<>();
    private final List<Integer> batchSizes = new CopyOnWriteArrayList<>();
    private final AtomicInteger failNext = new AtomicInteger();
    private final AtomicInteger calls = new AtomicInteger();
    private volatile ExportResult failure = ExportResult.RETRYABLE;
    private volatile boolean shutdown;

    @Override
    public ExportResult export(final List<T> batch) {
        calls.incrementAndGet();
        if (shutdown) {
            return ExportResult.FAILED;
        }
        if (failNext.get() > 0 && failNext.getAndDecrement() > 0) {
            return failure;
        }
        batchSizes.add(batch.size());
        received.addAll(batch);
        return ExportResult.SUCCESS;
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    /** The next {@code n} export calls answer {@code result} without keeping anything. */
    public void failNext(final int n, final ExportResult result) {
        failure = result;
        failNext.set(n);
    }

    public List<T> received() {
        return new ArrayList<>(received);
    }

    public List<Integer> batchSizes() {
        return new ArrayList<>(batchSizes);
    }

    public int calls() {
        return calls.get();
    }

    @Override
    public String toString() {
        return "InMemoryExporter{received=" + received.size() + ", shutdown=" + shutdown + '}';
    }
}
