package io.flowscope.anomaly;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

import io.flowscope.window.FlowSummary;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Stragglers (SLOW_NODE) and slow links (SLOW_LINK) from NCCL's proxy wait states, per communicator and
 * evaluation window ({@link CommWaits}); grounded in real traces (anomaly/README.md, "Wait states").
 * <ul>
 * <li><b>Straggler.</b> The ranks of an operation meet at its first step. A rank that arrives late, because its CPU
 * calls late or its GPU is busy, makes the receivers of its data wait at their first step (10 → 11) while its own
 * first receives find their data already there. Rank r is late when the entry wait of its receivers exceeds its own
 * by {@code slowNodeEntryNs} and by the factor {@code slowNodeEntryRatio}: no cross-rank statistics, so a 2-rank
 * communicator is judged like a 4,096-rank one. The excess is what r costs each operation.</li>
 * <li><b>Slow link.</b> The sender's network time per byte (9 → stop) of one direction rises over its own
 * healthy baseline and over the other links of the communicator (a host-wide slowdown moves them all), while
 * neither end straggles (a late rank bursts its sends, which queue on the connection and look slow).</li>
 * </ul>
 */
final class WaitStateDetector
{
    private final AnomalyConfig config;
    private final Episode.Publisher publisher;
    private final Long2ObjectHashMap<CommWaits> comms = new Long2ObjectHashMap<>();
    /** Each host's latest period end: anomaly times are on the culprit's host clock. */
    private final Long2LongHashMap hostNow = new Long2LongHashMap(Long.MIN_VALUE);
    private final double[] on = new double[2];
    private final double[] of = new double[2];
    private final List<CommWaits.Link> judged = new ArrayList<>();
    private final List<Double> ratios = new ArrayList<>();

    WaitStateDetector(final AnomalyConfig config, final Episode.Publisher publisher)
    {
        this.config = config;
        this.publisher = publisher;
    }

    void onSummary(final FlowSummary s)
    {
        if (s.kind() != FlowSummary.KIND_STEP)
        {
            return;
        }
        final long end = s.periodEndNs();
        if (end - hostNow.get(s.hostId()) > 0 || hostNow.get(s.hostId()) == Long.MIN_VALUE)
        {
            hostNow.put(s.hostId(), end);
        }
        CommWaits c = comms.get(s.commHash());
        if (c == null)
        {
            c = new CommWaits(s.commHash(), s.hostId(), s.periodStartNs(), config);
            comms.put(s.commHash(), c);
        }
        if (s.hostId() == c.anchorHostId && s.periodStartNs() - c.windowEndNs >= 0)
        {
            evaluate(c, s.periodStartNs());
        }
        c.add(s);
    }

    /** A host's time moved on with no summary: windows anchored there close (empty ones help resolve). */
    void advanceTo(final long hostId, final long timeNs)
    {
        if (hostNow.get(hostId) == Long.MIN_VALUE || timeNs - hostNow.get(hostId) > 0)
        {
            hostNow.put(hostId, timeNs);
        }
        for (final CommWaits c : comms.values())
        {
            if (c.anchorHostId == hostId && timeNs - c.windowEndNs >= 0)
            {
                evaluate(c, timeNs);
            }
        }
    }

    private void evaluate(final CommWaits c, final long nowNs)
    {
        final long anchorEnd = c.windowEndNs;
        for (final CommWaits.Rank r : c.ranks.values())
        {
            judgeRank(c, r, anchorEnd);
        }
        judgeLinks(c, anchorEnd);
        c.nextWindow(nowNs);
    }

    /** Whether rank r's receivers waited on it at entry, this window: its lateness ns, or NaN when too few ops. */
    private double lateness(final CommWaits c, final int rank)
    {
        c.waitsOn(rank, on);
        c.waitsOf(rank, of);
        if (on[1] < config.minEntrySteps || of[1] < config.minEntrySteps)
        {
            return Double.NaN;
        }
        return on[0] - of[0];
    }

    private boolean straggles(final CommWaits c, final int rank)
    {
        final double late = lateness(c, rank);
        return late >= config.slowNodeEntryNs && on[0] >= config.slowNodeEntryRatio * Math.max(of[0], 1.0);
    }

