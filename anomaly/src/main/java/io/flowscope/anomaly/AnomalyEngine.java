package io.flowscope.anomaly;

import io.flowscope.window.CollectiveSummary;
import io.flowscope.window.FlowSummary;
import io.flowscope.window.Phase;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2ObjectHashMap;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The anomaly stage: slow link, slow node, congestion, NIC stall and hang detectors over the window engine's
 * flow summaries (schema v2), driven by event time only (deterministic).
 * <p>
 * <b>Cross-host time.</b> Every host is its own clock domain. The engine never compares times of two hosts:
 * each host's summaries are accumulated per period of that host; when a host's period ends (the first summary
 * of its next period, or {@link #advanceTo}), its links' and ranks' sliding windows (the last
 * {@code windowPeriods} active periods) advance and the links, ranks and receives of that host are judged
 * against their communicator's robust statistics (median / MAD over every link's or rank's latest window,
 * whatever host it is on: rates and durations, not instants, are compared). Anomaly times are in the culprit
 * host's clock.
 * <p>
 * Detectors and culprit rules are described in {@code anomaly/README.md}.
 */
public final class AnomalyEngine implements AnomalyStage
{
    private final AnomalyConfig config;
    private final AnomalySink sink;
    private final Long2ObjectHashMap<Host> hosts = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<Comm> comms = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<RecvFlow> recvFlows = new Long2ObjectHashMap<>();
    private final Map<Long, Anomaly> open = new LinkedHashMap<>();
    private final Robust robust = new Robust();
    private final Evidence evidence = new Evidence();
    private long summaries;

    public AnomalyEngine(final AnomalyConfig config, final AnomalySink sink)
    {
        this.config = config;
        this.sink = sink;
    }

    public AnomalyConfig config()
    {
        return config;
    }

    /** Flow summaries consumed so far. */
    public long summaries()
    {
        return summaries;
    }

    /** One line per link: rate and waits (a debugging aid). */
    public String debugLinks()
    {
        final StringBuilder sb = new StringBuilder();
        for (final Comm c : comms.values())
        {
            sb.append(String.format("comm %x median %.3g sigma %.3g%n", c.commHash, c.rateMedian, c.rateSigma));
            for (final Link l : c.linkList)
            {
                sb.append(String.format("  %d->%d rate %.3g peerWaitMax %d steps %d%n", l.rank, l.peer,
                    l.netNs.sum() > 0 ? l.rate() : 0, l.peerWaitMaxNs(), l.netCount.sum()));
            }
        }
        return sb.toString();
    }

    // Input.

    @Override
    public void onSummary(final FlowSummary s)
    {
        summaries++;
        final Host h = host(s.hostId());
        if (!h.started || s.periodStartNs() != h.periodStartNs)
        {
            if (h.started && h.pending)
            {
                endPeriod(h);
            }
            h.started = true;
            h.periodStartNs = s.periodStartNs();
            h.periodEndNs = s.periodEndNs();
            h.reportedPeriodStartNs = s.periodStartNs();
        }
        h.pending = true;
        switch (s.kind())
        {
            case FlowSummary.KIND_STEP:
                if (s.isSend())
                {
                    onSend(h, s);
                }
                else
                {
                    onRecv(h, s);
                }
                break;
            case FlowSummary.KIND_QP:
                onQp(h, s);
                break;
            default:
                break;
        }
    }

    @Override
    public void onCollective(final CollectiveSummary summary)
    {
        // Collective durations are not used by the detectors yet (see the README's "what remains").
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs)
    {
        final Host h = host(hostId);
        if (h.pending && timeNs - h.periodEndNs >= 0)
        {
            endPeriod(h);
        }
        if (timeNs - h.nowNs > 0)
        {
            h.nowNs = timeNs;
            checkStalls(h);
        }
    }

    @Override
    public List<Anomaly> openAnomalies()
    {
        final List<Anomaly> list = new ArrayList<>(open.values());
        list.sort(Comparator.comparingLong(Anomaly::startNs).thenComparingLong(Anomaly::id));
        return Collections.unmodifiableList(list);
    }

    // Accumulation.

    private Host host(final long hostId)
    {
        Host h = hosts.get(hostId);
        if (h == null)
        {
            h = new Host(hostId);
            hosts.put(hostId, h);
        }
        return h;
    }

