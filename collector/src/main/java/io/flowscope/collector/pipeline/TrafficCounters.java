package io.flowscope.collector.pipeline;

import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.api.summary.Phase;
import io.flowscope.window.WindowEngine;
import java.util.Arrays;
import org.HdrHistogram.Histogram;
import org.agrona.collections.Long2LongHashMap;

/**
 * The cumulative counters and histograms behind {@code /metrics}' traffic families ({@link ServiceMetrics}),
 * accumulated on the drain thread from the window engine's summaries (once per flow per period, never per record)
 * in the drain thread's own primitive arrays, and copied into an immutable {@link View} once per publish interval
 * ({@link #publish}): the Prometheus client library sees only the view, at scrape time, so the drain path never
 * takes its locks or label lookups.
 * <p>
 * Counted: bytes and steps per link (host, comm, rank, peer, direction: the engine's link aggregate), bytes and work
 * requests per QP (host, NIC device, QP), collectives per rank and function (count, algorithm bytes, bus bytes =
 * algorithm bytes × nccl-tests' bus factor, duration), and histograms of the duration and of the bus bandwidth per
 * communicator and function. The
 * wait phases' histograms are the engine's own (all flows of a direction, since start), folded at publish.
 * <p>
 * <b>Cardinality is bounded</b>: at most {@link #MAX_LINKS} links, {@link #MAX_QPS} QPs, {@link #MAX_RANK_COLLECTIVES}
 * (rank, function) and {@link #MAX_COLLECTIVE_HISTOGRAMS} (comm, function) series; what a full table cannot hold is
 * counted ({@code flowscope_metrics_series_dropped_total{family}}: summaries not exposed), never silently lost. A
 * series stays once made (a counter must not vanish and come back from zero).
 */
public final class TrafficCounters implements FlowSummarySink, CollectiveSink {
    public static final int MAX_LINKS = 4096;
    public static final int MAX_QPS = 1024;
    public static final int MAX_RANK_COLLECTIVES = 1024;
    public static final int MAX_COLLECTIVE_HISTOGRAMS = 64;

    /** Collective duration buckets' upper bounds, ns (10 µs .. 10 s; +Inf implied). */
    public static final long[] COLLECTIVE_BOUNDS_NS = oneTwoFiveSteps(10_000L, 10_000_000_000L);
    /** Collective bus bandwidth buckets' upper bounds, bytes per second (100 MB/s .. 1 TB/s; +Inf implied). */
    public static final double[] BUS_BANDWIDTH_BOUNDS = {
        1e8, 2.5e8, 5e8, 1e9, 2.5e9, 5e9, 1e10, 2.5e10, 5e10, 1e11, 2.5e11, 5e11, 1e12
    };
    /** Wait phase buckets' upper bounds, ns (1 µs .. 10 s; +Inf implied). */
    public static final long[] PHASE_BOUNDS_NS = oneTwoFiveSteps(1_000L, 10_000_000_000L);

    /** 1, 2.5 and 5 times each power of ten from {@code from} up to {@code to}, both powers of ten (10, 25, 50, 100). */
    static long[] oneTwoFiveSteps(final long from, final long to) {
        final long[] out = new long[3 * (int) Math.round(Math.log10((double) to / from)) + 1];
        long decade = from;
        for (int i = 0; i < out.length; i += 3, decade *= 10) {
            out[i] = decade;
            if (i + 1 < out.length) {
                out[i + 1] = decade * 5 / 2;
                out[i + 2] = decade * 5;
            }
        }
        return out;
    }

    /** Series families whose tables can fill ({@link View#dropped}). */
    public static final String[] FAMILIES = {"link", "qp", "rank_collective", "collective_histogram"};

