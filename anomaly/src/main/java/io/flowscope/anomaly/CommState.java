package io.flowscope.anomaly;

import java.util.ArrayList;
import java.util.List;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The anomaly stage's state of one communicator, across hosts: its links and ranks as dense tables (one row each,
 * by {@link LinkState#id} and {@link RankState#idx}; the per-summary accumulators, the windows and what the
 * judgements read), its statistics across them ({@link CommStatistics}), its stalled receives and its HANG
 * tracker, its collective rounds. The row objects ({@link LinkState}, {@link RankState}) are identities and
 * trackers; their figures live here so that a period end streams arrays instead of visiting objects.
 */
final class CommState {
    final long commHash;
    final Long2ObjectHashMap<LinkState> links = new Long2ObjectHashMap<>();
    final Int2ObjectHashMap<RankState> ranks = new Int2ObjectHashMap<>();
    final List<RecvFlow> stalled = new ArrayList<>();
    final List<RecvFlow> waiting = new ArrayList<>();
    final Long2ObjectHashMap<CollectiveRound> rounds = new Long2ObjectHashMap<>();
    final List<CollectiveRound> freeRounds = new ArrayList<>();
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
     * Mirrors of what the statistics pass reads of every link and rank, by dense index (LinkState.id, RankState.idx),
     * written where the link or rank changes them: the pass over thousands of links streams these arrays
     * instead of visiting every link object and the links into every rank (a cache miss each).
     */
    /** Links and ranks by dense index (LinkState.id, RankState.idx): ids 0 … linkTotal − 1 and 0 … rankTotal − 1. */
    LinkState[] linkById = new LinkState[16];

    int linkTotal;
    RankState[] rankById = new RankState[16];
    int rankTotal;
    HostState[] lHost = new HostState[16];
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
     * is degraded, whether its SLOW_LINK tracker holds anything (LinkState.bad != 0 || LinkState.open != null). The
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

    double fraction(final int id) {
        return lJudge[id * LJ + LJ_FRACTION];
    }

    double baseline(final int id) {
        return lJudge[id * LJ + LJ_BASELINE];
    }

    double baselineOut(final int id) {
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
     * anomaly: RankState.bad != 0 || RankState.open != null), the first two links into it (rIn at 2 × its row; all of
     * them in RankState.in) and how many there are.
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
    /** Per link: the period's start, then its accumulators (one per window series, {@link LinkState#BYTES} …). */
    static final int LINK_CUR = 1 + LinkState.SERIES;

    long[] lCur = new long[16 * LINK_CUR];
    /** Per link: the sender's rank number and the peer's, for the position cache's check, and its sender. */
    int[] lRankNo = new int[16];

    int[] lPeerNo = new int[16];
    int[] lOwner = new int[16];
    final RingTable lWin;
    /** Per rank: the start of the period its window's current slot accumulates. */
    long[] rPeriodStartNs = new long[16];

    HostState[] rHost = new HostState[16];
    /** Per rank: its window ({@link RankState#CONSUME_NS} …), read only as slow-node evidence. */
    final PeriodRing rWin;

    CommState(final long commHash, final int window) {
        this.commHash = commHash;
        java.util.Arrays.fill(rExcess, Double.NaN);
        lWin = new RingTable(LinkState.SERIES, window, 16);
        rWin = new PeriodRing(RankState.SERIES, window, 16);
    }

    /** Rank {@code r}'s row object, created (and registered in the dense tables) on first use. */
    RankState rank(final int r) {
        RankState k = ranks.get(r);
        if (k == null) {
            k = new RankState(this, r, rankTotal);
            ranks.put(r, k);
            addRank(k);
        }
        return k;
    }

    /**
     * Whether a hang of the communicator is open, or resolved within two windows: the credit waits it caused
     * (seconds) are in the ranks' windows for a window after it, and they are the hang's, not a straggler's.
     */
    boolean hangNear(final long periodStart, final long now, final int windowPeriods) {
        return hang.open != null
                || hangResolvedNs != Long.MIN_VALUE
                        && now - hangResolvedNs < 2L * windowPeriods * Math.max(1, now - periodStart);
    }