    private Comm comm(final long commHash)
    {
        Comm c = comms.get(commHash);
        if (c == null)
        {
            c = new Comm(commHash);
            comms.put(commHash, c);
        }
        return c;
    }

    private Rank rank(final Comm c, final int r)
    {
        Rank k = c.ranks.get(r);
        if (k == null)
        {
            k = new Rank(c, r, config.windowPeriods);
            c.ranks.put(r, k);
            c.rankList.add(k);
        }
        return k;
    }

    private void onSend(final Host h, final FlowSummary s)
    {
        final Comm c = comm(s.commHash());
        final long key = ((long)s.rank() << 32) | (s.peer() & 0xffffffffL);
        Link l = c.links.get(key);
        if (l == null)
        {
            l = new Link(c, h, s.rank(), s.peer(), config.windowPeriods);
            c.links.put(key, l);
            c.linkList.add(l);
            h.links.add(l);
            rank(c, s.peer()).incoming.add(l);
        }
        final Rank own = rank(c, s.rank());
        own.host = h;
        if (l.periodStartNs != s.periodStartNs())
        {
            l.periodStartNs = s.periodStartNs();
            h.touchedLinks.add(l);
        }
        l.curBytes += s.bytes();
        l.curSteps += s.completions();
        l.curNetNs += s.phaseSumNs(Phase.NETWORK);
        l.curNetCount += s.phaseCount(Phase.NETWORK);
        l.curPeerWaitNs += s.phaseSumNs(Phase.PEER_WAIT);
        l.curGpuWaitNs += s.phaseSumNs(Phase.GPU_WAIT);
        l.curOutstandingBytes += s.outstandingBytes();
        if (s.windowCompletions() >= 2)
        {
            l.curWindowBw += s.windowBandwidthBytesPerSecond();
        }
        l.curPeerWaitMaxNs = Math.max(l.curPeerWaitMaxNs, s.phaseMaxNs(Phase.PEER_WAIT));
    }

    private void onRecv(final Host h, final FlowSummary s)
    {
        final Comm c = comm(s.commHash());
        final Rank own = rank(c, s.rank());
        own.host = h;
        final long key = s.flowKey() ^ (s.hostId() * 0x9E3779B97F4A7C15L);
        RecvFlow f = recvFlows.get(key);
        if (f == null)
        {
            f = new RecvFlow(c, h, s.rank(), s.peer(), s.channel());
            recvFlows.put(key, f);
            h.recvFlows.add(f);
            own.recvFlows.add(f);
            f.lastProgressNs = s.periodStartNs();
        }
        f.seenPeriodStartNs = s.periodStartNs();
        f.outstanding = s.outstandingSteps();
        if (s.completions() > 0 || s.outstandingSteps() == 0)
        {
            f.lastProgressNs = s.periodEndNs();
        }
        if (own.periodStartNs != s.periodStartNs())
        {
            own.periodStartNs = s.periodStartNs();
            h.touchedRanks.add(own);
        }
        own.curConsumeNs += s.phaseSumNs(Phase.GPU_CONSUME);
        own.curConsumeCount += s.phaseCount(Phase.GPU_CONSUME);
    }

    private void onQp(final Host h, final FlowSummary s)
    {
        // NIC stall and congestion from QP flows: see the README (later change).
    }

    // Period end of one host: windows advance, that host's links, ranks and receives are judged.

    private void endPeriod(final Host h)
    {
        h.pending = false;
        h.nowNs = Math.max(h.nowNs, h.periodEndNs);
        final long periodStart = h.periodStartNs;
        for (int i = 0; i < h.touchedLinks.size(); i++)
        {
            final Link l = h.touchedLinks.get(i);
            l.push();
            l.lastActiveNs = h.periodEndNs;
            l.comm.updates++;
        }
        for (int i = 0; i < h.touchedRanks.size(); i++)
        {
            final Rank r = h.touchedRanks.get(i);
            r.push();
            r.lastActiveNs = h.periodEndNs;
        }
        for (int i = 0; i < h.touchedLinks.size(); i++)
        {
            final Link l = h.touchedLinks.get(i);
            refreshStats(l.comm);
            judgeLink(l, periodStart, h.periodEndNs);
        }
        for (int i = 0; i < h.touchedRanks.size(); i++)
        {
            final Rank r = h.touchedRanks.get(i);
            refreshStats(r.comm);
            judgeRank(r, periodStart, h.periodEndNs);
        }
        h.touchedLinks.clear();
        h.touchedRanks.clear();
        checkStalls(h);
    }

