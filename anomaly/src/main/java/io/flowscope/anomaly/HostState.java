package io.flowscope.anomaly;

import java.util.ArrayList;
import java.util.List;
import org.agrona.collections.Int2ObjectHashMap;

/**
 * The anomaly stage's state of one host (one clock domain): its current period, its own time ({@link #nowNs}),
 * the links and ranks its period touched, its receive flows' rows (what the {@link HangDetector} reads), its NICs'
 * rows (what the {@link NicStallDetector} and {@link CongestionDetector} read) and the position cache that finds a
 * summary's row without hashing (the window engine emits a host's flows in a stable order). Written by the
 * {@link AnomalyEngine}'s per-summary path, read by the detectors at the host's period end.
 */
final class HostState {
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
    final List<LinkState> links = new ArrayList<>();
    /** The links and ranks the period under way touched, in order (arrays: no list checks per access). */
    int[] touchedLinks = new int[16];

    CommState[] touchedLinkComms = new CommState[16];
    int touchedLinkCount;
    /** The ranks (rows of their communicator's tables, and the communicators) the period touched. */
    int[] touchedRanks = new int[16];

    CommState[] touchedRankComms = new CommState[16];
    int touchedRankCount;

    void touchLink(final CommState c, final int id) {
        if (touchedLinkCount == touchedLinks.length) {
            touchedLinks = java.util.Arrays.copyOf(touchedLinks, touchedLinkCount * 2);
            touchedLinkComms = java.util.Arrays.copyOf(touchedLinkComms, touchedLinkCount * 2);
        }
        touchedLinkComms[touchedLinkCount] = c;
        touchedLinks[touchedLinkCount++] = id;
    }

