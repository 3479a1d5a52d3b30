package io.flowscope.dashboards;

import io.flowscope.dashboards.model.Dashboard;
import java.util.List;

/**
 * The flowscope InfluxDB dashboards, over the InfluxDB schema written by flowscope-sinks (sinks/README.md): measurement
 * {@code flow} (tag {@code kind}: step, qp, rank, link, comm), {@code collective} and {@code anomaly}.
 */
public final class FlowscopeDashboards {
    private static final DashboardBuilder.Source DS = DashboardBuilder.Source.INFLUXDB;
    private static final String COMM = "\"comm\" =~ /^$comm$/";
    private static final String HOST = "\"host\" =~ /^$host$/";
    private static final String RANK = "\"rank\" =~ /^$rank$/";
    private static final String PEER = "\"peer\" =~ /^$peer$/";
    private static final String BY_TIME = "GROUP BY time($__interval)";
    /**
     * A rank's series grouped also by its host and GPU: one value each per rank of a communicator, so no more series,
     * and the legend names the rank as people do (the GPU is empty where the rings did not say it).
     */
    private static final String BY_RANK = ", \"rank\", \"host\", \"gpu\"";

    private static final String RANK_LEGEND = "rank $tag_rank · $tag_host gpu $tag_gpu";

    private FlowscopeDashboards() {}

    /** The InfluxDB dashboards (the Prometheus ones: {@link PrometheusDashboards}). */
    public static List<Dashboard> all() {
        return List.of(overview(), communicator(), links(), waitStates(), anomalies());
    }

    private static String flow(final String select, final String kind, final String where, final String groupBy) {
        return "SELECT " + select + " FROM \"flow\" WHERE \"kind\" = '" + kind + "'"
                + (where == null ? "" : " AND " + where) + " AND $timeFilter " + groupBy + " fill(none)";
    }

    static Dashboard overview() {
        return new DashboardBuilder(
                        "flowscope-overview",
                        "flowscope / cluster overview (InfluxDB)",
                        "Every communicator and host at a glance: bandwidth, queued work, collectives, anomalies.",
                        DS)
                .anomalyAnnotations("Anomalies opened", "red", "opened")
                .anomalyAnnotations("Anomalies resolved", "green", "resolved")
                .stat(
                        "Cluster send bandwidth",
                        "Sum over communicators of bytes sent per second (period mean).",
                        6,
                        "Bps",
                        flow("sum(\"bw_period\")", "comm", "\"direction\" = 'send'", BY_TIME))
                .stat(
                        "Outstanding bytes",
                        "Bytes posted and not yet completed, all ranks.",
                        6,
                        "bytes",
                        flow("sum(\"outstanding_bytes\")", "rank", null, BY_TIME))
                .stat(
                        "Collectives",
                        "Collectives finished in the range.",
                        6,
                        "short",
                        "SELECT count(\"duration_ns\") FROM \"collective\" WHERE $timeFilter")
                .stat(
                        "Anomalies opened",
                        "Anomalies opened in the range.",
                        6,
                        "short",
                        "SELECT count(\"summary\") FROM \"anomaly\" WHERE \"state\" = 'opened' AND $timeFilter")
                .timeseries(
                        "Bandwidth per communicator",
                        "Period bandwidth of each communicator and direction.",
                        12,
                        "Bps",
                        "$tag_comm $tag_direction|"
                                + flow("mean(\"bw_period\")", "comm", null, BY_TIME + ", \"comm\", \"direction\""))
                .timeseries(
                        "Outstanding bytes per host",
                        "Queued work: a growing line is a backlog.",
                        12,
                        "bytes",
                        "$tag_host|" + flow("sum(\"outstanding_bytes\")", "rank", null, BY_TIME + ", \"host\""))
                .timeseries(
                        "Collective bus bandwidth",
                        "nccl-tests bus bandwidth by collective.",
                        12,
                        "Bps",
                        "$tag_func|SELECT mean(\"bus_bw\") FROM \"collective\" WHERE $timeFilter " + BY_TIME
                                + ", \"func\" fill(none)")
                .timeseries(
                        "NIC queue pairs: completed bytes per device",
                        "RDMA bytes completed per host and NIC.",
                        12,
                        "bytes",
                        "$tag_host dev $tag_device|"
                                + flow("sum(\"bytes\")", "qp", null, BY_TIME + ", \"host\", \"device\""))
                .build();
    }

