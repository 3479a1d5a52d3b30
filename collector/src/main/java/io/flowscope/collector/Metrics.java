package io.flowscope.collector;

import io.flowscope.anomaly.Anomaly;

/** Prometheus text exposition (version 0.0.4) of a {@link Snapshot}. */
public final class Metrics
{
    private Metrics()
    {
    }

    public static String render(final Snapshot s)
    {
        final Stats st = s.stats();
        final StringBuilder b = new StringBuilder(4096);
        counter(b, "flowscope_events_total", "Engine input events since start", st.eventsTotal());
        gauge(b, "flowscope_ingest_events_per_second", "Engine input events per second over the last interval",
            st.eventsPerSecond());
        counter(b, "flowscope_ring_records_total", "Ring records handed to the engines", st.ringRecordsTotal());
        gauge(b, "flowscope_rings_attached", "Rings attached now", st.ringsAttached());
        counter(b, "flowscope_ring_corrupt_records_total", "Ring records skipped as corrupt (checksum, sequence)",
            st.ringCorrupt());
        counter(b, "flowscope_ring_producer_dropped_total", "Records the producers dropped (full, abandoned, contended)",
            st.ringProducerDrops());
        gauge(b, "flowscope_ring_lag_records", "Records published and not yet drained", st.ringLagRecords());
        producers(b, st.producers(), System.currentTimeMillis());
        counter(b, "flowscope_engine_dropped_total", "Window-engine table-full drops", st.engineDrops());
        gauge(b, "flowscope_drain_loop_lag_ms", "Age of the drain loop's last iteration at the snapshot",
            st.drainLoopLagMs());
        gauge(b, "flowscope_snapshot_age_ms", "Age of the snapshot served",
            Math.max(0, System.currentTimeMillis() - s.wallMs()));
        gauge(b, "flowscope_journal_bytes", "Journal size on disk", st.journalBytes());
        counter(b, "flowscope_journal_entries_total", "Entries journaled", st.journalEntries());
        counter(b, "flowscope_journal_dropped_total", "Entries not journaled (journal stopped)", st.journalDropped());
        gauge(b, "flowscope_journal_up", "1 while the journal is written", st.journalFailure() == null ? 1 : 0);
        counter(b, "flowscope_summaries_total", "Flow summaries emitted by the window engine", st.summariesTotal());
        gauge(b, "flowscope_anomalies_open", "Anomalies open now", st.anomaliesOpen());
        b.append("# HELP flowscope_ingest_failures_total Exceptions caught while handling input, by stage " +
            "(counted and skipped: ingest went on)\n");
        b.append("# TYPE flowscope_ingest_failures_total counter\n");
        for (final IngestFailures.Stage stage : IngestFailures.Stage.values())
        {
            b.append("flowscope_ingest_failures_total{stage=\"").append(stage.label()).append("\"} ")
                .append(st.failures().of(stage)).append('\n');
        }
        b.append("# HELP flowscope_anomaly_open An open anomaly (1) by kind and culprit\n");
        b.append("# TYPE flowscope_anomaly_open gauge\n");
        for (final Anomaly a : s.anomalies())
        {
            if (a.isOpen())
            {
                b.append("flowscope_anomaly_open{kind=\"").append(a.kind()).append("\",comm=\"")
                    .append(FlowRow.hex(a.culprit().commHash())).append("\",rank=\"").append(a.culprit().rank())
                    .append("\",peer=\"").append(a.culprit().peer()).append("\",severity=\"").append(a.severity())
                    .append("\"} 1\n");
            }
        }
        b.append("# HELP flowscope_link_bandwidth_bytes_per_second Link bandwidth over its latest period\n");
        b.append("# TYPE flowscope_link_bandwidth_bytes_per_second gauge\n");
        for (final FlowRow r : s.links())
        {
            b.append("flowscope_link_bandwidth_bytes_per_second{comm=\"").append(r.comm()).append("\",rank=\"")
                .append(r.rank()).append("\",peer=\"").append(r.peer()).append("\",direction=\"").append(r.direction())
                .append("\"} ").append(r.periodBandwidthBytesPerSecond()).append('\n');
        }
        b.append("# HELP flowscope_flow_bandwidth_bytes_per_second Flow bandwidth over its latest period\n");
        b.append("# TYPE flowscope_flow_bandwidth_bytes_per_second gauge\n");
        for (final FlowRow r : s.flows())
        {
            b.append("flowscope_flow_bandwidth_bytes_per_second{host=\"").append(r.host()).append("\",comm=\"")
                .append(r.comm()).append("\",rank=\"").append(r.rank()).append("\",peer=\"").append(r.peer())
                .append("\",channel=\"").append(r.channel()).append("\",direction=\"").append(r.direction())
                .append("\"} ").append(r.periodBandwidthBytesPerSecond()).append('\n');
        }
        for (final FlowRow r : s.qps())
        {
            b.append("flowscope_qp_bandwidth_bytes_per_second{host=\"").append(r.host()).append("\",device=\"")
                .append(r.device()).append("\",qp=\"").append(r.qpNum()).append("\"} ")
                .append(r.periodBandwidthBytesPerSecond()).append('\n');
        }
        return b.toString();
    }

