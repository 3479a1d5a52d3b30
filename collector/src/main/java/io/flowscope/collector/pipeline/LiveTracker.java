package io.flowscope.collector.pipeline;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * What the live page shows beyond the latest period, kept on the drain thread from the window engine's LINK and RANK
 * aggregates (one each per active link and rank a period; collector/README.md, "The live page"):
 * <ul>
 * <li>each send link's <b>fraction of normal</b>: its service rate (bytes / network time 9 → stop, all channels:
 * what the slow-link rule judges, so that a link slowed by the ones it waits on is not blamed) over the recent
 * periods, against its own baseline: the rate of its first {@value #WARMUP_PERIODS} active periods, then a slow
 * average of the periods in which it ran at {@value #HEALTHY} of it or better (frozen while slower);</li>
 * <li>its recent bandwidth and a series of both, one sample per {@code SAMPLE_NS} of its host's clock;</li>
 * <li>each rank's wait-phase breakdown over the recent periods: time its steps waited on its <b>own GPU</b> (send
 * 8 → 20/9: the GPU filling the slot; receive 12 → stop: the GPU consuming), on a <b>peer</b> (send 20 → 9: the
 * receiver's credit; receive 10 → 11: the sender's data) and on the <b>network</b> (send 9 → stop; receive 11 → 12).</li>
 * </ul>
 * "Recent" is an exponential average over active periods (time constant {@code 1 / RECENT_ALPHA} periods). Links and
 * ranks are per communicator; times are their host's clock. One thread.
 */
public final class LiveTracker {
    /** Active periods whose total rate is a link's first baseline (as the slow-link rule's warm-up). */
    static final int WARMUP_PERIODS = 20;
    /** A link at this fraction of its baseline or better is healthy: its baseline follows it. */
    static final double HEALTHY = 0.8;
    /** Weight of a period in the recent averages: about the last 32 active periods. */
    static final double RECENT_ALPHA = 1.0 / 32;
    /** Weight of a healthy period in the baseline: about the last 500 healthy periods. */
    static final double BASELINE_ALPHA = 1.0 / 500;
    /** One series sample per this much of the link's host time. */
    static final long SAMPLE_NS = 100_000_000L;
    /** Samples a series keeps: a minute. */
    static final int SAMPLES = 600;
    /** Links that keep a series (the rest show their current state only): bounds memory and snapshot copies. */
    static final int MAX_SERIES = 512;

    /** A link (rank → peer of a communicator) as the page shows it now. */
    public record LinkView(
            String host,
            long hostId,
            int rank,
            int peer,
            double bandwidthBytesPerSecond,
            double serviceRateBytesPerSecond,
            double baselineBytesPerSecond,
            double fractionOfNormal,
            long lastNs) {
        /** The fraction of normal, or null while the baseline is learnt (JSON null). */
        public Double fraction() {
            return Double.isFinite(fractionOfNormal) ? fractionOfNormal : null;
        }
    }

    /** A rank's recent waits, ns per period (the three add up to what its steps waited, all channels). */
    public record RankView(
            long hostId, int rank, double ownGpuNs, double peerNs, double networkNs, long lastNs, RankIdentity who) {}

    /** Who a rank is (its ring's communicator entry), or null: {@link RankIdentities#rank}. */
    public interface Identities {
        RankIdentity of(long hostId, long commHash, int rank);
    }

    /**
     * A link's series, oldest first, one sample per {@code stepNs} of the link's host clock (aligned to multiples of
     * it); the last is the bucket still open, up to {@code endNs} (the link's latest period end). NaN where the link
     * was idle or its baseline not known yet.
     */
    public record Series(
            long hostId, long stepNs, long endNs, float[] fractionOfNormal, float[] bandwidthBytesPerSecond) {}

    /** One communicator: its links and ranks (ordered), and the series of its links by "rank:peer". */
    public record CommView(long commHash, List<LinkView> links, List<RankView> ranks, Map<String, Series> series) {}

    /** The tracker's state for a snapshot, immutable. */
    public record View(List<CommView> comms) {
        static final View EMPTY = new View(List.of());
    }

    private static final class Link {
        final long commHash;
        final int rank;
        final int peer;
        long hostId;
        long lastPeriodEndNs = Long.MIN_VALUE;
        double recentBytes;
        double recentNetNs;
        double recentPeriodNs;
        int warm;
        double warmBytes;
        double warmNetNs;
        double baseline = Double.NaN;
        // the series (null: none kept for this link)
        float[] fraction;
        float[] bandwidth;
        int samples;
        int next;
        long bucket = Long.MIN_VALUE;
        double bucketBytes;
        double bucketNetNs;
        /** The series as last copied for a snapshot (immutable), or null. */
        Series frozen;

        Link(final long commHash, final int rank, final int peer) {
            this.commHash = commHash;
            this.rank = rank;
            this.peer = peer;
        }

        double rate() {
            return recentNetNs > 0 ? recentBytes / recentNetNs * 1e9 : Double.NaN;
        }

        double fractionOfNormal() {
            final double r = rate();
            return Double.isFinite(baseline) && baseline > 0 && Double.isFinite(r) ? r / baseline : Double.NaN;
        }
    }

    private static final class Rank {
        final long commHash;
        final int rank;
        long hostId;
        long lastPeriodEndNs = Long.MIN_VALUE;
        double ownGpuNs;
        double peerNs;
        double networkNs;

        Rank(final long commHash, final int rank) {
            this.commHash = commHash;
            this.rank = rank;
        }
    }

    private final Long2ObjectHashMap<Link> links = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<Rank> ranks = new Long2ObjectHashMap<>();
    private int seriesKept;

    /** A flow summary of the window engine: LINK sends and RANK aggregates are read, the rest ignored. */
    void onSummary(final FlowSummary s) {
        if (s.kind() == FlowSummary.KIND_LINK && s.isSend()) {
            onLink(s);
        } else if (s.kind() == FlowSummary.KIND_RANK) {
            onRank(s);
        }
    }

    private void onLink(final FlowSummary s) {
        final long key = key(s.commHash(), s.rank(), s.peer());
        Link l = links.get(key);
        if (l == null) {
            l = new Link(s.commHash(), s.rank(), s.peer());
            links.put(key, l);
            if (seriesKept < MAX_SERIES) {
                seriesKept++;
                l.fraction = new float[SAMPLES];
                l.bandwidth = new float[SAMPLES];
            }
        }
        l.hostId = s.hostId();
        final long periodNs = Math.max(1, s.periodEndNs() - s.periodStartNs());
        final double bytes = s.bytes();
        final double netNs = Math.max(0, s.phaseSumNs(Phase.NETWORK));
        sample(l, s.periodEndNs(), bytes, netNs);
        if (s.periodEndNs() != l.lastPeriodEndNs) {
            l.recentBytes *= 1 - RECENT_ALPHA;
            l.recentNetNs *= 1 - RECENT_ALPHA;
            l.recentPeriodNs *= 1 - RECENT_ALPHA;
            l.lastPeriodEndNs = s.periodEndNs();
        }
        l.recentBytes += RECENT_ALPHA * bytes;
        l.recentNetNs += RECENT_ALPHA * netNs;
        l.recentPeriodNs += RECENT_ALPHA * periodNs;
        if (bytes <= 0 || netNs <= 0) {
            return;
        }
        if (l.warm < WARMUP_PERIODS) {
            l.warm++;
            l.warmBytes += bytes;
            l.warmNetNs += netNs;
            if (l.warm == WARMUP_PERIODS) {
                l.baseline = l.warmBytes / l.warmNetNs * 1e9;
            }
            return;
        }
        final double f = l.fractionOfNormal();
        if (f >= HEALTHY) {
            l.baseline += BASELINE_ALPHA * (l.rate() - l.baseline);
        }
    }

    /** Adds a period to the link's series, closing the buckets its end passed. */
    private static void sample(final Link l, final long endNs, final double bytes, final double netNs) {
        if (l.fraction == null) {
            return;
        }
        final long b = Math.floorDiv(endNs - 1, SAMPLE_NS);
        if (l.bucket == Long.MIN_VALUE) {
            l.bucket = b;
        } else if (b > l.bucket) {
            push(
                    l,
                    l.bucketNetNs > 0 && l.baseline > 0 ? l.bucketBytes / l.bucketNetNs * 1e9 / l.baseline : Double.NaN,
                    l.bucketBytes * 1e9 / SAMPLE_NS);
            for (long idle = Math.min(b - l.bucket - 1, SAMPLES); idle > 0; idle--) {
                push(l, Double.NaN, 0);
            }
            l.bucket = b;
            l.bucketBytes = 0;
            l.bucketNetNs = 0;
        }
        l.bucketBytes += bytes;
        l.bucketNetNs += netNs;
    }

    private static void push(final Link l, final double fraction, final double bandwidth) {
        l.fraction[l.next] = (float) fraction;
        l.bandwidth[l.next] = (float) bandwidth;
        l.next = (l.next + 1) % SAMPLES;
        l.samples = Math.min(SAMPLES - 1, l.samples + 1);
    }

    private void onRank(final FlowSummary s) {
        final long key = key(s.commHash(), s.rank(), -1);
        Rank r = ranks.get(key);
        if (r == null) {
            r = new Rank(s.commHash(), s.rank());
            ranks.put(key, r);
        }
        r.hostId = s.hostId();
        if (s.periodEndNs() != r.lastPeriodEndNs) {
            // the send and receive aggregates of one period add up; a new period first weighs the past down
            r.ownGpuNs *= 1 - RECENT_ALPHA;
            r.peerNs *= 1 - RECENT_ALPHA;
            r.networkNs *= 1 - RECENT_ALPHA;
            r.lastPeriodEndNs = s.periodEndNs();
        }
        if (s.isSend()) {
            r.ownGpuNs += RECENT_ALPHA * pos(s.phaseSumNs(Phase.GPU_WAIT));
            r.peerNs += RECENT_ALPHA * pos(s.phaseSumNs(Phase.PEER_WAIT));
            r.networkNs += RECENT_ALPHA * pos(s.phaseSumNs(Phase.NETWORK));
        } else {
            r.peerNs += RECENT_ALPHA * pos(s.phaseSumNs(Phase.NETWORK)); // 10 → 11: waiting for the sender's data
            r.networkNs += RECENT_ALPHA * pos(s.phaseSumNs(Phase.FLUSH));
            r.ownGpuNs += RECENT_ALPHA * pos(s.phaseSumNs(Phase.GPU_CONSUME));
        }
    }

    private static long pos(final long v) {
        return Math.max(0, v);
    }

    /** Forgets links and ranks whose last period ended before {@code cutoffNs} (gone quiet). */
    void expireBefore(final long cutoffNs) {
        links.values().removeIf(l -> {
            final boolean gone = l.lastPeriodEndNs - cutoffNs < 0;
            if (gone && l.fraction != null) {
                seriesKept--;
            }
            return gone;
        });
        ranks.values().removeIf(r -> r.lastPeriodEndNs - cutoffNs < 0);
    }

    /** An immutable copy for a snapshot: communicators by hash, links and ranks by rank. */
    View view(final Identities identities) {
        if (links.isEmpty() && ranks.isEmpty()) {
            return View.EMPTY;
        }
        final Map<Long, List<LinkView>> byCommLinks = new HashMap<>();
        final Map<Long, Map<String, Series>> byCommSeries = new HashMap<>();
        final Map<Long, List<RankView>> byCommRanks = new HashMap<>();
        links.values().forEach(l -> {
            final double rate = l.rate();
            byCommLinks
                    .computeIfAbsent(l.commHash, k -> new ArrayList<>())
                    .add(new LinkView(
                            FlowRow.hex(l.hostId),
                            l.hostId,
                            l.rank,
                            l.peer,
                            l.recentPeriodNs > 0 ? l.recentBytes / l.recentPeriodNs * 1e9 : 0,
                            Double.isFinite(rate) ? rate : 0,
                            Double.isFinite(l.baseline) ? l.baseline : 0,
                            l.fractionOfNormal(),
                            l.lastPeriodEndNs));
            if (l.fraction != null && l.bucket != Long.MIN_VALUE) {
                if (l.frozen == null || l.frozen.endNs() != l.lastPeriodEndNs) {
                    l.frozen = series(l);
                }
                byCommSeries.computeIfAbsent(l.commHash, k -> new HashMap<>()).put(l.rank + ":" + l.peer, l.frozen);
            }
        });
        ranks.values().forEach(r -> byCommRanks
                .computeIfAbsent(r.commHash, k -> new ArrayList<>())
                .add(new RankView(
                        r.hostId,
                        r.rank,
                        r.ownGpuNs,
                        r.peerNs,
                        r.networkNs,
                        r.lastPeriodEndNs,
                        identities.of(r.hostId, r.commHash, r.rank))));
        final List<Long> comms = new ArrayList<>(byCommLinks.keySet());
        byCommRanks.keySet().forEach(c -> {
            if (!byCommLinks.containsKey(c)) {
                comms.add(c);
            }
        });
        comms.sort(Comparator.comparing(Long::toUnsignedString));
        final List<CommView> out = new ArrayList<>();
        for (final long c : comms) {
            final List<LinkView> ls = byCommLinks.getOrDefault(c, new ArrayList<>());
            ls.sort(Comparator.comparingInt(LinkView::rank).thenComparingInt(LinkView::peer));
            final List<RankView> rs = byCommRanks.getOrDefault(c, new ArrayList<>());
            rs.sort(Comparator.comparingInt(RankView::rank));
            out.add(new CommView(
                    c, List.copyOf(ls), List.copyOf(rs), Map.copyOf(byCommSeries.getOrDefault(c, Map.of()))));
        }
        return new View(List.copyOf(out));
    }

    /** The closed samples, then the open bucket's so far (so that a link has a point from its first period). */
    private static Series series(final Link l) {
        final int n = Math.min(SAMPLES, l.samples + 1);
        final float[] f = new float[n];
        final float[] bw = new float[n];
        for (int i = 0; i < n - 1; i++) {
            final int at = Math.floorMod(l.next - (n - 1) + i, SAMPLES);
            f[i] = l.fraction[at];
            bw[i] = l.bandwidth[at];
        }
        final long elapsed = Math.max(1, l.lastPeriodEndNs - l.bucket * SAMPLE_NS);
        f[n - 1] = (float)
                (l.bucketNetNs > 0 && l.baseline > 0 ? l.bucketBytes / l.bucketNetNs * 1e9 / l.baseline : Double.NaN);
        bw[n - 1] = (float) (l.bucketBytes * 1e9 / elapsed);
        return new Series(l.hostId, SAMPLE_NS, l.lastPeriodEndNs, f, bw);
    }

    private static long key(final long commHash, final int rank, final int peer) {
        long h = commHash * 0x9E3779B97F4A7C15L;
        h ^= (h >>> 29) ^ ((long) rank << 32 | (peer & 0xffffffffL));
        return h * 0xBF58476D1CE4E5B9L;
    }
}