    /** Recomputes a communicator's link and rank statistics about once per round of all its links. */
    private void refreshStats(final Comm c)
    {
        if (c.statsValid && c.updates < c.linkList.size())
        {
            return;
        }
        c.updates = 0;
        c.statsValid = true;
        robust.clear();
        for (int i = 0; i < c.linkList.size(); i++)
        {
            final Link l = c.linkList.get(i);
            if (l.hasRate(config))
            {
                robust.add(l.rate());
            }
        }
        c.linkCount = robust.count();
        robust.compute();
        c.rateMedian = robust.median;
        c.rateSigma = robust.sigma();
        robust.clear();
        for (int i = 0; i < c.rankList.size(); i++)
        {
            final Rank r = c.rankList.get(i);
            final double w = r.incomingWaitPerStep(config);
            if (w >= 0)
            {
                robust.add(w);
            }
        }
        c.rankCount = robust.count();
        robust.compute();
        c.waitMedian = robust.median;
        c.waitSigma = robust.sigma();
    }

    private void judgeLink(final Link l, final long periodStart, final long now)
    {
        final Comm c = l.comm;
        if (c.linkCount < config.minLinks || !l.hasRate(config))
        {
            return;
        }
        final double rate = l.rate();
        final double median = c.rateMedian;
        final boolean bad = rate < median * (1 - config.slowLinkFraction)
            && median - rate > config.madK * c.rateSigma;
        final boolean good = rate >= median * (1 - config.slowLinkFraction / 2);
        evidence.clear();
        evidence.put("bandwidthBytesPerSecond", rate);
        evidence.put("medianBandwidthBytesPerSecond", median);
        evidence.put("robustSigmaBytesPerSecond", c.rateSigma);
        evidence.put("fractionOfMedian", median > 0 ? rate / median : 0);
        evidence.put("peerWaitNsPerStep", l.peerWaitPerStep());
        evidence.put("links", c.linkCount);
        final Severity sev = rate < median * 0.5 ? Severity.CRITICAL : Severity.WARNING;
        final String summary = String.format("rank %d → %d of comm 0x%x at %.0f%% of its communicator's median link "
            + "bandwidth", l.rank, l.peer, c.commHash, median > 0 ? 100 * rate / median : 0);
        track(l.slow, bad, good, AnomalyKind.SLOW_LINK, Culprit.link(l.host.hostId, c.commHash, l.rank, l.peer),
            sev, periodStart, now, now - (long)config.windowPeriods * (now - periodStart), summary);
    }

    private void judgeRank(final Rank r, final long periodStart, final long now)
    {
        final Comm c = r.comm;
        if (c.rankCount < config.minLinks || r.host == null)
        {
            return;
        }
        final double w = r.incomingWaitPerStep(config);
        if (w < 0)
        {
            return;
        }
        final double median = c.waitMedian;
        final double limit = Math.max(median * config.slowNodeRatio, median + config.slowNodeMinNs);
        final boolean bad = w > limit && w - median > config.madK * c.waitSigma;
        final boolean good = w <= Math.max(median * config.slowNodeRatio / 2, median + config.slowNodeMinNs / 2);
        evidence.clear();
        evidence.put("incomingPeerWaitMaxNs", w);
        evidence.put("medianIncomingPeerWaitMaxNs", median);
        evidence.put("robustSigmaNs", c.waitSigma);
        evidence.put("gpuConsumeNsPerStep", r.consumePerStep());
        evidence.put("ranks", c.rankCount);
        final Severity sev = w > 10 * Math.max(median, config.slowNodeMinNs) ? Severity.CRITICAL : Severity.WARNING;
        final String summary = String.format("rank %d of comm 0x%x makes its senders wait up to %.0f µs for "
            + "credit (median rank %.0f µs): its GPU is late", r.rank, c.commHash, w / 1e3, median / 1e3);
        track(r.slow, bad, good, AnomalyKind.SLOW_NODE, Culprit.rank(r.host.hostId, c.commHash, r.rank), sev,
            periodStart, now, now - (long)config.windowPeriods * (now - periodStart), summary);
    }

