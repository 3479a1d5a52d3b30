package io.flowscope.dashboards;

import static io.flowscope.dashboards.PrometheusMetric.ANOMALIES_OPEN;
import static io.flowscope.dashboards.PrometheusMetric.ANOMALY_OPEN;
import static io.flowscope.dashboards.PrometheusMetric.COLLECTIVE_BUS_BYTES;
import static io.flowscope.dashboards.PrometheusMetric.COLLECTIVE_DURATION_BUCKETS;
import static io.flowscope.dashboards.PrometheusMetric.COLLECTIVE_SECONDS;
import static io.flowscope.dashboards.PrometheusMetric.DRAIN_LOOP_LAG;
import static io.flowscope.dashboards.PrometheusMetric.ENGINE_DROPPED;
import static io.flowscope.dashboards.PrometheusMetric.EVENTS;
import static io.flowscope.dashboards.PrometheusMetric.HTTP_INTERNAL_ERRORS;
import static io.flowscope.dashboards.PrometheusMetric.HTTP_REJECTED;
import static io.flowscope.dashboards.PrometheusMetric.INGEST_FAILURES;
import static io.flowscope.dashboards.PrometheusMetric.JOURNAL_BYTES;
import static io.flowscope.dashboards.PrometheusMetric.JOURNAL_DROPPED;
import static io.flowscope.dashboards.PrometheusMetric.JOURNAL_ENTRIES;
import static io.flowscope.dashboards.PrometheusMetric.JOURNAL_UP;
import static io.flowscope.dashboards.PrometheusMetric.LINK_BYTES;
import static io.flowscope.dashboards.PrometheusMetric.QP_BYTES;
import static io.flowscope.dashboards.PrometheusMetric.RINGS_ATTACHED;
import static io.flowscope.dashboards.PrometheusMetric.RING_CORRUPT;
import static io.flowscope.dashboards.PrometheusMetric.RING_LAG;
import static io.flowscope.dashboards.PrometheusMetric.RING_PRODUCER_DROPPED;
import static io.flowscope.dashboards.PrometheusMetric.RING_RECORDS;
import static io.flowscope.dashboards.PrometheusMetric.SINK_DROPPED_AFTER_RETRIES;
import static io.flowscope.dashboards.PrometheusMetric.SINK_DROPPED_QUEUE_FULL;
import static io.flowscope.dashboards.PrometheusMetric.SINK_EXPORTED;
import static io.flowscope.dashboards.PrometheusMetric.SINK_QUEUED;
import static io.flowscope.dashboards.PrometheusMetric.SINK_REJECTED;
import static io.flowscope.dashboards.PrometheusMetric.SNAPSHOT_AGE;
import static io.flowscope.dashboards.PrometheusMetric.SUMMARIES;
import static io.flowscope.dashboards.PrometheusMetric.WAIT_PHASE_BUCKETS;

import io.flowscope.dashboards.DashboardBuilder.Series;
import io.flowscope.dashboards.model.Dashboard;
import java.util.List;

/**
 * The flowscope Prometheus dashboards, over the service's {@code /metrics} ({@link PrometheusMetric}, the one
 * table of names): the same panels as the InfluxDB ones where a metric exists (link and QP bandwidth as rates of
 * their byte counters, anomalies), collectives (bus bandwidth, duration quantiles) and wait phases from their
 * counters and histograms, and the service's own health (ingest, drops, journal, sinks, HTTP), which only
 * Prometheus has. Per-channel flows are not exposed (their cardinality: /api/flows and InfluxDB keep them). Each
 * service is one scrape
 * target: its series carry Prometheus' {@code instance} label, by which the health dashboard is selected.
 */
public final class PrometheusDashboards {
    private static final DashboardBuilder.Source DS = DashboardBuilder.Source.PROMETHEUS;
    private static final String COMM = "comm=~\"$comm\"";
    private static final String HOST = "host=~\"$host\"";
    private static final String RANK = "rank=~\"$rank\"";
    private static final String PEER = "peer=~\"$peer\"";
    private static final String INSTANCE = "instance=~\"$instance\"";

