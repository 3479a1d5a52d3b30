package io.flowscope.collector.fleet;

/** Prometheus text (0.0.4) for the fleet's counters, in the style of {@code io.flowscope.collector.http.Metrics}. */
final class FleetMetrics {
    private FleetMetrics() {}

    static void counter(
            final StringBuilder b, final String name, final String help, final String labels, final long v) {
        family(b, name, help, "counter")
                .append(name)
                .append(labels)
                .append(' ')
                .append(v)
                .append('\n');
    }

    static void gauge(
            final StringBuilder b, final String name, final String help, final String labels, final double v) {
        family(b, name, help, "gauge")
                .append(name)
                .append(labels)
                .append(' ')
                .append(v)
                .append('\n');
    }

    private static StringBuilder family(
            final StringBuilder b, final String name, final String help, final String type) {
        return b.append("# HELP ")
                .append(name)
                .append(' ')
                .append(help)
                .append('\n')
                .append("# TYPE ")
                .append(name)
                .append(' ')
                .append(type)
                .append('\n');
    }

    /** A label value with Prometheus' escapes. */
    static String label(final String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
