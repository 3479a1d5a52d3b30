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
    private final List<Device> nicCandidates = new ArrayList<>();
    private final List<Device> nicDevicesOpen = new ArrayList<>();
    private final List<Device> nicEpisode = new ArrayList<>();
    private long nicEpisodeEndNs = Long.MIN_VALUE;
    private final Robust robust = new Robust();
    private final Evidence evidence = new Evidence();
    private long summaries;
    private Host lastHost;
    private Comm lastComm;

    /** Stragglers and slow links from real NCCL's wait states (first steps, network time per byte). */
    private final WaitStateDetector waitStates;
    /** Stragglers from GPU kernel timing (NVLink: no proxy steps). */
    private final KernelLatenessDetector kernelLateness;

    public AnomalyEngine(final AnomalyConfig config, final AnomalySink sink)
    {
        this.config = config;
        this.sink = sink;
        final Episode.Publisher publisher = new DetectorPublisher();
        this.waitStates = new WaitStateDetector(config, publisher);
        this.kernelLateness = new KernelLatenessDetector(config, publisher);
    }

    WaitStateDetector waitStates()
    {
        return waitStates;
    }

    /** Publishes the wait-state detectors' anomalies into the engine's open set, once per kind and culprit. */
    private final class DetectorPublisher implements Episode.Publisher
    {
        @Override
        public Anomaly open(final AnomalyKind kind, final Culprit culprit, final Severity severity, final long startNs,
            final long nowNs, final SortedMap<String, Double> ev, final String summary)
        {
            for (final Anomaly a : open.values())
            {
                final Culprit o = a.culprit();
                if (a.kind() == kind && o.commHash() == culprit.commHash() && o.rank() == culprit.rank()
                    && (kind != AnomalyKind.SLOW_LINK || o.peer() == culprit.peer()))
                {
                    return null;
                }
            }
            return publishOpened(kind, culprit, severity, startNs, nowNs, ev, startNs, nowNs, summary);
        }

        @Override
        public Anomaly update(final Anomaly o, final Severity severity, final long nowNs,
            final SortedMap<String, Double> ev, final String summary)
        {
            return publishUpdated(o, o.culprit(), severity, ev, o.windowStartNs(), nowNs, summary);
        }

        @Override
        public void resolve(final Anomaly o, final long nowNs)
        {
            publishResolved(o, nowNs);
        }
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

    // Input.

    @Override
    public void onSummary(final FlowSummary s)
    {
        summaries++;
        // The host of the summary before, checked here: host() is too big to inline and a host's summaries come
        // together, so the call was paid per summary for this comparison.
        final Host last = lastHost;
        final Host h = last != null && last.hostId == s.hostId() ? last : (Host)miss(MISS_HOST, null, null, s, 0);
        if (!h.started || s.periodStartNs() != h.periodStartNs)
        {
            if (h.started && h.pending)
            {
                endPeriod(h);
            }
            h.previousPeriodStartNs = h.started ? h.periodStartNs : Long.MIN_VALUE;
            // The receives of the new period are not reported yet: none can be stalled, unless the period starts
            // at or before one reported already (then rows of then would match it: checkStalls scans them all).
            h.waitingSinceNs = Long.MAX_VALUE;
            h.recvScanAll = s.periodStartNs() <= h.latestPeriodStartNs;
            h.latestPeriodStartNs = Math.max(h.latestPeriodStartNs, s.periodStartNs());
            h.started = true;
            h.position = 0;
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
            case FlowSummary.KIND_LINK:
                final FlowRows.Cursor cursor = h.linkCursor;
                waitStates.onLink(cursor != null ? cursor : (h.linkCursor = waitStates.cursorOf(h.hostId)), s);
                break;
            default:
                break;
        }
    }

    /**
     * Collectives: the GPU durations of one collective (communicator, sequence number) across its ranks. A rank
     * that arrives late finishes with the others, so its duration is the shortest: its lateness = median
     * duration − its duration (durations, not instants, so host clocks do not matter).
     */
    @Override
    public void onCollective(final CollectiveSummary cs)
    {
        kernelLateness.onCollective(cs);
        if (!cs.complete() || cs.nranks() < config.minLinks || cs.rank() < 0 || cs.rank() >= cs.nranks())
        {
            return;
        }
        final Comm c = comm(cs.commHash());
        final long key = cs.seqNumber();
        Round round = c.rounds.get(key);
        if (round == null)
        {
            round = c.freeRounds.isEmpty() ? new Round() : c.freeRounds.remove(c.freeRounds.size() - 1);
            round.reset(key, cs.nranks());
            c.rounds.put(key, round);
        }
        if (!round.seen[cs.rank()])
        {
            round.seen[cs.rank()] = true;
            round.durationNs[cs.rank()] = cs.durationNs();
            round.count++;
        }
        if (round.count == round.nranks)
        {
            c.rounds.remove(key);
            robust.clear();
            for (int r = 0; r < round.nranks; r++)
            {
                robust.add(round.durationNs[r]);
            }
            robust.compute();
            for (int r = 0; r < round.nranks; r++)
            {
                rank(c, r).pushLateness((long)robust.median - round.durationNs[r]);
            }
            c.freeRounds.add(round);
        }
        if (c.rounds.size() > 64)
        {
            // Rounds some rank never reported (a hang, a lost record): drop the oldest.
            long oldest = Long.MAX_VALUE;
            for (final Round r : c.rounds.values())
            {
                oldest = Math.min(oldest, r.seq);
            }
            c.freeRounds.add(c.rounds.remove(oldest));
        }
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs)
    {
        waitStates.advanceTo(hostId, timeNs);
        kernelLateness.advanceTo(hostId, timeNs);
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
        final Host last = lastHost;
        if (last != null && last.hostId == hostId)
        {
            return last;
        }
        // The drain loop visits the hosts in the same order every period: the one that followed last time.
        Host h = last != null ? last.successor : null;
        if (h == null || h.hostId != hostId)
        {
            h = hosts.get(hostId);
            if (h == null)
            {
                h = new Host(hostId, config.windowPeriods);
                hosts.put(hostId, h);
            }
            if (last != null)
            {
                last.successor = h;
            }
        }
        lastHost = h;
        return h;
    }

    private Comm comm(final long commHash)
    {
        final Comm last = lastComm;
        if (last != null && last.commHash == commHash)
        {
            return last;
        }
        Comm c = comms.get(commHash);
        if (c == null)
        {
            c = new Comm(commHash, config.windowPeriods);
            comms.put(commHash, c);
        }
        lastComm = c;
        return c;
    }

    private Rank rank(final Comm c, final int r)
    {
        Rank k = c.ranks.get(r);
        if (k == null)
        {
            k = new Rank(c, r, c.rankTotal);
            c.ranks.put(r, k);
            c.addRank(k);
        }
        return k;
    }

    private void onSend(final Host h, final FlowSummary s)
    {
        final Comm c = comm(s.commHash());
        // The window engine emits a host's flows in a stable order: the link at this position last period is
        // checked first (no hashing when it matches), against the communicator's dense tables, so that a summary
        // touches its link's row there and no link object.
        final int pos = h.position++;
        int id = h.cachedLink(pos, c);
        if (id < 0 || c.lRankNo[id] != s.rank() || c.lPeerNo[id] != s.peer())
        {
            id = ((Link)miss(MISS_LINK, h, c, s, pos)).id;
        }
        final int own = c.lOwner[id];
        if (c.rHost[own] != h)
        {
            c.setHost(own, h);
        }
        final long[] cur = c.lCur;
        final int b = id * Comm.LINK_CUR;
        if (cur[b] != s.periodStartNs())
        {
            cur[b] = s.periodStartNs();
            h.touchLink(c, id);
        }
        cur[b + Link.BYTES + 1] += s.bytes();
        cur[b + Link.NET_NS + 1] += s.phaseSumNs(Phase.NETWORK);
        cur[b + Link.NET_COUNT + 1] += s.phaseCount(Phase.NETWORK);
        cur[b + Link.PEER_WAIT_NS + 1] += s.phaseSumNs(Phase.PEER_WAIT);
        cur[b + Link.OUTSTANDING + 1] += s.outstandingBytes();
        cur[b + Link.PEER_WAIT_MAX + 1] = Math.max(cur[b + Link.PEER_WAIT_MAX + 1], s.phaseMaxNs(Phase.PEER_WAIT));
    }

    private void onRecv(final Host h, final FlowSummary s)
    {
        // The flow at this position last period when it is the same (the window engine emits a host's flows in a
        // stable order), else looked up or created apart (keeps this method small enough to inline).
        final int pos = h.position++;
        // The flow's row in the host's receive table (no flow object per summary).
        int i = h.cachedRecv(pos);
        if (i < 0 || h.recvRows[i * Host.RECV_ROW + Host.RECV_KEY] != s.flowKey())
        {
            i = ((RecvFlow)miss(MISS_RECV, h, null, s, pos)).idx;
        }
        // After the miss: a new flow may have grown the table.
        final long[] rows = h.recvRows;
        final int b = i * Host.RECV_ROW;
        // The receiving rank by its row in its communicator's tables (no rank object per summary).
        final Comm oc = h.recvComm[i];
        final int own = (int)rows[b + Host.RECV_OWNER];
        if (oc.rHost[own] != h)
        {
            oc.setHost(own, h);
        }
        long progressNs = rows[b + Host.RECV_PROGRESS];
        if (rows[b + Host.RECV_SEEN] != h.previousPeriodStartNs)
        {
            // Not reported in the host's period before (the window engine reports every flow with work
            // outstanding in every period it ends): nothing was outstanding then. The host's previous period, not
            // the one just before in time: over a silence the window engine ends no period, and a receive waiting
            // all along must not count as having progressed.
            progressNs = Math.max(progressNs, s.periodStartNs());
        }
        rows[b + Host.RECV_SEEN] = s.periodStartNs();
        rows[b + Host.RECV_OUTSTANDING] = s.outstandingSteps();
        if (s.completions() > 0 || s.outstandingSteps() == 0)
        {
            progressNs = s.periodEndNs();
        }
        rows[b + Host.RECV_PROGRESS] = progressNs;
        if (s.outstandingSteps() > 0)
        {
            h.waiting(progressNs);
        }
        // The rank's window is accumulated in place: its period's first summary opens the next slot.
        final PeriodRing win = oc.rWin;
        if (oc.rPeriodStartNs[own] != s.periodStartNs())
        {
            // Apart to keep this method under C2's size limit for inlining into onSummary (325 bytecodes).
            oc.openRankPeriod(h, own, s.periodStartNs());
        }
        final int at = win.current(own);
        win.add(at, Rank.CONSUME_NS, s.phaseSumNs(Phase.GPU_CONSUME));
        win.add(at, Rank.CONSUME_COUNT, s.phaseCount(Phase.GPU_CONSUME));
        // A receive waiting for data (10 → 11): kept as evidence of how long this rank waited for its senders.
        win.max(at, Rank.DATA_WAIT_MAX, s.phaseMaxNs(Phase.NETWORK));
    }

    private static final int MISS_HOST = 0;
    private static final int MISS_LINK = 1;
    private static final int MISS_RECV = 2;
    private static final int MISS_DEVICE = 3;

    /**
     * What a summary resolves only when its host changes or its position cache misses: its host, its link (send),
     * its receive flow, its NIC device (one that is not among devices 0 … 15), each looked up, else created and
     * registered. One method on purpose: C2 never inlines a hot callee over 325 bytecodes. At 4,096 ranks the first
     * periods take these paths thousands of times, so C2 counted them hot and inlined them (hash maps,
     * constructors) into onSummary until its node budget ran out, and then left per-summary accessors as calls.
     */
    private Object miss(final int kind, final Host h, final Comm c, final FlowSummary s, final int pos)
    {
        switch (kind)
        {
            case MISS_HOST:
                return host(s.hostId());
            case MISS_LINK:
            {
                // Mixed (a bijection): packed consecutive ranks collide in an open-addressing map's probe sequence.
                final long key = mix(((long)s.rank() << 32) | (s.peer() & 0xffffffffL));
                Link l = c.links.get(key);
                if (l == null)
                {
                    l = new Link(c, h, s.rank(), s.peer(), c.linkTotal);
                    l.owner = rank(c, s.rank());
                    c.links.put(key, l);
                    h.links.add(l);
                    l.peerRank = rank(c, s.peer());
                    c.addLink(l);
                    c.addIncoming(l.peerRank, l.id);
                }
                h.cacheLink(pos, c, l.id);
                return l;
            }
            case MISS_RECV:
            {
                final Comm sc = comm(s.commHash());
                // A receive flow is one per (flow key, host).
                RecvFlow f = recvFlows.get(s.flowKey() ^ (s.hostId() * 0x9E3779B97F4A7C15L));
                final Comm oc = f != null ? f.comm : sc;
                final int own = f != null ? f.ownerIdx() : rank(sc, s.rank()).idx;
                if (oc.rHost[own] != h)
                {
                    oc.setHost(own, h);
                }
                if (f == null)
                {
                    f = newRecvFlow(h, sc, s, own);
                }
                h.cacheRecv(pos, f.idx);
                return f;
            }
            default:
            {
                final int dev = s.device();
                Device d = h.devices.get(dev);
                if (d == null)
                {
                    d = new Device(h, dev, h.deviceList.size());
                    h.addDevice(d);
                    h.devices.put(dev, d);
                }
                return d;
            }
        }
    }

    /** A receive flow's first summary (apart from {@link #onRecv}, so that the per-summary part stays small). */
    private RecvFlow newRecvFlow(final Host h, final Comm c, final FlowSummary s, final int own)
    {
        final RecvFlow f = new RecvFlow(c, h, s.rank(), s.peer(), s.channel(), h.recvFlowCount);
        f.owner = c.rankById[own];
        recvFlows.put(s.flowKey() ^ (s.hostId() * 0x9E3779B97F4A7C15L), f);
        h.addRecvFlow(f, s.flowKey(), own, s.periodStartNs());
        if (!h.recvComms.contains(c))
        {
            h.recvComms.add(c);
        }
        f.owner.recvFlows.add(f);
        return f;
    }

    private void onQp(final Host h, final FlowSummary s)
    {
        // The device's row in its host's device table (no device object per summary).
        final int dev = s.device();
        int i = dev >= 0 && dev < h.devRowByDevice.length ? h.devRowByDevice[dev] - 1 : -1;
        if (i < 0)
        {
            i = ((Device)miss(MISS_DEVICE, h, null, s, 0)).idx;
        }
        // After the miss: a new device may have grown the table.
        // The period's opening and a QP not among the row's first two are apart: this method must stay under
        // C2's size limit for inlining into onSummary (325 bytecodes; a call per QP summary cost ~30 instructions).
        final long[] cur = h.devCur;
        final int b = i * Host.DEV_CUR;
        if (cur[b + Host.DEV_PERIOD] != s.periodStartNs())
        {
            Host.openDevicePeriod(cur, b, s.periodStartNs());
        }
        final long qp = s.qpNum();
        if (qp != cur[b + Host.DEV_QP0] && qp != cur[b + Host.DEV_QP1])
        {
            otherQp(h, i, s);
        }
        if (s.completions() == 0 && s.outstandingSteps() > 0)
        {
            // Send work requests carry their length; NCCL leaves a receive's stale (the simulator: 0).
            cur[b + Host.DEV_STALLED] += s.outstandingBytes() > 0 ? Host.STALLED_SEND : Host.STALLED_RECV;
        }
        cur[b + Host.DEV_OUTSTANDING] += s.outstandingSteps();
        cur[b + Host.DEV_COMPLETIONS] += s.completions();
        if (s.bytes() > 0)
        {
            // Send work requests only (receives carry NCCL's stale length, 0 here): a receive's latency is
            // mostly waiting for its sender, not the NIC.
            cur[b + Host.DEV_NET_NS] += s.phaseSumNs(Phase.NETWORK);
            cur[b + Host.DEV_NET_COUNT] += s.phaseCount(Phase.NETWORK);
        }
    }

    /** A QP summary whose QP is not among its device row's first two (see {@link Device#newQp}). */
    private void otherQp(final Host h, final int i, final FlowSummary s)
    {
        if (h.deviceList.get(i).newQp(s.qpNum()) && h.devWarm(i) >= config.warmupPeriods)
        {
            // A queue pair the device never carried: traffic moved onto it (failover).
            h.newQpDevice = s.device();
            h.newQpAtNs = s.periodEndNs();
        }
    }

    // Period end of one host: windows advance, that host's links, ranks and receives are judged.

    private void endPeriod(final Host h)
    {
        h.pending = false;
        h.nowNs = Math.max(h.nowNs, h.periodEndNs);
        final long periodStart = h.periodStartNs;
        final long now = h.periodEndNs;
        judgeDevices(h, periodStart, now);
        // The links by their rows in their communicators' dense tables (a host's links side by side): a link
        // object only to judge one bad or tracked.
        final int[] ids = h.touchedLinks;
        final Comm[] comms = h.touchedLinkComms;
        final int n = h.touchedLinkCount;
        for (int i = 0; i < n; i++)
        {
            final Comm c = comms[i];
            final int id = ids[i];
            push(c, id);
            c.lLastActiveNs[id] = now;
            publishRatio(c, id);
            c.updates++;
        }
        // Links: degraded ones of this host, then slow link (one sender rank) or congestion (several).
        int degradedRanks = 0;
        int softRanks = 0;
        int judged = 0;
        Comm worstComm = null;
        int worst = -1;
        for (int i = 0; i < n; i++)
        {
            final Comm c = comms[i];
            final int id = ids[i];
            refreshStats(c);
            final boolean was = c.lDegraded[id];
            // Whether the link is degraded now: its service rate relative to its own baseline (the ratio) is
            // below the communicator's median ratio by the slow-link fraction and by madK robust deviations. A
            // link still warming up feeds its baseline only. The baseline follows the link while it is healthy
            // and freezes while it is degraded or part of an anomaly. Written here, not in a method of its own:
            // C2 compiled that one apart (it runs hot while the period end is recompiled after a deoptimisation)
            // and then found it too big to inline, a call per link and period.
            boolean degraded = false;
            if (hasRate(c, id))
            {
                final double[] jd = c.lJudge;
                final int b = id * Comm.LJ;
                final double rate = jd[b + Comm.LJ_RATE];
                if (c.lWarm[id] < config.warmupPeriods)
                {
                    warmUp(c, id, rate);
                }
                else
                {
                    final double ratio = rate / jd[b + Comm.LJ_BASELINE];
                    jd[b + Comm.LJ_FRACTION] = ratio;
                    // A send that waited for its receiver's credit and then went out in a burst queues on the
                    // wire: when the receiver is late (slow node), it is to blame, not the link. The link's own
                    // wait first; the receiving rank's tracked flag (bad evaluations or open) from its row.
                    final boolean creditBound = c.lPeerWaitMax[id] > config.slowNodeMinNs && c.rTracked[c.lPeer[id]];
                    final Host host = c.lHost[id];
                    final boolean suppressed = host.nicQuiet || peerHostNicQuiet(c, id) || creditBound;
                    degraded = !suppressed && c.linkCount >= config.minLinks
                        && ratio < c.rateMedian * (1 - config.slowLinkFraction)
                        && c.rateMedian - ratio > config.madK * c.rateSigma;
                    if (!degraded && !suppressed && !c.lTracked[id] && host.congestion.open == null)
                    {
                        jd[b + Comm.LJ_BASELINE] += (rate - jd[b + Comm.LJ_BASELINE]) / config.baselinePeriods;
                        jd[b + Comm.LJ_BASELINE_OUT] += (outstandingMean(c, id) - jd[b + Comm.LJ_BASELINE_OUT])
                            / config.baselinePeriods;
                    }
                }
            }
            // The baseline and warm-up may have moved.
            publishRatio(c, id);
            c.lDegraded[id] = degraded;
            if (c.lWarm[id] >= config.warmupPeriods && hasRate(c, id))
            {
                judged++;
            }
            if (was != degraded)
            {
                c.troubledLinks += was ? -1 : 1;
            }
            if (degraded)
            {
                if (!sameRankSeen(h, c.lRankNo[id], i))
                {
                    degradedRanks++;
                }
                if (worst < 0 || c.fraction(id) < worstComm.fraction(worst))
                {
                    worstComm = c;
                    worst = id;
                }
            }
        }
        if (degradedRanks >= 1)
        {
            // Other ranks of the host whose links slowed too (half the slow-link fraction): a shared NIC.
            for (int i = 0; i < n; i++)
            {
                final Comm c = comms[i];
                final int id = ids[i];
                if (soft(c, id) && !degradedRank(h, c.lRankNo[id]) && !softSeen(h, c.lRankNo[id], i))
                {
                    softRanks++;
                }
            }
        }
        final Device dev = worstDevice(h);
        final boolean nicSlowed = dev != null && dev.latencyRatio() >= 1.25;
        final boolean congestion = degradedRanks >= 2 || (degradedRanks == 1 && softRanks >= 1 && nicSlowed)
            || (h.congestion.open != null && degradedRanks >= 1);
        for (int i = 0; i < n; i++)
        {
            final Comm c = comms[i];
            final int id = ids[i];
            // judgeLink's own early return, checked here: most links are healthy and have nothing tracked.
            if ((c.lDegraded[id] && !congestion) || c.lTracked[id])
            {
                judgeLink(c.linkById[id], periodStart, now, congestion);
            }
        }
        // A period in which none of the host's links completed a window's worth says nothing either way; without
        // congestion now or tracked, judgeCongestion would return having changed nothing.
        if (judged > 0 && (congestion || h.congestion.open != null || h.congestion.bad != 0))
        {
            judgeCongestion(h, dev, congestion, worst < 0 ? null : worstComm.linkById[worst], periodStart, now);
        }
        for (int i = 0; i < h.touchedRankCount; i++)
        {
            final Comm c = h.touchedRankComms[i];
            refreshStats(c);
            judgeRank(c, h.touchedRanks[i], periodStart, now);
        }
        h.touchedLinkCount = 0;
        h.touchedRankCount = 0;
        checkStalls(h);
    }

    private static boolean degradedRank(final Host h, final int rank)
    {
        for (int j = 0; j < h.touchedLinkCount; j++)
        {
            final Comm c = h.touchedLinkComms[j];
            final int o = h.touchedLinks[j];
            if (c.lDegraded[o] && c.lRankNo[o] == rank)
            {
                return true;
            }
        }
        return false;
    }

    /** A judged link not degraded but below its communicator's median by half the slow-link fraction. */
    private boolean soft(final Comm c, final int id)
    {
        return !c.lDegraded[id] && c.lWarm[id] >= config.warmupPeriods && hasRate(c, id)
            && c.fraction(id) < c.rateMedian * (1 - config.slowLinkFraction / 2);
    }

    private boolean softSeen(final Host h, final int rank, final int upTo)
    {
        for (int j = 0; j < upTo; j++)
        {
            final Comm c = h.touchedLinkComms[j];
            final int o = h.touchedLinks[j];
            if (c.lRankNo[o] == rank && soft(c, o))
            {
                return true;
            }
        }
        return false;
    }

    private static boolean sameRankSeen(final Host h, final int rank, final int upTo)
    {
        for (int j = 0; j < upTo; j++)
        {
            final Comm c = h.touchedLinkComms[j];
            final int o = h.touchedLinks[j];
            if (c.lDegraded[o] && c.lRankNo[o] == rank)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Recomputes a communicator's link and rank statistics about once per round of all its links. Called for every
     * link and rank judged: the check is kept apart from the pass so that it inlines (a call per judgement costs
     * more than the check).
     */
    private void refreshStats(final Comm c)
    {
        if (!c.statsValid || c.updates >= c.linkTotal)
        {
            recomputeStats(c);
        }
    }

    private void recomputeStats(final Comm c)
    {
        c.updates = 0;
        c.statsValid = true;
        // Over the dense mirrors (sequential arrays), not the link objects (a cache miss each). One pass over the
        // links: the judged fresh ones' ratios, and each fresh one's credit wait gathered into its receiving
        // rank's row (the rank table's scratch).
        final int links = c.linkTotal;
        final int ranks = c.rankTotal;
        final long staleNs = config.staleNs;
        final long[] waitMax = c.rWaitMax;
        final long[] waitCount = c.rWaitCount;
        java.util.Arrays.fill(waitMax, 0, ranks, 0L);
        java.util.Arrays.fill(waitCount, 0, ranks, 0L);
        final Host[] lHost = c.lHost;
        final long[] lLastActiveNs = c.lLastActiveNs;
        final boolean[] lJudged = c.lJudged;
        final double[] lRatio = c.lRatio;
        final int[] lPeer = c.lPeer;
        final long[] lPeerWaitMax = c.lPeerWaitMax;
        final long[] lNetCount = c.lNetCount;
        robust.clear();
        for (int i = 0; i < links; i++)
        {
            if (lHost[i].nowNs - lLastActiveNs[i] > staleNs)
            {
                continue;
            }
            if (lJudged[i])
            {
                robust.add(lRatio[i]);
            }
            final int p = lPeer[i];
            waitMax[p] = Math.max(waitMax[p], lPeerWaitMax[i]);
            waitCount[p] += lNetCount[i];
        }
        c.linkCount = robust.count();
        // Last time's median and MAD as guesses (same results, fewer steps: see Robust).
        robust.compute(c.rateMedian, c.rateMad);
        c.rateMedian = robust.median;
        c.rateMad = robust.mad;
        c.rateSigma = robust.sigma();
        robust.clear();
        c.creditTop = 0;
        c.creditSecond = 0;
        final double[] excess = c.rExcess;
        final long minSteps = config.minWindowSteps;
        for (int i = 0; i < ranks; i++)
        {
            // Only the two largest waits are judged (a rank waited on alone): no median of them is needed.
            if (waitCount[i] >= minSteps)
            {
                final double w = (double)waitMax[i];
                if (w > c.creditTop)
                {
                    c.creditSecond = c.creditTop;
                    c.creditTop = w;
                }
                else if (w > c.creditSecond)
                {
                    c.creditSecond = w;
                }
            }
            if (!Double.isNaN(excess[i]))
            {
                robust.add(excess[i]);
            }
        }
        c.excessCount = robust.count();
        robust.compute(c.excessMedian, c.excessMad);
        c.excessMedian = robust.median;
        c.excessMad = robust.mad;
        c.excessSigma = robust.sigma();
    }


    /** What the communicator statistics read of a link's ratio: whether it is judged, and its rate / baseline. */
    private void publishRatio(final Comm c, final int id)
    {
        // hasRate less its staleness, which moves with the host's time and is checked when read.
        final boolean judged = c.lWarm[id] >= config.warmupPeriods && c.lNetCount[id] >= config.minWindowSteps
            && c.lNetNs[id] > 0;
        c.lJudged[id] = judged;
        final int b = id * Comm.LJ;
        c.lRatio[id] = judged ? c.lJudge[b + Comm.LJ_RATE] / c.lJudge[b + Comm.LJ_BASELINE] : 0;
    }

    /** Whether a link's window has a rate to judge: enough steps, network time, and not stale. */
    private boolean hasRate(final Comm c, final int id)
    {
        return c.lNetCount[id] >= config.minWindowSteps && c.lNetNs[id] > 0
            && c.lHost[id].nowNs - c.lLastActiveNs[id] <= config.staleNs;
    }

    /**
     * The period's accumulators of link {@code id} into its window, then cleared; the window's rate, network
     * sums and longest credit wait into the link's rows.
     */
    private static void push(final Comm c, final int id)
    {
        final long[] cur = c.lCur;
        final int b = id * Comm.LINK_CUR + 1;
        final RingTable win = c.lWin;
        final int slot = win.slot(id);
        // The summed series (all before PEER_WAIT_MAX) in one go, their accumulators cleared.
        win.setAll(id, slot, cur, b, Link.PEER_WAIT_MAX);
        final long now = cur[b + Link.PEER_WAIT_MAX];
        cur[b + Link.PEER_WAIT_MAX] = 0;
        final long left = win.replace(slot, Link.PEER_WAIT_MAX, now);
        win.advance(id);
        // The window maximum without a rescan, unless the value leaving was the maximum and nothing as large
        // came in.
        final long max = c.lPeerWaitMax[id];
        if (now >= max)
        {
            c.lPeerWaitMax[id] = now;
        }
        else if (left == max)
        {
            c.lPeerWaitMax[id] = win.max(id, Link.PEER_WAIT_MAX);
        }
        final long net = win.sum(id, Link.NET_NS);
        c.lNetNs[id] = net;
        c.lNetCount[id] = win.sum(id, Link.NET_COUNT);
        c.lJudge[id * Comm.LJ + Comm.LJ_RATE] = net == 0 ? Double.NaN : win.sum(id, Link.BYTES) * 1e9 / net;
    }

    /**
     * The longest credit wait (20 → 9) of a send into this rank over the window (a late receiver holds the
     * first steps of every operation), or -1 without enough data; from the communicator's link mirrors.
     */
    private double incomingWaitPerStep(final Comm c, final int rank)
    {
        long wait = 0;
        long n = 0;
        // The first two links into the rank from the communicator's dense table, more from the rank object (a
        // maximum and a sum: the order does not matter).
        final int count = c.rInCount[rank];
        final int[] in = count <= 2 ? c.rIn : c.rankById[rank].in;
        final int from = count <= 2 ? 2 * rank : 0;
        for (int k = from; k < from + count; k++)
        {
            final int i = in[k];
            if (c.lHost[i].nowNs - c.lLastActiveNs[i] > config.staleNs)
            {
                continue;
            }
            wait = Math.max(wait, c.lPeerWaitMax[i]);
            n += c.lNetCount[i];
        }
        return n < config.minWindowSteps ? -1 : (double)wait;
    }

    /**
     * A link's baselines while it warms up (apart to keep the period end small): the harmonic mean of its first
     * windows' rates, i.e. their time per byte averaged. An arithmetic mean was carried by a few windows of a job's
     * start with next to no network time (52 GB/s on links that never carried 5.6 GB/s in any period: the link then
     * read as slow at 10 % of that baseline for good, MultiHostHarnessTest).
     */
    private static void warmUp(final Comm c, final int id, final double rate)
    {
        final int warm = c.lWarm[id];
        final double[] j = c.lJudge;
        final int b = id * Comm.LJ;
        j[b + Comm.LJ_BASELINE] = warm == 0 ? rate
            : (warm + 1) / (warm / j[b + Comm.LJ_BASELINE] + 1 / rate);
        j[b + Comm.LJ_BASELINE_OUT] = warm == 0 ? outstandingMean(c, id)
            : j[b + Comm.LJ_BASELINE_OUT] + (outstandingMean(c, id) - j[b + Comm.LJ_BASELINE_OUT]) / (warm + 1);
        c.lWarm[id] = warm + 1;
    }

    /** Mean outstanding bytes at the ends of the link's window's periods. */
    private static double outstandingMean(final Comm c, final int id)
    {
        final int n = c.lWin.filled(id);
        return n == 0 ? 0 : (double)c.lWin.sum(id, Link.OUTSTANDING) / n;
    }

    /** Whether the receiving rank's host has a NIC stalling (through the dense mirrors: no rank object). */
    private static boolean peerHostNicQuiet(final Comm c, final int id)
    {
        final Host h = c.rHost[c.lPeer[id]];
        return h != null && h.nicQuiet;
    }

    private void judgeLink(final Link l, final long periodStart, final long now, final boolean congestion)
    {
        final Comm c = l.comm;
        if (c.lWarm[l.id] < config.warmupPeriods || !hasRate(c, l.id))
        {
            return;
        }
        // Not while an end of the link straggles by the wait states (its sends burst and queue) nor around a hang
        // (traffic resuming): the service opens this rule's anomalies late enough for those to have been seen.
        final boolean bad = c.lDegraded[l.id] && !congestion && !waitStates.straggling(c.commHash, l.rank)
            && !waitStates.straggling(c.commHash, l.peer) && !hangNear(c, periodStart, now);
        final boolean good = !c.lDegraded[l.id] && c.fraction(l.id) >= c.rateMedian * (1 - config.slowLinkFraction / 2);
        if (!bad && l.slow().open == null && l.slow().bad == 0)
        {
            return;
        }
        final double rate = l.rate();
        evidence.clear();
        evidence.put("bandwidthBytesPerSecond", rate);
        evidence.put("baselineBytesPerSecond", c.baseline(l.id));
        evidence.put("fractionOfBaseline", c.fraction(l.id));
        evidence.put("medianFractionOfBaseline", c.rateMedian);
        evidence.put("robustSigma", c.rateSigma);
        evidence.put("outstandingBytes", l.latestOutstanding());
        evidence.put("peerWaitNsPerStep", l.peerWaitPerStep());
        evidence.put("links", c.linkCount);
        final double rel = c.rateMedian > 0 ? c.fraction(l.id) / c.rateMedian : 0;
        final Severity sev = rel < 0.5 ? Severity.CRITICAL : Severity.WARNING;
        final String summary = !willPublish(l.slow(), bad, sev) ? null : String.format("rank %d → %d of comm 0x%x moves "
            + "data at %.0f%% of its baseline while its communicator's links keep %.0f%%: slow link (the sender's "
            + "steps wait on the network, not on credit)", l.rank, l.peer, c.commHash, 100 * c.fraction(l.id),
            100 * c.rateMedian);
        final boolean wasOpen = l.slow().open != null;
        track(l.slow(), bad, good, AnomalyKind.SLOW_LINK, Culprit.link(l.host.hostId, c.commHash, l.rank, l.peer),
            sev, periodStart, now, now - (long)config.windowPeriods * (now - periodStart), summary);
        if (wasOpen != (l.slow().open != null))
        {
            c.openSlowLinks += wasOpen ? -1 : 1;
        }
        c.lTracked[l.id] = l.slow().bad != 0 || l.slow().open != null;
    }

    /**
     * Congestion on one host's NIC: links of two or more of its sender ranks degraded together, with work
     * queued (outstanding bytes above their baseline; nothing queued would be starvation). The device is the
     * host's NIC whose work-request latency rose most against its baseline ({@code dev}, found once per period
     * end by {@link #worstDevice}).
     */
    private void judgeCongestion(final Host h, final Device dev, final boolean congestion, final Link worst,
        final long periodStart, final long now)
    {
        // Work queued on the slowed links grows (mean outstanding bytes over the window above
        // congestionOutstandingRatio × their baseline); slower with nothing queued would be starvation.
        final boolean queued = worst != null
            && outstandingMean(worst.comm, worst.id)
            > config.congestionOutstandingRatio * Math.max(worst.comm.baselineOut(worst.id), 1);
        // ... and the NIC's work requests take longer than usual (its queue builds), more so than the other NICs'
        // (a workload change, e.g. bigger messages, lengthens them everywhere).
        // A link already kept full by its credits cannot queue more steps: there the NIC's latency, at least
        // twice the other NICs', is the queue.
        final double medianLatency = dev == null || !congestion ? 0 : medianDeviceLatencyRatio();
        final boolean bad = congestion && dev != null && dev.latencyRatio() >= 1.25
            && ((queued && dev.latencyRatio() >= 1.5 * medianLatency) || dev.latencyRatio() >= 2 * medianLatency);
        if (!bad && h.congestion.open == null && h.congestion.bad == 0)
        {
            return;
        }
        boolean good = true;
        for (int i = 0; i < h.links.size(); i++)
        {
            final Link l = h.links.get(i);
            if (l.comm.lDegraded[l.id] && l.comm.lLastActiveNs[l.id] == now)
            {
                good = false;
            }
        }
        final int device = dev != null ? dev.device : h.congestion.open != null ? h.congestion.open.culprit().device()
            : -1;
        evidence.clear();
        if (worst != null)
        {
            evidence.put("worstLinkFractionOfBaseline", worst.comm.fraction(worst.id));
            evidence.put("medianFractionOfBaseline", worst.comm.rateMedian);
            evidence.put("outstandingBytes", outstandingMean(worst.comm, worst.id));
            evidence.put("baselineOutstandingBytes", worst.comm.baselineOut(worst.id));
        }
        if (dev != null)
        {
            evidence.put("deviceLatencyRatio", dev.latencyRatio());
            evidence.put("deviceOutstandingWorkRequests", dev.outstanding());
        }
        final Severity sev = worst != null && worst.comm.fraction(worst.id) < 0.5 * worst.comm.rateMedian
            ? Severity.CRITICAL
            : Severity.WARNING;
        final String summary = !willPublish(h.congestion, bad, sev) ? null : String.format("NIC %d of host 0x%x "
            + "congested: several of its ranks' links slowed together while work queued on them", device, h.hostId);
        track(h.congestion, bad, good, AnomalyKind.CONGESTION, Culprit.nic(h.hostId, device), sev, periodStart, now,
            now - (long)config.windowPeriods * (now - periodStart), summary);
    }

    /** The median latency ratio (to baseline) of every NIC with a current one, all hosts. */
    private double medianDeviceLatencyRatio()
    {
        robust.clear();
        for (final Host h : hosts.values())
        {
            for (int i = 0; i < h.deviceList.size(); i++)
            {
                final Device d = h.deviceList.get(i);
                if (d.latencyRatio() > 0)
                {
                    robust.add(d.latencyRatio());
                }
            }
        }
        robust.compute();
        return robust.median;
    }

    private static Device worstDevice(final Host h)
    {
        // Over the host's device state rows (just written by judgeDevices), not the device objects.
        final long[] st = h.devState;
        int best = -1;
        double bestRatio = 0;
        for (int i = 0; i < h.deviceCount; i++)
        {
            final double ratio = Double.longBitsToDouble(st[i * Host.DEV_STATE + Host.S_RATIO]);
            if (ratio > 0 && (best < 0 || ratio > bestRatio))
            {
                best = i;
                bestRatio = ratio;
            }
        }
        return best < 0 ? null : h.deviceList.get(best);
    }

    /**
     * NIC devices of one host: latency baselines (for congestion attribution) and stall candidates: work
     * requests outstanding, some QP stuck and no completion on the device for half of {@code nicStallNs}. Both
     * ends of a broken connection stall; the NIC to blame is chosen among all candidates (see
     * {@link #judgeNicStall}). While a device of a host is a candidate, and for a window after, the host's links
     * and ranks are not judged (their steps wait for the failover).
     */
    private void judgeDevices(final Host h, final long periodStart, final long now)
    {
        // Over the host's dense device tables (the period's accumulators, then the judged state: two short runs
        // of sequential rows); a device object only where its candidacy changes.
        final long[] cur = h.devCur;
        final long[] st = h.devState;
        final int n = h.deviceCount;
        boolean anyStalled = false;
        for (int i = 0; i < n; i++)
        {
            final int c = i * Host.DEV_CUR;
            final int b = i * Host.DEV_STATE;
            final boolean reported = cur[c + Host.DEV_PERIOD] == periodStart;
            final long outstanding = reported ? cur[c + Host.DEV_OUTSTANDING] : 0;
            st[b + Host.S_OUTSTANDING] = outstanding;
            long lastProgressNs = st[b + Host.S_LAST_PROGRESS];
            if (reported && st[b + Host.S_REPORTED_END] != periodStart)
            {
                // Not reported in the period before: nothing was outstanding then.
                lastProgressNs = Math.max(lastProgressNs, periodStart);
            }
            if (!reported || cur[c + Host.DEV_COMPLETIONS] > 0 || outstanding == 0)
            {
                lastProgressNs = now;
            }
            st[b + Host.S_LAST_PROGRESS] = lastProgressNs;
            if (reported)
            {
                st[b + Host.S_REPORTED_END] = now;
            }
            if (reported && cur[c + Host.DEV_NET_COUNT] > 0)
            {
                // Over the window, like the links: one period's few work requests are too noisy.
                final RingTable win = h.devWin;
                final int slot = win.slot(i);
                win.set(i, slot, 0, cur[c + Host.DEV_NET_NS]);
                win.set(i, slot, 1, cur[c + Host.DEV_NET_COUNT]);
                win.advance(i);
                final double lat = (double)win.sum(i, 0) / win.sum(i, 1);
                final long warm = st[b + Host.S_WARM];
                double baseline = Double.longBitsToDouble(st[b + Host.S_BASELINE]);
                final double ratio;
                if (warm < config.warmupPeriods)
                {
                    baseline = warm == 0 ? lat : baseline + (lat - baseline) / (warm + 1);
                    st[b + Host.S_WARM] = warm + 1;
                    ratio = 0;
                }
                else
                {
                    ratio = lat / baseline;
                    if (ratio < 1.5 && h.congestion.open == null)
                    {
                        baseline += (lat - baseline) / config.baselinePeriods;
                    }
                }
                st[b + Host.S_BASELINE] = Double.doubleToRawLongBits(baseline);
                st[b + Host.S_RATIO] = Double.doubleToRawLongBits(ratio);
            }
            else if (!reported)
            {
                st[b + Host.S_RATIO] = Double.doubleToRawLongBits(0);
            }
            final long stalled = reported ? cur[c + Host.DEV_STALLED] : 0;
            st[b + Host.S_STALLED] = stalled;
            final long stalledNs = now - lastProgressNs;
            st[b + Host.S_STALLED_NS] = stalledNs;
            // Some QP stuck either way (the two packed counts: nonzero when their sum is).
            final boolean candidate = outstanding > 0 && stalled != 0 && stalledNs >= config.nicStallNs / 2;
            if (candidate != (st[b + Host.S_CANDIDATE] != 0))
            {
                st[b + Host.S_CANDIDATE] = candidate ? 1 : 0;
                final Device d = h.deviceList.get(i);
                if (candidate)
                {
                    nicCandidates.add(d);
                }
                else
                {
                    nicCandidates.remove(d);
                }
            }
            anyStalled |= candidate;
        }
        // A device whose NIC stall is open counts as stalled (the count stands for its tracker's open anomaly).
        anyStalled |= h.nicStallsOpen > 0;
        if (anyStalled)
        {
            h.nicQuietUntilNs = now + (long)(config.windowPeriods + config.openAfter + 2) * (now - periodStart);
        }
        h.nicQuiet = anyStalled || now - h.nicQuietUntilNs < 0;
        if (!nicCandidates.isEmpty() || !nicDevicesOpen.isEmpty())
        {
            // Nothing to choose or settle otherwise (judgeNicStall returns without a candidate).
            judgeNicStall();
        }
    }

    /**
     * The NIC to blame among the stalled candidates of every host: the one stuck both ways (what it sends and
     * what it receives), else one whose receives are stuck (the far end of its connections sees stuck sends),
     * then the most stuck QPs, then the lowest host and device. Opens once the chosen one has stalled
     * {@code nicStallNs} and some posted send is stuck (receives alone are a hang's or an idle peer's).
     */
    private void judgeNicStall()
    {
        Device best = null;
        boolean sendStuck = false;
        for (int i = 0; i < nicCandidates.size(); i++)
        {
            final Device d = nicCandidates.get(i);
            sendStuck |= d.stalledSend() > 0;
            if (best == null || nicScore(d) > nicScore(best) || (nicScore(d) == nicScore(best)
                && (d.host.hostId < best.host.hostId || (d.host.hostId == best.host.hostId && d.device < best.device))))
            {
                best = d;
            }
        }
        for (int i = 0; i < nicCandidates.size(); i++)
        {
            final Device d = nicCandidates.get(i);
            if (!nicDevicesOpen.isEmpty() && !nicEpisode.contains(d))
            {
                d.episodeStartNs = d.lastProgressNs();
                nicEpisode.add(d);
            }
        }
        for (int i = 0; i < nicDevicesOpen.size(); i++)
        {
            final Device d = nicDevicesOpen.get(i);
            if (d.candidate())
            {
                nicEpisodeEndNs = Long.MIN_VALUE;
                continue;
            }
            if (nicEpisodeEndNs == Long.MIN_VALUE)
            {
                nicEpisodeEndNs = d.host.nowNs;
            }
            if (d.host.nowNs - nicEpisodeEndNs >= config.nicStallNs)
            {
                // Settled: the stalled device whose traffic moved to a new QP of another device of its host,
                // and which stayed silent since, is the one that went down (the far ends resumed in place).
                final Device dead = failedOver();
                if (dead != null && dead != d)
                {
                    evidence.clear();
                    evidence.putAll(d.stall().open.evidence());
                    evidence.put("failoverToDevice", dead.host.newQpDevice);
                    update(d.stall(), Culprit.nic(dead.host.hostId, dead.device), Severity.CRITICAL, d.host.nowNs,
                        d.stall().open.windowStartNs(), String.format("NIC %d of host 0x%x went down: its QPs "
                        + "stalled, then its traffic failed over to NIC %d", dead.device, dead.host.hostId,
                        dead.host.newQpDevice));
                }
                resolve(d.stall(), d.host.nowNs);
                d.host.nicStallsOpen--;
                nicDevicesOpen.remove(i--);
                nicEpisode.clear();
                nicEpisodeEndNs = Long.MIN_VALUE;
            }
        }
        if (best == null || !sendStuck || best.stall().open != null || best.stalledNs() < config.nicStallNs
            || !nicDevicesOpen.isEmpty())
        {
            return;
        }
        evidence.clear();
        evidence.put("outstandingWorkRequests", best.outstanding());
        evidence.put("stalledSendQps", best.stalledSend());
        evidence.put("stalledRecvQps", best.stalledRecv());
        evidence.put("noCompletionNs", best.stalledNs());
        evidence.put("thresholdNs", config.nicStallNs);
        evidence.put("stalledDevices", nicCandidates.size());
        final String summary = String.format("NIC %d of host 0x%x stopped completing work (%d work requests "
            + "outstanding, none completed for %.1f ms; %d devices stalled with it): its QPs must fail over",
            best.device, best.host.hostId, best.outstanding(), best.stalledNs() / 1e6, nicCandidates.size());
        final long start = best.lastProgressNs();
        best.stall().firstBadStartNs = start;
        openAnomaly(best.stall(), AnomalyKind.NIC_STALL, Culprit.nic(best.host.hostId, best.device), Severity.CRITICAL,
            start, best.host.nowNs, start, best.host.nowNs, summary);
        best.host.nicStallsOpen++;
        nicDevicesOpen.add(best);
        nicEpisode.clear();
        for (int i = 0; i < nicCandidates.size(); i++)
        {
            final Device d = nicCandidates.get(i);
            d.episodeStartNs = d.lastProgressNs();
            nicEpisode.add(d);
        }
    }

    private Device failedOver()
    {
        Device found = null;
        for (int i = 0; i < nicEpisode.size(); i++)
        {
            final Device d = nicEpisode.get(i);
            final Host h = d.host;
            if (h.newQpDevice >= 0 && h.newQpDevice != d.device && h.newQpAtNs - d.episodeStartNs >= 0
                && d.reportedEndNs() - h.newQpAtNs <= 0 && !d.candidate())
            {
                found = d;
            }
        }
        return found;
    }

    private static long nicScore(final Device d)
    {
        final long kind = d.stalledSend() > 0 && d.stalledRecv() > 0 ? 2 : d.stalledRecv() > 0 ? 1 : 0;
        return kind * 1_000_000L + d.stalledSend() + d.stalledRecv();
    }

    /**
     * Slow node: how long a rank makes others wait, beyond its own baseline: the longer of the credit its
     * senders wait for (20 → 9 of sends into it) and the data its receivers wait for (10 → 11 of receives from
     * it, less what it waited for data itself, so ranks merely blocked behind a late one are not named).
     */
    private void judgeRank(final Comm c, final int rank, final long periodStart, final long now)
    {
        // Over the communicator's dense rank tables (a host's ranks side by side); the rank object only for its
        // collective lateness (while no link of the communicator is troubled) and when it is tracked.
        final Host host = c.rHost[rank];
        if (host == null)
        {
            return;
        }
        final double creditRaw = Math.max(0, incomingWaitPerStep(c, rank));
        final double credit = creditSignal(c, creditRaw);
        final double late = lateNs(c, rank);
        final double v = Math.max(credit, late);
        final double[] baselines = c.rBaseline;
        if (c.rWarm[rank] < config.warmupPeriods)
        {
            warmUpRank(c, rank, v);
            return;
        }
        final double excess = v - baselines[rank];
        c.rExcess[rank] = excess;
        if (c.excessCount < config.minLinks)
        {
            return;
        }
        final double median = c.excessMedian;
        final double limit = Math.max(median * config.slowNodeRatio, median + config.slowNodeMinNs);
        final boolean bad = excess > limit && excess - median > config.madK * c.excessSigma && !host.nicQuiet
            && !hangNear(c, periodStart, now);
        if (!bad && !c.rTracked[rank])
        {
            baselines[rank] += (v - baselines[rank]) / config.baselinePeriods;
            return;
        }
        final Rank r = c.rankById[rank];
        trackRank(r, bad, creditRaw, credit, late, periodStart, now);
        c.rTracked[rank] = r.slow().bad != 0 || r.slow().open != null;
    }

    /**
     * Whether a hang of the communicator is open, or resolved within two windows: the credit waits it caused
     * (seconds) are in the ranks' windows for a window after it, and they are the hang's, not a straggler's.
     */
    private boolean hangNear(final Comm c, final long periodStart, final long now)
    {
        return c.hang.open != null || c.hangResolvedNs != Long.MIN_VALUE
            && now - c.hangResolvedNs < 2L * config.windowPeriods * Math.max(1, now - periodStart);
    }

    /**
     * {@link #judgeRank}'s rare part (a rank bad now or tracked): kept apart so that the per-period part is small
     * enough to inline into the period end (a call per rank and period spills every live register).
     */
    private void trackRank(final Rank r, final boolean bad, final double creditRaw, final double credit,
        final double late, final long periodStart, final long now)
    {
        final Comm c = r.comm;
        final double median = c.excessMedian;
        // Read only here: not computed for the ranks with nothing tracked.
        final double excess = c.rExcess[r.idx];
        final boolean good = excess <= Math.max(median * config.slowNodeRatio / 2,
            median + config.slowNodeMinNs / 2);
        evidence.clear();
        evidence.put("creditWaitIntoRankMaxNs", creditRaw);
        evidence.put("collectiveLatenessNs", late);
        evidence.put("dataWaitMaxNs", r.dataWaitMaxNs());
        evidence.put("baselineNs", c.rBaseline[r.idx]);
        evidence.put("excessNs", excess);
        evidence.put("medianExcessNs", median);
        evidence.put("robustSigmaNs", c.excessSigma);
        evidence.put("gpuConsumeNsPerStep", r.consumePerStep());
        evidence.put("ranks", c.excessCount);
        final Severity sev = excess > 10 * Math.max(median, config.slowNodeMinNs) ? Severity.CRITICAL
            : Severity.WARNING;
        final String summary = !willPublish(r.slow(), bad, sev) ? null : String.format("rank %d of comm 0x%x is late: "
            + "its peers wait up to %.0f µs more than usual for its credit (%.0f µs) or it arrives late at its "
            + "collectives (%.0f µs); the others are merely blocked", r.rank, c.commHash, excess / 1e3,
            credit / 1e3, late / 1e3);
        track(r.slow(), bad, good, AnomalyKind.SLOW_NODE, Culprit.rank(r.host.hostId, c.commHash, r.rank), sev,
            periodStart, now, now - (long)config.windowPeriods * (now - periodStart), summary);
    }

    /**
     * Credit waits into a rank count when it alone makes its senders wait (twice the runner-up): several ranks
     * waited on alike are a pattern's back-pressure (tree parents of big operations), not a straggler.
     */
    private static double creditSignal(final Comm c, final double creditRaw)
    {
        return creditRaw >= c.creditTop && creditRaw >= 2 * c.creditSecond ? creditRaw : 0;
    }

    /**
     * How late the rank arrives at its collectives, or 0 where that says nothing: a degraded link anywhere in the
     * communicator reshapes every rank's collective timing, and then only the credit signal counts. That holds
     * while a slow link stays open too, also in periods where it does not read as degraded (a long-lived slow
     * link's transients otherwise named the ranks before it as slow).
     */
    private static double lateNs(final Comm c, final int rank)
    {
        if (c.troubledLinks > 0 || c.openSlowLinks > 0)
        {
            return 0;
        }
        // The rank object only here (no link of the communicator troubled: rare at scale).
        final Rank r = c.rankById[rank];
        return linkExplainsLateness(r) ? 0 : r.collectiveLatenessNs();
    }

    /** A rank's baseline while it warms up: the mean of its first periods' signal (apart to keep judgeRank small). */
    private static void warmUpRank(final Comm c, final int rank, final double v)
    {
        final double[] baselines = c.rBaseline;
        final int warm = c.rWarm[rank];
        baselines[rank] = warm == 0 ? v : baselines[rank] + (v - baselines[rank]) / (warm + 1);
        c.rWarm[rank] = warm + 1;
    }

    /** Whether one of the rank's own sending links is degraded (then its receivers' wait is the link's doing). */
    private static boolean linkExplainsLateness(final Rank r)
    {
        if (r.host == null)
        {
            return false;
        }
        if (r.host.congestion.bad > 0 || r.host.congestion.open != null)
        {
            return true;
        }
        for (int i = 0; i < r.host.links.size(); i++)
        {
            final Link l = r.host.links.get(i);
            if (l.rank == r.rank && l.comm == r.comm && (l.comm.lDegraded[l.id] || l.slow().bad > 0
                || l.slow().open != null))
            {
                return true;
            }
        }
        return false;
    }

    // Hang: receives with work outstanding and no completion for the threshold.

    private void checkStalls(final Host h)
    {
        final boolean[] flags = h.recvStalled;
        final long threshold = config.hangThresholdNs;
        // Over the host's receive table (sequential rows): a flow object only where its state changes. Not at all
        // when no receive is flagged and none can be stalled now: a stalled one has work outstanding in the
        // period reported, so it progressed last at waitingSinceNs or later (the usual case: every receive
        // progressed this period, its rows are not read).
        final boolean scan = h.recvStalledCount > 0 || h.recvScanAll || h.nowNs - h.waitingSinceNs >= threshold;
        for (int i = 0; scan && i < h.recvFlowCount; i++)
        {
            final boolean stalled = h.recvWaiting(i, threshold);
            if (stalled != flags[i])
            {
                flags[i] = stalled;
                h.recvStalledCount += stalled ? 1 : -1;
                final RecvFlow f = h.recvFlows[i];
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
        // Once per communicator, in the order of its first receive here (again for its other receives was a
        // no-op: the first call leaves nothing changed and an open hang's culprit as it computes it).
        for (int i = 0; i < h.recvComms.size(); i++)
        {
            final Comm c = h.recvComms.get(i);
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
                c.hangResolvedNs = latestNow(c);
                resolve(c.hang, c.hangResolvedNs);
            }
            return;
        }
        // The wait-for graph over every waiting receive (half the threshold), so that ranks whose hosts reported
        // a period later are in it.
        final List<RecvFlow> waiting = c.waiting;
        waiting.clear();
        for (int i = 0; i < c.rankTotal; i++)
        {
            final Rank r = c.rankById[i];
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
        // With no waiting receive left in the graph (the stalled ones are on hosts whose time ran ahead of the
        // others'), the stalled receives themselves are the graph: never a null culprit.
        final List<RecvFlow> graph = waiting.isEmpty() ? stalled : waiting;
        if (best == null)
        {
            // A cycle: the sender of the receive that stalled first.
            for (int i = 0; i < graph.size(); i++)
            {
                final RecvFlow f = graph.get(i);
                if (best == null || f.lastProgressNs() < best.lastProgressNs()
                    || (f.lastProgressNs() == best.lastProgressNs() && better(f, best)))
                {
                    best = f;
                }
            }
            bestWaiters = waitersOn(graph, best.peer);
        }
        final Rank culpritRank = c.ranks.get(best.peer);
        final Host culpritHost = culpritRank != null && culpritRank.host != null ? culpritRank.host : best.host;
        long since = Long.MAX_VALUE;
        for (int i = 0; i < stalled.size(); i++)
        {
            since = Math.min(since, stalled.get(i).lastProgressNs());
        }
        final long now = culpritHost.nowNs;
        // Ages, not instants, cross hosts: the stall's start on the culprit's clock.
        final long start = now - (best.host.nowNs - best.lastProgressNs());
        since = now - (best.host.nowNs - since);
        evidence.clear();
        evidence.put("stalledReceives", stalled.size());
        evidence.put("waitingReceives", waiting.size());
        evidence.put("waitersOnCulprit", bestWaiters);
        evidence.put("noProgressNs", best.host.nowNs - best.lastProgressNs());
        evidence.put("thresholdNs", config.hangThresholdNs);
        final String summary = String.format("comm 0x%x hung: rank %d does not progress; rank %d waits for its data "
            + "on channel %d (%d stalled receives)", c.commHash, best.peer, best.rank, best.channel, stalled.size());
        final Culprit culprit = new Culprit(culpritHost.hostId, c.commHash, best.peer, best.rank, best.channel, -1, -1);
        if (c.hang.open == null)
        {
            c.hang.firstBadStartNs = start;
            openAnomaly(c.hang, AnomalyKind.HANG, culprit, Severity.CRITICAL, start, now, start, now, summary);
        }
        else if (!c.hang.open.culprit().equals(culprit) && revisable(c, culprit, now))
        {
            update(c.hang, culprit, Severity.CRITICAL, now, since, summary);
        }
    }

    /**
     * Whether an open hang's culprit may move to {@code culprit}: to another receive of the same hung rank always;
     * to another rank only within the threshold after the hang opened (a host that reported a period later can put
     * the real root in the wait-for graph). Later, the graph changes because the stall is clearing (the hung rank's
     * receivers progress first, the ranks behind them a little after): naming one of those, as the hang resolves,
     * put the wrong rank in the last publication (MultiHostHarnessTest: opened on rank 3, resolved on rank 1).
     */
    private boolean revisable(final Comm c, final Culprit culprit, final long now)
    {
        final Anomaly open = c.hang.open;
        return open.culprit().rank() == culprit.rank() || now - open.detectedNs() < config.hangThresholdNs;
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
        return f.host.recvWaiting(f.idx, config.hangThresholdNs / 2);
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
        for (int i = 0; i < c.rankTotal; i++)
        {
            final Rank r = c.rankById[i];
            if (r.host != null)
            {
                now = Math.max(now, r.host.nowNs);
            }
        }
        return now;
    }

    // Hysteresis and publication.

    /** Whether {@link #track} will publish (so that the sentence is only formatted then). */
    private boolean willPublish(final Tracker t, final boolean bad, final Severity severity)
    {
        return bad && ((t.open == null && t.bad + 1 >= config.openAfter)
            || (t.open != null && t.open.severity() != severity && severity == Severity.CRITICAL));
    }

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
        t.open = publishOpened(kind, culprit, severity, startNs, now, evidence.toMap(), windowStart, windowEnd,
            summary);
        t.good = 0;
    }

    private void update(final Tracker t, final Culprit culprit, final Severity severity, final long now,
        final long windowStart, final String summary)
    {
        t.open = publishUpdated(t.open, culprit, severity, evidence.toMap(), windowStart, now, summary);
    }

    private void resolve(final Tracker t, final long now)
    {
        publishResolved(t.open, now);
        t.open = null;
        t.bad = 0;
        t.good = 0;
    }

    // Publication, for the trackers above and the wait-state detectors' episodes alike: the open set and the sink.

    private Anomaly publishOpened(final AnomalyKind kind, final Culprit culprit, final Severity severity,
        final long startNs, final long now, final SortedMap<String, Double> ev, final long windowStart,
        final long windowEnd, final String summary)
    {
        final Anomaly a = new Anomaly(id(kind, culprit, startNs), kind, culprit, severity, startNs, now, -1, ev,
            windowStart, windowEnd, summary);
        open.put(a.id(), a);
        sink.onOpened(a);
        return a;
    }

    private Anomaly publishUpdated(final Anomaly o, final Culprit culprit, final Severity severity,
        final SortedMap<String, Double> ev, final long windowStart, final long windowEnd, final String summary)
    {
        final Anomaly a = new Anomaly(o.id(), o.kind(), culprit, severity, o.startNs(), o.detectedNs(), -1, ev,
            windowStart, windowEnd, summary);
        open.put(a.id(), a);
        sink.onUpdated(a);
        return a;
    }

    private void publishResolved(final Anomaly o, final long now)
    {
        final Anomaly a = o.resolvedAt(now);
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

    /**
     * Open / closing state of one potential anomaly. Links, ranks and devices are their own trackers (they extend
     * this: a tracker of its own was one more object, a cache miss each, where one is judged). The period end
     * reads dense mirrors instead (Comm.lTracked / rTracked, Host.nicStallsOpen), kept where the trackers change,
     * and a link's or rank's object only when it is bad or tracked.
     */
    static class Tracker
    {
        int bad;
        int good;
        long firstBadStartNs;
        Anomaly open;
    }

    /** Named evidence figures, collected without allocation; turned into a map only when published. */
    static final class Evidence
    {
        private final String[] names = new String[32];
        private final double[] values = new double[32];
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

        void putAll(final Map<String, Double> m)
        {
            for (final Map.Entry<String, Double> e : m.entrySet())
            {
                put(e.getKey(), e.getValue());
            }
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
        /** The wait-state detector's positions of this host's LINK summaries (no lookup per host and period). */
        FlowRows.Cursor linkCursor;
        boolean started;
        boolean pending;
        long periodStartNs;
        long periodEndNs;
        long reportedPeriodStartNs = Long.MIN_VALUE;
        /** Start of the period this host reported before the current one (periods need not be contiguous). */
        long previousPeriodStartNs = Long.MIN_VALUE;
        long nowNs = Long.MIN_VALUE;
        final List<Link> links = new ArrayList<>();
        /** The links and ranks the period under way touched, in order (arrays: no list checks per access). */
        int[] touchedLinks = new int[16];
        Comm[] touchedLinkComms = new Comm[16];
        int touchedLinkCount;
        /** The ranks (rows of their communicator's tables, and the communicators) the period touched. */
        int[] touchedRanks = new int[16];
        Comm[] touchedRankComms = new Comm[16];
        int touchedRankCount;

        void touchLink(final Comm c, final int id)
        {
            if (touchedLinkCount == touchedLinks.length)
            {
                touchedLinks = java.util.Arrays.copyOf(touchedLinks, touchedLinkCount * 2);
                touchedLinkComms = java.util.Arrays.copyOf(touchedLinkComms, touchedLinkCount * 2);
            }
            touchedLinkComms[touchedLinkCount] = c;
            touchedLinks[touchedLinkCount++] = id;
        }

        void touchRank(final Comm c, final int rank)
        {
            if (touchedRankCount == touchedRanks.length)
            {
                touchedRanks = java.util.Arrays.copyOf(touchedRanks, touchedRankCount * 2);
                touchedRankComms = java.util.Arrays.copyOf(touchedRankComms, touchedRankCount * 2);
            }
            touchedRankComms[touchedRankCount] = c;
            touchedRanks[touchedRankCount++] = rank;
        }
        /** Its receive flows, in the order of their first summary ({@link RecvFlow#idx}). */
        RecvFlow[] recvFlows = new RecvFlow[16];
        int recvFlowCount;
        /*
         * The receive flows' per-summary state, by RecvFlow.idx: a receive summary and the period end's stall
         * check read and write the flow's row here, the host's rows side by side (40 bytes a flow), and
         * no flow object. Row layout (longs): RECV_KEY the flow key (the position cache's check), RECV_SEEN the
         * start of the host period that reported it last, RECV_PROGRESS when it last progressed, RECV_OUTSTANDING
         * its outstanding steps at its last report, RECV_OWNER its receiving rank's row in its communicator's
         * tables (in the row: one array and range check fewer per summary than an int[] of its own).
         */
        static final int RECV_KEY = 0;
        static final int RECV_SEEN = 1;
        static final int RECV_PROGRESS = 2;
        static final int RECV_OUTSTANDING = 3;
        static final int RECV_OWNER = 4;
        static final int RECV_ROW = 5;
        long[] recvRows = new long[16 * RECV_ROW];
        /**
         * Whether receive flow {@code i} has work outstanding in the host's last reported period and has not
         * progressed for {@code thresholdNs} (a hang's stalled receive at the hang threshold, a waiting one at half).
         */
        boolean recvWaiting(final int i, final long thresholdNs)
        {
            final int b = i * RECV_ROW;
            return recvRows[b + RECV_OUTSTANDING] > 0 && recvRows[b + RECV_SEEN] == reportedPeriodStartNs
                && nowNs - recvRows[b + RECV_PROGRESS] >= thresholdNs;
        }

        /** Per flow: its receiving rank's communicator. */
        Comm[] recvComm = new Comm[16];
        /** Per flow: whether it counts as stalled (in its communicator's {@link Comm#stalled}). */
        boolean[] recvStalled = new boolean[16];
        /** How many of {@link #recvStalled} are set. */
        int recvStalledCount;
        /**
         * The earliest last progress (RECV_PROGRESS) of a receive reported this period with work outstanding
         * (Long.MAX_VALUE: none): no receive is stalled while nowNs − this is under the threshold. Valid while the
         * reported period starts after every period reported before; else {@link #recvScanAll}.
         */
        long waitingSinceNs = Long.MAX_VALUE;

        /** A receive reported this period with work outstanding, last progressed at {@code progressNs}. */
        void waiting(final long progressNs)
        {
            if (progressNs < waitingSinceNs)
            {
                waitingSinceNs = progressNs;
            }
        }
        boolean recvScanAll;
        /** The latest period start reported. */
        long latestPeriodStartNs = Long.MIN_VALUE;

        void addRecvFlow(final RecvFlow f, final long flowKey, final int owner, final long progressNs)
        {
            final int i = recvFlowCount;
            if (i == recvFlows.length)
            {
                final int n = i * 2;
                recvFlows = java.util.Arrays.copyOf(recvFlows, n);
                recvRows = java.util.Arrays.copyOf(recvRows, n * RECV_ROW);
                recvComm = java.util.Arrays.copyOf(recvComm, n);
                recvStalled = java.util.Arrays.copyOf(recvStalled, n);
            }
            recvFlows[i] = f;
            recvComm[i] = f.comm;
            final int b = i * RECV_ROW;
            recvRows[b + RECV_KEY] = flowKey;
            recvRows[b + RECV_SEEN] = 0;
            recvRows[b + RECV_PROGRESS] = progressNs;
            recvRows[b + RECV_OUTSTANDING] = 0;
            recvRows[b + RECV_OWNER] = owner;
            recvFlowCount = i + 1;
        }
        /** The communicators of {@link #recvFlows}, each once. */
        final List<Comm> recvComms = new ArrayList<>();
        final Int2ObjectHashMap<Device> devices = new Int2ObjectHashMap<>();
        /** Devices 0 … 15 without hashing: their {@link Device#idx} + 1, 0 for none yet. */
        final int[] devRowByDevice = new int[16];
        /** What each summary position of the host's period resolved to last (the flows come in a stable order). */
        Object[] byPosition = new Object[64];
        int position;

        /** What {@link #byPosition} holds at a receive flow's position (its row is at {@link #linkAt}). */
        private static final Object RECV = new Object();

        /**
         * Per position holding a link: its row in the communicator cached at {@link #byPosition}; holding a
         * receive flow: its {@link RecvFlow#idx}.
         */
        int[] linkAt = new int[64];

        /** The receive flow (its {@link RecvFlow#idx}) cached at this position, or -1. */
        int cachedRecv(final int pos)
        {
            return pos < byPosition.length && byPosition[pos] == RECV ? linkAt[pos] : -1;
        }

        void cacheRecv(final int pos, final int idx)
        {
            cacheLink(pos, RECV, idx);
        }

        /** The link row cached at this position for communicator {@code c}, or -1. */
        int cachedLink(final int pos, final Comm c)
        {
            return pos < byPosition.length && byPosition[pos] == c ? linkAt[pos] : -1;
        }

        void cacheLink(final int pos, final Object c, final int id)
        {
            cache(pos, c);
            if (pos < linkAt.length)
            {
                linkAt[pos] = id;
            }
        }

        void cache(final int pos, final Object o)
        {
            if (pos >= byPosition.length)
            {
                if (pos >= 1 << 16)
                {
                    return;
                }
                byPosition = java.util.Arrays.copyOf(byPosition, Math.max(pos + 1, byPosition.length * 2));
                linkAt = java.util.Arrays.copyOf(linkAt, byPosition.length);
            }
            byPosition[pos] = o;
        }
        final List<Device> deviceList = new ArrayList<>();
        final Tracker congestion = new Tracker();
        boolean nicQuiet;
        long nicQuietUntilNs = Long.MIN_VALUE / 2;
        int newQpDevice = -1;
        long newQpAtNs = Long.MIN_VALUE;

        /** Its NICs' windows of send-WR network ns and count, by {@link Device#idx}. */
        final RingTable devWin;
        /** How many of its NICs have a NIC_STALL open (their trackers' {@code open} set). */
        int nicStallsOpen;
        /*
         * Its NICs' state, by Device.idx, in two dense tables instead of the device objects (8 NICs a host were
         * 8 objects of ~3 cache lines, touched by every QP summary and every period end): a QP summary adds into
         * its NIC's row of devCur (the period's accumulators); the period end reads devCur and keeps its judgement
         * in devState. A host's rows lie side by side, one short sequential run per table.
         *
         * devCur row: DEV_PERIOD the start of the period accumulated, DEV_OUTSTANDING outstanding WRs,
         * DEV_COMPLETIONS completions, DEV_NET_NS / DEV_NET_COUNT send WRs' network ns and count, DEV_STALLED the
         * QPs stuck (STALLED_SEND per send QP, STALLED_RECV per receive QP: two counts in one long), DEV_QP0 / DEV_QP1
         * the first two QPs the NIC carried (checked before its QP set: a NIC carries few).
         */
        static final int DEV_PERIOD = 0;
        static final int DEV_OUTSTANDING = 1;
        static final int DEV_COMPLETIONS = 2;
        static final int DEV_NET_NS = 3;
        static final int DEV_NET_COUNT = 4;
        static final int DEV_STALLED = 5;
        static final int DEV_QP0 = 6;
        static final int DEV_QP1 = 7;
        static final int DEV_CUR = 8;
        static final long STALLED_SEND = 1L;
        static final long STALLED_RECV = 1L << 32;
        /*
         * devState row (what the period end judged): S_OUTSTANDING outstanding WRs, S_LAST_PROGRESS the last
         * completion (or idle), S_REPORTED_END the end of the last period that reported the NIC, S_STALLED_NS no
         * completion since, S_STALLED the stuck QPs (packed as in devCur), S_BASELINE the WR latency baseline and
         * S_RATIO the latency / baseline (doubles, as raw bits), S_WARM periods of warm-up done, S_CANDIDATE 1 while
         * a NIC stall candidate (in nicCandidates).
         */
        static final int S_OUTSTANDING = 0;
        static final int S_LAST_PROGRESS = 1;
        static final int S_REPORTED_END = 2;
        static final int S_STALLED_NS = 3;
        static final int S_STALLED = 4;
        static final int S_BASELINE = 5;
        static final int S_RATIO = 6;
        static final int S_WARM = 7;
        static final int S_CANDIDATE = 8;
        static final int DEV_STATE = 9;
        long[] devCur = new long[8 * DEV_CUR];
        long[] devState = new long[8 * DEV_STATE];
        int deviceCount;

        /** Registers a new device (its idx is the next row): rows initialised as a fresh device's fields were. */
        void addDevice(final Device d)
        {
            final int i = d.idx;
            if (i * DEV_CUR == devCur.length)
            {
                devCur = java.util.Arrays.copyOf(devCur, 2 * i * DEV_CUR);
                devState = java.util.Arrays.copyOf(devState, 2 * i * DEV_STATE);
            }
            final int c = i * DEV_CUR;
            devCur[c + DEV_PERIOD] = Long.MIN_VALUE;
            devCur[c + DEV_QP0] = Long.MIN_VALUE;
            devCur[c + DEV_QP1] = Long.MIN_VALUE;
            devState[i * DEV_STATE + S_REPORTED_END] = Long.MIN_VALUE;
            deviceList.add(d);
            deviceCount = i + 1;
            devWin.add(i);
            if (d.device >= 0 && d.device < devRowByDevice.length)
            {
                devRowByDevice[d.device] = i + 1;
            }
        }

        /** Starts the period {@code startNs} in the devCur row at {@code b}: its accumulators cleared. */
        static void openDevicePeriod(final long[] cur, final int b, final long startNs)
        {
            cur[b + DEV_PERIOD] = startNs;
            cur[b + DEV_OUTSTANDING] = 0;
            cur[b + DEV_COMPLETIONS] = 0;
            cur[b + DEV_NET_NS] = 0;
            cur[b + DEV_NET_COUNT] = 0;
            cur[b + DEV_STALLED] = 0;
        }

        long devWarm(final int i)
        {
            return devState[i * DEV_STATE + S_WARM];
        }
        /** The host whose summaries or time followed this one's last (hosts come round in a stable order). */
        Host successor;

        Host(final long hostId, final int window)
        {
            this.hostId = hostId;
            devWin = new RingTable(2, window, 8);
        }
    }

    static final class Comm
    {
        final long commHash;
        final Long2ObjectHashMap<Link> links = new Long2ObjectHashMap<>();
        final Int2ObjectHashMap<Rank> ranks = new Int2ObjectHashMap<>();
        final List<RecvFlow> stalled = new ArrayList<>();
        final List<RecvFlow> waiting = new ArrayList<>();
        final Long2ObjectHashMap<Round> rounds = new Long2ObjectHashMap<>();
        final List<Round> freeRounds = new ArrayList<>();
        final Tracker hang = new Tracker();
        /** When this communicator's last hang resolved (Long.MIN_VALUE: never). */
        long hangResolvedNs = Long.MIN_VALUE;
        boolean stallChanged;
        int updates;
        boolean statsValid;
        int linkCount;
        double rateMedian;
        double rateSigma;
        /** The MADs behind rateSigma and excessSigma (the next recomputation's guesses; NaN: none yet). */
        double rateMad = Double.NaN;
        double excessMad = Double.NaN;
        int excessCount;
        int troubledLinks;
        /** Links of this communicator with an open SLOW_LINK anomaly. */
        int openSlowLinks;
        double creditTop;
        double creditSecond;
        double excessMedian;
        double excessSigma;
        /*
         * Mirrors of what the statistics pass reads of every link and rank, by dense index (Link.id, Rank.idx),
         * written where the link or rank changes them: the pass over thousands of links streams these arrays
         * instead of visiting every link object and the links into every rank (a cache miss each).
         */
        /** Links and ranks by dense index (Link.id, Rank.idx): ids 0 … linkTotal − 1 and 0 … rankTotal − 1. */
        Link[] linkById = new Link[16];
        int linkTotal;
        Rank[] rankById = new Rank[16];
        int rankTotal;
        Host[] lHost = new Host[16];
        int[] lPeer = new int[16];
        long[] lLastActiveNs = new long[16];
        long[] lPeerWaitMax = new long[16];
        long[] lNetCount = new long[16];
        /** Whether the link's window is judged (warm, enough steps, network time), staleness aside. */
        boolean[] lJudged = new boolean[16];
        /** Its rate / baseline when judged. */
        double[] lRatio = new double[16];
        /*
         * Per link, what its period end reads and writes (endPeriod over these rows, not the link objects): the
         * window's rate (bytes/s of network time) and network ns, the rate baseline and outstanding-bytes
         * baseline, warm-up periods done, the last judged rate / baseline (lFraction, 1 until judged), whether it
         * is degraded, whether its SLOW_LINK tracker holds anything (Link.bad != 0 || Link.open != null). The
         * window's longest credit wait, step count and last active period end are lPeerWaitMax, lNetCount and
         * lLastActiveNs.
         */
        static final int LJ_RATE = 0;
        static final int LJ_BASELINE = 1;
        static final int LJ_BASELINE_OUT = 2;
        static final int LJ_FRACTION = 3;
        static final int LJ = 4;
        /**
         * The doubles in one row per link (LJ_RATE …): one array for a judgement, not four (fewer loads and range
         * checks).
         */
        double[] lJudge = new double[16 * LJ];

        double fraction(final int id)
        {
            return lJudge[id * LJ + LJ_FRACTION];
        }

        double baseline(final int id)
        {
            return lJudge[id * LJ + LJ_BASELINE];
        }

        double baselineOut(final int id)
        {
            return lJudge[id * LJ + LJ_BASELINE_OUT];
        }
        long[] lNetNs = new long[16];
        int[] lWarm = new int[16];
        boolean[] lDegraded = new boolean[16];
        boolean[] lTracked = new boolean[16];
        double[] rExcess = new double[16];
        /*
         * Per rank, what its period judgement reads and writes (judgeRank over these, not the rank objects): its
         * baseline, warm-up periods done, whether its SLOW_NODE tracker holds anything (bad evaluations or an open
         * anomaly: Rank.bad != 0 || Rank.open != null), the first two links into it (rIn at 2 × its row; all of
         * them in Rank.in) and how many there are.
         */
        double[] rBaseline = new double[16];
        int[] rWarm = new int[16];
        boolean[] rTracked = new boolean[16];
        int[] rIn = new int[32];
        int[] rInCount = new int[16];
        /** Scratch of the rank pass. */
        long[] rWaitMax = new long[16];
        long[] rWaitCount = new long[16];

        /*
         * The per-summary state of links and ranks, by dense index: a summary adds into its row of an accumulator
         * table, a period end pushes the rows into window tables. Rows of one host's links (or ranks) were
         * created one after another and lie side by side.
         */
        /** Per link: the period's start, then its accumulators (one per window series, {@link Link#BYTES} …). */
        static final int LINK_CUR = 1 + Link.SERIES;
        long[] lCur = new long[16 * LINK_CUR];
        /** Per link: the sender's rank number and the peer's, for the position cache's check, and its sender. */
        int[] lRankNo = new int[16];
        int[] lPeerNo = new int[16];
        int[] lOwner = new int[16];
        final RingTable lWin;
        /** Per rank: the start of the period its window's current slot accumulates. */
        long[] rPeriodStartNs = new long[16];
        Host[] rHost = new Host[16];
        /** Per rank: its window ({@link Rank#CONSUME_NS} …), read only as slow-node evidence. */
        final PeriodRing rWin;

        Comm(final long commHash, final int window)
        {
            this.commHash = commHash;
            java.util.Arrays.fill(rExcess, Double.NaN);
            lWin = new RingTable(Link.SERIES, window, 16);
            rWin = new PeriodRing(Rank.SERIES, window, 16);
        }

        void setHost(final int rank, final Host h)
        {
            rHost[rank] = h;
            rankById[rank].host = h;
        }

        void addLink(final Link l)
        {
            final int i = l.id;
            if (i == lHost.length)
            {
                final int n = i * 2;
                linkById = java.util.Arrays.copyOf(linkById, n);
                lHost = java.util.Arrays.copyOf(lHost, n);
                lPeer = java.util.Arrays.copyOf(lPeer, n);
                lLastActiveNs = java.util.Arrays.copyOf(lLastActiveNs, n);
                lPeerWaitMax = java.util.Arrays.copyOf(lPeerWaitMax, n);
                lNetCount = java.util.Arrays.copyOf(lNetCount, n);
                lJudged = java.util.Arrays.copyOf(lJudged, n);
                lRatio = java.util.Arrays.copyOf(lRatio, n);
                lJudge = java.util.Arrays.copyOf(lJudge, n * LJ);
                lNetNs = java.util.Arrays.copyOf(lNetNs, n);

                lWarm = java.util.Arrays.copyOf(lWarm, n);

                lDegraded = java.util.Arrays.copyOf(lDegraded, n);
                lTracked = java.util.Arrays.copyOf(lTracked, n);
                lCur = java.util.Arrays.copyOf(lCur, n * LINK_CUR);
                lRankNo = java.util.Arrays.copyOf(lRankNo, n);
                lPeerNo = java.util.Arrays.copyOf(lPeerNo, n);
                lOwner = java.util.Arrays.copyOf(lOwner, n);
            }
            linkById[i] = l;
            linkTotal = i + 1;
            lCur[i * LINK_CUR] = Long.MIN_VALUE;
            lRankNo[i] = l.rank;
            lPeerNo[i] = l.peer;
            lOwner[i] = l.owner.idx;
            lWin.add(i);
            lHost[i] = l.host;
            lPeer[i] = l.peerRank.idx;
            lLastActiveNs[i] = 0;
            lJudge[i * LJ + LJ_FRACTION] = 1;
        }

        /** Rank row {@code rank}'s first summary of host {@code h}'s period {@code startNs}: its next window slot. */
        void openRankPeriod(final Host h, final int rank, final long startNs)
        {
            rPeriodStartNs[rank] = startNs;
            rWin.open(rank, Rank.SERIES);
            h.touchRank(this, rank);
        }

        void addIncoming(final Rank r, final int linkId)
        {
            r.addIncoming(linkId);
            final int k = rInCount[r.idx]++;
            if (k < 2)
            {
                rIn[2 * r.idx + k] = linkId;
            }
        }

        void addRank(final Rank r)
        {
            final int i = r.idx;
            if (i == rExcess.length)
            {
                final int n = i * 2;
                rExcess = java.util.Arrays.copyOf(rExcess, n);
                java.util.Arrays.fill(rExcess, i, n, Double.NaN);
                rWaitMax = java.util.Arrays.copyOf(rWaitMax, n);
                rBaseline = java.util.Arrays.copyOf(rBaseline, n);
                rWarm = java.util.Arrays.copyOf(rWarm, n);
                rTracked = java.util.Arrays.copyOf(rTracked, n);
                rIn = java.util.Arrays.copyOf(rIn, 2 * n);
                rInCount = java.util.Arrays.copyOf(rInCount, n);
                rWaitCount = java.util.Arrays.copyOf(rWaitCount, n);
                rPeriodStartNs = java.util.Arrays.copyOf(rPeriodStartNs, n);
                rHost = java.util.Arrays.copyOf(rHost, n);
                rankById = java.util.Arrays.copyOf(rankById, n);
            }
            rankById[i] = r;
            rankTotal = i + 1;
            rPeriodStartNs[i] = Long.MIN_VALUE;
            rWin.add(i);
        }
    }

    /**
     * One direction rank → peer of a communicator, from the sender's step flows (all channels). Its period's
     * accumulators and its window live in its communicator's tables at row {@link #id}.
     */
    static final class Link extends Tracker
    {
        final Comm comm;
        final Host host;
        final int rank;
        final int peer;
        Rank owner;
        /** The receiving rank (resolved once, not looked up per period). */
        Rank peerRank;
        /** Dense index in its communicator's tables, where all its state is (the object: identity, tracker). */
        final int id;

        /** Its SLOW_LINK tracker: itself. */
        Tracker slow()
        {
            return this;
        }
        /** Window series; in {@link Comm#lCur} at 1 + the series (after the period's start). */
        static final int BYTES = 0;
        static final int NET_NS = 1;
        static final int NET_COUNT = 2;
        static final int PEER_WAIT_NS = 3;
        static final int OUTSTANDING = 4;
        /** Kept for its window maximum, not its sum. */
        static final int PEER_WAIT_MAX = 5;
        /** Completed steps are not windowed: no judgement reads them, and every series costs each push. */
        static final int SERIES = 6;

        Link(final Comm comm, final Host host, final int rank, final int peer, final int id)
        {
            this.comm = comm;
            this.host = host;
            this.rank = rank;
            this.peer = peer;
            this.id = id;
        }

        /**
         * The link's service rate over the window: bytes per ns of network time (9 → stop, queueing included),
         * all channels (computed once per push).
         */
        double rate()
        {
            return comm.lJudge[id * Comm.LJ + Comm.LJ_RATE];
        }

        long latestOutstanding()
        {
            return comm.lWin.latest(id, OUTSTANDING);
        }

        double peerWaitPerStep()
        {
            final long n = comm.lNetCount[id];
            return n == 0 ? 0 : (double)comm.lWin.sum(id, PEER_WAIT_NS) / n;
        }
    }

    /** One rank of a communicator: its GPU consumption (its receives) and the credit waits of links into it. */
    static final class Rank extends Tracker
    {
        final Comm comm;
        final int rank;
        final List<RecvFlow> recvFlows = new ArrayList<>();
        /** The host of its latest summary (mirrored in {@link Comm#rHost}: set through {@link Comm#setHost}). */
        Host host;
        final long[] lateness = new long[4];
        int latenessCount;
        /** Dense index in its communicator's rank table. */
        final int idx;

        /** Its SLOW_NODE tracker: itself. */
        Tracker slow()
        {
            return this;
        }
        /** The links into this rank, as indexes of the communicator's link table. */
        int[] in = new int[2];
        int inCount;
        /** Window series (in {@link Comm#rWin}): GPU consume ns and count, longest data wait. */
        static final int CONSUME_NS = 0;
        static final int CONSUME_COUNT = 1;
        static final int DATA_WAIT_MAX = 2;
        static final int SERIES = 3;

        Rank(final Comm comm, final int rank, final int idx)
        {
            this.comm = comm;
            this.rank = rank;
            this.idx = idx;
        }

        void addIncoming(final int linkId)
        {
            if (inCount == in.length)
            {
                in = java.util.Arrays.copyOf(in, inCount * 2);
            }
            in[inCount++] = linkId;
        }

        void pushLateness(final long ns)
        {
            lateness[latenessCount++ % lateness.length] = ns;
        }

        /** How late this rank arrived at each of its last collectives, at least (0 without enough of them). */
        long collectiveLatenessNs()
        {
            if (latenessCount < lateness.length)
            {
                return 0;
            }
            long m = Long.MAX_VALUE;
            for (final long l : lateness)
            {
                m = Math.min(m, l);
            }
            return Math.max(0, m);
        }

        /** The longest this rank waited for data from its senders (10 → 11) over the window. */
        long dataWaitMaxNs()
        {
            return comm.rWin.max(idx, DATA_WAIT_MAX);
        }

        double consumePerStep()
        {
            final long n = comm.rWin.sum(idx, CONSUME_COUNT);
            return n == 0 ? 0 : (double)comm.rWin.sum(idx, CONSUME_NS) / n;
        }
    }

    /** The collective durations of one (communicator, sequence number) gathered across ranks. */
    static final class Round
    {
        long seq;
        int nranks;
        int count;
        boolean[] seen = new boolean[0];
        long[] durationNs = new long[0];

        void reset(final long seq, final int nranks)
        {
            this.seq = seq;
            this.nranks = nranks;
            count = 0;
            if (seen.length < nranks)
            {
                seen = new boolean[nranks];
                durationNs = new long[nranks];
            }
            java.util.Arrays.fill(seen, 0, nranks, false);
        }
    }

    /**
     * One NIC device of a host, from its QP flows: its identity, its QP set and its NIC_STALL tracker; its
     * per-period state lives in its host's dense device tables (row {@link #idx}), read here through accessors.
     */
    static final class Device extends Tracker
    {
        final Host host;
        final int device;
        final org.agrona.collections.LongHashSet qps = new org.agrona.collections.LongHashSet();
        long episodeStartNs;

        /** Its row in its host's {@link Host#devCur}, {@link Host#devState} and {@link Host#devWin}. */
        final int idx;

        /** Its NIC_STALL tracker: itself. */
        Tracker stall()
        {
            return this;
        }

        Device(final Host host, final int device, final int idx)
        {
            this.host = host;
            this.device = device;
            this.idx = idx;
        }

        /**
         * Records a QP not among the first two in its row ({@link Host#DEV_QP0}, {@link Host#DEV_QP1}, checked by
         * the caller); true when the device never carried it before.
         */
        boolean newQp(final long qp)
        {
            final boolean added = qps.add(qp);
            if (added)
            {
                final long[] cur = host.devCur;
                final int b = idx * Host.DEV_CUR;
                if (cur[b + Host.DEV_QP0] == Long.MIN_VALUE)
                {
                    cur[b + Host.DEV_QP0] = qp;
                }
                else if (cur[b + Host.DEV_QP1] == Long.MIN_VALUE)
                {
                    cur[b + Host.DEV_QP1] = qp;
                }
            }
            return added;
        }

        private long state(final int k)
        {
            return host.devState[idx * Host.DEV_STATE + k];
        }

        long outstanding()
        {
            return state(Host.S_OUTSTANDING);
        }

        long lastProgressNs()
        {
            return state(Host.S_LAST_PROGRESS);
        }

        long reportedEndNs()
        {
            return state(Host.S_REPORTED_END);
        }

        long stalledNs()
        {
            return state(Host.S_STALLED_NS);
        }

        int stalledSend()
        {
            return (int)(state(Host.S_STALLED) & 0xffff_ffffL);
        }

        int stalledRecv()
        {
            return (int)(state(Host.S_STALLED) >>> 32);
        }

        double latencyRatio()
        {
            return Double.longBitsToDouble(state(Host.S_RATIO));
        }

        boolean candidate()
        {
            return state(Host.S_CANDIDATE) != 0;
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
        Rank owner;
        /** Its row in its host's receive table ({@link Host#recvRows}). */
        final int idx;

        RecvFlow(final Comm comm, final Host host, final int rank, final int peer, final int channel, final int idx)
        {
            this.comm = comm;
            this.host = host;
            this.rank = rank;
            this.peer = peer;
            this.channel = channel;
            this.idx = idx;
        }

        /** The owner's row in its communicator's tables. */
        int ownerIdx()
        {
            return (int)host.recvRows[idx * Host.RECV_ROW + Host.RECV_OWNER];
        }

        long lastProgressNs()
        {
            return host.recvRows[idx * Host.RECV_ROW + Host.RECV_PROGRESS];
        }
    }
}