    // Hang: receives with work outstanding and no completion for the threshold.

    private void checkStalls(final Host h)
    {
        final long now = h.nowNs;
        for (int i = 0; i < h.recvFlows.size(); i++)
        {
            final RecvFlow f = h.recvFlows.get(i);
            final boolean stalled = f.outstanding > 0 && f.seenPeriodStartNs == h.reportedPeriodStartNs
                && now - f.lastProgressNs >= config.hangThresholdNs;
            if (stalled != f.stalled)
            {
                f.stalled = stalled;
                if (stalled)
                {
                    f.comm.stalled.add(f);
                }
                else
                {
                    f.comm.stalled.remove(f);
                }
                f.comm.stallChanged = true;
            }
        }
        for (int i = 0; i < h.recvFlows.size(); i++)
        {
            final Comm c = h.recvFlows.get(i).comm;
            if (c.stallChanged || (c.hang.open != null))
            {
                c.stallChanged = false;
                judgeHang(c);
            }
        }
    }

    /**
     * Receivers point at the senders they wait on; the culprit is a sender that is not itself waiting for data
     * (the root of the wait-for graph; most waiters first, then lowest rank); in a cycle, the sender of the
     * receive that stalled first.
     */
    private void judgeHang(final Comm c)
    {
        final List<RecvFlow> stalled = c.stalled;
        if (stalled.isEmpty())
        {
            if (c.hang.open != null)
            {
                resolve(c.hang, latestNow(c));
            }
            return;
        }
        // The wait-for graph over every waiting receive (half the threshold), so that ranks whose hosts reported
        // a period later are in it.
        final List<RecvFlow> waiting = c.waiting;
        waiting.clear();
        for (int i = 0; i < c.rankList.size(); i++)
        {
            final Rank r = c.rankList.get(i);
            for (int j = 0; j < r.recvFlows.size(); j++)
            {
                final RecvFlow f = r.recvFlows.get(j);
                if (isWaitingFlow(f))
                {
                    waiting.add(f);
                }
            }
        }
        RecvFlow best = null;
        int bestWaiters = -1;
        for (int i = 0; i < waiting.size(); i++)
        {
            final RecvFlow f = waiting.get(i);
            if (isWaiting(c, f.peer))
            {
                continue;
            }
            final int waiters = waitersOn(waiting, f.peer);
            if (waiters > bestWaiters || (waiters == bestWaiters && better(f, best)))
            {
                best = f;
                bestWaiters = waiters;
            }
        }
        if (best == null)
        {
            // A cycle: the sender of the receive that stalled first.
            for (int i = 0; i < waiting.size(); i++)
            {
                final RecvFlow f = waiting.get(i);
                if (best == null || f.lastProgressNs < best.lastProgressNs
                    || (f.lastProgressNs == best.lastProgressNs && better(f, best)))
                {
                    best = f;
                }
            }
            bestWaiters = waitersOn(waiting, best.peer);
        }
        final Rank culpritRank = c.ranks.get(best.peer);
        final Host culpritHost = culpritRank != null && culpritRank.host != null ? culpritRank.host : best.host;
        long since = Long.MAX_VALUE;
        for (int i = 0; i < stalled.size(); i++)
        {
            since = Math.min(since, stalled.get(i).lastProgressNs);
        }
        final long now = culpritHost.nowNs;
        evidence.clear();
        evidence.put("stalledReceives", stalled.size());
        evidence.put("waitingReceives", waiting.size());
        evidence.put("waitersOnCulprit", bestWaiters);
        evidence.put("noProgressNs", best.host.nowNs - best.lastProgressNs);
        evidence.put("thresholdNs", config.hangThresholdNs);
        final String summary = String.format("comm 0x%x hung: rank %d does not progress; rank %d waits for its data "
            + "on channel %d (%d stalled receives)", c.commHash, best.peer, best.rank, best.channel, stalled.size());
        final Culprit culprit = new Culprit(culpritHost.hostId, c.commHash, best.peer, best.rank, best.channel, -1, -1);
        if (c.hang.open == null)
        {
            c.hang.firstBadStartNs = best.lastProgressNs;
            openAnomaly(c.hang, AnomalyKind.HANG, culprit, Severity.CRITICAL, best.lastProgressNs, now,
                best.lastProgressNs, now, summary);
        }
        else if (!c.hang.open.culprit().equals(culprit) || c.hang.open.evidence().get("stalledReceives")
            .doubleValue() != stalled.size())
        {
            update(c.hang, culprit, Severity.CRITICAL, now, since, summary);
        }
    }

