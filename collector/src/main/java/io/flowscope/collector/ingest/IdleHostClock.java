package io.flowscope.collector.ingest;

import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.ring.RingDirectory;
import io.flowscope.ring.RingHeader;
import io.flowscope.ring.RingReader;
import java.util.function.LongSupplier;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongHashSet;

/**
 * Tells the engines the time of a host whose rings are drained and silent. Event time drives everything, so a
 * host that stops sending records (every rank waiting on a hung peer: NCCL's proxies wait without a state change)
 * would otherwise never end a period, and the hang detector, which needs time to pass, would never fire.
 * <p>
 * The host's time is extrapolated from its last record: the record's time plus the time elapsed on this
 * machine's monotonic clock since the drain that brought it, minus {@link #GUARD_NS}. Only durations cross from
 * one clock to the other, so a producer clock that runs off this machine's (the plugin's TSC scaled at ring
 * creation) costs only its drift over the silence. Only rings of producers on this machine qualify: their
 * header's anchors (realtime and monotonic read together at ring creation) must give this process's boot
 * instant within {@link #SAME_MACHINE_TOLERANCE_NS} (a test's or a copied ring's do not). A host is ticked only
 * when every ring of it is drained (a tick ahead of a backlog would make the backlog late). Ticks are every
 * period early in a silence and sparser as it lasts ({@link #intervalNs}), so an idle node does not fill its
 * journal with them. The tick is {@link Pipeline#advanceTo}, the input interface's call for an idle host (no
 * event): it is journaled, so a replay ends the same periods and names the same hang.
 */
final class IdleHostClock {
    static final long GUARD_NS = 2_000_000L;
    static final long MIN_INTERVAL_NS = 1_000_000L;
    static final long MAX_INTERVAL_NS = 100_000_000L;
    static final long SAME_MACHINE_TOLERANCE_NS = 1_000_000_000L;

    private final LongSupplier monotonicNs;
    private final LongSupplier wallMillis;
    private final LongHashSet busyHosts = new LongHashSet();
    /** The host id of each attached reader, this poll (hashed once per reader, not once per pass). */
    private long[] readerHosts = new long[8];
    /** Per host: the latest host time a record (not a tick) gave, and this machine's clock when it was seen. */
    private final Long2LongHashMap recordTimeNs = new Long2LongHashMap(Long.MIN_VALUE);

    private final Long2LongHashMap seenAtNs = new Long2LongHashMap(Long.MIN_VALUE);
    private final Long2LongHashMap lastTickNs = new Long2LongHashMap(Long.MIN_VALUE);

    IdleHostClock(final LongSupplier monotonicNs, final LongSupplier wallMillis) {
        this.monotonicNs = monotonicNs;
        this.wallMillis = wallMillis;
    }

    /** Ticks the drained, silent hosts of the directory's readers; leaves the pipeline's current host as it was. */
    void tick(final RingDirectory rings, final Pipeline out) {
        final int n = rings.attachedCount();
        if (n == 0) {
            return;
        }
        final long now = monotonicNs.getAsLong();
        final long bootNs = wallMillis.getAsLong() * 1_000_000L - now;
        busyHosts.clear();
        if (readerHosts.length < n) {
            readerHosts = new long[Math.max(n, 2 * readerHosts.length)];
        }
        for (int i = 0; i < n; i++) {
            final RingReader r = rings.reader(i);
            readerHosts[i] = RingEventSource.hostId(r.header().hostname());
            if (r.lag() > 0 || !sameMachine(r.header(), bootNs)) {
                busyHosts.add(readerHosts[i]);
            }
        }
        for (int i = 0; i < n; i++) {
            final long host = readerHosts[i];
            final long hostTime = out.hostTimeNs(host);
            if (busyHosts.contains(host) || hostTime == Long.MIN_VALUE) {
                continue;
            }
            final long lastTick = lastTickNs.get(host);
            if (hostTime != lastTick && hostTime != recordTimeNs.get(host)) {
                // a record moved the host's time since the last look
                recordTimeNs.put(host, hostTime);
                seenAtNs.put(host, now);
                continue;
            }
            final long silence = now - seenAtNs.get(host);
            final long t = recordTimeNs.get(host) + silence - GUARD_NS;
            if (t <= hostTime || (lastTick != Long.MIN_VALUE && t - lastTick < intervalNs(silence))) {
                continue;
            }
            lastTickNs.put(host, t);
            out.advanceTo(host, t);
        }
    }

    /** A tick every period for the first 10 ms of a silence, then a tenth of the silence, at most 100 ms. */
    static long intervalNs(final long silenceNs) {
        return Math.max(MIN_INTERVAL_NS, Math.min(MAX_INTERVAL_NS, silenceNs / 10));
    }

    private static boolean sameMachine(final RingHeader h, final long bootNs) {
        return Math.abs(h.anchorRealtimeNs() - h.anchorMonotonicNs() - bootNs) < SAME_MACHINE_TOLERANCE_NS;
    }
}
