package io.flowscope.collector.http;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.summary.Phase;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.LiveTracker;
import io.flowscope.collector.pipeline.ProducerDrops;
import io.flowscope.collector.pipeline.RankIdentity;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.collector.pipeline.TrafficCounters;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The service's own families for the Prometheus client library, built at scrape time from the latest published
 * {@link Snapshot} (its {@link Stats} and {@link TrafficCounters.View}): nothing here runs on the drain thread, and
 * nothing on the drain thread touches the library. Names, units and labels: collector/README.md, "Metrics".
 * <p>
 * Hosts are labelled by name (the rank's ring hostname, else the source's name of the host, else its hex id), ranks
 * by their GPU ({@code gpu}: the CUDA device ordinal in the rank's process; {@code gpu_uuid}: the UUID DCGM labels
 * {@code UUID}; {@code pci_bus_id}: what nvidia-smi and
 * DCGM show) where the rings' communicator tables said it. Who a rank is is learnt from the snapshots' live view and
 * culprits and kept (at most {@link #MAX_IDENTITIES}), so a counter's labels do not change when its rank goes quiet.
 */
final class ServiceMetrics implements MultiCollector {
    static final int MAX_IDENTITIES = 16_384;
    private static final String[] DIRECTIONS = {"send", "recv"};

    private record Key(long hostId, long commHash, int rank) {}

    private final Supplier<Snapshot> snapshots;
    private final Supplier<LongFunction<String>> hostNames;
    private final Map<Key, RankIdentity> identities = new ConcurrentHashMap<>();

    ServiceMetrics(final Supplier<Snapshot> snapshots, final Supplier<LongFunction<String>> hostNames) {
        this.snapshots = snapshots;
        this.hostNames = hostNames;
    }

    @Override
    public MetricSnapshots collect() {
        final Snapshot s = snapshots.get();
        final Stats st = s.stats();
        learn(s);
        final LongFunction<String> names = hostNames.get();
        final MetricSnapshots.Builder out = MetricSnapshots.builder();
        counter(out, "flowscope_events", "Engine input events since start", null, st.eventsTotal());
        gauge(
                out,
                "flowscope_ingest_events_per_second",
                "Engine input events per second over the last publish " + "interval",
                null,
                st.eventsPerSecond());
        counter(out, "flowscope_ring_records", "Ring records handed to the engines", null, st.ringRecordsTotal());
        gauge(out, "flowscope_rings_attached", "Rings attached now", null, st.ringsAttached());
        counter(
                out,
                "flowscope_ring_corrupt_records",
                "Ring records skipped as corrupt (checksum, sequence)",
                null,
                st.ringCorrupt());
        counter(
                out,
                "flowscope_ring_producer_dropped",
                "Records the producers dropped (full, abandoned, " + "contended), every ring's",
                null,
                st.ringProducerDrops());
        gauge(out, "flowscope_ring_lag_records", "Records published and not yet drained", null, st.ringLagRecords());
        producers(out, st.producers(), System.currentTimeMillis());
        counter(out, "flowscope_engine_dropped", "Window-engine table-full drops", null, st.engineDrops());
        gauge(
                out,
                "flowscope_drain_loop_lag_seconds",
                "Age of the drain loop's last iteration at the snapshot",
                Unit.SECONDS,
                st.drainLoopLagMs() / 1e3);
        gauge(
                out,
                "flowscope_snapshot_age_seconds",
                "Age of the snapshot served",
                Unit.SECONDS,
                Math.max(0, System.currentTimeMillis() - s.wallMs()) / 1e3);
        gauge(out, "flowscope_journal_bytes", "Journal size on disk", Unit.BYTES, st.journalBytes());
        counter(out, "flowscope_journal_entries", "Entries journaled", null, st.journalEntries());
        counter(
                out,
                "flowscope_journal_dropped",
                "Entries not journaled (journal paused or stopped)",
                null,
                st.journalDropped());
        gauge(out, "flowscope_journal_up", "1 while the journal is written", null, st.journalFailure() == null ? 1 : 0);
        counter(out, "flowscope_summaries", "Flow summaries emitted by the window engine", null, st.summariesTotal());
        gauge(out, "flowscope_anomalies_open", "Anomalies open now", null, st.anomaliesOpen());

        final CounterSnapshot.Builder failures = CounterSnapshot.builder()
                .name("flowscope_ingest_failures")
                .help("Exceptions caught while handling input, by stage (counted and skipped: ingest went on)");
        for (final IngestFailures.Stage stage : IngestFailures.Stage.values()) {
            failures.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(Labels.of("stage", stage.label()))
                    .value(st.failures().of(stage))
                    .build());
        }
        out.metricSnapshot(failures.build());

        final GaugeSnapshot.Builder open =
                GaugeSnapshot.builder().name("flowscope_anomaly_open").help("An open anomaly (1) by kind and culprit");
        for (final Anomaly a : s.anomalies()) {
            if (a.isOpen()) {
                final RankIdentity who = s.culprits().get(a.id());
                open.dataPoint(GaugeDataPointSnapshot.builder()
                        .value(1)
                        .labels(Labels.of(
                                "kind",
                                String.valueOf(a.kind()),
                                "comm",
                                FlowRow.hex(a.culprit().commHash()),
                                "host",
                                host(a.culprit().hostId(), who, names),
                                "rank",
                                String.valueOf(a.culprit().rank()),
                                "peer",
                                String.valueOf(a.culprit().peer()),
                                "severity",
                                String.valueOf(a.severity())))
                        .build());
            }
        }
        out.metricSnapshot(open.build());
        traffic(out, st.traffic(), names);
        return out.build();
    }

    /** Who the ranks are, from the snapshot's live view and culprits: kept, bounded. */
    private void learn(final Snapshot s) {
        if (identities.size() >= MAX_IDENTITIES) {
            return;
        }
        for (final LiveTracker.CommView c : s.live().comms()) {
            for (final LiveTracker.RankView r : c.ranks()) {
                if (r.who() != null && r.who().isRank()) {
                    identities.putIfAbsent(new Key(r.hostId(), c.commHash(), r.rank()), r.who());
                }
            }
        }
        for (final RankIdentity who : s.culprits().values()) {
            if (who.isRank()) {
                identities.putIfAbsent(new Key(who.hostId(), who.commHash(), who.rank()), who);
            }
        }
    }

    private static String host(final long hostId, final RankIdentity who, final LongFunction<String> names) {
        if (who != null && !who.hostname().isEmpty()) {
            return who.hostname();
        }
        final String name = names == null ? null : names.apply(hostId);
        return name != null && !name.isEmpty() ? name : FlowRow.hex(hostId);
    }

    /** host, comm, rank, gpu, pci_bus_id, gpu_uuid (empty where unknown) and the extra label pairs. */
    private Labels rankLabels(
            final long hostId,
            final long commHash,
            final int rank,
            final LongFunction<String> names,
            final String... more) {
        final RankIdentity who = identities.get(new Key(hostId, commHash, rank));
        final List<String> nv = new ArrayList<>(10 + more.length);
        nv.addAll(List.of(
                "host",
                host(hostId, who, names),
                "comm",
                FlowRow.hex(commHash),
                "rank",
                String.valueOf(rank),
                "gpu",
                who == null || who.cudaDevice() < 0 ? "" : String.valueOf(who.cudaDevice()),
                "pci_bus_id",
                who == null ? "" : who.pciBusId(),
                "gpu_uuid",
                who == null ? "" : who.gpuUuid()));
        nv.addAll(List.of(more));
        return Labels.of(nv.toArray(new String[0]));
    }

    private void traffic(
            final MetricSnapshots.Builder out, final TrafficCounters.View t, final LongFunction<String> names) {
        final CounterSnapshot.Builder linkBytes = CounterSnapshot.builder()
                .name("flowscope_link_bytes")
                .unit(Unit.BYTES)
                .help("Bytes of the steps a link completed (rank to peer of a communicator, by direction)");
        final CounterSnapshot.Builder linkSteps =
                CounterSnapshot.builder().name("flowscope_link_steps").help("Steps a link completed");
        for (int i = 0; i < t.links(); i++) {
            final Labels l = rankLabels(
                    t.linkHost()[i],
                    t.linkComm()[i],
                    t.linkRank()[i],
                    names,
                    "peer",
                    String.valueOf(t.linkPeer()[i]),
                    "direction",
                    t.linkSend()[i] ? "send" : "recv");
            linkBytes.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.linkBytes()[i])
                    .build());
            linkSteps.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.linkSteps()[i])
                    .build());
        }
        out.metricSnapshot(linkBytes.build());
        out.metricSnapshot(linkSteps.build());

        final CounterSnapshot.Builder qpBytes = CounterSnapshot.builder()
                .name("flowscope_qp_bytes")
                .unit(Unit.BYTES)
                .help("Bytes of the work requests a QP completed (host, NIC device, QP number)");
        final CounterSnapshot.Builder qpRequests =
                CounterSnapshot.builder().name("flowscope_qp_work_requests").help("Work requests a QP completed");
        for (int i = 0; i < t.qps(); i++) {
            final Labels l = Labels.of(
                    "host",
                    host(t.qpHost()[i], null, names),
                    "device",
                    String.valueOf(t.qpDevice()[i]),
                    "qp",
                    String.valueOf(t.qpNum()[i]));
            qpBytes.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.qpBytes()[i])
                    .build());
            qpRequests.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.qpCompletions()[i])
                    .build());
        }
        out.metricSnapshot(qpBytes.build());
        out.metricSnapshot(qpRequests.build());

        final CounterSnapshot.Builder colls = CounterSnapshot.builder()
                .name("flowscope_collectives")
                .help("Collectives (and P2p operations) a rank completed, by function");
        final CounterSnapshot.Builder collBytes = CounterSnapshot.builder()
                .name("flowscope_collective_bytes")
                .unit(Unit.BYTES)
                .help("Algorithm bytes of the collectives a rank completed (nccl-tests' size)");
        final CounterSnapshot.Builder busBytes = CounterSnapshot.builder()
                .name("flowscope_collective_bus_bytes")
                .unit(Unit.BYTES)
                .help("Bus bytes of the collectives a rank completed (algorithm bytes x nccl-tests' "
                        + "bus factor): rate(..._bus_bytes_total) / rate(flowscope_collective_seconds_total) is the bus "
                        + "bandwidth");
        final CounterSnapshot.Builder collSeconds = CounterSnapshot.builder()
                .name("flowscope_collective_seconds")
                .unit(Unit.SECONDS)
                .help("Time the collectives a rank completed took (GPU time where known)");
        for (int i = 0; i < t.rankCollectives(); i++) {
            final Labels l = rankLabels(t.rcHost()[i], t.rcComm()[i], t.rcRank()[i], names, "op", op(t.rcFunc()[i]));
            colls.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.rcCount()[i])
                    .build());
            collBytes.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.rcBytes()[i])
                    .build());
            busBytes.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.rcBusBytes()[i])
                    .build());
            collSeconds.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(l)
                    .value(t.rcDurationNs()[i] / 1e9)
                    .build());
        }
        out.metricSnapshot(colls.build());
        out.metricSnapshot(collBytes.build());
        out.metricSnapshot(busBytes.build());
        out.metricSnapshot(collSeconds.build());

        final double[] collBounds = seconds(TrafficCounters.COLLECTIVE_BOUNDS_NS);
        final int perSeries = collBounds.length;
        final HistogramSnapshot.Builder durations = HistogramSnapshot.builder()
                .name("flowscope_collective_duration_seconds")
                .unit(Unit.SECONDS)
                .help("Duration of the collectives of a communicator, by function, all ranks (GPU time where known)");
        for (int h = 0; h < t.collectiveHistograms(); h++) {
            final long[] counts = java.util.Arrays.copyOfRange(t.chBuckets(), h * perSeries, (h + 1) * perSeries);
            durations.dataPoint(HistogramDataPointSnapshot.builder()
                    .labels(Labels.of("comm", FlowRow.hex(t.chComm()[h]), "op", op(t.chFunc()[h])))
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(collBounds, counts))
                    .sum(t.chSumNs()[h] / 1e9)
                    .build());
        }
        out.metricSnapshot(durations.build());

        final double[] busBounds = java.util.Arrays.copyOf(
                TrafficCounters.BUS_BANDWIDTH_BOUNDS, TrafficCounters.BUS_BANDWIDTH_BOUNDS.length + 1);
        busBounds[busBounds.length - 1] = Double.POSITIVE_INFINITY;
        final HistogramSnapshot.Builder bus = HistogramSnapshot.builder()
                .name("flowscope_collective_bus_bandwidth_bytes_per_second")
                .unit(new Unit("bytes_per_second"))
                .help(
                        "Bus bandwidth of each collective of a communicator (nccl-tests' busbw: algorithm bytes / duration x "
                                + "bus factor), by function, all ranks");
        for (int h = 0; h < t.collectiveHistograms(); h++) {
            final long[] counts =
                    java.util.Arrays.copyOfRange(t.chBusBuckets(), h * busBounds.length, (h + 1) * busBounds.length);
            bus.dataPoint(HistogramDataPointSnapshot.builder()
                    .labels(Labels.of("comm", FlowRow.hex(t.chComm()[h]), "op", op(t.chFunc()[h])))
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(busBounds, counts))
                    .sum(t.chBusSum()[h])
                    .build());
        }
        out.metricSnapshot(bus.build());

        final double[] phaseBounds = seconds(TrafficCounters.PHASE_BOUNDS_NS);
        final HistogramSnapshot.Builder phases = HistogramSnapshot.builder()
                .name("flowscope_wait_phase_seconds")
                .unit(Unit.SECONDS)
                .help("Durations of the steps' wait phases, all flows of a direction, since the "
                        + "service started (bucket bounds within 1 %: HdrHistogram, 2 digits)");
        for (int d = 0; d < 2; d++) {
            for (int p = 0; p < Phase.COUNT; p++) {
                final long[] cumulative = t.phaseBuckets()[d * Phase.COUNT + p];
                if (cumulative == null) {
                    continue;
                }
                final long[] counts = new long[cumulative.length];
                for (int b = 0; b < counts.length; b++) {
                    counts[b] = cumulative[b] - (b == 0 ? 0 : cumulative[b - 1]);
                }
                phases.dataPoint(HistogramDataPointSnapshot.builder()
                        .labels(Labels.of("direction", DIRECTIONS[d], "phase", Phase.name(p)))
                        .classicHistogramBuckets(ClassicHistogramBuckets.of(phaseBounds, counts))
                        .sum(t.phaseSumNs()[d * Phase.COUNT + p] / 1e9)
                        .build());
            }
        }
        out.metricSnapshot(phases.build());

        final CounterSnapshot.Builder dropped = CounterSnapshot.builder()
                .name("flowscope_metrics_series_dropped")
                .help("Summaries not exposed because their family's series table was full (collector/README.md, "
                        + "Metrics: the caps)");
        for (int f = 0; f < TrafficCounters.FAMILIES.length; f++) {
            dropped.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(Labels.of("family", TrafficCounters.FAMILIES[f]))
                    .value(t.dropped()[f])
                    .build());
        }
        out.metricSnapshot(dropped.build());
    }

    /** Bounds in seconds, +Inf last. */
    private static double[] seconds(final long[] boundsNs) {
        final double[] out = new double[boundsNs.length + 1];
        for (int i = 0; i < boundsNs.length; i++) {
            out[i] = boundsNs[i] / 1e9;
        }
        out[boundsNs.length] = Double.POSITIVE_INFINITY;
        return out;
    }

    private static final String[] OPS = {
        "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "send", "recv", "send_recv"
    };

    static String op(final int func) {
        return func >= 0 && func < OPS.length ? OPS[func] : "unknown";
    }

    /**
     * Each producer's drops by reason, and whether it is dropping now ({@link ProducerDrops}: one series set per
     * attached ring and per recently detached ring that dropped, bounded there).
     */
    private static void producers(
            final MetricSnapshots.Builder out, final List<ProducerDrops> producers, final long nowWallMs) {
        final CounterSnapshot.Builder dropped = CounterSnapshot.builder()
                .name("flowscope_producer_dropped")
                .help("Records a ring producer dropped, by producer and reason (full: ring full; abandoned: reclaimed "
                        + "before published; contended: claim gave up)");
        final GaugeSnapshot.Builder dropping = GaugeSnapshot.builder()
                .name("flowscope_producer_dropping")
                .help("1 while the producer's drops grew within the last " + ProducerDrops.DROPPING_MS / 1000 + " s");
        for (final ProducerDrops p : producers) {
            final String pid = String.valueOf(p.pid());
            dropped.dataPoint(CounterDataPointSnapshot.builder()
                    .value(p.droppedFull())
                    .labels(Labels.of("host", p.host(), "pid", pid, "reason", "full"))
                    .build());
            dropped.dataPoint(CounterDataPointSnapshot.builder()
                    .value(p.droppedAbandoned())
                    .labels(Labels.of("host", p.host(), "pid", pid, "reason", "abandoned"))
                    .build());
            dropped.dataPoint(CounterDataPointSnapshot.builder()
                    .value(p.droppedContended())
                    .labels(Labels.of("host", p.host(), "pid", pid, "reason", "contended"))
                    .build());
            dropping.dataPoint(GaugeDataPointSnapshot.builder()
                    .value(p.dropping(nowWallMs) ? 1 : 0)
                    .labels(Labels.of("host", p.host(), "pid", pid))
                    .build());
        }
        out.metricSnapshot(dropped.build());
        out.metricSnapshot(dropping.build());
    }

    private static void counter(
            final MetricSnapshots.Builder out, final String name, final String help, final Unit unit, final double v) {
        final CounterSnapshot.Builder b = CounterSnapshot.builder()
                .name(name)
                .help(help)
                .dataPoint(CounterDataPointSnapshot.builder().value(v).build());
        if (unit != null) {
            b.unit(unit);
        }
        out.metricSnapshot(b.build());
    }

    private static void gauge(
            final MetricSnapshots.Builder out, final String name, final String help, final Unit unit, final double v) {
        final GaugeSnapshot.Builder b = GaugeSnapshot.builder()
                .name(name)
                .help(help)
                .dataPoint(GaugeDataPointSnapshot.builder().value(v).build());
        if (unit != null) {
            b.unit(unit);
        }
        out.metricSnapshot(b.build());
    }
}
