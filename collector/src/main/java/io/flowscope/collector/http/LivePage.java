package io.flowscope.collector.http;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.collector.pipeline.FlowRow;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.pipeline.LiveTracker;
import io.flowscope.collector.pipeline.RankIdentity;
import io.flowscope.collector.pipeline.Snapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.LongFunction;

/**
 * The JSON the live page reads, from one {@link Snapshot} (collector/README.md, "The live page"): per communicator
 * the heatmap with each link's fraction of normal and each rank's identity and waits; the anomalies as a timeline,
 * one row per kind and culprit with its episodes folded in; the hosts by name with their latest time; a link's
 * series. Built on the HTTP side, from immutable data only.
 */
public final class LivePage {
    /** Episodes a timeline row lists (its count covers them all). */
    public static final int EPISODES = 50;

    private LivePage() {}

    /** Host names: the source's (a ring's hostname, a simulated node's), else what the rings' entries told. */
    static LongFunction<String> names(final Snapshot s, final LongFunction<String> source) {
        final Map<Long, String> known = new HashMap<>();
        s.culprits().values().forEach(who -> put(known, who));
        s.live().comms().forEach(c -> c.ranks().forEach(r -> put(known, r.who())));
        return id -> {
            final String n = source.apply(id);
            return n != null && !n.isEmpty() ? n : known.get(id);
        };
    }

    private static void put(final Map<Long, String> known, final RankIdentity who) {
        if (who != null && !who.hostname().isEmpty()) {
            known.put(who.hostId(), who.hostname());
        }
    }