    private void judgeRank(final CommWaits c, final CommWaits.Rank r, final long anchorEnd)
    {
        final long now = hostNow.get(r.hostId);
        if (!straggles(c, r.rank))
        {
            r.straggling.good(publisher, now);
            return;
        }
        final double late = on[0] - of[0];
        if (!r.straggling.bad(c.windowStartNs))
        {
            return;
        }
        final double ownGpu = r.gpuFirstWaitNs();
        final boolean gpu = ownGpu >= late / 2;
        final SortedMap<String, Double> ev = new TreeMap<>();
        ev.put("latenessNsPerOp", late);
        ev.put("peersEntryWaitNs", on[0]);
        ev.put("ownEntryWaitNs", of[0]);
        ev.put("ownGpuFirstSlotWaitNs", ownGpu);
        ev.put("operations", on[1]);
        final String summary = String.format("rank %d holds up comm 0x%x: at each operation's start its peers "
            + "wait %.2f ms for its first data, it waits %.2f ms for theirs (%.2f ms more, %d operations; %s)",
            r.rank, c.commHash, on[0] / 1e6, of[0] / 1e6, late / 1e6, (long)on[1], gpu ? String.format("its own GPU takes %.2f ms to its first data", ownGpu / 1e6)
                : "it arrives late: its CPU calls late, its GPU is not the cause");
        final Severity sev = late >= config.slowNodeCriticalNs ? Severity.CRITICAL : Severity.WARNING;
        // The onset on the culprit's clock: the first bad window's start, translated by its age.
        final long start = now - (anchorEnd - r.straggling.firstBadStartNs());
        r.straggling.publish(publisher, AnomalyKind.SLOW_NODE, Culprit.rank(r.hostId, c.commHash, r.rank), sev,
            start, now, ev, summary);
    }

    private void judgeLinks(final CommWaits c, final long anchorEnd)
    {
        judged.clear();
        for (final CommWaits.Link l : c.links.values())
        {
            if (l.sendSteps >= config.minLinkSteps && l.sendBytes > 0)
            {
                judged.add(l);
            }
        }
        // The ratio of every link with a baseline, for the communicator's median.
        ratios.clear();
        for (final CommWaits.Link l : judged)
        {
            if (l.baselineWindows >= config.linkWarmupWindows)
            {
                ratios.add(l.nsPerByte() / l.baselineNsPerByte);
            }
        }
        for (final CommWaits.Link l : c.links.values())
        {
            final long now = hostNow.get(l.senderHostId);
            if (!judged.contains(l))
            {
                l.slow.good(publisher, now);
                continue;
            }
            final boolean endsStraggle = straggles(c, l.sender) || straggles(c, l.receiver);
            final double x = l.nsPerByte();
            if (l.baselineWindows < config.linkWarmupWindows)
            {
                if (!endsStraggle)
                {
                    l.baselineNsPerByte = (l.baselineNsPerByte * l.baselineWindows + x) / (l.baselineWindows + 1);
                    l.baselineWindows++;
                }
                continue;
            }
            final double ratio = x / l.baselineNsPerByte;
            final double others = medianOfOthers(ratio);
            final double relative = Double.isNaN(others) ? ratio : ratio / others;
            final boolean bad = !endsStraggle && ratio >= config.slowLinkRatio && relative >= config.slowLinkRelative;
            if (!bad)
            {
                if (!endsStraggle && ratio < config.slowLinkRatio)
                {
                    // A healthy window moves the baseline slowly (drift of the host, other jobs).
                    l.baselineNsPerByte += (x - l.baselineNsPerByte) / config.baselinePeriods;
                }
                l.slow.good(publisher, now);
                continue;
            }
            if (!l.slow.bad(c.windowStartNs))
            {
                continue;
            }
            final SortedMap<String, Double> ev = new TreeMap<>();
            ev.put("networkNsPerMiB", x * (1 << 20));
            ev.put("baselineNetworkNsPerMiB", l.baselineNsPerByte * (1 << 20));
            ev.put("fractionOfBaseline", 1 / ratio);
            ev.put("othersRatio", Double.isNaN(others) ? 1.0 : others);
            ev.put("bandwidthBytesPerSecond", 1e9 / x);
            ev.put("baselineBytesPerSecond", 1e9 / l.baselineNsPerByte);
            ev.put("steps", (double)l.sendSteps);
            final String summary = String.format("link rank %d → %d of comm 0x%x moves data at %.0f%% of its "
                + "baseline (%.2f GB/s against %.2f GB/s; the communicator's other links at %.0f%%), both ends on "
                + "time", l.sender, l.receiver, c.commHash, 100 / ratio, 1 / x, 1 / l.baselineNsPerByte,
                100 / (Double.isNaN(others) ? 1.0 : others));
            final Severity sev = ratio >= 2 ? Severity.CRITICAL : Severity.WARNING;
            l.slow.publish(publisher, AnomalyKind.SLOW_LINK, Culprit.link(l.senderHostId, c.commHash, l.sender,
                l.receiver), sev, now - (anchorEnd - l.slow.firstBadStartNs()), now, ev, summary);
        }
    }

    /** The median of the communicator's ratios without one instance of {@code own}; NaN when none is left. */
    private double medianOfOthers(final double own)
    {
        final List<Double> rest = new ArrayList<>(ratios);
        rest.remove(own);
        if (rest.isEmpty())
        {
            return Double.NaN;
        }
        Collections.sort(rest);
        final int n = rest.size();
        return n % 2 == 1 ? rest.get(n / 2) : (rest.get(n / 2 - 1) + rest.get(n / 2)) / 2;
    }
}
