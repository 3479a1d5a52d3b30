package io.flowscope.window;

import java.util.function.Supplier;

/**
 * A fixed set of preallocated objects: a free stack and a dense list of the active ones (swap-remove), so
 * that sweeps visit only live objects. Nothing is allocated after construction.
 */
final class Pool<T extends Pooled> {
    private final Object[] free;
    private final Object[] active;
    /** A time per active object, dense and parallel to {@code active} (a sweep scans it without touching objects). */
    private final long[] stamp;

    private int freeCount;
    private int activeCount;

    Pool(final int capacity, final Supplier<T> factory) {
        free = new Object[capacity];
        active = new Object[capacity];
        stamp = new long[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = factory.get();
        }
        freeCount = capacity;
    }

    /** @return a free object, now active, or null when all are in use. */
    @SuppressWarnings("unchecked")
    T acquire() {
        if (freeCount == 0) {
            return null;
        }
        final T t = (T) free[--freeCount];
        free[freeCount] = null;
        t.activeIndex = activeCount;
        active[activeCount++] = t;
        return t;
    }

    void release(final T t) {
        final int i = t.activeIndex;
        final Object last = active[--activeCount];
        active[i] = last;
        stamp[i] = stamp[activeCount];
        ((Pooled) last).activeIndex = i;
        active[activeCount] = null;
        t.activeIndex = -1;
        free[freeCount++] = t;
    }

    /** The stamp of the i-th active object. */
    long stamp(final int i) {
        return stamp[i];
    }

    void stamp(final T t, final long value) {
        stamp[t.activeIndex] = value;
    }

    int activeCount() {
        return activeCount;
    }

    int capacity() {
        return free.length;
    }

    @SuppressWarnings("unchecked")
    T active(final int i) {
        return (T) active[i];
    }
}