    static Dashboard communicator() {
        return new DashboardBuilder(
                        "flowscope-communicator",
                        "flowscope / communicator (InfluxDB)",
                        "One communicator: its ranks, links and collectives.",
                        DS)
                .tagVariable("comm", "Communicator", "flow", null)
                .anomalyAnnotations("Anomalies opened", "red", "opened")
                .timeseries(
                        "Send bandwidth per rank",
                        "Period bandwidth of each rank's sends.",
                        12,
                        "Bps",
                        RANK_LEGEND + "|"
                                + flow(
                                        "mean(\"bw_period\")",
                                        "rank",
                                        COMM + " AND \"direction\" = 'send'",
                                        BY_TIME + BY_RANK))
                .timeseries(
                        "Receive bandwidth per rank",
                        "Period bandwidth of each rank's receives.",
                        12,
                        "Bps",
                        RANK_LEGEND + "|"
                                + flow(
                                        "mean(\"bw_period\")",
                                        "rank",
                                        COMM + " AND \"direction\" = 'recv'",
                                        BY_TIME + BY_RANK))
                .timeseries(
                        "Link bandwidth (rank → peer)",
                        "Each link's send bandwidth; a low line is a slow link.",
                        12,
                        "Bps",
                        "$tag_rank → $tag_peer|"
                                + flow(
                                        "mean(\"bw_period\")",
                                        "link",
                                        COMM + " AND \"direction\" = 'send'",
                                        BY_TIME + ", \"rank\", \"peer\""))
                .timeseries(
                        "Outstanding steps per rank",
                        "Steps posted and not completed at each period's end.",
                        12,
                        "short",
                        RANK_LEGEND + "|" + flow("max(\"outstanding_steps\")", "rank", COMM, BY_TIME + BY_RANK))
                .timeseries(
                        "Collective duration",
                        "GPU-timed duration per collective kind.",
                        12,
                        "ns",
                        "$tag_func|SELECT mean(\"duration_ns\") FROM \"collective\" WHERE " + COMM + " AND $timeFilter "
                                + BY_TIME + ", \"func\" fill(none)")
                .timeseries(
                        "Collective algorithm and bus bandwidth",
                        "nccl-tests algBw and busBw.",
                        12,
                        "Bps",
                        "algBw $tag_func|SELECT mean(\"alg_bw\") FROM \"collective\" WHERE " + COMM
                                + " AND $timeFilter " + BY_TIME + ", \"func\" fill(none)",
                        "busBw $tag_func|SELECT mean(\"bus_bw\") FROM \"collective\" WHERE " + COMM
                                + " AND $timeFilter " + BY_TIME + ", \"func\" fill(none)")
                .table(
                        "Links by mean bandwidth",
                        "Every link of the communicator over the range: the slowest first.",
                        24,
                        "SELECT mean(\"bw_period\") AS \"bandwidth\", max(\"outstanding_bytes\") AS \"max_outstanding\" "
                                + "FROM \"flow\" WHERE \"kind\" = 'link' AND " + COMM + " AND $timeFilter "
                                + "GROUP BY \"rank\", \"peer\", \"direction\"")
                .build();
    }