    private PrometheusDashboards() {}

    public static List<Dashboard> all() {
        return List.of(overview(), communicator(), links(), anomalies(), service());
    }

    /** A rank as people name it: its host and GPU are one value each per rank, so grouping by them adds no series. */
    private static final String RANK_LEGEND = "rank {{rank}} · {{host}} gpu {{gpu}}";

    private static Series series(final String legend, final String expr) {
        return new Series(legend, expr);
    }

    private static String and(final String... matchers) {
        return String.join(", ", matchers);
    }

    static Dashboard overview() {
        return new DashboardBuilder(
                        "flowscope-prom-overview",
                        "flowscope / cluster overview (Prometheus)",
                        "Every communicator, host and NIC at a glance, from the services' /metrics.",
                        DS)
                .openAnomalyAnnotations("Anomalies open", "red")
                .stat(
                        "Cluster send bandwidth",
                        "Sum over links of their send bandwidth.",
                        6,
                        LINK_BYTES.unit(),
                        "sum(" + LINK_BYTES.value("direction=\"send\"") + ")")
                .stat(
                        "Anomalies open",
                        "Open now, all services.",
                        6,
                        ANOMALIES_OPEN.unit(),
                        "sum(" + ANOMALIES_OPEN.value("") + ")")
                .stat(
                        "Engine input",
                        "Events per second into the window engines, all services.",
                        6,
                        EVENTS.unit(),
                        "sum(" + EVENTS.value("") + ")")
                .stat(
                        "Rings attached",
                        "Producer rings drained now, all services.",
                        6,
                        RINGS_ATTACHED.unit(),
                        "sum(" + RINGS_ATTACHED.value("") + ")")
                .timeseries(
                        "Bandwidth per communicator",
                        "Summed link bandwidth of each communicator and direction.",
                        12,
                        LINK_BYTES.unit(),
                        List.of(series(
                                "{{comm}} {{direction}}", "sum by (comm, direction) (" + LINK_BYTES.value("") + ")")))
                .timeseries(
                        "Send bandwidth per host",
                        "Summed link bandwidth of each host's sends.",
                        12,
                        LINK_BYTES.unit(),
                        List.of(series("{{host}}", "sum by (host) (" + LINK_BYTES.value("direction=\"send\"") + ")")))
                .timeseries(
                        "NIC queue pairs: bandwidth per device",
                        "RDMA bandwidth per host and NIC.",
                        12,
                        QP_BYTES.unit(),
                        List.of(series(
                                "{{host}} dev {{device}}", "sum by (host, device) (" + QP_BYTES.value("") + ")")))
                .timeseries(
                        "Open anomalies per kind",
                        "How many of each kind are open.",
                        12,
                        ANOMALY_OPEN.unit(),
                        List.of(series(
                                "{{kind}} {{severity}}", "sum by (kind, severity) (" + ANOMALY_OPEN.value("") + ")")))
                .build();
    }