    private static boolean better(final RecvFlow f, final RecvFlow best)
    {
        if (best == null)
        {
            return true;
        }
        if (f.peer != best.peer)
        {
            return f.peer < best.peer;
        }
        if (f.rank != best.rank)
        {
            return f.rank < best.rank;
        }
        return f.channel < best.channel;
    }

    private static int waitersOn(final List<RecvFlow> waiting, final int sender)
    {
        int n = 0;
        for (int j = 0; j < waiting.size(); j++)
        {
            if (waiting.get(j).peer == sender)
            {
                n++;
            }
        }
        return n;
    }

    private boolean isWaitingFlow(final RecvFlow f)
    {
        return f.outstanding > 0 && f.seenPeriodStartNs == f.host.reportedPeriodStartNs
            && f.host.nowNs - f.lastProgressNs >= config.hangThresholdNs / 2;
    }

    /**
     * Whether a rank waits for data itself: one of its receives has work outstanding and no completion for half
     * the threshold (the ranks behind a hung one stall within a few steps of each other, so half the threshold
     * keeps a blocked rank from being named because its host reported a period later).
     */
    private boolean isWaiting(final Comm c, final int rank)
    {
        final Rank r = c.ranks.get(rank);
        if (r == null)
        {
            return false;
        }
        for (int i = 0; i < r.recvFlows.size(); i++)
        {
            if (isWaitingFlow(r.recvFlows.get(i)))
            {
                return true;
            }
        }
        return false;
    }

    private static long latestNow(final Comm c)
    {
        long now = Long.MIN_VALUE;
        for (int i = 0; i < c.rankList.size(); i++)
        {
            final Rank r = c.rankList.get(i);
            if (r.host != null)
            {
                now = Math.max(now, r.host.nowNs);
            }
        }
        return now;
    }

    // Hysteresis and publication.

    private void track(final Tracker t, final boolean bad, final boolean good, final AnomalyKind kind,
        final Culprit culprit, final Severity severity, final long periodStart, final long now,
        final long windowStart, final String summary)
    {
        if (bad)
        {
            t.good = 0;
            if (t.bad++ == 0)
            {
                t.firstBadStartNs = periodStart;
            }
            if (t.open == null && t.bad >= config.openAfter)
            {
                openAnomaly(t, kind, culprit, severity, t.firstBadStartNs, now, windowStart, now, summary);
            }
            else if (t.open != null && t.open.severity() != severity && severity == Severity.CRITICAL)
            {
                update(t, culprit, severity, now, windowStart, summary);
            }
        }
        else
        {
            if (t.open == null)
            {
                t.bad = 0;
                return;
            }
            if (good)
            {
                if (++t.good >= config.resolveAfter)
                {
                    resolve(t, now);
                }
            }
            else
            {
                t.good = 0;
            }
        }
    }

    private void openAnomaly(final Tracker t, final AnomalyKind kind, final Culprit culprit, final Severity severity,
        final long startNs, final long now, final long windowStart, final long windowEnd, final String summary)
    {
        final long id = id(kind, culprit, startNs);
        final Anomaly a = new Anomaly(id, kind, culprit, severity, startNs, now, -1, evidence.toMap(), windowStart,
            windowEnd, summary);
        t.open = a;
        t.good = 0;
        open.put(id, a);
        sink.onOpened(a);
    }

    private void update(final Tracker t, final Culprit culprit, final Severity severity, final long now,
        final long windowStart, final String summary)
    {
        final Anomaly o = t.open;
        final Anomaly a = new Anomaly(o.id(), o.kind(), culprit, severity, o.startNs(), o.detectedNs(), -1,
            evidence.toMap(), windowStart, now, summary);
        t.open = a;
        open.put(a.id(), a);
        sink.onUpdated(a);
    }

