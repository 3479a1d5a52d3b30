package io.flowscope.collector.http;

import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.collector.pipeline.Snapshot;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * {@code /metrics} through the Prometheus Java client library: one registry per HTTP server holding the service's
 * families ({@link ServiceMetrics}, read from the latest snapshot at scrape time), the HTTP server's refusals, the
 * JVM's metrics (instrumentation-jvm), {@code flowscope_build_info}, and what components beside the service still
 * render as text (the sinks' and the fleet's counters: {@link #fromText}). The format is the one the scraper's
 * {@code Accept} asks for, as the library negotiates it (OpenMetrics for Prometheus, text 0.0.4 otherwise).
 */
public final class Metrics {
    private static final ExpositionFormats FORMATS = ExpositionFormats.init();

    private final PrometheusRegistry registry = new PrometheusRegistry();

    /**
     * @param snapshots  the latest published snapshot
     * @param hostNames  host names by id (the source's), or null
     * @param rejections the HTTP server's refusals
     * @param extraText  Prometheus text 0.0.4 of components that render their own (sinks, fleet)
     */
    public Metrics(
            final Supplier<Snapshot> snapshots,
            final Supplier<LongFunction<String>> hostNames,
            final HttpRejections rejections,
            final Supplier<String> extraText) {
        registry.register(nonEmpty(new ServiceMetrics(snapshots, hostNames)));
        registry.register(nonEmpty(() -> rejections(rejections)));
        registry.register(nonEmpty(() -> fromText(extraText.get())));
        JvmMetrics.builder().register(registry);
        final Info build = Info.builder()
                .name("flowscope_build_info")
                .help("The collector's version and the Java runtime it runs on")
                .labelNames("version", "java_version")
                .register(registry);
        build.setLabelValues(version(), System.getProperty("java.version", ""));
    }

    /** A body and its content type. */
    public record Exposition(String contentType, byte[] body) {}

    /**
     * One scrape in the format {@code accept} asks for; {@code names} the families asked for by name ({@code
     * name[]} parameters: empty for all).
     */
    public Exposition scrape(final String accept, final List<String> names) {
        final ExpositionFormatWriter writer = FORMATS.findWriter(accept);
        final Predicate<String> filter = names.isEmpty() ? n -> true : names::contains;
        final ByteArrayOutputStream out = new ByteArrayOutputStream(16_384);
        try {
            writer.write(out, registry.scrape(filter));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Exposition(writer.getContentType(), out.toByteArray());
    }

    /** The scrape as Prometheus text 0.0.4 (tests, tools). */
    public String text() {
        return new String(
                scrape("text/plain; version=0.0.4", List.of()).body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    PrometheusRegistry registry() {
        return registry;
    }

    static String version() {
        try (InputStream in = Metrics.class.getResourceAsStream("build-info.properties")) {
            if (in != null) {
                final Properties p = new Properties();
                p.load(in);
                final String v = p.getProperty("version", "");
                if (!v.isEmpty() && !v.startsWith("${")) {
                    return v;
                }
            }
        } catch (final IOException e) {
            // no version known: said as such below
        }
        return "unknown";
    }

    /** Families without a data point are left out (a family of links before any traffic). */
    private static MultiCollector nonEmpty(final MultiCollector c) {
        return () -> {
            final MetricSnapshots.Builder b = MetricSnapshots.builder();
            for (final MetricSnapshot m : c.collect()) {
                if (!m.getDataPoints().isEmpty()) {
                    b.metricSnapshot(m);
                }
            }
            return b.build();
        };
    }

    private static MetricSnapshots rejections(final HttpRejections r) {
        final CounterSnapshot.Builder rejected = CounterSnapshot.builder()
                .name("flowscope_http_requests_rejected")
                .help("HTTP requests refused with a 4xx, by reason");
        for (final HttpRejections.Reason reason : HttpRejections.Reason.values()) {
            rejected.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(Labels.of("reason", reason.label()))
                    .value(r.rejected(reason))
                    .build());
        }
        return MetricSnapshots.of(
                rejected.build(),
                CounterSnapshot.builder()
                        .name("flowscope_http_connection_errors")
                        .help("HTTP connections ended by an I/O "
                                + "error (reset by the client, TLS handshake refused)")
                        .dataPoint(CounterDataPointSnapshot.builder()
                                .value(r.connectionErrors())
                                .build())
                        .build(),
                CounterSnapshot.builder()
                        .name("flowscope_http_internal_errors")
                        .help("HTTP requests answered 500 (a " + "handler failed)")
                        .dataPoint(CounterDataPointSnapshot.builder()
                                .value(r.internalErrors())
                                .build())
                        .build());
    }

    /**
     * Counter and gauge families written as Prometheus text 0.0.4 ({@code # HELP}, {@code # TYPE}, samples with
     * escaped label values: what {@link #renderSinks} and the fleet write) as the library's snapshots, so that they
     * are served in whatever format the scraper negotiates. A line this subset does not hold is an error: it would
     * be a metric silently lost.
     */
    static MetricSnapshots fromText(final String text) {
        final Map<String, String> help = new LinkedHashMap<>();
        final Map<String, String> type = new LinkedHashMap<>();
        final Map<String, List<Object[]>> samples = new LinkedHashMap<>();
        for (final String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            if (line.startsWith("# HELP ")) {
                final String[] p = line.substring(7).split(" ", 2);
                help.put(p[0], p.length > 1 ? p[1] : "");
                continue;
            }
            if (line.startsWith("# TYPE ")) {
                final String[] p = line.substring(7).split(" ", 2);
                type.put(p[0], p[1].trim());
                continue;
            }
            if (line.startsWith("#")) {
                continue;
            }
            final int brace = line.indexOf('{');
            final int space = line.lastIndexOf(' ');
            final String name = brace >= 0 && brace < space ? line.substring(0, brace) : line.substring(0, space);
            final List<String> labels = new ArrayList<>();
            if (brace >= 0 && brace < space) {
                parseLabels(line, brace + 1, labels);
            }
            final double value = Double.parseDouble(line.substring(space + 1).trim());
            samples.computeIfAbsent(name, k -> new ArrayList<>()).add(new Object[] {labels, value});
        }
        final MetricSnapshots.Builder out = MetricSnapshots.builder();
        for (final Map.Entry<String, List<Object[]>> e : samples.entrySet()) {
            final String name = e.getKey();
            final String t = type.getOrDefault(name, "gauge");
            if (t.equals("counter")) {
                final CounterSnapshot.Builder b = CounterSnapshot.builder()
                        .name(name.endsWith("_total") ? name.substring(0, name.length() - 6) : name)
                        .help(help.getOrDefault(name, name));
                for (final Object[] s : e.getValue()) {
                    b.dataPoint(CounterDataPointSnapshot.builder()
                            .labels(labels(s[0]))
                            .value((Double) s[1])
                            .build());
                }
                out.metricSnapshot(b.build());
            } else if (t.equals("gauge")) {
                final GaugeSnapshot.Builder b =
                        GaugeSnapshot.builder().name(name).help(help.getOrDefault(name, name));
                for (final Object[] s : e.getValue()) {
                    b.dataPoint(GaugeDataPointSnapshot.builder()
                            .labels(labels(s[0]))
                            .value((Double) s[1])
                            .build());
                }
                out.metricSnapshot(b.build());
            } else {
                throw new IllegalArgumentException("metric " + name + " of type " + t + ": only counters and gauges");
            }
        }
        return out.build();
    }

    @SuppressWarnings("unchecked")
    private static Labels labels(final Object names) {
        return Labels.of(((List<String>) names).toArray(new String[0]));
    }

    /** name="value" pairs from {@code at} to the closing brace, values unescaped, into {@code out}. */
    private static void parseLabels(final String line, final int at, final List<String> out) {
        int i = at;
        while (i < line.length() && line.charAt(i) != '}') {
            final int eq = line.indexOf('=', i);
            out.add(line.substring(i, eq).trim());
            final StringBuilder v = new StringBuilder();
            int j = eq + 2; // past ="
            while (line.charAt(j) != '"') {
                char c = line.charAt(j);
                if (c == '\\') {
                    c = line.charAt(++j);
                    c = c == 'n' ? '\n' : c;
                }
                v.append(c);
                j++;
            }
            out.add(v.toString());
            i = j + 1;
            if (i < line.length() && line.charAt(i) == ',') {
                i++;
            }
        }
    }

    /** The sinks' counters, labelled by sink name and kind (Prometheus text, read back by {@link #fromText}). */
    public static String renderSinks(final List<ServiceSinks.Status> sinks) {
        final StringBuilder b = new StringBuilder(1024);
        if (sinks.isEmpty()) {
            return "";
        }
        sinkFamily(b, sinks, "flowscope_sink_offered_total", "counter", "Items offered to the sink", c -> c.offered());
        sinkFamily(b, sinks, "flowscope_sink_exported_total", "counter", "Items delivered", c -> c.exported());
        sinkFamily(
                b,
                sinks,
                "flowscope_sink_dropped_queue_full_total",
                "counter",
                "Items dropped because the queue was full",
                c -> c.droppedQueueFull());
        sinkFamily(
                b,
                sinks,
                "flowscope_sink_dropped_after_retries_total",
                "counter",
                "Items dropped after the last retry",
                c -> c.droppedAfterRetries());
        sinkFamily(
                b,
                sinks,
                "flowscope_sink_rejected_total",
                "counter",
                "Items the destination refused (4xx)",
                c -> c.rejected());
        sinkFamily(
                b,
                sinks,
                "flowscope_sink_refused_total",
                "counter",
                "Items refused before the queue (series cap, duplicate alerts)",
                c -> c.refused());
        sinkFamily(
                b,
                sinks,
                "flowscope_sink_retries_total",
                "counter",
                "Export attempts after the first",
                c -> c.retries());
        sinkFamily(b, sinks, "flowscope_sink_queued", "gauge", "Items waiting now", c -> c.queued());
        return b.toString();
    }

    private static void sinkFamily(
            final StringBuilder b,
            final List<ServiceSinks.Status> sinks,
            final String name,
            final String type,
            final String help,
            final java.util.function.ToLongFunction<io.flowscope.sink.SinkCounters> value) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        for (final ServiceSinks.Status s : sinks) {
            b.append(name)
                    .append("{sink=\"")
                    .append(escaped(s.name()))
                    .append("\",kind=\"")
                    .append(escaped(s.kind()))
                    .append("\"} ")
                    .append(value.applyAsLong(s.counters()))
                    .append('\n');
        }
    }

    private static String escaped(final String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
