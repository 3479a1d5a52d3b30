package io.flowscope.window;

import org.agrona.collections.Long2ObjectHashMap;

/**
 * The GPU clock estimates ({@link GpuClock}) by GPU, (host, commHash, rank) of the KernelCh's collective: a pool
 * sized at construction, found through a map that never grows (a key collision takes the next attempt's key), and
 * evicted by each host's sweep when idle for {@code idleTimeout}. Also the host-level lifetime minimum
 * ({@link #sampleHost}), kept in {@link HostState}.
 */
final class GpuClocks {
    private final Pool<GpuClock> pool;
    private final Long2ObjectHashMap<GpuClock> byKey;
    private final EngineCounters counters;

    GpuClocks(final WindowConfig config, final EngineCounters counters) {
        final int clockBuckets = config.gpuClockBuckets;
        pool = new Pool<>(config.maxGpuClocks, () -> new GpuClock(clockBuckets));
        byKey = new Long2ObjectHashMap<>(Math.max(16, config.maxGpuClocks * 2), 0.55f);
        this.counters = counters;
    }

    /** The clock of GPU (host, commHash, rank), created on first use; null when the table is full (counted). */
    GpuClock acquire(final HostState h, final long commHash, final int rank) {
        for (int attempt = 0; ; attempt++) {
            final long key = GpuClock.key(h.hostId, commHash, rank, attempt);
            final GpuClock g = byKey.get(key);
            if (g == null) {
                final GpuClock fresh = pool.acquire();
                if (fresh == null) {
                    counters.droppedGpuClockTableFull++;
                    return null;
                }
                fresh.reset(key, h, commHash, rank);
                byKey.put(key, fresh);
                return fresh;
            }
            if (g.is(h.hostId, commHash, rank)) {
                return g;
            }
        }
    }

    /** The clock of GPU (host, commHash, rank), or null. */
    GpuClock find(final long hostId, final long commHash, final int rank) {
        for (int attempt = 0; ; attempt++) {
            final GpuClock g = byKey.get(GpuClock.key(hostId, commHash, rank, attempt));
            if (g == null || g.is(hostId, commHash, rank)) {
                return g;
            }
        }
    }

    int live() {
        return pool.activeCount();
    }

    /** Evicts host {@code h}'s clocks with no sample for {@code idleTimeoutNs} before {@code nowNs}. */
    void sweep(final HostState h, final long nowNs, final long idleTimeoutNs) {
        for (int i = pool.activeCount() - 1; i >= 0; i--) {
            final GpuClock g = pool.active(i);
            if (g.host == h && nowNs - g.lastHostNs >= idleTimeoutNs) {
                byKey.remove(g.key);
                g.host = null;
                pool.release(g);
            }
        }
    }

    /** A host-level sample (host time − pTimer): the host's lifetime minimum and the next lowest. */
    static void sampleHost(final HostState h, final long sampleNs) {
        if (h.clockSamples == 0) {
            h.clockMinNs = sampleNs;
        } else if (sampleNs < h.clockMinNs) {
            h.clockNextNs = h.clockMinNs;
            h.clockMinNs = sampleNs;
        } else if (h.clockSamples == 1 || sampleNs < h.clockNextNs) {
            h.clockNextNs = sampleNs;
        }
        h.clockSamples++;
    }
}