    static Dashboard links() {
        return new DashboardBuilder(
                        "flowscope-links",
                        "flowscope / link and QP drill-down (InfluxDB)",
                        "One link's channels (step flows) and one host's NIC queue pairs.",
                        DS)
                .tagVariable("host", "Host", "flow", null)
                .tagVariable("comm", "Communicator", "flow", HOST)
                .tagVariable("rank", "Rank", "flow", HOST + " AND " + COMM)
                .tagVariable("peer", "Peer", "flow", HOST + " AND " + COMM + " AND " + RANK)
                .anomalyAnnotations("Anomalies opened", "red", "opened")
                .timeseries(
                        "Period bandwidth per channel",
                        "Step flows of the link, per channel and direction.",
                        12,
                        "Bps",
                        "ch $tag_channel $tag_direction|"
                                + flow(
                                        "mean(\"bw_period\")",
                                        "step",
                                        HOST + " AND " + COMM + " AND " + RANK + " AND " + PEER,
                                        BY_TIME + ", \"channel\", \"direction\""))
                .timeseries(
                        "Window bandwidth per channel",
                        "Bandwidth over the last completions (the engine's window).",
                        12,
                        "Bps",
                        "ch $tag_channel $tag_direction|"
                                + flow(
                                        "mean(\"bw_window\")",
                                        "step",
                                        HOST + " AND " + COMM + " AND " + RANK + " AND " + PEER,
                                        BY_TIME + ", \"channel\", \"direction\""))
                .timeseries(
                        "Outstanding bytes per channel",
                        "Posted, not yet completed.",
                        12,
                        "bytes",
                        "ch $tag_channel $tag_direction|"
                                + flow(
                                        "max(\"outstanding_bytes\")",
                                        "step",
                                        HOST + " AND " + COMM + " AND " + RANK + " AND " + PEER,
                                        BY_TIME + ", \"channel\", \"direction\""))
                .timeseries(
                        "QP window bandwidth",
                        "Per queue pair of the host's NICs.",
                        12,
                        "Bps",
                        "dev $tag_device qp $tag_qp|"
                                + flow("mean(\"bw_window\")", "qp", HOST, BY_TIME + ", \"device\", \"qp\""))
                .timeseries(
                        "QP outstanding work requests",
                        "Posted WRs not yet completed, per queue pair.",
                        12,
                        "short",
                        "dev $tag_device qp $tag_qp|"
                                + flow("max(\"outstanding_steps\")", "qp", HOST, BY_TIME + ", \"device\", \"qp\""))
                .timeseries(
                        "QP work-request latency (max)",
                        "Post → completion, the slowest WR of each period.",
                        12,
                        "ns",
                        "dev $tag_device qp $tag_qp|"
                                + flow("max(\"network_max_ns\")", "qp", HOST, BY_TIME + ", \"device\", \"qp\""))
                .build();
    }

    static Dashboard waitStates() {
        final String where = COMM + " AND " + RANK;
        return new DashboardBuilder(
                        "flowscope-wait-states",
                        "flowscope / wait-state breakdown (InfluxDB)",
                        "Where the time of each step goes: GPU wait, peer wait (credit), network, flush, GPU consume.",
                        DS)
                .tagVariable("comm", "Communicator", "flow", null)
                .tagVariable("rank", "Rank", "flow", COMM)
                .anomalyAnnotations("Anomalies opened", "red", "opened")
                .stacked(
                        "Time in each phase (all selected ranks)",
                        "Summed phase time of the step flows, stacked.",
                        24,
                        "ns",
                        flow(
                                "sum(\"gpu_wait_sum_ns\") AS \"gpu_wait\", sum(\"peer_wait_sum_ns\") AS \"peer_wait\", "
                                        + "sum(\"network_sum_ns\") AS \"network\", sum(\"flush_sum_ns\") AS \"flush\", "
                                        + "sum(\"gpu_consume_sum_ns\") AS \"gpu_consume\"",
                                "step",
                                where,
                                BY_TIME))
                .timeseries(
                        "Mean peer wait per step, by rank",
                        "Send steps waiting for the peer's credit.",
                        12,
                        "ns",
                        RANK_LEGEND + "|"
                                + flow(
                                        "sum(\"peer_wait_sum_ns\") / sum(\"peer_wait_count\")",
                                        "step",
                                        where,
                                        BY_TIME + BY_RANK))
                .timeseries(
                        "Mean GPU wait per step, by rank",
                        "Send steps waiting for the GPU to produce data.",
                        12,
                        "ns",
                        RANK_LEGEND + "|"
                                + flow(
                                        "sum(\"gpu_wait_sum_ns\") / sum(\"gpu_wait_count\")",
                                        "step",
                                        where,
                                        BY_TIME + BY_RANK))
                .timeseries(
                        "Slowest network phase, by rank",
                        "Max network time of a step in each period.",
                        12,
                        "ns",
                        RANK_LEGEND + "|" + flow("max(\"network_max_ns\")", "step", where, BY_TIME + BY_RANK))
                .timeseries(
                        "Mean flush + GPU consume per receive step, by rank",
                        "Receive-side phases.",
                        12,
                        "ns",
                        "flush " + RANK_LEGEND + "|"
                                + flow(
                                        "sum(\"flush_sum_ns\") / sum(\"flush_count\")",
                                        "step",
                                        where + " AND \"direction\" = 'recv'",
                                        BY_TIME + BY_RANK),
                        "consume " + RANK_LEGEND + "|"
                                + flow(
                                        "sum(\"gpu_consume_sum_ns\") / sum(\"gpu_consume_count\")",
                                        "step",
                                        where + " AND \"direction\" = 'recv'",
                                        BY_TIME + BY_RANK))
                .table(
                        "Phase totals per rank",
                        "Summed over the range: which rank waits, and on what.",
                        24,
                        "SELECT sum(\"gpu_wait_sum_ns\") AS \"gpu_wait\", sum(\"peer_wait_sum_ns\") AS \"peer_wait\", "
                                + "sum(\"network_sum_ns\") AS \"network\", sum(\"flush_sum_ns\") AS \"flush\", "
                                + "sum(\"gpu_consume_sum_ns\") AS \"gpu_consume\" FROM \"flow\" WHERE \"kind\" = 'step' AND "
                                + where + " AND $timeFilter GROUP BY \"rank\", \"host\", \"gpu\"")
                .build();
    }

