package io.flowscope.window;

import org.agrona.collections.Long2ObjectHashMap;

/**
 * QP flows, (host, NIC device, qpNum), found for each work request start: a direct-mapped cache by a hash of the
 * identity in front of the engine's flow map (shared with the step flows, as is the flow pool and its eviction). A
 * cache entry counts while its flow's generation matches the one cached, so an evicted and reused flow is never
 * taken for the QP it served before.
 */
final class QpFlows {
    /**
     * 8,192 slots: a node's few hundred QPs then rarely share one (with 1,024, ~8 of the benchmark's 128 QP pairs
     * did, and each of their work requests took the flow map's path).
     */
    private static final int CACHE_SIZE = 8192;

    private final FlowState[] cache = new FlowState[CACHE_SIZE];
    private final int[] cacheGeneration = new int[CACHE_SIZE];
    private final Pool<FlowState> flows;
    private final Long2ObjectHashMap<FlowState> flowByKey;

    QpFlows(final Pool<FlowState> flows, final Long2ObjectHashMap<FlowState> flowByKey) {
        this.flows = flows;
        this.flowByKey = flowByKey;
    }

    /** The QP flow of host {@code h}, created at {@code timeNs} on first use; null when the flow pool is full. */
    FlowState flow(final HostState h, final int device, final long qpNum, final long timeNs) {
        final long hostId = h.hostId;
        final int slot = (int) FlowState.mix(hostId ^ qpNum * 0x9E3779B97F4A7C15L ^ device) & (CACHE_SIZE - 1);
        FlowState flow = cache[slot];
        if (flow == null || flow.generation != cacheGeneration[slot] || !flow.isQp(hostId, device, qpNum)) {
            flow = create(h, device, qpNum, timeNs);
            if (flow != null) {
                cache[slot] = flow;
                cacheGeneration[slot] = flow.generation;
            }
        }
        return flow;
    }

    private FlowState create(final HostState h, final int device, final long qpNum, final long timeNs) {
        final long hostId = h.hostId;
        for (int attempt = 0; ; attempt++) {
            final long key = FlowState.qpKey(hostId, device, qpNum, attempt);
            final FlowState f = flowByKey.get(key);
            if (f == null) {
                final FlowState fresh = flows.acquire();
                if (fresh == null) {
                    return null;
                }
                fresh.resetQp(key, h, device, qpNum, timeNs);
                flowByKey.put(key, fresh);
                return fresh;
            }
            if (f.isQp(hostId, device, qpNum)) {
                return f;
            }
        }
    }

    /** The live QP flow (host, device, qpNum), or null. */
    FlowState find(final long hostId, final int device, final long qpNum) {
        for (int attempt = 0; ; attempt++) {
            final FlowState f = flowByKey.get(FlowState.qpKey(hostId, device, qpNum, attempt));
            if (f == null || f.isQp(hostId, device, qpNum)) {
                return f;
            }
        }
    }
}