    void touchRank(final CommState c, final int rank) {
        if (touchedRankCount == touchedRanks.length) {
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
    boolean recvWaiting(final int i, final long thresholdNs) {
        final int b = i * RECV_ROW;
        return recvRows[b + RECV_OUTSTANDING] > 0
                && recvRows[b + RECV_SEEN] == reportedPeriodStartNs
                && nowNs - recvRows[b + RECV_PROGRESS] >= thresholdNs;
    }

    /** Per flow: its receiving rank's communicator. */
    CommState[] recvComm = new CommState[16];
    /** Per flow: whether it counts as stalled (in its communicator's {@link CommState#stalled}). */
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
    void waiting(final long progressNs) {
        if (progressNs < waitingSinceNs) {
            waitingSinceNs = progressNs;
        }
    }

    boolean recvScanAll;
    /** The latest period start reported. */
    long latestPeriodStartNs = Long.MIN_VALUE;

    void addRecvFlow(final RecvFlow f, final long flowKey, final int owner, final long progressNs) {
        final int i = recvFlowCount;
        if (i == recvFlows.length) {
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
    final List<CommState> recvComms = new ArrayList<>();

    final Int2ObjectHashMap<NicState> devices = new Int2ObjectHashMap<>();
    /** Devices 0 … 15 without hashing: their {@link NicState#idx} + 1, 0 for none yet. */
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
    int cachedRecv(final int pos) {
        return pos < byPosition.length && byPosition[pos] == RECV ? linkAt[pos] : -1;
    }

    void cacheRecv(final int pos, final int idx) {
        cacheLink(pos, RECV, idx);
    }

    /** The link row cached at this position for communicator {@code c}, or -1. */
    int cachedLink(final int pos, final CommState c) {
        return pos < byPosition.length && byPosition[pos] == c ? linkAt[pos] : -1;
    }

    void cacheLink(final int pos, final Object c, final int id) {
        cache(pos, c);
        if (pos < linkAt.length) {
            linkAt[pos] = id;
        }
    }

    void cache(final int pos, final Object o) {
        if (pos >= byPosition.length) {
            if (pos >= 1 << 16) {
                return;
            }
            byPosition = java.util.Arrays.copyOf(byPosition, Math.max(pos + 1, byPosition.length * 2));
            linkAt = java.util.Arrays.copyOf(linkAt, byPosition.length);
        }
        byPosition[pos] = o;
    }

    final List<NicState> deviceList = new ArrayList<>();
    final Tracker congestion = new Tracker();
    boolean nicQuiet;
    long nicQuietUntilNs = Long.MIN_VALUE / 2;
    int newQpDevice = -1;
    long newQpAtNs = Long.MIN_VALUE;

    /** Its NICs' windows of send-WR network ns and count, by {@link NicState#idx}. */
    final RingTable devWin;
    /** How many of its NICs have a NIC_STALL open (their trackers' {@code open} set). */
    int nicStallsOpen;
    /*
     * Its NICs' state, by NicState.idx, in two dense tables instead of the device objects (8 NICs a host were
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
    void addDevice(final NicState d) {
        final int i = d.idx;
        if (i * DEV_CUR == devCur.length) {
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
        if (d.device >= 0 && d.device < devRowByDevice.length) {
            devRowByDevice[d.device] = i + 1;
        }
    }

    /** Starts the period {@code startNs} in the devCur row at {@code b}: its accumulators cleared. */
    static void openDevicePeriod(final long[] cur, final int b, final long startNs) {
        cur[b + DEV_PERIOD] = startNs;
        cur[b + DEV_OUTSTANDING] = 0;
        cur[b + DEV_COMPLETIONS] = 0;
        cur[b + DEV_NET_NS] = 0;
        cur[b + DEV_NET_COUNT] = 0;
        cur[b + DEV_STALLED] = 0;
    }

    long devWarm(final int i) {
        return devState[i * DEV_STATE + S_WARM];
    }
    /** The host whose summaries or time followed this one's last (hosts come round in a stable order). */
    HostState successor;

    HostState(final long hostId, final int window) {
        this.hostId = hostId;
        devWin = new RingTable(2, window, 8);
    }

    /*
     * Checkpoint: the host's own state and its NICs (writeTo), then, once the communicators are read, what refers
     * to them (writeFlows). The position cache (byPosition, linkAt, position), the successor and the link cursor
     * are not written: they only save lookups, and a restored engine relearns them in its first period.
     */

    void writeTo(final CheckpointOut out) {
        out.writeLong(hostId);
        out.writeBoolean(started);
        out.writeBoolean(pending);
        out.writeLong(periodStartNs);
        out.writeLong(periodEndNs);
        out.writeLong(reportedPeriodStartNs);
        out.writeLong(previousPeriodStartNs);
        out.writeLong(nowNs);
        out.writeLong(waitingSinceNs);
        out.writeBoolean(recvScanAll);
        out.writeLong(latestPeriodStartNs);
        congestion.writeTracker(out);
        out.writeBoolean(nicQuiet);
        out.writeLong(nicQuietUntilNs);
        out.writeInt(newQpDevice);
        out.writeLong(newQpAtNs);
        out.writeInt(nicStallsOpen);
        out.writeInt(deviceCount);
        for (int i = 0; i < deviceCount; i++) {
            deviceList.get(i).writeTo(out);
            for (int k = 0; k < DEV_CUR; k++) {
                out.writeLong(devCur[i * DEV_CUR + k]);
            }
            for (int k = 0; k < DEV_STATE; k++) {
                out.writeLong(devState[i * DEV_STATE + k]);
            }
        }
        devWin.writeTo(out, deviceCount);
    }

    static HostState readFrom(final CheckpointIn in, final int window) {
        final HostState h = new HostState(in.readLong(), window);
        h.started = in.readBoolean();
        h.pending = in.readBoolean();
        h.periodStartNs = in.readLong();
        h.periodEndNs = in.readLong();
        h.reportedPeriodStartNs = in.readLong();
        h.previousPeriodStartNs = in.readLong();
        h.nowNs = in.readLong();
        h.waitingSinceNs = in.readLong();
        h.recvScanAll = in.readBoolean();
        h.latestPeriodStartNs = in.readLong();
        h.congestion.readTracker(in);
        h.nicQuiet = in.readBoolean();
        h.nicQuietUntilNs = in.readLong();
        h.newQpDevice = in.readInt();
        h.newQpAtNs = in.readLong();
        h.nicStallsOpen = in.readInt();
        final int devices = in.readCount();
        for (int i = 0; i < devices; i++) {
            final NicState d = NicState.readFrom(in, h, i);
            CheckpointIn.check(!h.devices.containsKey(d.device), "host has device " + d.device + " twice");
            h.addDevice(d);
            h.devices.put(d.device, d);
            for (int k = 0; k < DEV_CUR; k++) {
                h.devCur[i * DEV_CUR + k] = in.readLong();
            }
            for (int k = 0; k < DEV_STATE; k++) {
                h.devState[i * DEV_STATE + k] = in.readLong();
            }
        }
        h.devWin.readFrom(in, devices);
        return h;
    }

    /** Its links, the period's touched links and ranks, its receive flows (rows, stalled flags), their comms. */
    void writeFlows(final CheckpointOut out) {
        out.writeInt(links.size());
        for (final LinkState l : links) {
            out.writeComm(l.comm);
            out.writeInt(l.id);
        }
        out.writeInt(touchedLinkCount);
        for (int i = 0; i < touchedLinkCount; i++) {
            out.writeComm(touchedLinkComms[i]);
            out.writeInt(touchedLinks[i]);
        }
        out.writeInt(touchedRankCount);
        for (int i = 0; i < touchedRankCount; i++) {
            out.writeComm(touchedRankComms[i]);
            out.writeInt(touchedRanks[i]);
        }
        out.writeInt(recvFlowCount);
        for (int i = 0; i < recvFlowCount; i++) {
            final RecvFlow f = recvFlows[i];
            out.writeComm(f.comm);
            out.writeInt(f.rank);
            out.writeInt(f.peer);
            out.writeInt(f.channel);
            for (int k = 0; k < RECV_ROW; k++) {
                out.writeLong(recvRows[i * RECV_ROW + k]);
            }
            out.writeBoolean(recvStalled[i]);
        }
        out.writeInt(recvComms.size());
        for (final CommState c : recvComms) {
            out.writeComm(c);
        }
    }

    void readFlows(final CheckpointIn in) {
        final int n = in.readCount();
        for (int i = 0; i < n; i++) {
            final CommState c = in.readComm();
            links.add(c.linkById[in.readIndex(c.linkTotal)]);
        }
        final int touched = in.readCount();
        for (int i = 0; i < touched; i++) {
            final CommState c = in.readComm();
            touchLink(c, in.readIndex(c.linkTotal));
        }
        final int ranks = in.readCount();
        for (int i = 0; i < ranks; i++) {
            final CommState c = in.readComm();
            touchRank(c, in.readIndex(c.rankTotal));
        }
        final int flows = in.readCount();
        for (int i = 0; i < flows; i++) {
            final CommState c = in.readComm();
            final RecvFlow f = new RecvFlow(c, this, in.readInt(), in.readInt(), in.readInt(), i);
            final long[] row = new long[RECV_ROW];
            for (int k = 0; k < RECV_ROW; k++) {
                row[k] = in.readLong();
            }
            CheckpointIn.check(
                    row[RECV_OWNER] >= 0 && row[RECV_OWNER] < c.rankTotal,
                    "a receive's rank row " + row[RECV_OWNER] + " of " + c.rankTotal);
            final int owner = (int) row[RECV_OWNER];
            f.owner = c.rankById[owner];
            addRecvFlow(f, row[RECV_KEY], owner, row[RECV_PROGRESS]);
            System.arraycopy(row, 0, recvRows, i * RECV_ROW, RECV_ROW);
            recvStalled[i] = in.readBoolean();
            recvStalledCount += recvStalled[i] ? 1 : 0;
        }
        final int comms = in.readCount();
        for (int i = 0; i < comms; i++) {
            recvComms.add(in.readComm());
        }
    }
}
