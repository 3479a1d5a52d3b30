package io.flowscope.window;

import org.HdrHistogram.Histogram;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Turns ProxyOp / ProxyStep events into per-flow windows, outstanding work and phase durations, and emits a
 * {@link FlowSummary} per active flow per period into a {@link FlowSummarySink}.
 * <p>
 * <b>Event time only.</b> Periods are {@code [k·period, (k+1)·period)} of the event clock. When an event's
 * time reaches the end of the current period, that period's summaries are emitted; then, as of the start of the
 * event's period, ops and steps with no record for {@code stepTimeout} are dropped and flows idle for
 * {@code idleTimeout} are evicted. An
 * event older than the current period (out of order across threads) counts in the current period. A gap
 * of several periods emits once, at the period it started in.
 * <p>
 * <b>Steps.</b> A step is posted at 9 (send) / 10 (recv): outstanding steps + 1 (send: + transSize bytes).
 * It completes at stop (send) / 11 (recv; at stop when 11 is missing): outstanding − 1, the completion
 * (post, completion time, bytes = transSize of 9 / 11) goes into the flow's {@link CompletionWindow} and
 * the period totals. At stop its phase durations ({@link Phase}) are recorded. Then the step stays as a
 * tombstone until {@code stepTimeout}, so a duplicate start, state or stop changes nothing.
 * <p>
 * <b>Robustness.</b> The first record of each state counts (a repeated 20 marks the first credit wait);
 * records of unknown steps or ops, and steps of unknown ops, are counted and ignored; a full table counts
 * the event as dropped. Nothing is allocated per event: flows, ops and steps come from fixed pools.
 * <p>
 * Single-threaded; one engine per host clock domain.
 */
public final class WindowEngine implements TelemetryListener
{
    private final WindowConfig config;
    private final FlowSummarySink sink;
    private final FlowSummary summary = new FlowSummary();
    private final Pool<FlowState> flows;
    private final Pool<OpState> ops;
    private final Pool<StepState> steps;
    private final Long2ObjectHashMap<FlowState> flowByKey;
    private final Long2ObjectHashMap<OpState> opByKey;
    private final Long2ObjectHashMap<StepState> stepByKey;
    private final Histogram[] sendPhase = new Histogram[Phase.COUNT];
    private final Histogram[] recvPhase = new Histogram[Phase.COUNT];
    private final long[] durations = new long[Phase.COUNT];

    private boolean started;
    private long periodStartNs;
    private long periodEndNs;

    private long duplicateRecords;
    private long lateCompletions;
    private long unknownOpRecords;
    private long unknownStepRecords;
    private long flowsEvicted;
    private long opsTimedOut;
    private long stepsTimedOut;
    private long droppedFlowTableFull;
    private long droppedOpTableFull;
    private long droppedStepTableFull;

    public WindowEngine(final WindowConfig config, final FlowSummarySink sink)
    {
        this.config = config;
        this.sink = sink;
        final int windowSize = config.windowSize;
        flows = new Pool<>(config.maxFlows, () -> new FlowState(windowSize));
        ops = new Pool<>(config.maxOps, OpState::new);
        steps = new Pool<>(config.maxSteps, StepState::new);
        // Sized so that the maps never grow: at most half full.
        flowByKey = new Long2ObjectHashMap<>(config.maxFlows * 2, 0.55f);
        opByKey = new Long2ObjectHashMap<>(config.maxOps * 2, 0.55f);
        stepByKey = new Long2ObjectHashMap<>(config.maxSteps * 2, 0.55f);
        for (int p = 0; p < Phase.COUNT; p++)
        {
            sendPhase[p] = new Histogram(3_600_000_000_000L, 2);
            recvPhase[p] = new Histogram(3_600_000_000_000L, 2);
        }
    }

    public WindowConfig config()
    {
        return config;
    }

    // Input.

