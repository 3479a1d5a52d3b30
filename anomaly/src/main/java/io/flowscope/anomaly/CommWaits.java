package io.flowscope.anomaly;

import io.flowscope.window.FlowSummary;
import io.flowscope.window.Phase;
import org.agrona.collections.Int2ObjectHashMap;

/**
 * One communicator's wait states over one evaluation window, from its step flows' summaries: per link
 * (sender → receiver) the receiver's op entry waits (first steps, 10 → 11) and the sender's network time and bytes
 * (9 → stop); per rank its sends' first-slot GPU waits (8 → 20 / 9). Durations only, so hosts' clocks never meet.
 * The window closes on its anchor host's clock (the first host that reported the comm): {@link #windowEndNs}.
 */
final class CommWaits
{
    /** One direction between two ranks, all channels. */
    static final class Link
    {
        final int sender;
        final int receiver;
        long senderHostId;
        long receiverHostId;
        long entryWaits;
        long entryWaitSumNs;
        long sendSteps;
        long sendNetworkNs;
        long sendBytes;
        /** Baseline network ns per byte (healthy windows), 0 before the first. */
        double baselineNsPerByte;
        int baselineWindows;
        final Episode slow;

        Link(final int sender, final int receiver, final Episode slow)
        {
            this.sender = sender;
            this.receiver = receiver;
            this.slow = slow;
        }

        double entryWaitNs()
        {
            return entryWaits == 0 ? 0 : (double)entryWaitSumNs / entryWaits;
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

    /** One rank's own figures of the window. */
    static final class Rank
    {
        final int rank;
        long hostId;
        long gpuFirstWaits;
        long gpuFirstWaitSumNs;
        final Episode straggling;

        Rank(final int rank, final Episode straggling)
        {
            this.rank = rank;
            this.straggling = straggling;
        }

        double gpuFirstWaitNs()
        {
            return gpuFirstWaits == 0 ? 0 : (double)gpuFirstWaitSumNs / gpuFirstWaits;
        }
    }

    final long commHash;
    final long anchorHostId;
    long windowStartNs;
    long windowEndNs;
    // Iterators not shared (shouldAvoidAllocation = false): a judgement iterates the links inside a loop over them.
    final Int2ObjectHashMap<Rank> ranks = new Int2ObjectHashMap<>(8, 0.65f, false);
    /** Links by sender << 20 | receiver (ranks below 2^20). */
    final org.agrona.collections.Long2ObjectHashMap<Link> links =
        new org.agrona.collections.Long2ObjectHashMap<>(8, 0.65f, false);
    private final AnomalyConfig config;

    CommWaits(final long commHash, final long anchorHostId, final long startNs, final AnomalyConfig config)
    {
        this.commHash = commHash;
        this.anchorHostId = anchorHostId;
        this.config = config;
        this.windowStartNs = startNs;
        this.windowEndNs = startNs + config.waitWindowNs;
    }

    Rank rank(final int r, final long hostId)
    {
        Rank x = ranks.get(r);
        if (x == null)
        {
            x = new Rank(r, new Episode(config.waitOpenAfter, config.waitResolveAfter));
            ranks.put(r, x);
        }
        x.hostId = hostId;
        return x;
    }

    Link link(final int sender, final int receiver)
    {
        final long key = (long)sender << 20 | receiver;
        Link l = links.get(key);
        if (l == null)
        {
            l = new Link(sender, receiver, new Episode(config.linkOpenAfter, config.waitResolveAfter));
            links.put(key, l);
        }
        return l;
    }

    /** Adds one step flow's period summary. */
    void add(final FlowSummary s)
    {
        if (s.rank() < 0 || s.peer() < 0 || s.rank() >= 1 << 20 || s.peer() >= 1 << 20)
        {
            return;
        }
        if (s.isSend())
        {
            final Link l = link(s.rank(), s.peer());
            l.senderHostId = s.hostId();
            final long steps = s.phaseCount(Phase.NETWORK);
            if (steps > 0 && s.bytes() > 0)
            {
                l.sendSteps += steps;
                l.sendNetworkNs += s.phaseSumNs(Phase.NETWORK);
                l.sendBytes += s.bytes();
            }
            if (s.firstSteps() > 0)
            {
                final Rank r = rank(s.rank(), s.hostId());
                r.gpuFirstWaits += s.firstSteps();
                r.gpuFirstWaitSumNs += s.firstStepWaitSumNs();
            }
            else
            {
                rank(s.rank(), s.hostId());
            }
        }
        else
        {
            final Link l = link(s.peer(), s.rank());
            l.receiverHostId = s.hostId();
            rank(s.rank(), s.hostId());
            if (s.firstSteps() > 0)
            {
                l.entryWaits += s.firstSteps();
                l.entryWaitSumNs += s.firstStepWaitSumNs();
            }
        }
    }

    /** Mean entry wait of the receivers of {@code rank}'s data, and their count, into {@code out[0..1]}. */
    void waitsOn(final int rank, final double[] out)
    {
        long n = 0;
        long sum = 0;
        for (final Link l : links.values())
        {
            if (l.sender == rank)
            {
                n += l.entryWaits;
                sum += l.entryWaitSumNs;
            }
        }
        out[0] = n == 0 ? 0 : (double)sum / n;
        out[1] = n;
    }

    /** Mean entry wait of {@code rank} on its senders' data, and its count, into {@code out[0..1]}. */
    void waitsOf(final int rank, final double[] out)
    {
        long n = 0;
        long sum = 0;
        for (final Link l : links.values())
        {
            if (l.receiver == rank)
            {
                n += l.entryWaits;
                sum += l.entryWaitSumNs;
            }
        }
        out[0] = n == 0 ? 0 : (double)sum / n;
        out[1] = n;
    }

    void nextWindow(final long nowNs)
    {
        for (final Link l : links.values())
        {
            l.clearWindow();
        }
        for (final Rank r : ranks.values())
        {
            r.gpuFirstWaits = 0;
            r.gpuFirstWaitSumNs = 0;
        }
        final long w = config.waitWindowNs;
        windowStartNs = nowNs - windowEndNs >= w ? nowNs - Math.floorMod(nowNs - windowEndNs, w) : windowEndNs;
        windowEndNs = windowStartNs + w;
    }
}
