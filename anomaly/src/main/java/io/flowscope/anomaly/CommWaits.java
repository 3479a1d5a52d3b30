package io.flowscope.anomaly;

import io.flowscope.api.summary.FlowSummary;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * One communicator's wait states over one evaluation window, from its links' summaries (the window engine's LINK
 * aggregates, gathered per link in {@link FlowRows}, folded in at the window's end): per link
 * (sender → receiver, all channels) the receiver's op entry waits (first steps, 10 → 11) and the sender's network
 * time and bytes (9 → stop); per rank its sends' first-slot GPU waits (8 → 20 / 9). Durations only, so hosts'
 * clocks never meet. The window closes on its anchor host's clock (the first host that reported the comm):
 * {@link #window}. Ranks are dense rows (arrays by rank), links a list: a window's judgement is one pass over
 * the links ({@link #sumPerRank}) and one over the ranks, O(links + ranks).
 */
final class CommWaits {
    /** One direction between two ranks, all channels. */
    static final class Link {
        final int index;
        final int sender;
        final int receiver;
        long senderHostId;
        long entryWaits;
        long entryWaitSumNs;
        long sendSteps;
        long sendNetworkNs;
        long sendBytes;
        /** Baseline network ns per byte (healthy windows), 0 before the first. */
        double baselineNsPerByte;

        int baselineWindows;
        /** This window's network time per byte over the baseline (NaN when not judged). */
        double ratio;
        /** This window: slow (by itself), and explained by its host's congestion. */
        boolean slowNow;

        boolean explained;
        final Episode slow;

        Link(final int index, final int sender, final int receiver, final Episode slow) {
            this.index = index;
            this.sender = sender;
            this.receiver = receiver;
            this.slow = slow;
        }

        double nsPerByte() {
            return sendBytes == 0 ? 0 : (double) sendNetworkNs / sendBytes;
        }

        /**
         * What carries from one window to the next (the window's ratio, slowness and explanation are worked out
         * afresh by every judgement and not written).
         */
        void writeTo(final CheckpointOut out) {
            out.writeInt(sender);
            out.writeInt(receiver);
            out.writeLong(senderHostId);
            out.writeLong(entryWaits);
            out.writeLong(entryWaitSumNs);
            out.writeLong(sendSteps);
            out.writeLong(sendNetworkNs);
            out.writeLong(sendBytes);
            out.writeDouble(baselineNsPerByte);
            out.writeInt(baselineWindows);
            out.writeInt(carried);
            slow.writeTo(out);
        }

        static Link readFrom(final CheckpointIn in, final int index, final AnomalyConfig config) {
            final int sender = in.readInt();
            final int receiver = in.readInt();
            CheckpointIn.check(
                    sender >= 0 && receiver >= 0 && sender < 1 << 20 && receiver < 1 << 20,
                    "a link " + sender + " → " + receiver);
            final Link l =
                    new Link(index, sender, receiver, new Episode(config.linkOpenAfter, config.waitResolveAfter));
            l.senderHostId = in.readLong();
            l.entryWaits = in.readLong();
            l.entryWaitSumNs = in.readLong();
            l.sendSteps = in.readLong();
            l.sendNetworkNs = in.readLong();
            l.sendBytes = in.readLong();
            l.baselineNsPerByte = in.readDouble();
            l.baselineWindows = in.readInt();
            l.carried = in.readInt();
            l.slow.readFrom(in);
            return l;
        }

        /** Windows this link's entry waits have been carried over (too few ops to judge in one: big collectives). */
        int carried;

        /**
         * The next window: the network figures start again; the entry waits too, unless there were some but
         * fewer than {@code minEntries} (operations longer than a window, e.g. 64 MiB over sockets: ~16 ms each),
         * which are carried over, up to {@code maxCarried} windows.
         */
        void nextWindow(final int minEntries, final int maxCarried) {
            if (entryWaits > 0 && entryWaits < minEntries && carried < maxCarried) {
                carried++;
            } else {
                clearEntries();
            }
            clearNetwork();
        }

        /** Everything gathered dropped (a takeover of a silent anchor's windows). */
        void clearWindow() {
            clearEntries();
            clearNetwork();
        }

        private void clearEntries() {
            entryWaits = 0;
            entryWaitSumNs = 0;
            carried = 0;
        }

        private void clearNetwork() {
            sendSteps = 0;
            sendNetworkNs = 0;
            sendBytes = 0;
        }
    }

    /** Windows entry waits are carried over at most when too few operations end in one (8: 200 ms). */
    static final int MAX_CARRIED_WINDOWS = 8;

    final long commHash;
    /** The host whose clock closes the windows; another one takes over if it falls silent ({@link #reanchor}). */
    long anchorHostId;
    /** Periods of other hosts since this communicator's last window end (see {@link #staleFor}). */
    long otherPeriods;

    private final org.agrona.collections.LongHashSet hosts = new org.agrona.collections.LongHashSet();
    final EvaluationWindow window = new EvaluationWindow();
    /** Ranks seen: rows 0 .. rankRows - 1 of the arrays below (by rank number). */
    int rankRows;

    boolean[] present = new boolean[8];
    long[] hostOf = new long[8];
    long[] gpuFirstWaits = new long[8];
    long[] gpuFirstWaitSumNs = new long[8];
    /** Entry waits of the receivers of each rank's data ("on") and of each rank on its senders' ("of"). */
    long[] onCount = new long[8];

    long[] onSumNs = new long[8];
    long[] ofCount = new long[8];
    long[] ofSumNs = new long[8];
    Episode[] straggling = new Episode[8];
    /**
     * Each rank's usual entry wait on its senders ("of"), over its windows judged healthy with no straggling under
     * way, and how many: a window in which it waits far beyond that while its peers wait on it too is a stall of
     * the whole communicator, which shows nothing of who is late.
     */
    double[] ownWaitBaselineNs = new double[8];

    int[] ownWaitWindows = new int[8];
    final List<Link> links = new ArrayList<>();
    /** The flow rows ({@link FlowRows}) of this communicator's link summaries. */
    private int[] rows = new int[16];

    private int rowCount;
    /** Index among the detector's communicators (a flow row's META carries it). */
    final int index;

    private final Long2ObjectHashMap<Link> linkByKey = new Long2ObjectHashMap<>();
    /** Per sender host: its congestion episode (links of several of its ranks slow together), made on first use. */
    private final Long2ObjectHashMap<Episode> congestionByHost = new Long2ObjectHashMap<>();
    /**
     * Those hosts in the order their episodes were made: the order they are settled in (and their anomalies
     * resolved), which must not depend on the map's capacity (a restored engine's maps are sized afresh).
     */
    private final org.agrona.collections.LongArrayList congestionHosts = new org.agrona.collections.LongArrayList();
    /** The hosts found congested this window ({@link #congestion}), the others' episodes settled after. */
    private final org.agrona.collections.LongHashSet congestedNow = new org.agrona.collections.LongHashSet();

    /** Host {@code hostId}'s congestion episode, found congested this window. */
    Episode congestion(final long hostId, final AnomalyConfig config) {
        Episode e = congestionByHost.get(hostId);
        if (e == null) {
            e = new Episode(config.linkOpenAfter, config.waitResolveAfter);
            congestionByHost.put(hostId, e);
            congestionHosts.addLong(hostId);
        }
        congestedNow.add(hostId);
        return e;
    }

    /** The window's end for the congestion episodes: those of hosts not congested in it count a good window. */
    void settleCongestion(final Episode.Publisher publisher, final java.util.function.LongUnaryOperator hostNow) {
        for (int i = 0; i < congestionHosts.size(); i++) {
            final long hostId = congestionHosts.getLong(i);
            if (!congestedNow.contains(hostId)) {
                congestionByHost.get(hostId).good(publisher, hostNow.applyAsLong(hostId));
            }
        }
        congestedNow.clear();
    }

    private final AnomalyConfig config;

    CommWaits(
            final int index,
            final long commHash,
            final long anchorHostId,
            final long startNs,
            final AnomalyConfig config) {
        this.index = index;
        this.commHash = commHash;
        this.anchorHostId = anchorHostId;
        this.config = config;
        window.start(startNs, config.waitWindowNs);
    }

    /** Makes {@code rank}'s row exist (on {@code hostId}); ranks below 2^20. */
    void rank(final int rank, final long hostId) {
        if (rank >= present.length) {
            final int n = Math.max(rank + 1, present.length * 2);
            present = Arrays.copyOf(present, n);
            hostOf = Arrays.copyOf(hostOf, n);
            gpuFirstWaits = Arrays.copyOf(gpuFirstWaits, n);
            gpuFirstWaitSumNs = Arrays.copyOf(gpuFirstWaitSumNs, n);
            onCount = Arrays.copyOf(onCount, n);
            onSumNs = Arrays.copyOf(onSumNs, n);
            ofCount = Arrays.copyOf(ofCount, n);
            ofSumNs = Arrays.copyOf(ofSumNs, n);
            straggling = Arrays.copyOf(straggling, n);
            ownWaitBaselineNs = Arrays.copyOf(ownWaitBaselineNs, n);
            ownWaitWindows = Arrays.copyOf(ownWaitWindows, n);
        }
        if (!present[rank]) {
            present[rank] = true;
            straggling[rank] = new Episode(config.waitOpenAfter, config.waitResolveAfter);
            rankRows = Math.max(rankRows, rank + 1);
        }
        hostOf[rank] = hostId;
    }

    /** The link sender → receiver, made on first use (the flow's cache in {@link WaitStateDetector} saves the lookup). */
    Link link(final int sender, final int receiver) {
        final long key = (long) sender << 20 | receiver;
        Link l = linkByKey.get(key);
        if (l == null) {
            l = new Link(links.size(), sender, receiver, new Episode(config.linkOpenAfter, config.waitResolveAfter));
            linkByKey.put(key, l);
            links.add(l);
        }
        return l;
    }

    static boolean validRanks(final FlowSummary s) {
        return s.rank() >= 0 && s.peer() >= 0 && s.rank() < 1 << 20 && s.peer() < 1 << 20;
    }

    /**
     * Folds this communicator's flow rows ({@link FlowRows}: what its step flows' summaries added since the last
     * window) into its links and ranks, and clears them.
     */
    void fold(final FlowRows flows) {
        final long[] t = flows.t;
        for (int i = 0; i < rowCount; i++) {
            final int row = rows[i];
            final int b = FlowRows.base(row);
            final long meta = flows.meta[row];
            final Link l = links.get(FlowRows.link(meta));
            if (FlowRows.isSend(meta)) {
                // Periods with bytes and network time both (a stop without its 9 has bytes and no time).
                final long steps = FlowRows.steps(t, b);
                if (steps > 0 && t[b + FlowRows.BYTES] > 0) {
                    l.sendSteps += steps;
                    l.sendNetworkNs += t[b + FlowRows.NETWORK_NS];
                    l.sendBytes += t[b + FlowRows.BYTES];
                }
                final int rank = flows.rank[row];
                gpuFirstWaits[rank] += FlowRows.firstSteps(t, b);
                gpuFirstWaitSumNs[rank] += FlowRows.firstWaitNs(t, b);
            } else {
                l.entryWaits += FlowRows.firstSteps(t, b);
                l.entryWaitSumNs += FlowRows.firstWaitNs(t, b);
            }
            FlowRows.clearSums(t, b);
        }
    }

    /** A host reports this communicator's links. */
    void host(final long hostId) {
        hosts.add(hostId);
    }

    /**
     * Whether the anchor host has fallen silent: the other hosts ended {@code periods} periods each since its last
     * window end (its ranks gone, its rings no longer drained) and the rows would otherwise add up forever.
     */
    boolean staleFor(final int periods) {
        return otherPeriods > (long) periods * Math.max(1, hosts.size() - 1);
    }

    /** {@code hostId} takes the windows over from a silent anchor: what was gathered meanwhile is dropped. */
    void reanchor(final FlowRows flows, final long hostId, final long nowNs) {
        fold(flows);
        for (int i = 0; i < links.size(); i++) {
            links.get(i).clearWindow();
        }
        Arrays.fill(gpuFirstWaits, 0, rankRows, 0);
        Arrays.fill(gpuFirstWaitSumNs, 0, rankRows, 0);
        anchorHostId = hostId;
        window.start(nowNs, config.waitWindowNs);
        otherPeriods = 0;
    }

    /** Adds a flow row of this communicator. */
    void addRow(final int row) {
        if (rowCount == rows.length) {
            rows = Arrays.copyOf(rows, rowCount * 2);
        }
        rows[rowCount++] = row;
    }

    /** The window's entry waits per rank, on and of it, from its links: one pass. */
    void sumPerRank() {
        Arrays.fill(onCount, 0, rankRows, 0);
        Arrays.fill(onSumNs, 0, rankRows, 0);
        Arrays.fill(ofCount, 0, rankRows, 0);
        Arrays.fill(ofSumNs, 0, rankRows, 0);
        for (int i = 0; i < links.size(); i++) {
            final Link l = links.get(i);
            onCount[l.sender] += l.entryWaits;
            onSumNs[l.sender] += l.entryWaitSumNs;
            ofCount[l.receiver] += l.entryWaits;
            ofSumNs[l.receiver] += l.entryWaitSumNs;
        }
    }

    double waitsOnNs(final int rank) {
        return onCount[rank] == 0 ? 0 : (double) onSumNs[rank] / onCount[rank];
    }

    double waitsOfNs(final int rank) {
        return ofCount[rank] == 0 ? 0 : (double) ofSumNs[rank] / ofCount[rank];
    }

    double gpuFirstWaitNs(final int rank) {
        return gpuFirstWaits[rank] == 0 ? 0 : (double) gpuFirstWaitSumNs[rank] / gpuFirstWaits[rank];
    }

    void nextWindow(final long nowNs) {
        otherPeriods = 0;
        for (int i = 0; i < links.size(); i++) {
            links.get(i).nextWindow(config.minEntrySteps, MAX_CARRIED_WINDOWS);
        }
        for (int r = 0; r < rankRows; r++) {
            // A rank's own first-slot waits go with its entry waits: carried while those are too few to judge.
            if (!(onCount[r] > 0 && onCount[r] < config.minEntrySteps)) {
                gpuFirstWaits[r] = 0;
                gpuFirstWaitSumNs[r] = 0;
            }
        }
        window.next(nowNs, config.waitWindowNs);
    }

    /** A healthy window of {@code rank} with no straggling under way: its entry wait moves its usual one. */
    void learnOwnWait(final int rank, final int baselinePeriods) {
        if (ofCount[rank] == 0) {
            return;
        }
        final int n = ownWaitWindows[rank] < Integer.MAX_VALUE ? ++ownWaitWindows[rank] : ownWaitWindows[rank];
        ownWaitBaselineNs[rank] += (waitsOfNs(rank) - ownWaitBaselineNs[rank]) / Math.min(n, baselinePeriods);
    }

    /**
     * Whether this window {@code rank}'s peers waited on it and it waited on them, both beyond {@code entryNs} and
     * it beyond twice its usual wait: the whole communicator stalled (a host's hiccup), no sign of who is late.
     */
    boolean stalledAlike(final int rank, final double entryNs, final int warmupWindows) {
        return ownWaitWindows[rank] >= warmupWindows
                && ofCount[rank] > 0
                && waitsOnNs(rank) >= entryNs
                && waitsOfNs(rank) >= Math.max(entryNs, 2 * ownWaitBaselineNs[rank]);
    }

    /** The ranks' usual entry waits, appended to the wait-state section (a checkpoint without them: unknown). */
    void writeOwnWaits(final CheckpointOut out) {
        out.writeInt(present.length);
        for (int r = 0; r < present.length; r++) {
            out.writeDouble(ownWaitBaselineNs[r]);
            out.writeInt(ownWaitWindows[r]);
        }
    }

    void readOwnWaits(final CheckpointIn in) {
        final int n = in.readCount();
        CheckpointIn.check(n == present.length, "usual entry waits of " + n + " ranks, " + present.length + " rows");
        for (int r = 0; r < n; r++) {
            ownWaitBaselineNs[r] = in.readDouble();
            ownWaitWindows[r] = in.readInt();
            CheckpointIn.check(ownWaitWindows[r] >= 0, "a rank's usual entry wait over " + ownWaitWindows[r]);
        }
    }

    /*
     * Checkpoint: everything but the per-rank sums of one judgement's pass (onCount … ofSumNs are written all the
     * same: a link's receiver that never reported stays out of the clearing, so its entries carry over), the
     * congestion hosts of the window under judgement (empty between judgements) and the link lookup (rebuilt).
     */

    void writeTo(final CheckpointOut out) {
        out.writeLong(commHash);
        out.writeLong(anchorHostId);
        out.writeLong(otherPeriods);
        out.writeSet(hosts);
        out.writeLong(window.startNs);
        out.writeLong(window.endNs);
        out.writeInt(rankRows);
        out.writeInt(present.length);
        for (int r = 0; r < present.length; r++) {
            out.writeBoolean(present[r]);
            out.writeLong(hostOf[r]);
            out.writeLong(gpuFirstWaits[r]);
            out.writeLong(gpuFirstWaitSumNs[r]);
            out.writeLong(onCount[r]);
            out.writeLong(onSumNs[r]);
            out.writeLong(ofCount[r]);
            out.writeLong(ofSumNs[r]);
            if (present[r]) {
                straggling[r].writeTo(out);
            }
        }
        out.writeInt(links.size());
        for (final Link l : links) {
            l.writeTo(out);
        }
        out.writeInt(rowCount);
        for (int i = 0; i < rowCount; i++) {
            out.writeInt(rows[i]);
        }
        out.writeInt(congestionHosts.size());
        for (int i = 0; i < congestionHosts.size(); i++) {
            final long hostId = congestionHosts.getLong(i);
            out.writeLong(hostId);
            congestionByHost.get(hostId).writeTo(out);
        }
    }

    /** Communicator {@code index}, over {@code flows} (read already). */
    static CommWaits readFrom(
            final CheckpointIn in, final int index, final AnomalyConfig config, final FlowRows flows) {
        final long commHash = in.readLong();
        final CommWaits c = new CommWaits(index, commHash, in.readLong(), 0, config);
        c.otherPeriods = in.readLong();
        in.readSet(c.hosts);
        c.window.startNs = in.readLong();
        c.window.endNs = in.readLong();
        c.rankRows = in.readInt();
        final int n = in.readCount();
        CheckpointIn.check(c.rankRows >= 0 && c.rankRows <= n, "rank rows " + c.rankRows + " of " + n);
        c.present = new boolean[n];
        c.hostOf = new long[n];
        c.gpuFirstWaits = new long[n];
        c.gpuFirstWaitSumNs = new long[n];
        c.onCount = new long[n];
        c.onSumNs = new long[n];
        c.ofCount = new long[n];
        c.ofSumNs = new long[n];
        c.straggling = new Episode[n];
        c.ownWaitBaselineNs = new double[n];
        c.ownWaitWindows = new int[n];
        for (int r = 0; r < n; r++) {
            c.present[r] = in.readBoolean();
            c.hostOf[r] = in.readLong();
            c.gpuFirstWaits[r] = in.readLong();
            c.gpuFirstWaitSumNs[r] = in.readLong();
            c.onCount[r] = in.readLong();
            c.onSumNs[r] = in.readLong();
            c.ofCount[r] = in.readLong();
            c.ofSumNs[r] = in.readLong();
            if (c.present[r]) {
                c.straggling[r] = new Episode(config.waitOpenAfter, config.waitResolveAfter);
                c.straggling[r].readFrom(in);
            }
        }
        final int links = in.readCount();
        for (int i = 0; i < links; i++) {
            final Link l = Link.readFrom(in, i, config);
            final long key = (long) l.sender << 20 | l.receiver;
            CheckpointIn.check(!c.linkByKey.containsKey(key), "link " + l.sender + " → " + l.receiver + " twice");
            c.linkByKey.put(key, l);
            c.links.add(l);
        }
        final int rowCount = in.readCount();
        for (int i = 0; i < rowCount; i++) {
            final int row = in.readIndex(flows.rows);
            CheckpointIn.check(
                    FlowRows.link(flows.meta[row]) < links, "a flow row of link " + FlowRows.link(flows.meta[row]));
            CheckpointIn.check(flows.rank[row] >= 0 && flows.rank[row] < n, "a flow row of rank " + flows.rank[row]);
            c.addRow(row);
        }
        final int congested = in.readCount();
        for (int i = 0; i < congested; i++) {
            final long hostId = in.readLong();
            CheckpointIn.check(!c.congestionByHost.containsKey(hostId), "a congestion episode of a host twice");
            final Episode e = c.congestion(hostId, config);
            e.readFrom(in);
        }
        c.congestedNow.clear();
        return c;
    }
}