    static Dashboard communicator() {
        return new DashboardBuilder(
                        "flowscope-prom-communicator",
                        "flowscope / communicator (Prometheus)",
                        "One communicator: its ranks and links.",
                        DS)
                .labelVariable("comm", "Communicator", LINK_BYTES, "")
                .openAnomalyAnnotations("Anomalies open", "red")
                .timeseries(
                        "Send bandwidth per rank",
                        "Summed link bandwidth of each rank's sends.",
                        12,
                        LINK_BYTES.unit(),
                        List.of(series(
                                RANK_LEGEND,
                                "sum by (rank, host, gpu) (" + LINK_BYTES.value(and(COMM, "direction=\"send\""))
                                        + ")")))
                .timeseries(
                        "Receive bandwidth per rank",
                        "Summed link bandwidth of each rank's receives.",
                        12,
                        LINK_BYTES.unit(),
                        List.of(series(
                                RANK_LEGEND,
                                "sum by (rank, host, gpu) (" + LINK_BYTES.value(and(COMM, "direction=\"recv\""))
                                        + ")")))
                .timeseries(
                        "Link bandwidth (rank → peer)",
                        "Each link's send bandwidth; a low line is a slow link.",
                        12,
                        LINK_BYTES.unit(),
                        List.of(series(
                                "{{rank}} → {{peer}}",
                                "sum by (rank, peer) (" + LINK_BYTES.value(and(COMM, "direction=\"send\"")) + ")")))
                .timeseries(
                        "Collective bus bandwidth",
                        "Bus bytes over the time the collectives took (nccl-tests' "
                                + "busbw, duration-weighted over ranks), per operation.",
                        12,
                        COLLECTIVE_BUS_BYTES.unit(),
                        List.of(series(
                                "{{op}}",
                                "sum by (op) (" + COLLECTIVE_BUS_BYTES.value(COMM) + ") / sum by (op) ("
                                        + COLLECTIVE_SECONDS.value(COMM) + ")")))
                .timeseries(
                        "Collective duration",
                        "Median and 99th percentile per operation, all ranks.",
                        12,
                        COLLECTIVE_DURATION_BUCKETS.unit(),
                        List.of(
                                series(
                                        "p50 {{op}}",
                                        "histogram_quantile(0.5, sum by (op, le) ("
                                                + COLLECTIVE_DURATION_BUCKETS.value(COMM) + "))"),
                                series(
                                        "p99 {{op}}",
                                        "histogram_quantile(0.99, sum by (op, le) ("
                                                + COLLECTIVE_DURATION_BUCKETS.value(COMM) + "))")))
                .timeseries(
                        "Open anomalies of the communicator",
                        "By kind and culprit.",
                        12,
                        ANOMALY_OPEN.unit(),
                        List.of(series(
                                "{{kind}} rank {{rank}} peer {{peer}}",
                                "sum by (kind, rank, peer) (" + ANOMALY_OPEN.value(COMM) + ")")))
                .table(
                        "Links by bandwidth",
                        "Every link of the communicator at the end of the range: sort by the value.",
                        24,
                        "sum by (rank, peer, direction) (" + LINK_BYTES.value(COMM) + ")")
                .build();
    }

    static Dashboard links() {
        final String link = and(HOST, COMM, RANK, PEER);
        return new DashboardBuilder(
                        "flowscope-prom-links",
                        "flowscope / link and QP drill-down (Prometheus)",
                        "One link by direction and one host's NIC queue pairs (channels: the InfluxDB dashboards).",
                        DS)
                .labelVariable("host", "Host", LINK_BYTES, "")
                .labelVariable("comm", "Communicator", LINK_BYTES, HOST)
                .labelVariable("rank", "Rank", LINK_BYTES, and(HOST, COMM))
                .labelVariable("peer", "Peer", LINK_BYTES, and(HOST, COMM, RANK))
                .openAnomalyAnnotations("Anomalies open", "red")
                .timeseries(
                        "Bandwidth of the link",
                        "The link's bytes per second, per direction.",
                        24,
                        LINK_BYTES.unit(),
                        List.of(series(
                                "{{rank}} → {{peer}} {{direction}}",
                                "sum by (rank, peer, direction) (" + LINK_BYTES.value(link) + ")")))
                .timeseries(
                        "QP bandwidth",
                        "Per queue pair of the host's NICs.",
                        24,
                        QP_BYTES.unit(),
                        List.of(series(
                                "{{host}} dev {{device}} qp {{qp}}",
                                "sum by (host, device, qp) (" + QP_BYTES.value(HOST) + ")")))
                .build();
    }

