package io.flowscope.sink;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Turns an event time (ns of one host's clock, usually CLOCK_MONOTONIC: see window-engine/README.md) into
 * Unix-epoch ns for a time-series database or an alert.
 */
@FunctionalInterface
public interface EventClock {
    long toEpochNanos(long hostId, long eventNs);

    /** Event times are already Unix-epoch ns (replays of recorded wall times, tests). */
    static EventClock epoch() {
        return (hostId, eventNs) -> eventNs;
    }

    /**
     * Each host's offset is fixed when its first event time is seen: offset = wall-clock now − event time.
     * Good to the delay between the event and its summary (a period, ~1 ms) for live streams; not for replays.
     */
    static EventClock anchoredAtFirstSight(final LongSupplier wallClockEpochNanos) {
        final ConcurrentHashMap<Long, Long> offsets = new ConcurrentHashMap<>();
        return (hostId, eventNs) ->
                eventNs + offsets.computeIfAbsent(hostId, h -> wallClockEpochNanos.getAsLong() - eventNs);
    }

    /** {@link #anchoredAtFirstSight} with the system clock. */
    static EventClock anchoredAtFirstSight() {
        return anchoredAtFirstSight(() -> {
            final java.time.Instant now = java.time.Instant.now();
            return now.getEpochSecond() * 1_000_000_000L + now.getNano();
        });
    }
}