    private final int maxLinks;
    private final int maxQps;
    private final int maxRankCollectives;
    private final int maxCollectiveHistograms;
    // links
    private final Long2LongHashMap linkIndex = new Long2LongHashMap(-1);
    private final long[] linkHost;
    private final long[] linkComm;
    private final int[] linkRank;
    private final int[] linkPeer;
    private final boolean[] linkSend;
    private final long[] linkBytes;
    private final long[] linkSteps;
    private int links;
    // QPs
    private final Long2LongHashMap qpIndex = new Long2LongHashMap(-1);
    private final long[] qpHost;
    private final int[] qpDevice;
    private final long[] qpNum;
    private final long[] qpBytes;
    private final long[] qpCompletions;
    private int qps;
    // collectives per rank and function
    private final Long2LongHashMap rankCollIndex = new Long2LongHashMap(-1);
    private final long[] rcHost;
    private final long[] rcComm;
    private final int[] rcRank;
    private final int[] rcFunc;
    private final long[] rcCount;
    private final long[] rcBytes;
    private final double[] rcBusBytes;
    private final long[] rcDurationNs;
    private int rankColls;
    // collective duration histograms per communicator and function
    private final Long2LongHashMap histIndex = new Long2LongHashMap(-1);
    private final long[] chComm;
    private final int[] chFunc;
    /** Per series: COLLECTIVE_BOUNDS_NS.length + 1 bucket counts (not cumulative; the last is +Inf). */
    private final long[] chBuckets;

    private final long[] chSumNs;
    /** Per series: BUS_BANDWIDTH_BOUNDS.length + 1 bucket counts of the collectives' bus bandwidths, and their sum. */
    private final long[] chBusBuckets;

    private final double[] chBusSum;
    private int hists;

    private final long[] dropped = new long[FAMILIES.length];
    /** The engine's phase histograms, folded at publish (reset and re-added: they are cumulative). */
    private final Histogram phaseScratch = new Histogram(3_600_000_000_000L, 2);

    private volatile View latest;

    /** With the documented caps. */
    public TrafficCounters() {
        this(MAX_LINKS, MAX_QPS, MAX_RANK_COLLECTIVES, MAX_COLLECTIVE_HISTOGRAMS);
    }

    /** With other caps (tests: a full table). */
    public TrafficCounters(
            final int maxLinks, final int maxQps, final int maxRankCollectives, final int maxCollectiveHistograms) {
        this.maxLinks = maxLinks;
        this.maxQps = maxQps;
        this.maxRankCollectives = maxRankCollectives;
        this.maxCollectiveHistograms = maxCollectiveHistograms;
        linkHost = new long[maxLinks];
        linkComm = new long[maxLinks];
        linkRank = new int[maxLinks];
        linkPeer = new int[maxLinks];
        linkSend = new boolean[maxLinks];
        linkBytes = new long[maxLinks];
        linkSteps = new long[maxLinks];
        qpHost = new long[maxQps];
        qpDevice = new int[maxQps];
        qpNum = new long[maxQps];
        qpBytes = new long[maxQps];
        qpCompletions = new long[maxQps];
        rcHost = new long[maxRankCollectives];
        rcComm = new long[maxRankCollectives];
        rcRank = new int[maxRankCollectives];
        rcFunc = new int[maxRankCollectives];
        rcCount = new long[maxRankCollectives];
        rcBytes = new long[maxRankCollectives];
        rcBusBytes = new double[maxRankCollectives];
        rcDurationNs = new long[maxRankCollectives];
        chComm = new long[maxCollectiveHistograms];
        chFunc = new int[maxCollectiveHistograms];
        chBuckets = new long[maxCollectiveHistograms * (COLLECTIVE_BOUNDS_NS.length + 1)];
        chSumNs = new long[maxCollectiveHistograms];
        chBusBuckets = new long[maxCollectiveHistograms * (BUS_BANDWIDTH_BOUNDS.length + 1)];
        chBusSum = new double[maxCollectiveHistograms];
    }

    @Override
    public void onSummary(final FlowSummary s) {
        if (s.kind() == FlowSummary.KIND_LINK) {
            onLink(s);
        } else if (s.kind() == FlowSummary.KIND_QP) {
            onQp(s);
        }
    }