    private void resolve(final Tracker t, final long now)
    {
        final Anomaly o = t.open;
        final Anomaly a = new Anomaly(o.id(), o.kind(), o.culprit(), o.severity(), o.startNs(), o.detectedNs(), now,
            o.evidence(), o.windowStartNs(), o.windowEndNs(), o.summary());
        t.open = null;
        t.bad = 0;
        t.good = 0;
        open.remove(a.id());
        sink.onResolved(a);
    }

    static long id(final AnomalyKind kind, final Culprit c, final long startNs)
    {
        long h = 0x51_7cc1_b727_220aL ^ kind.ordinal();
        h = mix(h ^ c.hostId());
        h = mix(h ^ c.commHash());
        h = mix(h ^ (((long)c.rank() << 32) | (c.peer() & 0xffffffffL)));
        h = mix(h ^ (((long)c.channel() << 32) | (c.device() & 0xffffffffL)));
        h = mix(h ^ c.qpNum());
        return mix(h ^ startNs);
    }

    private static long mix(final long v)
    {
        long z = v + 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    // State.

    /** Open / closing state of one potential anomaly. */
    static final class Tracker
    {
        int bad;
        int good;
        long firstBadStartNs;
        Anomaly open;
    }

    /** Named evidence figures, collected without allocation; turned into a map only when published. */
    static final class Evidence
    {
        private final String[] names = new String[16];
        private final double[] values = new double[16];
        private int n;

        void clear()
        {
            n = 0;
        }

        void put(final String name, final double value)
        {
            names[n] = name;
            values[n++] = value;
        }

        SortedMap<String, Double> toMap()
        {
            final TreeMap<String, Double> m = new TreeMap<>();
            for (int i = 0; i < n; i++)
            {
                m.put(names[i], values[i]);
            }
            return Collections.unmodifiableSortedMap(m);
        }
    }

    static final class Host
    {
        final long hostId;
        boolean started;
        boolean pending;
        long periodStartNs;
        long periodEndNs;
        long reportedPeriodStartNs = Long.MIN_VALUE;
        long nowNs = Long.MIN_VALUE;
        final List<Link> links = new ArrayList<>();
        final List<Link> touchedLinks = new ArrayList<>();
        final List<Rank> touchedRanks = new ArrayList<>();
        final List<RecvFlow> recvFlows = new ArrayList<>();

        Host(final long hostId)
        {
            this.hostId = hostId;
        }
    }

    static final class Comm
    {
        final long commHash;
        final Long2ObjectHashMap<Link> links = new Long2ObjectHashMap<>();
        final List<Link> linkList = new ArrayList<>();
        final Int2ObjectHashMap<Rank> ranks = new Int2ObjectHashMap<>();
        final List<Rank> rankList = new ArrayList<>();
        final List<RecvFlow> stalled = new ArrayList<>();
        final List<RecvFlow> waiting = new ArrayList<>();
        final Tracker hang = new Tracker();
        boolean stallChanged;
        int updates;
        boolean statsValid;
        int linkCount;
        double rateMedian;
        double rateSigma;
        int rankCount;
        double waitMedian;
        double waitSigma;

        Comm(final long commHash)
        {
            this.commHash = commHash;
        }
    }

    /** One direction rank → peer of a communicator, from the sender's step flows (all channels). */
    static final class Link
    {
        final Comm comm;
        final Host host;
        final int rank;
        final int peer;
        final Tracker slow = new Tracker();
        long periodStartNs = Long.MIN_VALUE;
        long lastActiveNs;
        long curBytes;
        long curSteps;
        long curNetNs;
        long curNetCount;
        long curPeerWaitNs;
        long curGpuWaitNs;
        long curOutstandingBytes;
        double curWindowBw;
        long curPeerWaitMaxNs;
        final double[] windowBw;
        final long[] peerWaitMax;
        int windowIndex;
        final Rolling bytes;
        final Rolling steps;
        final Rolling netNs;
        final Rolling netCount;
        final Rolling peerWaitNs;
        final Rolling outstandingBytes;

        Link(final Comm comm, final Host host, final int rank, final int peer, final int window)
        {
            this.comm = comm;
            this.host = host;
            this.rank = rank;
            this.peer = peer;
            bytes = new Rolling(window);
            steps = new Rolling(window);
            netNs = new Rolling(window);
            netCount = new Rolling(window);
            peerWaitNs = new Rolling(window);
            outstandingBytes = new Rolling(window);
            windowBw = new double[window];
            peerWaitMax = new long[window];
        }

        void push()
        {
            bytes.push(curBytes);
            steps.push(curSteps);
            netNs.push(curNetNs);
            netCount.push(curNetCount);
            peerWaitNs.push(curPeerWaitNs);
            outstandingBytes.push(curOutstandingBytes);
            windowBw[windowIndex] = curWindowBw;
            peerWaitMax[windowIndex] = curPeerWaitMaxNs;
            windowIndex = windowIndex + 1 == windowBw.length ? 0 : windowIndex + 1;
            curWindowBw = 0;
            curPeerWaitMaxNs = 0;
            curBytes = 0;
            curSteps = 0;
            curNetNs = 0;
            curNetCount = 0;
            curPeerWaitNs = 0;
            curGpuWaitNs = 0;
            curOutstandingBytes = 0;
        }

        boolean hasRate(final AnomalyConfig config)
        {
            return netCount.sum() >= config.minWindowSteps && netNs.sum() > 0
                && host.nowNs - lastActiveNs <= config.staleNs;
        }

        /**
         * The link's capacity estimate: the larger of its service rate (bytes per ns of network time 9 → stop,
         * which queueing behind its own earlier steps lowers) and its best completion-window bandwidth of the
         * window (summed over channels; right for a link kept busy by a queue). A link with idle gaps has a
         * high service rate, a queued healthy one a high window bandwidth; a slow link has neither.
         */
        double rate()
        {
            final double service = bytes.sum() * 1e9 / netNs.sum();
            double window = 0;
            for (final double w : windowBw)
            {
                window = Math.max(window, w);
            }
            return service;
        }

        /** The longest credit wait (20 → 9) of a send on this link in the window. */
        long peerWaitMaxNs()
        {
            long m = 0;
            for (final long w : peerWaitMax)
            {
                m = Math.max(m, w);
            }
            return m;
        }

        double peerWaitPerStep()
        {
            final long n = netCount.sum();
            return n == 0 ? 0 : (double)peerWaitNs.sum() / n;
        }
    }

    /** One rank of a communicator: its GPU consumption (its receives) and the credit waits of links into it. */
    static final class Rank
    {
        final Comm comm;
        final int rank;
        final Tracker slow = new Tracker();
        final List<Link> incoming = new ArrayList<>();
        final List<RecvFlow> recvFlows = new ArrayList<>();
        Host host;
        long periodStartNs = Long.MIN_VALUE;
        long lastActiveNs;
        long curConsumeNs;
        long curConsumeCount;
        final Rolling consumeNs;
        final Rolling consumeCount;

        Rank(final Comm comm, final int rank, final int window)
        {
            this.comm = comm;
            this.rank = rank;
            consumeNs = new Rolling(window);
            consumeCount = new Rolling(window);
        }

        void push()
        {
            consumeNs.push(curConsumeNs);
            consumeCount.push(curConsumeCount);
            curConsumeNs = 0;
            curConsumeCount = 0;
        }

        double consumePerStep()
        {
            final long n = consumeCount.sum();
            return n == 0 ? 0 : (double)consumeNs.sum() / n;
        }

        /**
         * The longest credit wait (20 → 9) of a send into this rank over the window (a late receiver holds the
         * first steps of every operation), or -1 without enough data.
         */
        double incomingWaitPerStep(final AnomalyConfig config)
        {
            long wait = 0;
            long n = 0;
            for (int i = 0; i < incoming.size(); i++)
            {
                final Link l = incoming.get(i);
                if (l.host.nowNs - l.lastActiveNs > config.staleNs)
                {
                    continue;
                }
                wait = Math.max(wait, l.peerWaitMaxNs());
                n += l.netCount.sum();
            }
            return n < config.minWindowSteps ? -1 : (double)wait;
        }
    }

    /** One receive step flow (receiver rank ← sender peer, channel) on the receiver's host. */
    static final class RecvFlow
    {
        final Comm comm;
        final Host host;
        final int rank;
        final int peer;
        final int channel;
        long outstanding;
        long lastProgressNs;
        long seenPeriodStartNs;
        boolean stalled;

        RecvFlow(final Comm comm, final Host host, final int rank, final int peer, final int channel)
        {
            this.comm = comm;
            this.host = host;
            this.rank = rank;
            this.peer = peer;
            this.channel = channel;
        }
    }
}