    @Override
    public void onProxyOpStart(final long opKey, final long commHash, final int rank, final int peer, final int channel,
        final boolean isSend, final long timeNs)
    {
        advance(timeNs);
        if (opByKey.get(opKey) != null)
        {
            duplicateRecords++;
            return;
        }
        final FlowState flow = flow(commHash, rank, peer, channel, isSend, timeNs);
        if (flow == null)
        {
            droppedFlowTableFull++;
            return;
        }
        final OpState op = ops.acquire();
        if (op == null)
        {
            droppedOpTableFull++;
            return;
        }
        op.key = opKey;
        op.flow = flow;
        op.flowGeneration = flow.generation;
        op.lastNs = timeNs;
        opByKey.put(opKey, op);
        flow.lastActivityNs = latest(flow.lastActivityNs, timeNs);
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs)
    {
        advance(timeNs);
        final OpState op = opByKey.remove(opKey);
        if (op == null)
        {
            unknownOpRecords++;
            return;
        }
        ops.release(op);
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs)
    {
        advance(timeNs);
        if (stepByKey.get(stepKey) != null)
        {
            duplicateRecords++;
            return;
        }
        final OpState op = opByKey.get(opKey);
        if (op == null || op.flow.generation != op.flowGeneration)
        {
            unknownOpRecords++;
            return;
        }
        final StepState s = steps.acquire();
        if (s == null)
        {
            droppedStepTableFull++;
            return;
        }
        op.lastNs = latest(op.lastNs, timeNs);
        s.reset(stepKey, op.flow, op.flow.isSend, step, timeNs);
        stepByKey.put(stepKey, s);
        op.flow.lastActivityNs = latest(op.flow.lastActivityNs, timeNs);
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs)
    {
        advance(timeNs);
        final StepState s = live(stepKey);
        if (s == null)
        {
            return;
        }
        final int bit = stateBit(state, s.isSend);
        if (bit == 0 || s.has(bit))
        {
            if (bit != 0)
            {
                duplicateRecords += state == 20 ? 0 : 1;
            }
            return;
        }
        s.seen |= bit;
        s.lastNs = latest(s.lastNs, timeNs);
        final FlowState flow = s.flow;
        flow.lastActivityNs = latest(flow.lastActivityNs, timeNs);
        switch (bit)
        {
            case StepState.SEEN_8:
                s.t8 = timeNs;
                break;
            case StepState.SEEN_20:
                s.t20 = timeNs;
                break;
            case StepState.SEEN_9:
                s.t9 = timeNs;
                s.bytes = transSize;
                post(s, flow, transSize);
                break;
            case StepState.SEEN_10:
                s.t10 = timeNs;
                post(s, flow, 0);
                break;
            case StepState.SEEN_11:
                s.t11 = timeNs;
                s.bytes = transSize;
                complete(s, flow, timeNs);
                break;
            case StepState.SEEN_12:
                s.t12 = timeNs;
                break;
            default:
                break;
        }
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs)
    {
        advance(timeNs);
        final StepState s = live(stepKey);
        if (s == null)
        {
            return;
        }
        s.stopped = true;
        s.stopNs = timeNs;
        s.lastNs = latest(s.lastNs, timeNs);
        final FlowState flow = s.flow;
        flow.lastActivityNs = latest(flow.lastActivityNs, timeNs);
        if (!s.completed)
        {
            complete(s, flow, timeNs);
        }
        PhaseBreakdown.of(s, durations);
        final Histogram[] h = s.isSend ? sendPhase : recvPhase;
        for (int p = 0; p < Phase.COUNT; p++)
        {
            final long d = durations[p];
            if (d >= 0)
            {
                flow.phaseCount[p]++;
                flow.phaseSumNs[p] += d;
                if (d > flow.phaseMaxNs[p])
                {
                    flow.phaseMaxNs[p] = d;
                }
                h[p].recordValue(Math.min(d, h[p].getHighestTrackableValue()));
            }
        }
    }

    /** Emits the current period's summaries now (e.g. at the end of a replay) and starts the next period. */
    public void flush()
    {
        if (started)
        {
            endPeriod();
            periodStartNs = periodEndNs;
            periodEndNs += config.periodNs;
            sweep(periodStartNs);
        }
    }

    // Internals.

    /** The step of a record if it is live and not stopped; a record for a stopped step is a duplicate. */
    private StepState live(final long stepKey)
    {
        final StepState s = stepByKey.get(stepKey);
        if (s == null)
        {
            unknownStepRecords++;
            return null;
        }
        if (s.stopped)
        {
            duplicateRecords++;
            return null;
        }
        if (s.flow.generation != s.flowGeneration)
        {
            unknownStepRecords++;
            return null;
        }
        return s;
    }

