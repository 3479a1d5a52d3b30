package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.util.List;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The anomaly stage: the window engine's flow summaries in, anomalies out, driven by event time only
 * (deterministic: a replay names what the live run named). This class owns the state rows and the order of work;
 * each detector is a class of its own:
 * <ul>
 * <li>{@link WaitStateDetector}: SLOW_NODE and SLOW_LINK from real NCCL's wait states (the LINK aggregates);</li>
 * <li>{@link KernelLatenessDetector}: SLOW_NODE from GPU kernel-channel timing (NVLink, no proxy steps);</li>
 * <li>{@link LinkRateDetector}: SLOW_LINK by service rate against the link's baseline and its communicator's;</li>
 * <li>{@link CongestionDetector}: CONGESTION on a NIC several ranks' slowed links go through;</li>
 * <li>{@link CreditWaitDetector}: SLOW_NODE by credit waits into a rank and its lateness at collectives;</li>
 * <li>{@link NicStallDetector}: NIC_STALL and failover from QP work requests;</li>
 * <li>{@link HangDetector}: HANG from receives that stopped progressing, culprit by the wait-for graph.</li>
 * </ul>
 * Every anomaly goes through one {@link AnomalyLifecycle} (open / update / resolve, hysteresis, ids, the sink).
 * <p>
 * <b>State.</b> Per host ({@link HostState}: its period, its receive rows, its NICs' rows), per communicator
 * ({@link CommState}: dense link and rank tables, its statistics), with {@link LinkState}, {@link RankState},
 * {@link NicState} and {@link RecvFlow} as identities and trackers whose per-period figures live in those tables.
 * A summary adds into its row found by its position in the host's stable emission order (no hashing per summary).
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
public final class AnomalyEngine implements AnomalyStage {
    private final AnomalyConfig config;
    private final AnomalySink sink;
    /** The NIC view the wait-state detector was given instead of the engine's own (tests), or null. */
    private final NicView nicsGiven;
    /*
     * The state (not final: a restore builds it apart and then takes it over whole, so that a checkpoint that
     * cannot be read leaves this engine as it was).
     */
    private Long2ObjectHashMap<HostState> hosts = new Long2ObjectHashMap<>();

    private Long2ObjectHashMap<CommState> comms = new Long2ObjectHashMap<>();
    private Long2ObjectHashMap<RecvFlow> recvFlows = new Long2ObjectHashMap<>();
    private AnomalyLifecycle lifecycle;
    private long summaries;
    private HostState lastHost;
    private CommState lastComm;

    private WaitStateDetector waitStates;
    private KernelLatenessDetector kernelLateness;
    private LinkRateDetector linkRates;
    private CongestionDetector congestion;
    private CreditWaitDetector creditWaits;
    private NicStallDetector nicStalls;
    private HangDetector hangs;

    public AnomalyEngine(final AnomalyConfig config, final AnomalySink sink) {
        this(config, sink, null);
    }

    /** With the NICs as {@code nics} tells them instead of the engine's own judgement (tests), when not null. */
    AnomalyEngine(final AnomalyConfig config, final AnomalySink sink, final NicView nics) {
        this.config = config;
        this.sink = sink;
        this.nicsGiven = nics;
        this.lifecycle = new AnomalyLifecycle(config, sink);
        this.waitStates =
                new WaitStateDetector(config, lifecycle.episodes(), nics != null ? nics : new HostNics(hosts));
        this.kernelLateness = new KernelLatenessDetector(config, lifecycle.episodes());
        final CommStatistics stats = new CommStatistics(config);
        this.linkRates = new LinkRateDetector(config, lifecycle, waitStates, stats);
        this.congestion = new CongestionDetector(config, lifecycle, hosts);
        this.creditWaits = new CreditWaitDetector(config, lifecycle, waitStates, stats);
        this.nicStalls = new NicStallDetector(config, lifecycle);
        this.hangs = new HangDetector(config, lifecycle);
    }

    WaitStateDetector waitStates() {
        return waitStates;
    }

    /** The hosts' NICs as the {@link NicStallDetector} judged them last, for the wait-state congestion rule. */
    private static final class HostNics implements NicView {
        private final Robust robust = new Robust();
        private final Long2ObjectHashMap<HostState> hosts;

        HostNics(final Long2ObjectHashMap<HostState> hosts) {
            this.hosts = hosts;
        }

        @Override
        public int worstNic(final long hostId) {
            final HostState h = hosts.get(hostId);
            final NicState d = h == null ? null : CongestionDetector.worstDevice(h);
            return d == null ? -1 : d.device;
        }

        @Override
        public double latencyRatio(final long hostId, final int device) {
            final HostState h = hosts.get(hostId);
            final NicState d = h == null ? null : h.devices.get(device);
            return d == null ? 0 : d.latencyRatio();
        }

        @Override
        public double othersMedianRatio(final long hostId) {
            robust.clear();
            for (final HostState h : hosts.values()) {
                for (int i = 0; h.hostId != hostId && i < h.deviceList.size(); i++) {
                    final double r = h.deviceList.get(i).latencyRatio();
                    if (r > 0) {
                        robust.add(r);
                    }
                }
            }
            if (robust.count() == 0) {
                return Double.NaN;
            }
            robust.compute();
            return robust.median;
        }
    }

    public AnomalyConfig config() {
        return config;
    }

    /** Flow summaries consumed so far. */
    public long summaries() {
        return summaries;
    }

    // Input.

    @Override
    public void onSummary(final FlowSummary s) {
        summaries++;
        // The host of the summary before, checked here: host() is too big to inline and a host's summaries come
        // together, so the call was paid per summary for this comparison.
        final HostState last = lastHost;
        final HostState h =
                last != null && last.hostId == s.hostId() ? last : (HostState) miss(MISS_HOST, null, null, s, 0);
        if (!h.started || s.periodStartNs() != h.periodStartNs) {
            if (h.started && h.pending) {
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
        switch (s.kind()) {
            case FlowSummary.KIND_STEP:
                // A send's step flows (one per channel) are read through their link's aggregate below.
                if (!s.isSend()) {
                    onRecv(h, s);
                }
                break;
            case FlowSummary.KIND_QP:
                onQp(h, s);
                break;
            case FlowSummary.KIND_LINK:
                final FlowRows.Cursor cursor = h.linkCursor;
                waitStates.onLink(cursor != null ? cursor : (h.linkCursor = waitStates.cursorOf(h.hostId)), s);
                if (s.isSend()) {
                    // The link's period over all its channels (the window engine's sums and maxima of its send
                    // step flows): what the link rate rule accumulates, once a link instead of once a channel.
                    onSend(h, s);
                }
                break;
            default:
                break;
        }
    }

    /** Collectives: per-channel kernel timing (NVLink stragglers), and the ranks' lateness at their collectives. */
    @Override
    public void onCollective(final CollectiveSummary cs) {
        kernelLateness.onCollective(cs);
        if (cs.complete() && cs.nranks() >= config.minLinks && cs.rank() >= 0 && cs.rank() < cs.nranks()) {
            creditWaits.onCollective(comm(cs.commHash()), cs);
        }
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        waitStates.advanceTo(hostId, timeNs);
        kernelLateness.advanceTo(hostId, timeNs);
        final HostState h = host(hostId);
        if (h.pending && timeNs - h.periodEndNs >= 0) {
            endPeriod(h);
        }
        if (timeNs - h.nowNs > 0) {
            h.nowNs = timeNs;
            hangs.checkStalls(h);
        }
    }

    @Override
    public List<Anomaly> openAnomalies() {
        return lifecycle.openAnomalies();
    }

    // Checkpoint (layout and evolution rule: anomaly/README.md, "Checkpoints").

    /** The size of the last checkpoint, the next one's first guess at its buffer. */
    private int lastCheckpointBytes;

    private static final int SECTION_ENGINE = 1;
    private static final int SECTION_LIFECYCLE = 2;
    private static final int SECTION_HOSTS = 3;
    private static final int SECTION_COMMS = 4;
    private static final int SECTION_RECEIVES = 5;
    private static final int SECTION_RECEIVE_REFS = 6;
    private static final int SECTION_NIC_STALLS = 7;
    private static final int SECTION_WAIT_STATES = 8;
    private static final int SECTION_KERNEL = 9;

    /**
     * The whole state, the configuration's fingerprint with it: a stage {@link #restore restored} from it under
     * the same thresholds publishes what this one would from here on, anomaly for anomaly. Not for the hot path: it
     * walks every row (see docs/benchmarks.md for its size and time at 4,096 ranks).
     */
    @Override
    public byte[] checkpoint() {
        // Hosts and communicators by id: the same state gives the same bytes, whatever the maps' histories.
        final HostState[] hs = hosts.values().toArray(new HostState[0]);
        java.util.Arrays.sort(hs, java.util.Comparator.comparingLong(h -> h.hostId));
        final CommState[] cs = comms.values().toArray(new CommState[0]);
        java.util.Arrays.sort(cs, java.util.Comparator.comparingLong(c -> c.commHash));
        final CheckpointOut out =
                new CheckpointOut(config.fingerprint(), hs, cs, lastCheckpointBytes + (lastCheckpointBytes >> 4));
        int mark = out.beginSection(SECTION_ENGINE);
        out.writeLong(summaries);
        out.endSection(mark);
        mark = out.beginSection(SECTION_LIFECYCLE);
        lifecycle.writeTo(out);
        out.endSection(mark);
        mark = out.beginSection(SECTION_HOSTS);
        out.writeInt(hs.length);
        for (final HostState h : hs) {
            h.writeTo(out);
        }
        out.endSection(mark);
        mark = out.beginSection(SECTION_COMMS);
        out.writeInt(cs.length);
        for (final CommState c : cs) {
            c.writeTo(out);
        }
        out.endSection(mark);
        mark = out.beginSection(SECTION_RECEIVES);
        for (final HostState h : hs) {
            h.writeFlows(out);
        }
        out.endSection(mark);
        mark = out.beginSection(SECTION_RECEIVE_REFS);
        for (final CommState c : cs) {
            c.writeRecvRefs(out);
        }
        out.endSection(mark);
        mark = out.beginSection(SECTION_NIC_STALLS);
        nicStalls.writeTo(out);
        out.endSection(mark);
        mark = out.beginSection(SECTION_WAIT_STATES);
        waitStates.writeTo(out);
        out.endSection(mark);
        mark = out.beginSection(SECTION_KERNEL);
        kernelLateness.writeTo(out);
        out.endSection(mark);
        final byte[] bytes = out.finish();
        lastCheckpointBytes = bytes.length;
        return bytes;
    }

    /**
     * Takes the state of a {@link #checkpoint} made under the same thresholds, in place of this engine's. It is
     * read into a new engine first and taken over only once all of it has been read: a checkpoint that cannot be
     * read (another format version or configuration, truncated, damaged) throws {@link IllegalArgumentException}
     * and leaves this engine as it was. Publishes nothing: the anomalies open in the checkpoint are open here
     * ({@link #openAnomalies}), under the same ids, and their updates and resolutions follow as they would have.
     */
    @Override
    public void restore(final byte[] checkpoint) {
        final AnomalyEngine fresh = new AnomalyEngine(config, sink, nicsGiven);
        try {
            fresh.read(CheckpointIn.open(checkpoint, config.fingerprint()));
        } catch (final IllegalArgumentException e) {
            throw e;
        } catch (final RuntimeException e) {
            // A guard: the reads check what they index, but a checkpoint must never fail otherwise.
            throw new IllegalArgumentException("anomaly checkpoint damaged: " + e, e);
        }
        hosts = fresh.hosts;
        comms = fresh.comms;
        recvFlows = fresh.recvFlows;
        lifecycle = fresh.lifecycle;
        summaries = fresh.summaries;
        lastHost = null;
        lastComm = null;
        waitStates = fresh.waitStates;
        kernelLateness = fresh.kernelLateness;
        linkRates = fresh.linkRates;
        congestion = fresh.congestion;
        creditWaits = fresh.creditWaits;
        nicStalls = fresh.nicStalls;
        hangs = fresh.hangs;
    }

    /** Reads a checkpoint into this (fresh) engine, in the order {@link #checkpoint} wrote it. */
    private void read(final CheckpointIn in) {
        in.section(SECTION_ENGINE);
        summaries = in.readLong();
        in.endSection();
        in.section(SECTION_LIFECYCLE);
        lifecycle.readFrom(in);
        in.endSection();
        in.section(SECTION_HOSTS);
        final HostState[] hs = new HostState[in.readCount()];
        for (int i = 0; i < hs.length; i++) {
            hs[i] = HostState.readFrom(in, config.windowPeriods);
            CheckpointIn.check(hosts.put(hs[i].hostId, hs[i]) == null, "host " + hs[i].hostId + " twice");
        }
        in.hosts = hs;
        in.endSection();
        in.section(SECTION_COMMS);
        final CommState[] cs = new CommState[in.readCount()];
        for (int i = 0; i < cs.length; i++) {
            cs[i] = CommState.readFrom(in, config.windowPeriods);
            CheckpointIn.check(comms.put(cs[i].commHash, cs[i]) == null, "comm " + cs[i].commHash + " twice");
        }
        in.comms = cs;
        in.endSection();
        in.section(SECTION_RECEIVES);
        for (final HostState h : hs) {
            h.readFlows(in);
            for (int i = 0; i < h.recvFlowCount; i++) {
                final long key = h.recvRows[i * HostState.RECV_ROW + HostState.RECV_KEY];
                CheckpointIn.check(
                        recvFlows.put(key ^ (h.hostId * 0x9E3779B97F4A7C15L), h.recvFlows[i]) == null,
                        "a receive flow twice");
            }
        }
        in.endSection();
        in.section(SECTION_RECEIVE_REFS);
        for (final CommState c : cs) {
            c.readRecvRefs(in);
        }
        in.endSection();
        in.section(SECTION_NIC_STALLS);
        nicStalls.readFrom(in);
        in.endSection();
        in.section(SECTION_WAIT_STATES);
        waitStates.readFrom(in);
        in.endSection();
        in.section(SECTION_KERNEL);
        kernelLateness.readFrom(in);
        in.endSection();
        in.end();
    }

    // Accumulation.

    private HostState host(final long hostId) {
        final HostState last = lastHost;
        if (last != null && last.hostId == hostId) {
            return last;
        }
        // The drain loop visits the hosts in the same order every period: the one that followed last time.
        HostState h = last != null ? last.successor : null;
        if (h == null || h.hostId != hostId) {
            h = hosts.get(hostId);
            if (h == null) {
                h = new HostState(hostId, config.windowPeriods);
                hosts.put(hostId, h);
            }
            if (last != null) {
                last.successor = h;
            }
        }
        lastHost = h;
        return h;
    }

    private CommState comm(final long commHash) {
        final CommState last = lastComm;
        if (last != null && last.commHash == commHash) {
            return last;
        }
        CommState c = comms.get(commHash);
        if (c == null) {
            c = new CommState(commHash, config.windowPeriods);
            comms.put(commHash, c);
        }
        lastComm = c;
        return c;
    }

    private void onSend(final HostState h, final FlowSummary s) {
        final CommState c = comm(s.commHash());
        // The window engine emits a host's flows in a stable order: the link at this position last period is
        // checked first (no hashing when it matches), against the communicator's dense tables, so that a summary
        // touches its link's row there and no link object.
        final int pos = h.position++;
        int id = h.cachedLink(pos, c);
        if (id < 0 || c.lRankNo[id] != s.rank() || c.lPeerNo[id] != s.peer()) {
            id = ((LinkState) miss(MISS_LINK, h, c, s, pos)).id;
        }
        final int own = c.lOwner[id];
        if (c.rHost[own] != h) {
            c.setHost(own, h);
        }
        final long[] cur = c.lCur;
        final int b = id * CommState.LINK_CUR;
        if (cur[b] != s.periodStartNs()) {
            cur[b] = s.periodStartNs();
            h.touchLink(c, id);
        }
        cur[b + LinkState.BYTES + 1] += s.bytes();
        cur[b + LinkState.NET_NS + 1] += s.phaseSumNs(Phase.NETWORK);
        cur[b + LinkState.NET_COUNT + 1] += s.phaseCount(Phase.NETWORK);
        cur[b + LinkState.PEER_WAIT_NS + 1] += s.phaseSumNs(Phase.PEER_WAIT);
        cur[b + LinkState.OUTSTANDING + 1] += s.outstandingBytes();
        cur[b + LinkState.PEER_WAIT_MAX + 1] =
                Math.max(cur[b + LinkState.PEER_WAIT_MAX + 1], s.phaseMaxNs(Phase.PEER_WAIT));
    }

    private void onRecv(final HostState h, final FlowSummary s) {
        // The flow at this position last period when it is the same (the window engine emits a host's flows in a
        // stable order), else looked up or created apart (keeps this method small enough to inline).
        final int pos = h.position++;
        // The flow's row in the host's receive table (no flow object per summary).
        int i = h.cachedRecv(pos);
        if (i < 0 || h.recvRows[i * HostState.RECV_ROW + HostState.RECV_KEY] != s.flowKey()) {
            i = ((RecvFlow) miss(MISS_RECV, h, null, s, pos)).idx;
        }
        // After the miss: a new flow may have grown the table.
        final long[] rows = h.recvRows;
        final int b = i * HostState.RECV_ROW;
        // The receiving rank by its row in its communicator's tables (no rank object per summary).
        final CommState oc = h.recvComm[i];
        final int own = (int) rows[b + HostState.RECV_OWNER];
        if (oc.rHost[own] != h) {
            oc.setHost(own, h);
        }
        long progressNs = rows[b + HostState.RECV_PROGRESS];
        if (rows[b + HostState.RECV_SEEN] != h.previousPeriodStartNs || rows[b + HostState.RECV_OUTSTANDING] == 0) {
            // Not reported in the host's period before (the window engine reports every flow with work
            // outstanding in every period it ends), or reported with nothing outstanding: nothing was outstanding
            // until this period, however long the host was silent (a job paused for a checkpoint must not read as
            // a hang when it resumes). The host's previous period, not the one just before in time: over a
            // silence the window engine ends no period, and a receive waiting all along must not count as having
            // progressed.
            progressNs = Math.max(progressNs, s.periodStartNs());
        }
        rows[b + HostState.RECV_SEEN] = s.periodStartNs();
        rows[b + HostState.RECV_OUTSTANDING] = s.outstandingSteps();
        if (s.completions() > 0 || s.outstandingSteps() == 0) {
            progressNs = s.periodEndNs();
        }
        rows[b + HostState.RECV_PROGRESS] = progressNs;
        if (s.outstandingSteps() > 0) {
            h.waiting(progressNs);
        }
        // The rank's window is accumulated in place: its period's first summary opens the next slot.
        final PeriodRing win = oc.rWin;
        if (oc.rPeriodStartNs[own] != s.periodStartNs()) {
            // Apart to keep this method under C2's size limit for inlining into onSummary (325 bytecodes).
            oc.openRankPeriod(h, own, s.periodStartNs());
        }
        final int at = win.current(own);
        win.add(at, RankState.CONSUME_NS, s.phaseSumNs(Phase.GPU_CONSUME));
        win.add(at, RankState.CONSUME_COUNT, s.phaseCount(Phase.GPU_CONSUME));
        // A receive waiting for data (10 → 11): kept as evidence of how long this rank waited for its senders.
        win.max(at, RankState.DATA_WAIT_MAX, s.phaseMaxNs(Phase.NETWORK));
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
    private Object miss(final int kind, final HostState h, final CommState c, final FlowSummary s, final int pos) {
        switch (kind) {
            case MISS_HOST:
                return host(s.hostId());
            case MISS_LINK: {
                // Mixed (a bijection): packed consecutive ranks collide in an open-addressing map's probe sequence.
                final long key = AnomalyLifecycle.mix(((long) s.rank() << 32) | (s.peer() & 0xffffffffL));
                LinkState l = c.links.get(key);
                if (l == null) {
                    l = new LinkState(c, h, s.rank(), s.peer(), c.linkTotal);
                    l.owner = c.rank(s.rank());
                    c.links.put(key, l);
                    h.links.add(l);
                    l.peerRank = c.rank(s.peer());
                    c.addLink(l);
                    c.addIncoming(l.peerRank, l.id);
                }
                h.cacheLink(pos, c, l.id);
                return l;
            }
            case MISS_RECV: {
                final CommState sc = comm(s.commHash());
                // A receive flow is one per (flow key, host).
                RecvFlow f = recvFlows.get(s.flowKey() ^ (s.hostId() * 0x9E3779B97F4A7C15L));
                final CommState oc = f != null ? f.comm : sc;
                final int own = f != null ? f.ownerIdx() : sc.rank(s.rank()).idx;
                if (oc.rHost[own] != h) {
                    oc.setHost(own, h);
                }
                if (f == null) {
                    f = newRecvFlow(h, sc, s, own);
                }
                h.cacheRecv(pos, f.idx);
                return f;
            }
            default: {
                final int dev = s.device();
                NicState d = h.devices.get(dev);
                if (d == null) {
                    d = new NicState(h, dev, h.deviceList.size());
                    h.addDevice(d);
                    h.devices.put(dev, d);
                }
                return d;
            }
        }
    }

    /** A receive flow's first summary (apart from {@link #onRecv}, so that the per-summary part stays small). */
    private RecvFlow newRecvFlow(final HostState h, final CommState c, final FlowSummary s, final int own) {
        final RecvFlow f = new RecvFlow(c, h, s.rank(), s.peer(), s.channel(), h.recvFlowCount);
        f.owner = c.rankById[own];
        recvFlows.put(s.flowKey() ^ (s.hostId() * 0x9E3779B97F4A7C15L), f);
        h.addRecvFlow(f, s.flowKey(), own, s.periodStartNs());
        if (!h.recvComms.contains(c)) {
            h.recvComms.add(c);
        }
        f.owner.recvFlows.add(f);
        return f;
    }

    private void onQp(final HostState h, final FlowSummary s) {
        // The device's row in its host's device table (no device object per summary).
        final int dev = s.device();
        int i = dev >= 0 && dev < h.devRowByDevice.length ? h.devRowByDevice[dev] - 1 : -1;
        if (i < 0) {
            i = ((NicState) miss(MISS_DEVICE, h, null, s, 0)).idx;
        }
        // After the miss: a new device may have grown the table.
        // The period's opening and a QP not among the row's first two are apart: this method must stay under
        // C2's size limit for inlining into onSummary (325 bytecodes; a call per QP summary cost ~30 instructions).
        final long[] cur = h.devCur;
        final int b = i * HostState.DEV_CUR;
        if (cur[b + HostState.DEV_PERIOD] != s.periodStartNs()) {
            HostState.openDevicePeriod(cur, b, s.periodStartNs());
        }
        final long qp = s.qpNum();
        if (qp != cur[b + HostState.DEV_QP0] && qp != cur[b + HostState.DEV_QP1]) {
            otherQp(h, i, s);
        }
        if (s.completions() == 0 && s.outstandingSteps() > 0) {
            // Send work requests carry their length; NCCL leaves a receive's stale (the simulator: 0).
            cur[b + HostState.DEV_STALLED] +=
                    s.outstandingBytes() > 0 ? HostState.STALLED_SEND : HostState.STALLED_RECV;
        }
        cur[b + HostState.DEV_OUTSTANDING] += s.outstandingSteps();
        cur[b + HostState.DEV_COMPLETIONS] += s.completions();
        if (s.bytes() > 0) {
            // Send work requests only (receives carry NCCL's stale length, 0 here): a receive's latency is
            // mostly waiting for its sender, not the NIC.
            cur[b + HostState.DEV_NET_NS] += s.phaseSumNs(Phase.NETWORK);
            cur[b + HostState.DEV_NET_COUNT] += s.phaseCount(Phase.NETWORK);
        }
    }

    /** A QP summary whose QP is not among its device row's first two (see {@link NicState#newQp}). */
    private void otherQp(final HostState h, final int i, final FlowSummary s) {
        if (h.deviceList.get(i).newQp(s.qpNum()) && h.devWarm(i) >= config.warmupPeriods) {
            // A queue pair the device never carried: traffic moved onto it (failover).
            h.newQpDevice = s.device();
            h.newQpAtNs = s.periodEndNs();
        }
    }

    // Period end of one host: windows advance, that host's NICs, links, ranks and receives are judged.

    private void endPeriod(final HostState h) {
        h.pending = false;
        h.nowNs = Math.max(h.nowNs, h.periodEndNs);
        final long periodStart = h.periodStartNs;
        final long now = h.periodEndNs;
        nicStalls.judgeDevices(h, periodStart, now);
        linkRates.endPeriod(h, now);
        final NicState dev = CongestionDetector.worstDevice(h);
        final boolean congested = congestion.congested(h, linkRates, dev);
        linkRates.judgeLinks(h, periodStart, now, congested);
        congestion.endPeriod(h, linkRates, dev, congested, periodStart, now);
        creditWaits.judgeRanks(h, periodStart, now);
        h.touchedLinkCount = 0;
        h.touchedRankCount = 0;
        hangs.checkStalls(h);
    }
}