    /** The sinks' counters, labelled by sink name and kind. */
    public static String renderSinks(final java.util.List<ServiceSinks.Status> sinks)
    {
        final StringBuilder b = new StringBuilder(1024);
        if (sinks.isEmpty())
        {
            return "";
        }
        sinkFamily(b, sinks, "flowscope_sink_offered_total", "counter", "Items offered to the sink",
            c -> c.offered());
        sinkFamily(b, sinks, "flowscope_sink_exported_total", "counter", "Items delivered", c -> c.exported());
        sinkFamily(b, sinks, "flowscope_sink_dropped_queue_full_total", "counter",
            "Items dropped because the queue was full", c -> c.droppedQueueFull());
        sinkFamily(b, sinks, "flowscope_sink_dropped_after_retries_total", "counter",
            "Items dropped after the last retry", c -> c.droppedAfterRetries());
        sinkFamily(b, sinks, "flowscope_sink_rejected_total", "counter", "Items the destination refused (4xx)",
            c -> c.rejected());
        sinkFamily(b, sinks, "flowscope_sink_refused_total", "counter",
            "Items refused before the queue (series cap, duplicate alerts)", c -> c.refused());
        sinkFamily(b, sinks, "flowscope_sink_retries_total", "counter", "Export attempts after the first",
            c -> c.retries());
        sinkFamily(b, sinks, "flowscope_sink_queued", "gauge", "Items waiting now", c -> c.queued());
        return b.toString();
    }

    private static void sinkFamily(final StringBuilder b, final java.util.List<ServiceSinks.Status> sinks,
        final String name, final String type, final String help,
        final java.util.function.ToLongFunction<io.flowscope.sink.SinkCounters> value)
    {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        for (final ServiceSinks.Status s : sinks)
        {
            b.append(name).append("{sink=\"").append(s.name()).append("\",kind=\"").append(s.kind()).append("\"} ")
                .append(value.applyAsLong(s.counters())).append('\n');
        }
    }

    /**
     * Each producer's drops by reason, and whether it is dropping now ({@link ProducerDrops}: one series set per
     * attached ring and per recently detached ring that dropped, bounded there).
     */
    private static void producers(final StringBuilder b, final java.util.List<ProducerDrops> producers,
        final long nowWallMs)
    {
        b.append("# HELP flowscope_producer_dropped_total Records a ring producer dropped, by producer and reason " +
            "(full: ring full; abandoned: reclaimed before published; contended: claim gave up)\n");
        b.append("# TYPE flowscope_producer_dropped_total counter\n");
        for (final ProducerDrops p : producers)
        {
            producerSeries(b, "flowscope_producer_dropped_total", p).append(",reason=\"full\"} ")
                .append(p.droppedFull()).append('\n');
            producerSeries(b, "flowscope_producer_dropped_total", p).append(",reason=\"abandoned\"} ")
                .append(p.droppedAbandoned()).append('\n');
            producerSeries(b, "flowscope_producer_dropped_total", p).append(",reason=\"contended\"} ")
                .append(p.droppedContended()).append('\n');
        }
        b.append("# HELP flowscope_producer_dropping 1 while the producer's drops grew within the last " +
            ProducerDrops.DROPPING_MS / 1000 + " s\n");
        b.append("# TYPE flowscope_producer_dropping gauge\n");
        for (final ProducerDrops p : producers)
        {
            producerSeries(b, "flowscope_producer_dropping", p).append("} ").append(p.dropping(nowWallMs) ? 1 : 0)
                .append('\n');
        }
    }

    private static StringBuilder producerSeries(final StringBuilder b, final String name, final ProducerDrops p)
    {
        b.append(name).append("{host=\"");
        escaped(b, p.host());
        return b.append("\",pid=\"").append(p.pid()).append('"');
    }

    /** A label value as the exposition format wants it: backslash, quote and newline escaped. */
    private static void escaped(final StringBuilder b, final String v)
    {
        for (int i = 0; i < v.length(); i++)
        {
            final char c = v.charAt(i);
            switch (c)
            {
                case '\\' -> b.append("\\\\");
                case '"' -> b.append("\\\"");
                case '\n' -> b.append("\\n");
                default -> b.append(c);
            }
        }
    }

    private static void counter(final StringBuilder b, final String name, final String help, final long v)
    {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(" counter\n");
        b.append(name).append(' ').append(v).append('\n');
    }

    private static void gauge(final StringBuilder b, final String name, final String help, final double v)
    {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(" gauge\n");
        b.append(name).append(' ').append(v).append('\n');
    }
}