    private static int stateBit(final int state, final boolean isSend)
    {
        if (isSend)
        {
            switch (state)
            {
                case 8: return StepState.SEEN_8;
                case 20: return StepState.SEEN_20;
                case 9: return StepState.SEEN_9;
                default: return 0;
            }
        }
        switch (state)
        {
            case 10: return StepState.SEEN_10;
            case 11: return StepState.SEEN_11;
            case 12: return StepState.SEEN_12;
            default: return 0;
        }
    }

    private static void post(final StepState s, final FlowState flow, final long bytes)
    {
        if (!s.completed)
        {
            s.posted = true;
            flow.outstandingSteps++;
            flow.outstandingBytes += bytes;
            flow.periodPosts++;
        }
    }

    private void complete(final StepState s, final FlowState flow, final long completeNs)
    {
        s.completed = true;
        if (s.posted)
        {
            flow.outstandingSteps--;
            if (s.isSend)
            {
                flow.outstandingBytes -= s.bytes;
            }
        }
        flow.totalCompletions++;
        flow.totalBytes += s.bytes;
        flow.periodCompletions++;
        flow.periodBytes += s.bytes;
        if (flow.window.record(s.key, s.postNs(), completeNs, s.bytes) == CompletionWindow.LATE)
        {
            lateCompletions++;
        }
    }

    private FlowState flow(final long commHash, final int rank, final int peer, final int channel, final boolean isSend,
        final long timeNs)
    {
        for (int attempt = 0; ; attempt++)
        {
            final long key = FlowState.key(commHash, rank, peer, channel, isSend, attempt);
            final FlowState f = flowByKey.get(key);
            if (f == null)
            {
                final FlowState fresh = flows.acquire();
                if (fresh == null)
                {
                    return null;
                }
                fresh.reset(key, commHash, rank, peer, channel, isSend, timeNs);
                flowByKey.put(key, fresh);
                return fresh;
            }
            if (f.is(commHash, rank, peer, channel, isSend))
            {
                return f;
            }
        }
    }

    private static long latest(final long a, final long b)
    {
        return b - a > 0 ? b : a;
    }

    private void advance(final long timeNs)
    {
        if (!started)
        {
            started = true;
            periodStartNs = Math.floorDiv(timeNs, config.periodNs) * config.periodNs;
            periodEndNs = periodStartNs + config.periodNs;
            return;
        }
        if (timeNs - periodEndNs >= 0)
        {
            endPeriod();
            final long gap = timeNs - periodEndNs;
            periodStartNs = periodEndNs + gap - Math.floorMod(gap, config.periodNs);
            periodEndNs = periodStartNs + config.periodNs;
            sweep(periodStartNs);
        }
    }

    private void endPeriod()
    {
        for (int i = 0; i < flows.activeCount(); i++)
        {
            final FlowState f = flows.active(i);
            if (f.activeInPeriod() || f.outstandingSteps != 0)
            {
                fill(f);
                sink.onSummary(summary);
            }
            f.resetPeriod();
        }
    }

    private void fill(final FlowState f)
    {
        final FlowSummary s = summary;
        s.periodStartNs = periodStartNs;
        s.periodEndNs = periodEndNs;
        s.flowKey = f.key;
        s.commHash = f.commHash;
        s.rank = f.rank;
        s.peer = f.peer;
        s.channel = f.channel;
        s.isSend = f.isSend;
        s.posts = f.periodPosts;
        s.completions = f.periodCompletions;
        s.bytes = f.periodBytes;
        s.windowCompletions = f.window.size();
        s.windowBytes = f.window.bytesInWindow();
        s.windowSpanNs = f.window.spanNs();
        s.windowBandwidthBytesPerSecond = f.window.bandwidthBytesPerSecond();
        s.outstandingSteps = f.outstandingSteps;
        s.outstandingBytes = f.outstandingBytes;
        System.arraycopy(f.phaseCount, 0, s.phaseCount, 0, Phase.COUNT);
        System.arraycopy(f.phaseSumNs, 0, s.phaseSumNs, 0, Phase.COUNT);
        System.arraycopy(f.phaseMaxNs, 0, s.phaseMaxNs, 0, Phase.COUNT);
    }

