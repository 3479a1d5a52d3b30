package io.flowscope.collector;

import java.util.function.LongSupplier;

import io.flowscope.ring.RingDirectory;
import io.flowscope.ring.RingHeader;
import io.flowscope.ring.RingReader;
import io.flowscope.window.ring.RingEventSource;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongHashSet;

/**
 * Tells the engines the time of a host whose rings are drained and silent. Event time drives everything, so a
 * host that stops sending records (every rank waiting on a hung peer: NCCL's proxies wait without a state change)
 * would otherwise never end a period, and the hang detector, which needs time to pass, would never fire.
 * <p>
 * Only rings stamped with this machine's {@code CLOCK_MONOTONIC} qualify: their header's anchors (realtime and
 * monotonic read together at ring creation) must give the same boot instant as this process's clocks, within
 * {@link #SAME_CLOCK_TOLERANCE_NS}. For those, "now" in the ring's clock is {@link System#nanoTime()}. A host is
 * ticked only when every ring of it is drained (a tick ahead of a backlog would make the backlog late), at most
 * once per {@link #TICK_INTERVAL_NS}, to {@code now - GUARD_NS}: a record stamped just before the tick but
 * published after it arrives at most that late. The tick is the simulator's idle tick (a stop of an unknown
 * ProxyOp, {@link Pipeline#idleTick}), an ordinary input call: it is journaled, so a replay ends the same periods
 * and names the same hang.
 */
final class IdleHostClock
{
    static final long GUARD_NS = 2_000_000L;
    static final long TICK_INTERVAL_NS = 1_000_000L;
    static final long SAME_CLOCK_TOLERANCE_NS = 1_000_000_000L;

    private final LongSupplier monotonicNs;
    private final LongSupplier wallMillis;
    private final LongHashSet busyHosts = new LongHashSet();
    private final Long2LongHashMap lastTickNs = new Long2LongHashMap(Long.MIN_VALUE);

    IdleHostClock(final LongSupplier monotonicNs, final LongSupplier wallMillis)
    {
        this.monotonicNs = monotonicNs;
        this.wallMillis = wallMillis;
    }

    /** Ticks the drained hosts of the directory's readers; leaves the pipeline's current host as it was. */
    void tick(final RingDirectory rings, final Pipeline out)
    {
        final int n = rings.attachedCount();
        if (n == 0)
        {
            return;
        }
        final long now = monotonicNs.getAsLong();
        final long bootNs = wallMillis.getAsLong() * 1_000_000L - now;
        busyHosts.clear();
        for (int i = 0; i < n; i++)
        {
            final RingReader r = rings.reader(i);
            if (r.lag() > 0 || !sameClock(r.header(), bootNs))
            {
                busyHosts.add(RingEventSource.hostId(r.header().hostname()));
            }
        }
        final long t = now - GUARD_NS;
        for (int i = 0; i < n; i++)
        {
            final long host = RingEventSource.hostId(rings.reader(i).header().hostname());
            final long last = lastTickNs.get(host);
            if (busyHosts.contains(host) || (last != Long.MIN_VALUE && t - last < TICK_INTERVAL_NS))
            {
                continue;
            }
            final long hostTime = out.hostTimeNs(host);
            // Only a host that sent something, and only forward (its own records may be ahead of the guard).
            if (hostTime == Long.MIN_VALUE || t <= hostTime)
            {
                continue;
            }
            lastTickNs.put(host, t);
            // Leaves the current host as it was: the ring adapter announces a host only when the ring changes.
            out.idleTick(host, t);
        }
    }

    private static boolean sameClock(final RingHeader h, final long bootNs)
    {
        return Math.abs(h.anchorRealtimeNs() - h.anchorMonotonicNs() - bootNs) < SAME_CLOCK_TOLERANCE_NS;
    }
}
