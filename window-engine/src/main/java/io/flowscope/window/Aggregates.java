package io.flowscope.window;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.api.summary.Phase;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The aggregates of one host's period: its step flows' summaries summed per rank (commHash, rank, direction), per
 * link (commHash, rank, peer, direction) and per communicator (commHash, direction), emitted after the flows in order
 * of first contribution and released for the next period. A pool sized at construction ({@code maxAggregates},
 * default {@code maxFlows}), a map that never grows; an aggregate that finds the pool full is counted and left out.
 */
final class Aggregates {
    private final Pool<AggState> pool;
    private final Long2ObjectHashMap<AggState> byKey;
    private final EngineCounters counters;
    private final WindowConfig config;

    Aggregates(final WindowConfig config, final EngineCounters counters) {
        final int maxAggregates = config.maxAggregates < 0 ? config.maxFlows : config.maxAggregates;
        pool = new Pool<>(maxAggregates, AggState::new);
        byKey = new Long2ObjectHashMap<>(Math.max(16, maxAggregates * 2), 0.55f);
        this.counters = counters;
        this.config = config;
    }

    /** Adds step flow {@code f}'s period to its rank, link and communicator aggregates. */
    void add(final FlowState f) {
        add(FlowSummary.KIND_RANK, f.commHash, f.rank, -1, f);
        add(FlowSummary.KIND_LINK, f.commHash, f.rank, f.peer, f);
        add(FlowSummary.KIND_COMM, f.commHash, -1, -1, f);
    }

    /** Emits host {@code h}'s aggregates through {@code summary} (reused) into {@code sink}, then releases them. */
    void emit(final HostState h, final FlowSummary.Builder summary, final FlowSummarySink sink) {
        // The aggregates, in order of first contribution; then released for the next period.
        for (int i = 0; i < pool.activeCount(); i++) {
            fill(h, pool.active(i), summary);
            sink.onSummary(summary.build());
        }
        for (int i = pool.activeCount() - 1; i >= 0; i--) {
            final AggState a = pool.active(i);
            byKey.remove(a.key);
            pool.release(a);
        }
    }

    private void add(final int kind, final long commHash, final int rank, final int peer, final FlowState f) {
        for (int attempt = 0; ; attempt++) {
            final long key = AggState.key(kind, commHash, rank, peer, f.isSend, attempt);
            AggState a = byKey.get(key);
            if (a == null) {
                a = pool.acquire();
                if (a == null) {
                    counters.droppedAggregateTableFull++;
                    return;
                }
                a.reset(key, kind, commHash, rank, peer, f.isSend);
                byKey.put(key, a);
            } else if (!a.is(kind, commHash, rank, peer, f.isSend)) {
                continue;
            }
            a.add(f);
            return;
        }
    }

    private void fill(final HostState h, final AggState a, final FlowSummary.Builder s) {
        s.periodStartNs(h.periodStartNs)
                .periodEndNs(h.periodEndNs)
                .hostId(h.hostId)
                .kind(a.kind)
                .device(-1)
                .qpNum(-1)
                .flowKey(a.key)
                .commHash(a.commHash)
                .rank(a.rank)
                .peer(a.peer)
                .channel(-1)
                .isSend(a.isSend)
                .flows(a.flows)
                .periodBandwidthBytesPerSecond(a.bytes * 1e9 / config.periodNs)
                .posts(a.posts)
                .completions(a.completions)
                .bytes(a.bytes)
                .windowCompletions(0)
                .windowBytes(0)
                .windowSpanNs(0)
                .windowBandwidthBytesPerSecond(0)
                .outstandingSteps(a.outstandingSteps)
                .outstandingBytes(a.outstandingBytes)
                .firstSteps(a.firstSteps)
                .firstStepWaitSumNs(a.firstStepWaitSumNs);
        // Aggregates carry no percentiles (a bucket array per aggregate would double the per-flow memory).
        s.clearPhases();
        for (int p = 0; p < Phase.COUNT; p++) {
            s.phase(p, a.phaseCount[p], a.phaseSumNs[p], a.phaseMaxNs[p]);
        }
    }
}