    private void sweep(final long nowNs)
    {
        for (int i = steps.activeCount() - 1; i >= 0; i--)
        {
            final StepState s = steps.active(i);
            if (nowNs - s.lastNs >= config.stepTimeoutNs)
            {
                if (!s.completed)
                {
                    stepsTimedOut++;
                    if (s.posted && s.flow.generation == s.flowGeneration)
                    {
                        s.flow.outstandingSteps--;
                        if (s.isSend)
                        {
                            s.flow.outstandingBytes -= s.bytes;
                        }
                    }
                }
                stepByKey.remove(s.key);
                s.flow = null;
                steps.release(s);
            }
        }
        for (int i = ops.activeCount() - 1; i >= 0; i--)
        {
            final OpState op = ops.active(i);
            if (nowNs - op.lastNs >= config.stepTimeoutNs || op.flow.generation != op.flowGeneration)
            {
                opsTimedOut++;
                opByKey.remove(op.key);
                op.flow = null;
                ops.release(op);
            }
        }
        for (int i = flows.activeCount() - 1; i >= 0; i--)
        {
            final FlowState f = flows.active(i);
            if (nowNs - f.lastActivityNs >= config.idleTimeoutNs)
            {
                flowsEvicted++;
                flowByKey.remove(f.key);
                f.generation++;
                flows.release(f);
            }
        }
    }

    // Queries and snapshots.

    public int liveFlows()
    {
        return flows.activeCount();
    }

    public int liveOps()
    {
        return ops.activeCount();
    }

    public int liveSteps()
    {
        return steps.activeCount();
    }

    /**
     * Fills {@code target} with the current state of the flow, as at a period's end (period fields hold the
     * period so far). @return false when the flow is not live.
     */
    public boolean snapshot(final long commHash, final int rank, final int peer, final int channel,
        final boolean isSend, final FlowSummary target)
    {
        for (int attempt = 0; ; attempt++)
        {
            final FlowState f = flowByKey.get(FlowState.key(commHash, rank, peer, channel, isSend, attempt));
            if (f == null)
            {
                return false;
            }
            if (f.is(commHash, rank, peer, channel, isSend))
            {
                fill(f);
                target.copyFrom(summary);
                return true;
            }
        }
    }

    /** Lifetime totals of a flow: completions and bytes; -1 when the flow is not live. */
    public long totalBytes(final long commHash, final int rank, final int peer, final int channel, final boolean isSend)
    {
        for (int attempt = 0; ; attempt++)
        {
            final FlowState f = flowByKey.get(FlowState.key(commHash, rank, peer, channel, isSend, attempt));
            if (f == null)
            {
                return -1;
            }
            if (f.is(commHash, rank, peer, channel, isSend))
            {
                return f.totalBytes;
            }
        }
    }

    /** Adds the phase durations recorded so far (all flows of one direction) to {@code target}. */
    public void addPhaseHistogramTo(final boolean isSend, final int phase, final Histogram target)
    {
        target.add((isSend ? sendPhase : recvPhase)[phase]);
    }

    public long duplicateRecords()
    {
        return duplicateRecords;
    }

    public long lateCompletions()
    {
        return lateCompletions;
    }

    public long unknownOpRecords()
    {
        return unknownOpRecords;
    }

    public long unknownStepRecords()
    {
        return unknownStepRecords;
    }

    public long flowsEvicted()
    {
        return flowsEvicted;
    }

    public long opsTimedOut()
    {
        return opsTimedOut;
    }

    public long stepsTimedOut()
    {
        return stepsTimedOut;
    }

    public long droppedFlowTableFull()
    {
        return droppedFlowTableFull;
    }

    public long droppedOpTableFull()
    {
        return droppedOpTableFull;
    }

    public long droppedStepTableFull()
    {
        return droppedStepTableFull;
    }

    @Override
    public String toString()
    {
        return "WindowEngine{" + config + ", flows=" + liveFlows() + ", ops=" + liveOps() + ", steps=" + liveSteps() +
            ", duplicates=" + duplicateRecords + ", late=" + lateCompletions + ", unknownOp=" + unknownOpRecords +
            ", unknownStep=" + unknownStepRecords + ", evicted=" + flowsEvicted + ", stepsTimedOut=" + stepsTimedOut + '}';
    }
}