    /** What {@code /api/live} serves beyond the snapshot's heatmaps, anomalies and stats. */
    static void live(
            final Map<String, Object> m,
            final Snapshot s,
            final LongFunction<String> sourceNames,
            final String ringDir) {
        final LongFunction<String> names = names(s, sourceNames);
        final List<Map<String, Object>> hosts = new ArrayList<>();
        s.hostNowNs().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            final Map<String, Object> h = new LinkedHashMap<>();
            h.put("host", FlowRow.hex(e.getKey()));
            h.put("hostname", names.apply(e.getKey()));
            h.put("nowNs", e.getValue());
            hosts.add(h);
        });
        m.put("hosts", hosts);
        m.put("timeline", timeline(s, names));
        final Map<String, Object> src = new LinkedHashMap<>();
        src.put("description", s.stats().source());
        src.put("ringDir", ringDir);
        m.put("source", src);
    }

    /**
     * Per communicator: ranks, the rank × peer send-bandwidth matrix (bytes/s, latest period), the matrix of each
     * link's fraction of normal (null: no traffic, or its baseline still learnt), its links ({@link
     * LiveTracker.LinkView}) and its ranks: host, name, process, GPU where known, and recent waits.
     */
    static List<Map<String, Object>> heatmaps(
            final Snapshot s, final String onlyComm, final LongFunction<String> sourceNames) {
        final LongFunction<String> names = names(s, sourceNames);
        final Map<String, List<FlowRow>> byComm = new LinkedHashMap<>();
        for (final FlowRow r : s.links()) {
            if ("send".equals(r.direction()) && (onlyComm == null || onlyComm.equals(r.comm()))) {
                byComm.computeIfAbsent(r.comm(), k -> new ArrayList<>()).add(r);
            }
        }
        final Map<String, LiveTracker.CommView> views = new LinkedHashMap<>();
        for (final LiveTracker.CommView c : s.live().comms()) {
            final String comm = FlowRow.hex(c.commHash());
            if (onlyComm == null || onlyComm.equals(comm)) {
                views.put(comm, c);
                byComm.computeIfAbsent(comm, k -> new ArrayList<>());
            }
        }
        final List<Map<String, Object>> out = new ArrayList<>();
        byComm.forEach((comm, rows) -> {
            final LiveTracker.CommView view = views.get(comm);
            final TreeSet<Integer> ranks = new TreeSet<>();
            rows.forEach(r -> {
                ranks.add(r.rank());
                ranks.add(r.peer());
            });
            if (view != null) {
                view.links().forEach(l -> {
                    ranks.add(l.rank());
                    ranks.add(l.peer());
                });
                view.ranks().forEach(r -> ranks.add(r.rank()));
            }
            final List<Integer> index = new ArrayList<>(ranks);
            final Map<Integer, Integer> at = new HashMap<>();
            for (int i = 0; i < index.size(); i++) {
                at.put(index.get(i), i);
            }
            final Double[][] matrix = new Double[index.size()][index.size()];
            final Double[][] fraction = new Double[index.size()][index.size()];
            final Map<Integer, Long> hostOf = new HashMap<>();
            for (final FlowRow r : rows) {
                matrix[at.get(r.rank())][at.get(r.peer())] = r.periodBandwidthBytesPerSecond();
            }
            final List<Map<String, Object>> links = new ArrayList<>();
            final List<Map<String, Object>> rankInfo = new ArrayList<>();
            if (view != null) {
                for (final LiveTracker.LinkView l : view.links()) {
                    fraction[at.get(l.rank())][at.get(l.peer())] = l.fraction();
                    hostOf.putIfAbsent(l.rank(), l.hostId());
                    final Map<String, Object> m = new LinkedHashMap<>();
                    m.put("rank", l.rank());
                    m.put("peer", l.peer());
                    m.put("host", l.host());
                    final String linkHost = names.apply(l.hostId());
                    if (linkHost != null && !linkHost.isEmpty()) {
                        m.put("hostname", linkHost);
                    }
                    m.put("bandwidthBytesPerSecond", l.bandwidthBytesPerSecond());
                    m.put("serviceRateBytesPerSecond", l.serviceRateBytesPerSecond());
                    m.put("baselineBytesPerSecond", l.baselineBytesPerSecond());
                    m.put("fractionOfNormal", l.fraction());
                    m.put("lastNs", l.lastNs());
                    links.add(m);
                }
                final Map<Integer, LiveTracker.RankView> rv = new HashMap<>();
                view.ranks().forEach(r -> rv.put(r.rank(), r));
                for (final int rank : index) {
                    final LiveTracker.RankView r = rv.get(rank);
                    final Map<String, Object> m = new LinkedHashMap<>();
                    m.put("rank", rank);
                    final Long host = r != null ? Long.valueOf(r.hostId()) : hostOf.get(rank);
                    if (host != null) {
                        m.put("host", FlowRow.hex(host));
                        final String name = r != null
                                        && r.who() != null
                                        && !r.who().hostname().isEmpty()
                                ? r.who().hostname()
                                : names.apply(host);
                        if (name != null) {
                            m.put("hostname", name);
                        }
                    }
                    if (r != null && r.who() != null && r.who().isRank()) {
                        m.put("pid", r.who().pid());
                        if (r.who().cudaDevice() >= 0) {
                            m.put("gpu", r.who().cudaDevice());
                        }
                        if (!r.who().pciBusId().isEmpty()) {
                            m.put("gpuBusId", r.who().pciBusId());
                        }
                        if (!r.who().gpuUuid().isEmpty()) {
                            m.put("gpuUuid", r.who().gpuUuid());
                        }
                    }
                    if (r != null) {
                        final Map<String, Object> w = new LinkedHashMap<>();
                        w.put("ownGpu", r.ownGpuNs());
                        w.put("peer", r.peerNs());
                        w.put("network", r.networkNs());
                        m.put("waitNsPerPeriod", w);
                    }
                    rankInfo.add(m);
                }
            }
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("comm", comm);
            m.put("ranks", index);
            m.put("sendBandwidthBytesPerSecond", matrix);
            m.put("fractionOfNormal", fraction);
            m.put("links", links);
            m.put("rankInfo", rankInfo);
            out.add(m);
        });
        return out;
    }

    /** One row per kind and culprit: open ones first (critical first), then by latest start. */
    public static List<Map<String, Object>> timeline(final Snapshot s, final LongFunction<String> names) {
        final Map<String, List<Anomaly>> rows = new LinkedHashMap<>();
        for (final Anomaly a : s.anomalies()) {
            rows.computeIfAbsent(key(a), k -> new ArrayList<>()).add(a);
        }
        final List<List<Anomaly>> sorted = new ArrayList<>(rows.values());
        sorted.forEach(l -> l.sort(Comparator.comparingLong(Anomaly::startNs)));
        sorted.sort(Comparator.<List<Anomaly>>comparingInt(l -> open(l) ? 0 : 1)
                .thenComparingInt(l -> -worst(l).ordinal())
                .thenComparing(Comparator.comparingLong(
                                (List<Anomaly> l) -> l.get(l.size() - 1).startNs())
                        .reversed()));
        final List<Map<String, Object>> out = new ArrayList<>();
        for (final List<Anomaly> episodes : sorted) {
            final Anomaly latest = episodes.get(episodes.size() - 1);
            final Culprit c = latest.culprit();
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("kind", latest.kind().name());
            m.put("open", open(episodes));
            m.put("severity", worst(episodes).name());
            final Map<String, Object> culprit = Json.culprit(c, s.culprits().get(latest.id()));
            if (!culprit.containsKey("hostname") && names.apply(c.hostId()) != null) {
                culprit.put("hostname", names.apply(c.hostId()));
            }
            m.put("culprit", culprit);
            m.put("episodes", episodes.size());
            m.put("firstStartNs", episodes.get(0).startNs());
            final Long now = s.hostNowNs().get(c.hostId());
            m.put("hostNowNs", now != null ? now : lastTime(episodes));
            final List<Object[]> spans = new ArrayList<>();
            for (final Anomaly a : episodes.subList(Math.max(0, episodes.size() - EPISODES), episodes.size())) {
                // the id last: the page selects a row by an episode's id (#anomaly=<id>, what alerts link to)
                spans.add(new Object[] {
                    a.startNs(),
                    a.isOpen() ? null : a.resolvedNs(),
                    a.severity().name(),
                    FlowRow.hex(a.id())
                });
            }
            m.put("spans", spans);
            m.put("latest", Json.anomaly(latest, s.culprits().get(latest.id())));
            out.add(m);
        }
        return out;
    }

    private static String key(final Anomaly a) {
        final Culprit c = a.culprit();
        // a hang's peer is one of the ranks waiting on it: the same hang whichever
        final int peer = a.kind() == AnomalyKind.SLOW_LINK ? c.peer() : -1;
        return a.kind() + " " + c.hostId() + " " + c.commHash() + " " + c.rank() + " " + peer + " " + c.device();
    }

    private static boolean open(final List<Anomaly> episodes) {
        return episodes.stream().anyMatch(Anomaly::isOpen);
    }

    /** The worst severity of the open episodes, else of all. */
    private static Severity worst(final List<Anomaly> episodes) {
        final boolean open = open(episodes);
        Severity w = null;
        for (final Anomaly a : episodes) {
            if ((!open || a.isOpen()) && (w == null || a.severity().ordinal() > w.ordinal())) {
                w = a.severity();
            }
        }
        return w;
    }

    private static long lastTime(final List<Anomaly> episodes) {
        long t = Long.MIN_VALUE;
        for (final Anomaly a : episodes) {
            t = Math.max(t, Math.max(a.detectedNs(), a.isOpen() ? a.detectedNs() : a.resolvedNs()));
        }
        return t;
    }

    /** The series of the send links that match (comm, rank, peer), oldest sample first; NaN as null. */
    static List<Map<String, Object>> series(final Snapshot s, final ApiQuery q) {
        return series(s, q, id -> null);
    }

    /** With each link's host by name ({@code hostname}, where known) beside its hex id. */
    static List<Map<String, Object>> series(
            final Snapshot s, final ApiQuery q, final LongFunction<String> sourceNames) {
        final LongFunction<String> names = names(s, sourceNames);
        final List<Map<String, Object>> out = new ArrayList<>();
        for (final LiveTracker.CommView c : s.live().comms()) {
            if (q.comm() != null && q.comm() != c.commHash()) {
                continue;
            }
            for (final LiveTracker.LinkView l : c.links()) {
                final LiveTracker.Series ser = c.series().get(l.rank() + ":" + l.peer());
                if (ser == null
                        || q.rank() != null && q.rank() != l.rank()
                        || q.peer() != null && q.peer() != l.peer()) {
                    continue;
                }
                if (out.size() >= q.limit()) {
                    return out;
                }
                final Map<String, Object> m = new LinkedHashMap<>();
                m.put("comm", FlowRow.hex(c.commHash()));
                m.put("rank", l.rank());
                m.put("peer", l.peer());
                m.put("host", FlowRow.hex(ser.hostId()));
                final String name = names.apply(ser.hostId());
                if (name != null && !name.isEmpty()) {
                    m.put("hostname", name);
                }
                final Long now = s.hostNowNs().get(ser.hostId());
                m.put("hostNowNs", now != null ? now : ser.endNs());
                m.put("stepNs", ser.stepNs());
                m.put("endNs", ser.endNs());
                m.put("fractionOfNormal", values(ser.fractionOfNormal()));
                m.put("bandwidthBytesPerSecond", values(ser.bandwidthBytesPerSecond()));
                out.add(m);
            }
        }
        return out;
    }

    private static List<Float> values(final float[] v) {
        final List<Float> out = new ArrayList<>(v.length);
        for (final float x : v) {
            out.add(Float.isFinite(x) ? x : null);
        }
        return out;
    }
}