    static Dashboard anomalies() {
        return new DashboardBuilder(
                        "flowscope-anomalies",
                        "flowscope / anomalies (InfluxDB)",
                        "Anomalies as annotations over the bandwidth they disturbed, and as a log.",
                        DS)
                .tagVariable("kind", "Anomaly kind", "anomaly", null)
                .anomalyAnnotations("Anomalies opened", "red", "opened")
                .anomalyAnnotations("Anomalies resolved", "green", "resolved")
                .stat(
                        "Open critical",
                        "Critical anomalies opened in the range.",
                        8,
                        "short",
                        "SELECT count(\"summary\") FROM \"anomaly\" WHERE \"state\" = 'opened' AND \"severity\" = 'critical' "
                                + "AND \"kind\" =~ /^$kind$/ AND $timeFilter")
                .stat(
                        "Resolved",
                        "Anomalies resolved in the range.",
                        8,
                        "short",
                        "SELECT count(\"summary\") FROM \"anomaly\" WHERE \"state\" = 'resolved' AND \"kind\" =~ /^$kind$/ "
                                + "AND $timeFilter")
                .stat(
                        "Mean time to resolve",
                        "Onset to resolution.",
                        8,
                        "ns",
                        "SELECT mean(\"duration_ns\") FROM \"anomaly\" WHERE \"state\" = 'resolved' AND \"kind\" =~ /^$kind$/ "
                                + "AND $timeFilter")
                .timeseries(
                        "Anomalies opened per kind",
                        "Count per interval.",
                        12,
                        "short",
                        "$tag_kind|SELECT count(\"summary\") FROM \"anomaly\" WHERE \"state\" = 'opened' AND "
                                + "\"kind\" =~ /^$kind$/ AND $timeFilter " + BY_TIME + ", \"kind\" fill(none)")
                .timeseries(
                        "Communicator bandwidth (context for the annotations)",
                        "Send bandwidth per communicator.",
                        12,
                        "Bps",
                        "$tag_comm|"
                                + flow("mean(\"bw_period\")", "comm", "\"direction\" = 'send'", BY_TIME + ", \"comm\""))
                .table(
                        "Anomaly log",
                        "Every state change in the range, newest first.",
                        24,
                        "SELECT \"id\", \"summary\", \"kind\", \"severity\", \"state\", \"host\", \"comm\", \"rank\", \"gpu\", "
                                + "\"pid\", \"peer\", \"host_id\" "
                                + "FROM \"anomaly\" WHERE \"kind\" =~ /^$kind$/ AND $timeFilter ORDER BY time DESC")
                .build();
    }
}
