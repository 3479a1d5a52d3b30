package io.flowscope.anomaly;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/** Named evidence figures, collected without allocation; turned into a map only when published. */
final class Evidence {
    private final String[] names = new String[32];
    private final double[] values = new double[32];
    private int n;

    void clear() {
        n = 0;
    }

    void put(final String name, final double value) {
        names[n] = name;
        values[n++] = value;
    }

    void putAll(final Map<String, Double> m) {
        for (final Map.Entry<String, Double> e : m.entrySet()) {
            put(e.getKey(), e.getValue());
        }
    }

    SortedMap<String, Double> toMap() {
        final TreeMap<String, Double> m = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            m.put(names[i], values[i]);
        }
        return Collections.unmodifiableSortedMap(m);
    }
}
