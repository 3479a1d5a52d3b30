package io.flowscope.collector.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * What both readers of recorded input keep alike ({@link JournalReader}, {@link TraceReader}): the time range asked
 * for, the batches and entries read, the damage skipped, and the first and last event times seen.
 */
abstract class EventLogCounts implements EventLog {
    private long fromNs = Long.MIN_VALUE;
    private long toNs = Long.MAX_VALUE;
    long documents;
    long entries;
    private long corrupt;
    private String lastCorruption;
    /** The damaged ranges skipped, as said (at most {@link #KEPT_RANGES}; {@link #damagedRanges()} counts all). */
    private final List<String> ranges = new ArrayList<>();

    private long rangeCount;
    private Consumer<String> onDamage = s -> {};
    static final int KEPT_RANGES = 1000;
    private long firstEventNs = Long.MIN_VALUE;
    private long lastEventNs = Long.MIN_VALUE;

    /** Only events at or after {@code fromNs} and at or before {@code toNs} go to the listener. */
    final void range(final long fromNs, final long toNs) {
        this.fromNs = fromNs;
        this.toNs = toNs;
    }

    /** Notes an event's time; whether it lies in the range asked for. */
    final boolean inRange(final long t) {
        if (firstEventNs == Long.MIN_VALUE) {
            firstEventNs = t;
        }
        lastEventNs = t;
        return t >= fromNs && t <= toNs;
    }

    /** One damaged batch (journal) or line (trace) skipped, and why (a range of its own). */
    final void corrupt(final String why) {
        damaged(1, why);
    }

    /** A damaged range of {@code units} batches (journal) or lines (trace) skipped, where and why. */
    final void damaged(final long units, final String whereAndWhy) {
        corrupt += units;
        lastCorruption = whereAndWhy;
        rangeCount++;
        if (ranges.size() < KEPT_RANGES) {
            ranges.add(whereAndWhy);
        }
        onDamage.accept(whereAndWhy);
    }

    @Override
    public final EventLog onDamage(final Consumer<String> listener) {
        this.onDamage = listener;
        return this;
    }

    @Override
    public final long damagedRanges() {
        return rangeCount;
    }

    @Override
    public final List<String> damage() {
        return List.copyOf(ranges);
    }

    @Override
    public final long documents() {
        return documents;
    }

    @Override
    public final long entries() {
        return entries;
    }

    @Override
    public final long corruptDocuments() {
        return corrupt;
    }

    @Override
    public final String lastCorruption() {
        return lastCorruption;
    }

    @Override
    public final long firstEventNs() {
        return firstEventNs;
    }

    @Override
    public final long lastEventNs() {
        return lastEventNs;
    }
}