    static Dashboard anomalies() {
        final String kind = "kind=~\"$kind\"";
        return new DashboardBuilder(
                        "flowscope-prom-anomalies",
                        "flowscope / anomalies (Prometheus)",
                        "Open anomalies as annotations over the bandwidth they disturb, and as a table.",
                        DS)
                .labelVariable("kind", "Anomaly kind", ANOMALY_OPEN, "")
                .openAnomalyAnnotations("Anomalies open", "red")
                .stat(
                        "Open critical",
                        "Critical anomalies open now.",
                        12,
                        ANOMALY_OPEN.unit(),
                        "count(" + ANOMALY_OPEN.value(and(kind, "severity=~\"(?i)critical\"")) + ") or vector(0)")
                .stat(
                        "Open",
                        "Anomalies open now.",
                        12,
                        ANOMALY_OPEN.unit(),
                        "count(" + ANOMALY_OPEN.value(kind) + ") or vector(0)")
                .timeseries(
                        "Open anomalies per kind",
                        "How many of each kind are open.",
                        12,
                        ANOMALY_OPEN.unit(),
                        List.of(series("{{kind}}", "sum by (kind) (" + ANOMALY_OPEN.value(kind) + ")")))
                .timeseries(
                        "Communicator bandwidth (context for the annotations)",
                        "Send bandwidth per communicator.",
                        12,
                        LINK_BYTES.unit(),
                        List.of(series("{{comm}}", "sum by (comm) (" + LINK_BYTES.value("direction=\"send\"") + ")")))
                .table(
                        "Open anomalies",
                        "Every anomaly open at the end of the range, with its culprit.",
                        24,
                        ANOMALY_OPEN.value(kind))
                .build();
    }

