package io.flowscope.window;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.api.summary.Phase;
import java.util.function.LongConsumer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The end of one host's period ({@link #close}): its flows' summaries and aggregates handed on, then the sweep that
 * ages out what has had no record for too long. Owns no table: it walks the engine's step table, flow pool and op
 * pool (and asks {@link CollectiveTracker} and {@link GpuClocks} to sweep theirs), and owns only the reused summary
 * that {@link #fill} builds into.
 * <p>
 * <b>Why apart.</b> The engine's event path touches one step, op or flow per event; this walks every entry of a
 * host, once a period. Kept out of {@link WindowEngine}, the hot class holds only the per-event code, and the rules
 * by which entries leave the tables are in one place.
 * <p>
 * <b>Order at a period's end</b>, all as of the new period's start {@code nowNs}:
 * <ol>
 * <li>every flow of the host active in the period, or with outstanding steps, is summarised into the sink (step
 * flows also into their rank / link / communicator aggregates, emitted after the flows); its period resets;</li>
 * <li>live steps and work requests with no record for {@code stepTimeout} are dropped (timed out unless completed:
 * a posted step's outstanding count and bytes come off its flow);</li>
 * <li>tombstones older than the tombstone timeout are dropped;</li>
 * <li>collectives and GPU clocks sweep their own tables;</li>
 * <li>flows idle for {@code idleTimeout} are evicted with their live steps;</li>
 * <li>ops with no record for {@code stepTimeout}, or whose flow was evicted (step 5 included), are dropped.</li>
 * </ol>
 * <b>Invariants kept</b>: a live step's flow is live (a flow is evicted with its steps), so a record finds its
 * flow by id with no generation check; a live op's flow is live (ops go after flows, in the same sweep), so a step
 * start reads only the op. A flow's {@link FlowState#lastActivityNs} lags its steps' state records (which write only
 * the row); before a flow is judged idle, the host's live step stamps are folded in ({@link #foldLiveStamps}), so
 * eviction sees every record. Nothing is allocated: the walks read pools and arrays; the summary is reused.
 * <p>
 * Single-threaded, as the engine.
 */
final class PeriodSweep {
    private final WindowConfig config;
    private final FlowSummarySink sink;
    private final EngineCounters counters;
    private final StepTable steps;
    private final Pool<FlowState> flows;
    private final FlowState[] flowById;
    private final Long2ObjectHashMap<FlowState> flowByKey;
    private final Pool<OpState> ops;
    /** Removes a live op from the engine's op index by key (the index stays the engine's: a hot-path lookup). */
    private final LongConsumer removeOp;

    private final Aggregates aggregates;
    private final CollectiveTracker collectives;
    private final GpuClocks gpuClocks;
    private final FlowSummary summary = new FlowSummary();
    private final FlowSummary.Builder summaryBuilder = FlowSummary.into(summary);
    /** Where {@link PhaseBuckets#percentiles} puts a phase's percentiles before they go into the summary. */
    private final long[] p50Scratch = new long[Phase.COUNT];

    private final long[] p90Scratch = new long[Phase.COUNT];
    private final long[] p99Scratch = new long[Phase.COUNT];

    PeriodSweep(
            final WindowConfig config,
            final FlowSummarySink sink,
            final EngineCounters counters,
            final StepTable steps,
            final Pool<FlowState> flows,
            final FlowState[] flowById,
            final Long2ObjectHashMap<FlowState> flowByKey,
            final Pool<OpState> ops,
            final LongConsumer removeOp,
            final Aggregates aggregates,
            final CollectiveTracker collectives,
            final GpuClocks gpuClocks) {
        this.config = config;
        this.sink = sink;
        this.counters = counters;
        this.steps = steps;
        this.flows = flows;
        this.flowById = flowById;
        this.flowByKey = flowByKey;
        this.ops = ops;
        this.removeOp = removeOp;
        this.aggregates = aggregates;
        this.collectives = collectives;
        this.gpuClocks = gpuClocks;
    }

    /**
     * Ends host {@code h}'s current period (summaries and aggregates into the sink), moves it to the period that
     * starts at {@code nextStartNs}, and sweeps the host's entries as of that start.
     */
    void close(final HostState h, final long nextStartNs) {
        endPeriod(h);
        h.periodStartNs = nextStartNs;
        h.periodEndNs = nextStartNs + config.periodNs;
        sweep(h, nextStartNs);
    }

    /**
     * Fills the reused summary with flow {@code f}'s state as at its host's period end (period fields hold the
     * period so far) and returns it: valid until the next call.
     */
    FlowSummary fill(final FlowState f) {
        final FlowSummary.Builder s = summaryBuilder;
        // One span (a scan of the window's posts) for both fields: bandwidthBytesPerSecond() would scan again.
        final long span = CompletionWindow.spanNs(f.window);
        final long windowBytes = CompletionWindow.bytesInWindow(f.window);
        s.periodStartNs(f.host.periodStartNs)
                .periodEndNs(f.host.periodEndNs)
                .hostId(f.host.hostId)
                .kind(f.kind)
                .device(f.device)
                .qpNum(f.qpNum)
                .flowKey(f.key)
                .commHash(f.commHash)
                .rank(f.rank)
                .peer(f.peer)
                .channel(f.channel)
                .isSend(f.isSend)
                .flows(1)
                .periodBandwidthBytesPerSecond(f.periodBytes * 1e9 / config.periodNs)
                .posts(f.periodPosts)
                .completions(f.periodCompletions)
                .bytes(f.periodBytes)
                .windowCompletions(CompletionWindow.size(f.window))
                .windowBytes(windowBytes)
                .windowSpanNs(span)
                .windowBandwidthBytesPerSecond(span <= 0 ? 0.0 : windowBytes * 1e9 / span)
                .outstandingSteps(f.outstandingSteps)
                .outstandingBytes(f.outstandingBytes)
                .firstSteps(f.periodFirstSteps)
                .firstStepWaitSumNs(f.periodFirstStepWaitNs);
        // The phases the flow cannot have (two of five) are empty; the others by their slot (PhaseBuckets.slot).
        s.clearPhases();
        final long[] phases = f.phases;
        for (int slot = 0; slot < PhaseBuckets.SLOTS; slot++) {
            final long count = PhaseBuckets.count(phases, slot);
            if (count != 0) {
                final int p = PhaseBuckets.phase(slot, f.isSend);
                s.phase(p, count, PhaseBuckets.sumNs(phases, slot), PhaseBuckets.maxNs(phases, slot));
                PhaseBuckets.percentiles(phases, slot, p50Scratch, p90Scratch, p99Scratch, p);
                s.phasePercentiles(p, p50Scratch[p], p90Scratch[p], p99Scratch[p]);
            }
        }
        return summary;
    }

    private void endPeriod(final HostState h) {
        for (int i = 0; i < flows.activeCount(); i++) {
            final FlowState f = flows.active(i);
            if (f.host != h) {
                continue;
            }
            if (f.activeInPeriod() || f.outstandingSteps != 0) {
                sink.onSummary(fill(f));
                if (f.kind == FlowSummary.KIND_STEP) {
                    aggregates.add(f);
                }
            }
            f.resetPeriod();
        }
        aggregates.emit(h, summaryBuilder, sink);
    }

    private void sweep(final HostState h, final long nowNs) {
        final long stepTimeoutNs = config.stepTimeoutNs;
        final long tombstoneTimeoutNs = config.effectiveTombstoneTimeoutNs();
        final long[] t = steps.t;
        // The arrays in locals: the scans are ~14 k entries a period, and remove() writes the table's fields.
        final long[] stamps = steps.stamp;
        // Live (not stopped) steps and work requests: their stamps (last record times) first, so that only entries
        // that may have expired are touched.
        for (int r = steps.highWater() - 1; r >= 0; r--) {
            final long idleNs = nowNs - stamps[r];
            if (idleNs < stepTimeoutNs) {
                continue;
            }
            final int b = StepTable.base(r);
            final long flags = t[b + StepTable.FLAGS];
            if ((flags & StepTable.OCCUPIED) != 0 && StepTable.hostId(flags) == h.index) {
                // The stamp is the start (or an earlier sweep's look): the state records may be later.
                final long lastNs = steps.lastRecordNs(b);
                if (nowNs - lastNs < stepTimeoutNs) {
                    stamps[r] = lastNs;
                    continue;
                }
                final long f = t[b + StepTable.FLOW];
                // Its state records count for the flow's idleness (see foldLiveStamps).
                foldStamp(f, lastNs);
                if ((flags & StepTable.COMPLETED) == 0) {
                    counters.stepsTimedOut++;
                    final FlowState flow = flowById[StepTable.flowId(f)];
                    if ((flags & StepTable.POSTED) != 0) {
                        flow.outstandingSteps--;
                        if ((flags & StepTable.SEND) != 0) {
                            flow.outstandingBytes -= t[b + StepTable.BYTES];
                        }
                    }
                }
                steps.remove(b);
            }
        }
        // Tombstones (stopped, hence completed): dense stamps, then the host; no row is read.
        final long[] tombStamps = steps.tombStamp;
        final int[] tombHosts = steps.tombHost;
        final int hostIndex = h.index;
        for (int i = steps.tombHighWater() - 1; i >= 0; i--) {
            if (nowNs - tombStamps[i] >= tombstoneTimeoutNs && tombHosts[i] == hostIndex) {
                steps.removeTomb(i);
            }
        }
        collectives.sweep(h, nowNs);
        gpuClocks.sweep(h, nowNs, config.idleTimeoutNs);
        boolean folded = false;
        for (int i = flows.activeCount() - 1; i >= 0; i--) {
            final FlowState f = flows.active(i);
            if (f.host == h && nowNs - f.lastActivityNs >= config.idleTimeoutNs) {
                if (!folded) {
                    // The first flow that looks idle: bring every flow of the host up to date first (rare: only
                    // when some flow may be evicted), then look again.
                    folded = true;
                    foldLiveStamps(h);
                    if (nowNs - f.lastActivityNs < config.idleTimeoutNs) {
                        continue;
                    }
                }
                counters.flowsEvicted++;
                dropLiveSteps(f);
                flowByKey.remove(f.key);
                f.generation++;
                flows.release(f);
            }
        }
        // After the flows: the ops of a flow evicted just now go in this sweep, so that a live op's flow is always
        // live (a step start reads only the op).
        for (int i = ops.activeCount() - 1; i >= 0; i--) {
            final OpState op = ops.active(i);
            if (op.host == h
                    && (nowNs - op.lastNs >= config.stepTimeoutNs || op.flow.generation != op.flowGeneration)) {
                counters.opsTimedOut++;
                removeOp.accept(op.key);
                op.flow = null;
                ops.release(op);
            }
        }
    }

    /**
     * Drops the live steps and work requests of a flow being evicted (idle longer than the idle timeout, which
     * may be shorter than the step timeout), counted as timed out unless completed: their later records are then
     * unknown, as the evicted flow's.
     */
    private void dropLiveSteps(final FlowState flow) {
        final long[] t = steps.t;
        for (int r = steps.highWater() - 1; r >= 0; r--) {
            final int b = StepTable.base(r);
            final long flags = t[b + StepTable.FLAGS];
            if ((flags & StepTable.OCCUPIED) != 0 && StepTable.flowId(t[b + StepTable.FLOW]) == flow.id) {
                if ((flags & StepTable.COMPLETED) == 0) {
                    counters.stepsTimedOut++;
                }
                steps.remove(b);
            }
        }
    }

    /**
     * Folds the last record times (stamps) of host {@code h}'s live steps and work requests into their flows'
     * {@link FlowState#lastActivityNs}, which state records leave alone: afterwards each flow of the host holds its
     * latest record time, as if every record had updated it.
     */
    private void foldLiveStamps(final HostState h) {
        final long[] t = steps.t;
        for (int r = steps.highWater() - 1; r >= 0; r--) {
            final int b = StepTable.base(r);
            final long flags = t[b + StepTable.FLAGS];
            if ((flags & StepTable.OCCUPIED) != 0 && StepTable.hostId(flags) == h.index) {
                foldStamp(t[b + StepTable.FLOW], steps.lastRecordNs(b));
            }
        }
    }

    /** Folds a live step's last record time into its flow's idleness (row field FLOW: a live step's flow is live). */
    private void foldStamp(final long flowField, final long stampNs) {
        final FlowState flow = flowById[StepTable.flowId(flowField)];
        flow.lastActivityNs = WindowEngine.latestOf(flow.lastActivityNs, stampNs);
    }
}