    private void onLink(final FlowSummary s) {
        final long key =
                mix(mix(mix(mix(mix(0x11, s.hostId()), s.commHash()), s.rank()), s.peer()), s.isSend() ? 1 : 0);
        int i = (int) linkIndex.get(key);
        if (i < 0) {
            if (links == maxLinks) {
                dropped[0]++;
                return;
            }
            i = links++;
            linkIndex.put(key, i);
            linkHost[i] = s.hostId();
            linkComm[i] = s.commHash();
            linkRank[i] = s.rank();
            linkPeer[i] = s.peer();
            linkSend[i] = s.isSend();
        }
        linkBytes[i] += s.bytes();
        linkSteps[i] += s.completions();
    }

    private void onQp(final FlowSummary s) {
        final long key = mix(mix(mix(0x22, s.hostId()), s.device()), s.qpNum());
        int i = (int) qpIndex.get(key);
        if (i < 0) {
            if (qps == maxQps) {
                dropped[1]++;
                return;
            }
            i = qps++;
            qpIndex.put(key, i);
            qpHost[i] = s.hostId();
            qpDevice[i] = s.device();
            qpNum[i] = s.qpNum();
        }
        qpBytes[i] += s.bytes();
        qpCompletions[i] += s.completions();
    }

    @Override
    public void onCollective(final CollectiveSummary c) {
        final long durationNs = Math.max(0, c.durationNs());
        final long rankKey = mix(mix(mix(mix(0x33, c.hostId()), c.commHash()), c.rank()), c.func());
        int i = (int) rankCollIndex.get(rankKey);
        if (i < 0 && rankColls < maxRankCollectives) {
            i = rankColls++;
            rankCollIndex.put(rankKey, i);
            rcHost[i] = c.hostId();
            rcComm[i] = c.commHash();
            rcRank[i] = c.rank();
            rcFunc[i] = c.func();
        }
        if (i < 0) {
            dropped[2]++;
        } else {
            rcCount[i]++;
            rcBytes[i] += c.bytes();
            final double alg = c.algBandwidthBytesPerSecond();
            // bus bytes: what, over the duration, gives nccl-tests' bus bandwidth (busBw = algBw × factor)
            rcBusBytes[i] += alg > 0 ? c.bytes() * (c.busBandwidthBytesPerSecond() / alg) : 0;
            rcDurationNs[i] += durationNs;
        }
        final long histKey = mix(mix(0x44, c.commHash()), c.func());
        int h = (int) histIndex.get(histKey);
        if (h < 0 && hists < maxCollectiveHistograms) {
            h = hists++;
            histIndex.put(histKey, h);
            chComm[h] = c.commHash();
            chFunc[h] = c.func();
        }
        if (h < 0) {
            dropped[3]++;
            return;
        }
        int b = 0;
        while (b < COLLECTIVE_BOUNDS_NS.length && durationNs > COLLECTIVE_BOUNDS_NS[b]) {
            b++;
        }
        chBuckets[h * (COLLECTIVE_BOUNDS_NS.length + 1) + b]++;
        chSumNs[h] += durationNs;
        final double bus = c.busBandwidthBytesPerSecond();
        if (bus > 0 && Double.isFinite(bus)) // a collective of no duration has none
        {
            int k = 0;
            while (k < BUS_BANDWIDTH_BOUNDS.length && bus > BUS_BANDWIDTH_BOUNDS[k]) {
                k++;
            }
            chBusBuckets[h * (BUS_BANDWIDTH_BOUNDS.length + 1) + k]++;
            chBusSum[h] += bus;
        }
    }