    static Dashboard service() {
        return new DashboardBuilder(
                        "flowscope-prom-service",
                        "flowscope / service health (Prometheus)",
                        "The service itself: ingest, drops, journal, sinks and HTTP, per scrape target.",
                        DS)
                .labelVariable("instance", "Service", EVENTS, "")
                .openAnomalyAnnotations("Anomalies open", "red")
                .stat(
                        "Journal up",
                        "1 while the journal is written.",
                        6,
                        JOURNAL_UP.unit(),
                        "min(" + JOURNAL_UP.value(INSTANCE) + ")")
                .stat(
                        "Drain loop lag",
                        "Age of the drain loop's last iteration (worst service).",
                        6,
                        DRAIN_LOOP_LAG.unit(),
                        "max(" + DRAIN_LOOP_LAG.value(INSTANCE) + ")")
                .stat(
                        "Ring lag",
                        "Records published and not yet drained.",
                        6,
                        RING_LAG.unit(),
                        "sum(" + RING_LAG.value(INSTANCE) + ")")
                .stat(
                        "Ingest failures",
                        "Exceptions caught while handling input, per second.",
                        6,
                        INGEST_FAILURES.unit(),
                        "sum(" + INGEST_FAILURES.value(INSTANCE) + ")")
                .timeseries(
                        "Engine input and ring records",
                        "Per second, per service.",
                        12,
                        EVENTS.unit(),
                        List.of(
                                series("events {{instance}}", "sum by (instance) (" + EVENTS.value(INSTANCE) + ")"),
                                series(
                                        "ring records {{instance}}",
                                        "sum by (instance) (" + RING_RECORDS.value(INSTANCE) + ")"),
                                series(
                                        "summaries {{instance}}",
                                        "sum by (instance) (" + SUMMARIES.value(INSTANCE) + ")")))
                .timeseries(
                        "Drops",
                        "Records lost per second: in the producers' rings (full, abandoned, contended), "
                                + "corrupt, engine table full, not journaled.",
                        12,
                        RING_PRODUCER_DROPPED.unit(),
                        List.of(
                                series(
                                        "producers {{instance}}",
                                        "sum by (instance) (" + RING_PRODUCER_DROPPED.value(INSTANCE) + ")"),
                                series(
                                        "corrupt {{instance}}",
                                        "sum by (instance) (" + RING_CORRUPT.value(INSTANCE) + ")"),
                                series(
                                        "engine {{instance}}",
                                        "sum by (instance) (" + ENGINE_DROPPED.value(INSTANCE) + ")"),
                                series(
                                        "journal {{instance}}",
                                        "sum by (instance) (" + JOURNAL_DROPPED.value(INSTANCE) + ")")))
                .timeseries(
                        "Ingest failures by stage",
                        "Exceptions caught per second; ingest went on.",
                        12,
                        INGEST_FAILURES.unit(),
                        List.of(series(
                                "{{stage}} {{instance}}",
                                "sum by (instance, stage) (" + INGEST_FAILURES.value(INSTANCE) + ")")))
                .timeseries(
                        "Lag",
                        "Drain loop and the snapshot served.",
                        12,
                        DRAIN_LOOP_LAG.unit(),
                        List.of(
                                series(
                                        "drain loop {{instance}}",
                                        "max by (instance) (" + DRAIN_LOOP_LAG.value(INSTANCE) + ")"),
                                series(
                                        "snapshot {{instance}}",
                                        "max by (instance) (" + SNAPSHOT_AGE.value(INSTANCE) + ")")))
                .timeseries(
                        "Wait phases (p99)",
                        "99th percentile of each wait phase of the steps, per direction and " + "service.",
                        12,
                        WAIT_PHASE_BUCKETS.unit(),
                        List.of(series(
                                "{{direction}} {{phase}} {{instance}}",
                                "histogram_quantile(0.99, sum by (instance, direction, phase, le) ("
                                        + WAIT_PHASE_BUCKETS.value(INSTANCE) + "))")))
                .timeseries(
                        "Journal size",
                        "On disk.",
                        12,
                        JOURNAL_BYTES.unit(),
                        List.of(series("{{instance}}", "sum by (instance) (" + JOURNAL_BYTES.value(INSTANCE) + ")")))
                .timeseries(
                        "Journal entries",
                        "Entries journaled per second.",
                        12,
                        JOURNAL_ENTRIES.unit(),
                        List.of(series("{{instance}}", "sum by (instance) (" + JOURNAL_ENTRIES.value(INSTANCE) + ")")))
                .timeseries(
                        "Sinks: delivered and lost",
                        "Items per second by sink: exported, dropped (queue full, after "
                                + "retries), rejected by the destination.",
                        12,
                        SINK_EXPORTED.unit(),
                        List.of(
                                series(
                                        "exported {{sink}} {{kind}}",
                                        "sum by (sink, kind) (" + SINK_EXPORTED.value(INSTANCE) + ")"),
                                series(
                                        "queue full {{sink}} {{kind}}",
                                        "sum by (sink, kind) (" + SINK_DROPPED_QUEUE_FULL.value(INSTANCE) + ")"),
                                series(
                                        "after retries {{sink}} {{kind}}",
                                        "sum by (sink, kind) (" + SINK_DROPPED_AFTER_RETRIES.value(INSTANCE) + ")"),
                                series(
                                        "rejected {{sink}} {{kind}}",
                                        "sum by (sink, kind) (" + SINK_REJECTED.value(INSTANCE) + ")")))
                .timeseries(
                        "Sinks: queued",
                        "Items waiting per sink.",
                        12,
                        SINK_QUEUED.unit(),
                        List.of(series(
                                "{{sink}} {{kind}}", "sum by (sink, kind) (" + SINK_QUEUED.value(INSTANCE) + ")")))
                .timeseries(
                        "HTTP requests refused",
                        "4xx by reason and 500s, per second.",
                        24,
                        HTTP_REJECTED.unit(),
                        List.of(
                                series("{{reason}}", "sum by (reason) (" + HTTP_REJECTED.value(INSTANCE) + ")"),
                                series("internal error", "sum(" + HTTP_INTERNAL_ERRORS.value(INSTANCE) + ")")))
                .build();
    }
}
