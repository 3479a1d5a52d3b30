package io.flowscope.dashboards;

import java.util.List;

/**
 * The service's {@code /metrics} as the Prometheus dashboards query them: the one place their names, kinds, units
 * and labels are written (collector/README.md, section Metrics). A rename is one row: a counter's panels plot
 * {@code rate(...[$__rate_interval])} (bytes per second of a {@code _bytes_total}), a gauge's its sample; a
 * histogram is its {@code _bucket} counter, read through {@code histogram_quantile}. collector's
 * {@code PrometheusDashboardsAgainstScrapeTest} checks every metric and label the dashboards use against a scrape of
 * the running service.
 */
public enum PrometheusMetric {
    LINK_BYTES("flowscope_link_bytes_total", Kind.COUNTER, "Bps", "host", "comm", "rank", "gpu", "peer", "direction"),
    QP_BYTES("flowscope_qp_bytes_total", Kind.COUNTER, "Bps", "host", "device", "qp"),
    COLLECTIVE_BUS_BYTES("flowscope_collective_bus_bytes_total", Kind.COUNTER, "Bps", "comm", "op"),
    COLLECTIVE_SECONDS("flowscope_collective_seconds_total", Kind.COUNTER, "percentunit", "comm", "op"),
    COLLECTIVE_DURATION_BUCKETS("flowscope_collective_duration_seconds_bucket", Kind.COUNTER, "s", "comm", "op", "le"),
    WAIT_PHASE_BUCKETS("flowscope_wait_phase_seconds_bucket", Kind.COUNTER, "s", "direction", "phase", "le"),
    ANOMALIES_OPEN("flowscope_anomalies_open", Kind.GAUGE, "short"),
    ANOMALY_OPEN("flowscope_anomaly_open", Kind.GAUGE, "short", "kind", "comm", "rank", "peer", "severity"),
    EVENTS("flowscope_events_total", Kind.COUNTER, "cps"),
    RING_RECORDS("flowscope_ring_records_total", Kind.COUNTER, "cps"),
    RINGS_ATTACHED("flowscope_rings_attached", Kind.GAUGE, "short"),
    RING_LAG("flowscope_ring_lag_records", Kind.GAUGE, "short"),
    RING_CORRUPT("flowscope_ring_corrupt_records_total", Kind.COUNTER, "cps"),
    RING_PRODUCER_DROPPED("flowscope_ring_producer_dropped_total", Kind.COUNTER, "cps"),
    ENGINE_DROPPED("flowscope_engine_dropped_total", Kind.COUNTER, "cps"),
    SUMMARIES("flowscope_summaries_total", Kind.COUNTER, "cps"),
    INGEST_FAILURES("flowscope_ingest_failures_total", Kind.COUNTER, "cps", "stage"),
    DRAIN_LOOP_LAG("flowscope_drain_loop_lag_seconds", Kind.GAUGE, "s"),
    SNAPSHOT_AGE("flowscope_snapshot_age_seconds", Kind.GAUGE, "s"),
    JOURNAL_UP("flowscope_journal_up", Kind.GAUGE, "bool_on_off"),
    JOURNAL_BYTES("flowscope_journal_bytes", Kind.GAUGE, "bytes"),
    JOURNAL_ENTRIES("flowscope_journal_entries_total", Kind.COUNTER, "cps"),
    JOURNAL_DROPPED("flowscope_journal_dropped_total", Kind.COUNTER, "cps"),
    SINK_EXPORTED("flowscope_sink_exported_total", Kind.COUNTER, "cps", "sink", "kind"),
    SINK_DROPPED_QUEUE_FULL("flowscope_sink_dropped_queue_full_total", Kind.COUNTER, "cps", "sink", "kind"),
    SINK_DROPPED_AFTER_RETRIES("flowscope_sink_dropped_after_retries_total", Kind.COUNTER, "cps", "sink", "kind"),
    SINK_REJECTED("flowscope_sink_rejected_total", Kind.COUNTER, "cps", "sink", "kind"),
    SINK_QUEUED("flowscope_sink_queued", Kind.GAUGE, "short", "sink", "kind"),
    HTTP_REJECTED("flowscope_http_requests_rejected_total", Kind.COUNTER, "reqps", "reason"),
    HTTP_INTERNAL_ERRORS("flowscope_http_internal_errors_total", Kind.COUNTER, "reqps");

    /** How a panel plots a metric: a counter as its per-second rate, a gauge as its sample. */
    public enum Kind {
        COUNTER,
        GAUGE
    }

    /** Labels Prometheus adds to every series of a scrape target; not on the service's own samples. */
    public static final List<String> TARGET_LABELS = List.of("instance", "job");

    private final String metricName;
    private final Kind kind;
    private final String unit;
    private final List<String> labels;

    PrometheusMetric(final String metricName, final Kind kind, final String unit, final String... labels) {
        this.metricName = metricName;
        this.kind = kind;
        this.unit = unit;
        this.labels = List.of(labels);
    }

    public String metricName() {
        return metricName;
    }

    public Kind kind() {
        return kind;
    }

    /** Grafana's unit id of what a panel plots: a counter's rate per second, a gauge's sample. */
    public String unit() {
        return unit;
    }

    /** The labels of the service's samples that the dashboards select, group or name series by. */
    public List<String> labels() {
        return labels;
    }

    /** The series selected by {@code matchers} (PromQL label matchers, may be empty). */
    public String select(final String matchers) {
        return metricName + (matchers.isEmpty() ? "" : "{" + matchers + "}");
    }

    /** What a panel plots: {@code rate(m{matchers}[$__rate_interval])} for a counter, {@code m{matchers}} for a gauge. */
    public String value(final String matchers) {
        return kind == Kind.COUNTER ? "rate(" + select(matchers) + "[$__rate_interval])" : select(matchers);
    }
}