    void setHost(final int rank, final HostState h) {
        rHost[rank] = h;
        rankById[rank].host = h;
    }

    void addLink(final LinkState l) {
        final int i = l.id;
        if (i == lHost.length) {
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

    /** RankState row {@code rank}'s first summary of host {@code h}'s period {@code startNs}: its next window slot. */
    void openRankPeriod(final HostState h, final int rank, final long startNs) {
        rPeriodStartNs[rank] = startNs;
        rWin.open(rank, RankState.SERIES);
        h.touchRank(this, rank);
    }

    void addIncoming(final RankState r, final int linkId) {
        r.addIncoming(linkId);
        final int k = rInCount[r.idx]++;
        if (k < 2) {
            rIn[2 * r.idx + k] = linkId;
        }
    }

    void addRank(final RankState r) {
        final int i = r.idx;
        if (i == rExcess.length) {
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

    /*
     * Checkpoint: its statistics and trackers, its ranks and links with their rows, windows and links into each
     * rank, its collective rounds (writeTo); once the hosts' receive flows are read, the ranks' receive flows and
     * the stalled ones (writeRecvRefs). Not written: the scratch of the statistics pass (rWaitMax, rWaitCount),
     * the hang's wait-for graph (waiting: rebuilt by every judgement) and the pool of free rounds.
     */

    void writeTo(final CheckpointOut out) {
        out.writeLong(commHash);
        hang.writeTracker(out);
        out.writeLong(hangResolvedNs);
        out.writeBoolean(stallChanged);
        out.writeInt(updates);
        out.writeBoolean(statsValid);
        out.writeInt(linkCount);
        out.writeDouble(rateMedian);
        out.writeDouble(rateSigma);
        out.writeDouble(rateMad);
        out.writeDouble(excessMad);
        out.writeInt(excessCount);
        out.writeInt(troubledLinks);
        out.writeInt(openSlowLinks);
        out.writeDouble(creditTop);
        out.writeDouble(creditSecond);
        out.writeDouble(excessMedian);
        out.writeDouble(excessSigma);
        out.writeInt(rankTotal);
        for (int i = 0; i < rankTotal; i++) {
            rankById[i].writeTo(out);
            out.writeDouble(rExcess[i]);
            out.writeDouble(rBaseline[i]);
            out.writeInt(rWarm[i]);
            out.writeBoolean(rTracked[i]);
            out.writeLong(rPeriodStartNs[i]);
        }
        out.writeInt(linkTotal);
        for (int i = 0; i < linkTotal; i++) {
            linkById[i].writeTo(out);
            out.writeLong(lLastActiveNs[i]);
            out.writeLong(lPeerWaitMax[i]);
            out.writeLong(lNetCount[i]);
            out.writeBoolean(lJudged[i]);
            out.writeDouble(lRatio[i]);
            for (int k = 0; k < LJ; k++) {
                out.writeDouble(lJudge[i * LJ + k]);
            }
            out.writeLong(lNetNs[i]);
            out.writeInt(lWarm[i]);
            out.writeBoolean(lDegraded[i]);
            out.writeBoolean(lTracked[i]);
            for (int k = 0; k < LINK_CUR; k++) {
                out.writeLong(lCur[i * LINK_CUR + k]);
            }
        }
        for (int i = 0; i < rankTotal; i++) {
            final RankState r = rankById[i];
            out.writeInt(r.inCount);
            for (int k = 0; k < r.inCount; k++) {
                out.writeInt(r.in[k]);
            }
        }
        rWin.writeTo(out, rankTotal);
        lWin.writeTo(out, linkTotal);
        final long[] seqs = new long[rounds.size()];
        int n = 0;
        for (final CollectiveRound r : rounds.values()) {
            seqs[n++] = r.seq;
        }
        // By sequence number: the map's order depends on its history, the bytes must not.
        java.util.Arrays.sort(seqs);
        out.writeInt(n);
        for (final long seq : seqs) {
            rounds.get(seq).writeTo(out);
        }
    }

    static CommState readFrom(final CheckpointIn in, final int window) {
        final CommState c = new CommState(in.readLong(), window);
        c.hang.readTracker(in);
        c.hangResolvedNs = in.readLong();
        c.stallChanged = in.readBoolean();
        c.updates = in.readInt();
        c.statsValid = in.readBoolean();
        c.linkCount = in.readInt();
        c.rateMedian = in.readDouble();
        c.rateSigma = in.readDouble();
        c.rateMad = in.readDouble();
        c.excessMad = in.readDouble();
        c.excessCount = in.readInt();
        c.troubledLinks = in.readInt();
        c.openSlowLinks = in.readInt();
        c.creditTop = in.readDouble();
        c.creditSecond = in.readDouble();
        c.excessMedian = in.readDouble();
        c.excessSigma = in.readDouble();
        final int ranks = in.readCount();
        for (int i = 0; i < ranks; i++) {
            final RankState r = RankState.readFrom(in, c, i);
            CheckpointIn.check(!c.ranks.containsKey(r.rank), "comm has rank " + r.rank + " twice");
            c.ranks.put(r.rank, r);
            c.addRank(r);
            if (r.host != null) {
                c.setHost(i, r.host);
            }
            c.rExcess[i] = in.readDouble();
            c.rBaseline[i] = in.readDouble();
            c.rWarm[i] = in.readInt();
            c.rTracked[i] = in.readBoolean();
            c.rPeriodStartNs[i] = in.readLong();
        }
        final int links = in.readCount();
        for (int i = 0; i < links; i++) {
            final LinkState l = LinkState.readFrom(in, c, i);
            final long key = AnomalyLifecycle.mix(((long) l.rank << 32) | (l.peer & 0xffffffffL));
            CheckpointIn.check(!c.links.containsKey(key), "comm has link " + l.rank + " → " + l.peer + " twice");
            c.links.put(key, l);
            c.addLink(l);
            c.lLastActiveNs[i] = in.readLong();
            c.lPeerWaitMax[i] = in.readLong();
            c.lNetCount[i] = in.readLong();
            c.lJudged[i] = in.readBoolean();
            c.lRatio[i] = in.readDouble();
            for (int k = 0; k < LJ; k++) {
                c.lJudge[i * LJ + k] = in.readDouble();
            }
            c.lNetNs[i] = in.readLong();
            c.lWarm[i] = in.readInt();
            c.lDegraded[i] = in.readBoolean();
            c.lTracked[i] = in.readBoolean();
            for (int k = 0; k < LINK_CUR; k++) {
                c.lCur[i * LINK_CUR + k] = in.readLong();
            }
        }
        for (int i = 0; i < ranks; i++) {
            final int n = in.readCount();
            for (int k = 0; k < n; k++) {
                c.addIncoming(c.rankById[i], in.readIndex(links));
            }
        }
        c.rWin.readFrom(in, ranks);
        c.lWin.readFrom(in, links);
        final int rounds = in.readCount();
        for (int i = 0; i < rounds; i++) {
            final CollectiveRound r = CollectiveRound.readFrom(in);
            CheckpointIn.check(!c.rounds.containsKey(r.seq), "comm has collective round " + r.seq + " twice");
            c.rounds.put(r.seq, r);
        }
        return c;
    }

    void writeRecvRefs(final CheckpointOut out) {
        for (int i = 0; i < rankTotal; i++) {
            final List<RecvFlow> flows = rankById[i].recvFlows;
            out.writeInt(flows.size());
            for (final RecvFlow f : flows) {
                out.writeRecvFlow(f);
            }
        }
        out.writeInt(stalled.size());
        for (final RecvFlow f : stalled) {
            out.writeRecvFlow(f);
        }
    }

    void readRecvRefs(final CheckpointIn in) {
        for (int i = 0; i < rankTotal; i++) {
            final int n = in.readCount();
            for (int k = 0; k < n; k++) {
                rankById[i].recvFlows.add(in.readRecvFlow());
            }
        }
        final int n = in.readCount();
        for (int k = 0; k < n; k++) {
            stalled.add(in.readRecvFlow());
        }
    }
}
