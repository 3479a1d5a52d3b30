package io.flowscope.anomaly;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.flowscope.window.FlowSummary;
import io.flowscope.window.Phase;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * One communicator's wait states over one evaluation window, from its step flows' summaries: per link
 * (sender → receiver, all channels) the receiver's op entry waits (first steps, 10 → 11) and the sender's network
 * time and bytes (9 → stop); per rank its sends' first-slot GPU waits (8 → 20 / 9). Durations only, so hosts'
 * clocks never meet. The window closes on its anchor host's clock (the first host that reported the comm):
 * {@link #windowEndNs}. Ranks are dense rows (arrays by rank), links a list: a window's judgement is one pass over
 * the links ({@link #sumPerRank}) and one over the ranks, O(links + ranks).
 */
final class CommWaits
{
    /** One direction between two ranks, all channels. */
    static final class Link
    {
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
        final Episode slow;

        Link(final int sender, final int receiver, final Episode slow)
        {
            this.sender = sender;
            this.receiver = receiver;
            this.slow = slow;
        }

        double nsPerByte()
        {
            return sendBytes == 0 ? 0 : (double)sendNetworkNs / sendBytes;
        }

        void clearWindow()
        {
            entryWaits = 0;
            entryWaitSumNs = 0;
            sendSteps = 0;
            sendNetworkNs = 0;
            sendBytes = 0;
        }
    }

    final long commHash;
    final long anchorHostId;
    long windowStartNs;
    long windowEndNs;
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
    final List<Link> links = new ArrayList<>();
    private final Long2ObjectHashMap<Link> linkByKey = new Long2ObjectHashMap<>();
    private final AnomalyConfig config;

    CommWaits(final long commHash, final long anchorHostId, final long startNs, final AnomalyConfig config)
    {
        this.commHash = commHash;
        this.anchorHostId = anchorHostId;
        this.config = config;
        this.windowStartNs = startNs;
        this.windowEndNs = startNs + config.waitWindowNs;
    }

    /** Makes {@code rank}'s row exist (on {@code hostId}); ranks below 2^20. */
    void rank(final int rank, final long hostId)
    {
        if (rank >= present.length)
        {
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
        }
        if (!present[rank])
        {
            present[rank] = true;
            straggling[rank] = new Episode(config.waitOpenAfter, config.waitResolveAfter);
            rankRows = Math.max(rankRows, rank + 1);
        }
        hostOf[rank] = hostId;
    }

    /** The link sender → receiver, made on first use (the flow's cache in {@link WaitStateDetector} saves the lookup). */
    Link link(final int sender, final int receiver)
    {
        final long key = (long)sender << 20 | receiver;
        Link l = linkByKey.get(key);
        if (l == null)
        {
            l = new Link(sender, receiver, new Episode(config.linkOpenAfter, config.waitResolveAfter));
            linkByKey.put(key, l);
            links.add(l);
        }
        return l;
    }

    static boolean validRanks(final FlowSummary s)
    {
        return s.rank() >= 0 && s.peer() >= 0 && s.rank() < 1 << 20 && s.peer() < 1 << 20;
    }

    /** Adds one step flow's period summary to its link (and, for a send's first steps, to its rank). */
    void add(final FlowSummary s, final Link l)
    {
        if (s.isSend())
        {
            final long steps = s.phaseCount(Phase.NETWORK);
            if (steps > 0 && s.bytes() > 0)
            {
                l.sendSteps += steps;
                l.sendNetworkNs += s.phaseSumNs(Phase.NETWORK);
                l.sendBytes += s.bytes();
            }
            if (s.firstSteps() > 0)
            {
                gpuFirstWaits[s.rank()] += s.firstSteps();
                gpuFirstWaitSumNs[s.rank()] += s.firstStepWaitSumNs();
            }
        }
        else if (s.firstSteps() > 0)
        {
            l.entryWaits += s.firstSteps();
            l.entryWaitSumNs += s.firstStepWaitSumNs();
        }
    }

    /** The window's entry waits per rank, on and of it, from its links: one pass. */
    void sumPerRank()
    {
        Arrays.fill(onCount, 0, rankRows, 0);
        Arrays.fill(onSumNs, 0, rankRows, 0);
        Arrays.fill(ofCount, 0, rankRows, 0);
        Arrays.fill(ofSumNs, 0, rankRows, 0);
        for (int i = 0; i < links.size(); i++)
        {
            final Link l = links.get(i);
            onCount[l.sender] += l.entryWaits;
            onSumNs[l.sender] += l.entryWaitSumNs;
            ofCount[l.receiver] += l.entryWaits;
            ofSumNs[l.receiver] += l.entryWaitSumNs;
        }
    }

    double waitsOnNs(final int rank)
    {
        return onCount[rank] == 0 ? 0 : (double)onSumNs[rank] / onCount[rank];
    }

    double waitsOfNs(final int rank)
    {
        return ofCount[rank] == 0 ? 0 : (double)ofSumNs[rank] / ofCount[rank];
    }

    double gpuFirstWaitNs(final int rank)
    {
        return gpuFirstWaits[rank] == 0 ? 0 : (double)gpuFirstWaitSumNs[rank] / gpuFirstWaits[rank];
    }

    void nextWindow(final long nowNs)
    {
        for (int i = 0; i < links.size(); i++)
        {
            links.get(i).clearWindow();
        }
        Arrays.fill(gpuFirstWaits, 0, rankRows, 0);
        Arrays.fill(gpuFirstWaitSumNs, 0, rankRows, 0);
        final long w = config.waitWindowNs;
        windowStartNs = nowNs - windowEndNs >= w ? nowNs - Math.floorMod(nowNs - windowEndNs, w) : windowEndNs;
        windowEndNs = windowStartNs + w;
    }
}