    /**
     * Copies the counters into an immutable view (and the engine's phase histograms into bucket counts), for the
     * scrape side to read; the drain thread, once per publish interval. Null engine: no phase histograms.
     */
    public View publish(final WindowEngine engine) {
        final long[][] phaseBuckets = new long[2 * Phase.COUNT][];
        final double[] phaseSumNs = new double[2 * Phase.COUNT];
        if (engine != null) {
            for (int d = 0; d < 2; d++) {
                for (int p = 0; p < Phase.COUNT; p++) {
                    phaseScratch.reset();
                    engine.addPhaseHistogramTo(d == 0, p, phaseScratch);
                    final long total = phaseScratch.getTotalCount();
                    if (total == 0) {
                        continue;
                    }
                    final long[] cumulative = new long[PHASE_BOUNDS_NS.length + 1];
                    for (int b = 0; b < PHASE_BOUNDS_NS.length; b++) {
                        cumulative[b] = phaseScratch.getCountBetweenValues(0, PHASE_BOUNDS_NS[b]);
                    }
                    cumulative[PHASE_BOUNDS_NS.length] = total;
                    phaseBuckets[d * Phase.COUNT + p] = cumulative;
                    phaseSumNs[d * Phase.COUNT + p] = phaseScratch.getMean() * total;
                }
            }
        }
        final View v = new View(
                links,
                Arrays.copyOf(linkHost, links),
                Arrays.copyOf(linkComm, links),
                Arrays.copyOf(linkRank, links),
                Arrays.copyOf(linkPeer, links),
                Arrays.copyOf(linkSend, links),
                Arrays.copyOf(linkBytes, links),
                Arrays.copyOf(linkSteps, links),
                qps,
                Arrays.copyOf(qpHost, qps),
                Arrays.copyOf(qpDevice, qps),
                Arrays.copyOf(qpNum, qps),
                Arrays.copyOf(qpBytes, qps),
                Arrays.copyOf(qpCompletions, qps),
                rankColls,
                Arrays.copyOf(rcHost, rankColls),
                Arrays.copyOf(rcComm, rankColls),
                Arrays.copyOf(rcRank, rankColls),
                Arrays.copyOf(rcFunc, rankColls),
                Arrays.copyOf(rcCount, rankColls),
                Arrays.copyOf(rcBytes, rankColls),
                Arrays.copyOf(rcBusBytes, rankColls),
                Arrays.copyOf(rcDurationNs, rankColls),
                hists,
                Arrays.copyOf(chComm, hists),
                Arrays.copyOf(chFunc, hists),
                Arrays.copyOf(chBuckets, hists * (COLLECTIVE_BOUNDS_NS.length + 1)),
                Arrays.copyOf(chSumNs, hists),
                Arrays.copyOf(chBusBuckets, hists * (BUS_BANDWIDTH_BOUNDS.length + 1)),
                Arrays.copyOf(chBusSum, hists),
                phaseBuckets,
                phaseSumNs,
                dropped.clone());
        latest = v;
        return v;
    }

    /** The view last published (any thread). */
    public View latest() {
        final View v = latest;
        return v == null ? View.EMPTY : v;
    }

    private static long mix(final long h, final long v) {
        long x = (h ^ v) * 0x9E3779B97F4A7C15L;
        x ^= x >>> 29;
        return x * 0xBF58476D1CE4E5B9L;
    }

    /**
     * The counters at one publish, immutable (arrays are never written after construction). Phase histograms by
     * {@code direction × Phase.COUNT + phase} (send 0..4, recv 5..9): cumulative counts per {@link #PHASE_BOUNDS_NS}
     * bound then the total, null where the phase recorded nothing.
     */
    public record View(
            int links,
            long[] linkHost,
            long[] linkComm,
            int[] linkRank,
            int[] linkPeer,
            boolean[] linkSend,
            long[] linkBytes,
            long[] linkSteps,
            int qps,
            long[] qpHost,
            int[] qpDevice,
            long[] qpNum,
            long[] qpBytes,
            long[] qpCompletions,
            int rankCollectives,
            long[] rcHost,
            long[] rcComm,
            int[] rcRank,
            int[] rcFunc,
            long[] rcCount,
            long[] rcBytes,
            double[] rcBusBytes,
            long[] rcDurationNs,
            int collectiveHistograms,
            long[] chComm,
            int[] chFunc,
            long[] chBuckets,
            long[] chSumNs,
            long[] chBusBuckets,
            double[] chBusSum,
            long[][] phaseBuckets,
            double[] phaseSumNs,
            long[] dropped) {
        public static final View EMPTY = new TrafficCounters(0, 0, 0, 0).publish(null);
    }
}
