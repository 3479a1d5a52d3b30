package io.flowscope.sink.influx;

import java.util.HashSet;
import java.util.Set;

/**
 * Bounds the distinct series (measurement + tag set) a sink creates in the database: the first
 * {@code maxSeries} series are admitted for good, points of any further series are refused and counted.
 * Thread-safe (the flow and anomaly streams may come from different threads).
 */
public final class SeriesLimiter {
    private final int maxSeries;
    private final Set<String> known;
    private long refused;

    public SeriesLimiter(final int maxSeries) {
        if (maxSeries < 1) {
            throw new IllegalArgumentException("maxSeries must be >= 1: " + maxSeries);
        }
        this.maxSeries = maxSeries;
        this.known = new HashSet<>(Math.min(maxSeries, 1 << 16) * 2);
    }

    public synchronized boolean admit(final String seriesKey) {
        if (known.contains(seriesKey)) {
            return true;
        }
        if (known.size() >= maxSeries) {
            refused++;
            return false;
        }
        known.add(seriesKey);
        return true;
    }

    public synchronized long refused() {
        return refused;
    }

    public synchronized int series() {
        return known.size();
    }

    public int maxSeries() {
        return maxSeries;
    }
}
