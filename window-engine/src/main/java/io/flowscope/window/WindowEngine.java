package io.flowscope.window;

import io.flowscope.api.input.StepState;
import io.flowscope.api.input.TelemetryListener;
import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.api.summary.Phase;
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
 * <b>Hosts.</b> Each host ({@link #onHost}) is its own clock domain with its own periods: an event moves only
 * its host's period on, and ends, sweeps and evicts only that host's flows, ops and steps.
 * <p>
 * <b>What lives here, what elsewhere.</b> This class keeps the hot path (hosts and periods, ProxyOp / ProxyStep and
 * work-request records against {@link StepTable}, windows, phases). A period's end (flow summaries handed on, the
 * sweep of steps, flows and ops): {@link PeriodSweep}; collectives and KernelCh: {@link CollectiveTracker}; GPU
 * clocks: {@link GpuClocks}; aggregates: {@link Aggregates}; the QP flow cache: {@link QpFlows}; counters:
 * {@link EngineCounters}.
 * <p>
 * Single-threaded.
 */
public final class WindowEngine implements TelemetryListener {
    private final WindowConfig config;
    private final GpuClocks gpuClocks;
    /** Coll / P2p and KernelCh records, their pending table, the collective stream. */
    private final CollectiveTracker collectives;
    /** What was dropped, counted or timed out; read through the getters below. */
    private final EngineCounters counters = new EngineCounters();

    private final Pool<HostState> hosts;
    private final Long2ObjectHashMap<HostState> hostById;
    /** The end of a host's period: summaries and aggregates handed on, then stale entries swept out. */
    private final PeriodSweep periodSweep;

    private final Pool<FlowState> flows;
    private final Pool<OpState> ops;
    /** Live steps and work requests with their tombstones, inline (see {@link StepTable}). */
    private final StepTable steps;
    /** Flows and hosts by their construction-time id (step table entries refer to them by id). */
    private final FlowState[] flowById;

    private final HostState[] hostByIndex;
    private int nextFlowId;
    private int nextHostIndex;
    private final Long2ObjectHashMap<FlowState> flowByKey;
    /**
     * Live ops by the low bits of their key ({@link #findOp}): keys in start order put live ops in neighbouring
     * slots, and a step start finds its op in one load instead of a hashed probe; an op whose slot is taken goes
     * into {@link #opByKey}.
     */
    private final OpState[] opSlots;

    private final int opMask;
    /** Ops in {@link #opByKey}; 0: no lookup needs the map. */
    private int opsSpilled;

    private final Long2ObjectHashMap<OpState> opByKey;
    private final PhaseHistograms phaseHistograms = new PhaseHistograms();
    /** QP flows by (host, device, qpNum): a direct-mapped cache in front of the flow map. */
    private final QpFlows qpFlows;
    /**
     * The seen bit of a step state: index {@code state} for a send step, {@link #RECV_STATES} + state for a recv step
     * (states 0..31; 0 when the state is not one of the direction's).
     */
    private static final int[] STATE_BITS = new int[64];
    /** Where a recv step's states start in {@link #STATE_BITS}: the direction is bit {@link #RECV_STATE_BIT}. */
    static final int RECV_STATE_BIT = 5;

    static final int RECV_STATES = 1 << RECV_STATE_BIT;
    /**
     * The shift that moves {@link StepTable#SEND} onto {@link #RECV_STATE_BIT}: {@code ((flags & SEND) >>> shift) ^
     * RECV_STATES} is 0 for a send step and {@link #RECV_STATES} for a recv step, with no branch.
     */
    static final int SEND_TO_RECV_STATE_SHIFT = StepTable.SEND_BIT - RECV_STATE_BIT;
    /** The row field that keeps a state's time, by the seen bit's index: 8 / 10 TA, 20 / 11 TB, 9 / 12 TC. */
    private static final int[] STATE_FIELD = new int[6];

    static {
        STATE_BITS[StepState.SEND_GPU_WAIT] = StepTable.SEEN_8;
        STATE_BITS[StepState.SEND_PEER_WAIT] = StepTable.SEEN_20;
        STATE_BITS[StepState.SEND_WAIT] = StepTable.SEEN_9;
        STATE_BITS[RECV_STATES + StepState.RECV_WAIT] = StepTable.SEEN_10;
        STATE_BITS[RECV_STATES + StepState.RECV_FLUSH_WAIT] = StepTable.SEEN_11;
        STATE_BITS[RECV_STATES + StepState.RECV_GPU_WAIT] = StepTable.SEEN_12;
        STATE_FIELD[StepTable.SEEN_8_BIT] = StepTable.TA;
        STATE_FIELD[StepTable.SEEN_20_BIT] = StepTable.TB;
        STATE_FIELD[StepTable.SEEN_9_BIT] = StepTable.TC;
        STATE_FIELD[StepTable.SEEN_10_BIT] = StepTable.TA;
        STATE_FIELD[StepTable.SEEN_11_BIT] = StepTable.TB;
        STATE_FIELD[StepTable.SEEN_12_BIT] = StepTable.TC;
        checkFlagLayout();
    }

    /**
     * The bit positions onProxyStepState computes with, checked once: the STATE_BITS index needs SEND at or above
     * RECV_STATE_BIT (a shift down) and states below RECV_STATES; STATE_FIELD is indexed by the seen bits'
     * positions (0..5); the transSize test shifts SEEN_9 and SEEN_11 to bit 0. A layout that breaks one of these
     * fails the class's initialization rather than misfiling records.
     */
    static void checkFlagLayout() {
        check(SEND_TO_RECV_STATE_SHIFT >= 0, "SEND below the recv-state bit");
        check(((StepTable.SEND >>> SEND_TO_RECV_STATE_SHIFT) ^ RECV_STATES) == 0, "SEND does not map onto RECV_STATES");
        check(2 * RECV_STATES == STATE_BITS.length, "STATE_BITS holds two directions of RECV_STATES states");
        check(StepState.SEND_PEER_WAIT < RECV_STATES, "a step state at or above RECV_STATES");
        check(StepTable.SEEN_MASK == (1 << STATE_FIELD.length) - 1, "seen bits are not bits 0..5");
        check(
                (StepTable.SEEN_MASK
                                & (StepTable.POSTED
                                        | StepTable.COMPLETED
                                        | StepTable.FIRST
                                        | StepTable.SEND
                                        | StepTable.OCCUPIED))
                        == 0,
                "a seen bit overlaps a flag");
        check(
                Long.bitCount(StepTable.POSTED
                                | StepTable.COMPLETED
                                | StepTable.FIRST
                                | StepTable.SEND
                                | StepTable.OCCUPIED)
                        == 5,
                "two flags share a bit");
        check(StepTable.OCCUPIED_BIT < StepTable.HOST_SHIFT, "flags overlap the host index");
        for (int i = 0; i < STATE_FIELD.length; i++) {
            final int bit = 1 << i;
            final boolean carries = ((bit >>> StepTable.SEEN_9_BIT | bit >>> StepTable.SEEN_11_BIT) & 1) != 0;
            check(
                    carries == (bit == StepTable.SEEN_9 || bit == StepTable.SEEN_11),
                    "transSize test picks seen bit " + i);
        }
    }

    private static void check(final boolean holds, final String what) {
        if (!holds) {
            throw new IllegalStateException("StepTable flag layout: " + what);
        }
    }

    /** The host of the current calls ({@link #onHost}); null when the host table is full. */
    private HostState host;

    public WindowEngine(final WindowConfig config, final FlowSummarySink sink) {
        this(config, sink, c -> {});
    }

    public WindowEngine(final WindowConfig config, final FlowSummarySink sink, final CollectiveSink collectiveSink) {
        this.config = config;
        gpuClocks = new GpuClocks(config, counters);
        collectives = new CollectiveTracker(config, collectiveSink, gpuClocks, counters);
        final int windowSize = config.windowSize;
        hostByIndex = new HostState[config.maxHosts];
        flowById = new FlowState[config.maxFlows];
        hosts = new Pool<>(config.maxHosts, () -> {
            final HostState h = new HostState();
            h.index = nextHostIndex;
            hostByIndex[nextHostIndex++] = h;
            return h;
        });
        hostById = new Long2ObjectHashMap<>(config.maxHosts * 2, 0.55f);
        final boolean series = config.series;
        flows = new Pool<>(config.maxFlows, () -> {
            final FlowState f = new FlowState(windowSize, series);
            f.id = nextFlowId;
            flowById[nextFlowId++] = f;
            return f;
        });
        ops = new Pool<>(config.maxOps, OpState::new);
        steps = new StepTable(config.maxSteps);
        // Sized so that the maps never grow: at most half full.
        flowByKey = new Long2ObjectHashMap<>(config.maxFlows * 2, 0.55f);
        opByKey = new Long2ObjectHashMap<>(config.maxOps * 2, 0.55f);
        qpFlows = new QpFlows(flows, flowByKey);
        int opCapacity = 16;
        while (opCapacity < 8L * config.maxOps) {
            opCapacity <<= 1;
        }
        opSlots = new OpState[opCapacity];
        opMask = opCapacity - 1;
        periodSweep = new PeriodSweep(
                config,
                sink,
                counters,
                steps,
                flows,
                flowById,
                flowByKey,
                ops,
                this::removeOp,
                new Aggregates(config, counters),
                collectives,
                gpuClocks);
        onHost(0);
    }

    public WindowConfig config() {
        return config;
    }

    // Input.

    @Override
    public void onHost(final long hostId) {
        final HostState h = host;
        if (h != null && h.hostId == hostId) {
            return;
        }
        HostState next = hostById.get(hostId);
        if (next == null) {
            next = hosts.acquire();
            if (next != null) {
                next.reset(hostId);
                hostById.put(hostId, next);
            }
        }
        host = next;
    }

    /**
     * Host {@code hostId}'s time has reached {@code timeNs} with no event: its periods up to there end and are
     * swept, as an event at that time would end them; nothing is counted. The host of the calls that follow stays
     * the one {@link #onHost} named last.
     */
    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        final HostState current = host;
        onHost(hostId);
        advance(timeNs);
        host = current;
    }

    @Override
    public void onProxyOpStart(
            final long opKey,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {
        if (!advance(timeNs)) {
            return;
        }
        if (findOp(opKey) != null) {
            counters.duplicateRecords++;
            return;
        }
        final FlowState flow = flow(host.hostId, commHash, rank, peer, channel, isSend, timeNs);
        if (flow == null) {
            counters.droppedFlowTableFull++;
            return;
        }
        final OpState op = ops.acquire();
        if (op == null) {
            counters.droppedOpTableFull++;
            return;
        }
        op.key = opKey;
        op.host = host;
        op.flow = flow;
        op.flowGeneration = flow.generation;
        op.flowId = flow.id;
        op.isSend = flow.isSend;
        op.lastNs = timeNs;
        putOp(op);
        flow.lastActivityNs = latest(flow.lastActivityNs, timeNs);
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        if (!advance(timeNs)) {
            return;
        }
        final OpState op = removeOp(opKey);
        if (op == null) {
            counters.unknownOpRecords++;
            return;
        }
        ops.release(op);
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        if (!advance(timeNs)) {
            return;
        }
        final int b = steps.probeInsert(stepKey);
        if (b < 0 && b != Integer.MIN_VALUE) {
            counters.duplicateRecords++;
            return;
        }
        // A live op's flow is live (the sweep that evicts a flow removes its ops), and the step's start counts for
        // the flow's idleness through its row (PeriodSweep.foldLiveStamps, then the stop): the flow itself is not
        // read.
        final OpState op = findOp(opKey);
        if (op == null) {
            counters.unknownOpRecords++;
            return;
        }
        if (b == Integer.MIN_VALUE) {
            counters.droppedStepTableFull++;
            return;
        }
        op.lastNs = latest(op.lastNs, timeNs);
        steps.occupy(
                b,
                stepKey,
                op.flowId,
                (op.isSend ? StepTable.SEND : 0) | (step == 0 ? StepTable.FIRST : 0),
                op.host.index,
                timeNs);
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        if (!advance(timeNs)) {
            return;
        }
        final int b = live(stepKey);
        if (b < 0) {
            return;
        }
        final long[] t = steps.t;
        final long flags = t[b + StepTable.FLAGS];
        // Table-driven: the state's seen bit by direction, its time's row field by the bit. A switch on the state
        // and another on the bit mispredicted about once a record (states of 256 flows interleave at random).
        final int bit = (state & -RECV_STATES) == 0
                ? STATE_BITS[((int) ((flags & StepTable.SEND) >>> SEND_TO_RECV_STATE_SHIFT) ^ RECV_STATES) | state]
                : 0;
        if (bit == 0 || (flags & bit) != 0) {
            if (bit != 0) {
                counters.duplicateRecords += state == StepState.SEND_PEER_WAIT ? 0 : 1;
            }
            return;
        }
        t[b + StepTable.FLAGS] = flags | bit;
        // The record's time goes into its state's field only, not into the step's stamp nor its flow's
        // lastActivityNs: the step's last record time is derived from the fields where needed
        // (StepTable.lastRecordNs: the stop, PeriodSweep's sweep and foldLiveStamps). 8, 20 and 12 (half of the
        // records) then need no flow and no stamp line.
        t[b + STATE_FIELD[Integer.numberOfTrailingZeros(bit)]] = timeNs;
        // All ones for 9 (send) and 11 (recv), the states that carry transSize, else 0: no branch.
        final long carries = -(long) ((bit >>> StepTable.SEEN_9_BIT | bit >>> StepTable.SEEN_11_BIT) & 1);
        t[b + StepTable.BYTES] = t[b + StepTable.BYTES] & ~carries | transSize & carries;
        if ((bit & (StepTable.SEEN_9 | StepTable.SEEN_10)) != 0) {
            post(t, b, flowById[StepTable.flowId(t[b + StepTable.FLOW])], transSize & carries);
        } else if (bit == StepTable.SEEN_11) {
            complete(t, b, flowById[StepTable.flowId(t[b + StepTable.FLOW])], timeNs);
        }
    }

    /**
     * The stop of the live step or work request {@code key} at {@code timeNs}: its row base, or -1 when the record
     * is too old for the current period or the key is not live. The caller buries the row ({@link StepTable#bury}:
     * from then on a tombstone) with its last record time once it has read it.
     */
    private int stopLive(final long key, final long timeNs) {
        if (!advance(timeNs)) {
            return -1;
        }
        return live(key);
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        final int b = stopLive(stepKey, timeNs);
        if (b < 0) {
            return;
        }
        final long[] t = steps.t;
        final FlowState flow = flowById[StepTable.flowId(t[b + StepTable.FLOW])];
        // This stop and every state record before it (onProxyStepState leaves the flow's time alone).
        final long lastNs = latest(steps.lastRecordNs(b), timeNs);
        flow.lastActivityNs = latest(flow.lastActivityNs, lastNs);
        if ((t[b + StepTable.FLAGS] & StepTable.COMPLETED) == 0) {
            complete(t, b, flow, timeNs);
        }
        // The phase durations (see Phase), straight from the state times: no per-stop array of five.
        final long seen = t[b + StepTable.FLAGS];
        if ((seen & StepTable.SEND) != 0) {
            if ((seen & StepTable.SEEN_8) != 0) {
                if ((seen & StepTable.SEEN_20) != 0) {
                    phase(flow, true, Phase.GPU_WAIT, t[b + StepTable.TB] - t[b + StepTable.TA]);
                    firstStep(flow, seen, t[b + StepTable.TB] - t[b + StepTable.TA]);
                } else if ((seen & StepTable.SEEN_9) != 0) {
                    phase(flow, true, Phase.GPU_WAIT, t[b + StepTable.TC] - t[b + StepTable.TA]);
                    firstStep(flow, seen, t[b + StepTable.TC] - t[b + StepTable.TA]);
                }
            }
            if ((seen & StepTable.SEEN_9) != 0) {
                if ((seen & StepTable.SEEN_20) != 0) {
                    phase(flow, true, Phase.PEER_WAIT, t[b + StepTable.TC] - t[b + StepTable.TB]);
                }
                phase(flow, true, Phase.NETWORK, timeNs - t[b + StepTable.TC]);
            }
        } else {
            if ((seen & StepTable.SEEN_11) != 0) {
                if ((seen & StepTable.SEEN_10) != 0) {
                    phase(flow, false, Phase.NETWORK, t[b + StepTable.TB] - t[b + StepTable.TA]);
                    firstStep(flow, seen, t[b + StepTable.TB] - t[b + StepTable.TA]);
                }
                if ((seen & StepTable.SEEN_12) != 0) {
                    phase(flow, false, Phase.FLUSH, t[b + StepTable.TC] - t[b + StepTable.TB]);
                }
            }
            if ((seen & StepTable.SEEN_12) != 0) {
                phase(flow, false, Phase.GPU_CONSUME, timeNs - t[b + StepTable.TC]);
            }
        }
        steps.bury(b, lastNs);
    }

    /**
     * The first step of an op (step index 0): its wait is the op's entry wait, on a receive the time its peer's
     * first data took (10 → 11), on a send the time its own GPU took to fill the first slot (8 → 20 or 9). The
     * first step is where the ranks of a collective meet: a rank that arrives late makes its receivers' entry waits
     * long while its own are short (docs in anomaly/README.md).
     */
    private static void firstStep(final FlowState flow, final long seen, final long d) {
        if ((seen & StepTable.FIRST) != 0 && d >= 0) {
            flow.periodFirstSteps++;
            flow.periodFirstStepWaitNs += d;
        }
    }

    /** One phase duration of a stopped step; a negative one (records out of their order) is absent. */
    private void phase(final FlowState flow, final boolean isSend, final int phase, final long d) {
        if (d >= 0) {
            flow.phase(PhaseBuckets.slot(phase, isSend), d);
            phaseHistograms.record(isSend, phase, d);
        }
    }

    @Override
    public void onQpStart(
            final long wrKey,
            final int device,
            final long qpNum,
            final int opcode,
            final long length,
            final long timeNs) {
        if (!advance(timeNs)) {
            return;
        }
        final int b = steps.probeInsert(wrKey);
        if (b < 0 && b != Integer.MIN_VALUE) {
            counters.duplicateRecords++;
            return;
        }
        final FlowState flow = qpFlows.flow(host, device, qpNum, timeNs);
        if (flow == null) {
            counters.droppedFlowTableFull++;
            return;
        }
        if (b == Integer.MIN_VALUE) {
            counters.droppedStepTableFull++;
            return;
        }
        // A work request is a send-like step posted at its start (state 9) with its length known.
        final int r = steps.occupy(b, wrKey, flow.id, StepTable.SEND | StepTable.SEEN_9, host.index, timeNs);
        final long[] t = steps.t;
        t[r + StepTable.TC] = timeNs;
        t[r + StepTable.BYTES] = length;
        post(t, r, flow, length);
        flow.lastActivityNs = latest(flow.lastActivityNs, timeNs);
    }

    @Override
    public void onQpStop(final long wrKey, final long timeNs) {
        final int b = stopLive(wrKey, timeNs);
        if (b < 0) {
            return;
        }
        final long[] t = steps.t;
        final FlowState flow = flowById[StepTable.flowId(t[b + StepTable.FLOW])];
        flow.lastActivityNs = latest(flow.lastActivityNs, timeNs);
        complete(t, b, flow, timeNs);
        final long d = timeNs - t[b + StepTable.TC];
        if (d >= 0) {
            // The work request's latency, post to completion, is the QP flow's NETWORK phase.
            flow.phase(PhaseBuckets.slot(Phase.NETWORK, true), d);
        }
        // A work request's only times are its start and this stop (its TC is its start).
        steps.bury(b, latest(t[b + StepTable.START], timeNs));
    }

    @Override
    public void onCollStart(
            final long collKey,
            final long commHash,
            final int rank,
            final int nranks,
            final int func,
            final int algo,
            final int proto,
            final long count,
            final int datatypeSize,
            final int nChannels,
            final long seqNumber,
            final long timeNs) {
        if (advance(timeNs)) {
            collectives.onCollStart(
                    host,
                    collKey,
                    commHash,
                    rank,
                    nranks,
                    func,
                    algo,
                    proto,
                    count,
                    datatypeSize,
                    nChannels,
                    seqNumber,
                    timeNs);
        }
    }

    @Override
    public void onCollStop(final long collKey, final long timeNs) {
        if (advance(timeNs)) {
            collectives.onCollStop(collKey, timeNs);
        }
    }

    @Override
    public void onKernelChStart(
            final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
        if (advance(timeNs)) {
            collectives.onKernelChStart(host, chKey, collKey, channel, pTimerNs, timeNs);
        }
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
        if (advance(timeNs)) {
            collectives.onKernelChStop(host, chKey, pTimerNs, timeNs);
        }
    }

    /** Emits the current period's summaries now (e.g. at the end of a replay) and starts the next period. */
    public void flush() {
        for (int i = 0; i < hosts.activeCount(); i++) {
            final HostState h = hosts.active(i);
            if (h.started) {
                periodSweep.close(h, h.periodEndNs);
            }
        }
    }

    // Internals.

    private OpState findOp(final long opKey) {
        final OpState op = opSlots[(int) opKey & opMask];
        if (op != null && op.key == opKey) {
            return op;
        }
        return opsSpilled == 0 ? null : opByKey.get(opKey);
    }

    /** Adds a live op whose key is not live. */
    private void putOp(final OpState op) {
        final int slot = (int) op.key & opMask;
        if (opSlots[slot] == null) {
            opSlots[slot] = op;
        } else {
            opByKey.put(op.key, op);
            opsSpilled++;
        }
    }

    private OpState removeOp(final long opKey) {
        final int slot = (int) opKey & opMask;
        final OpState op = opSlots[slot];
        if (op != null && op.key == opKey) {
            opSlots[slot] = null;
            return op;
        }
        if (opsSpilled == 0) {
            return null;
        }
        final OpState spilled = opByKey.remove(opKey);
        if (spilled != null) {
            opsSpilled--;
        }
        return spilled;
    }

    /**
     * The slot base of a record's step if it is live and not stopped, else -1; a record for a stopped step is a
     * duplicate. A live step's flow is live: an evicted flow's steps go with it ({@link PeriodSweep}), so no
     * generation check here.
     */
    private int live(final long stepKey) {
        final int b = steps.find(stepKey);
        if (b < 0) {
            // A stopped step is a tombstone (StepTable.bury): its records are duplicates.
            if (b == StepTable.BURIED) {
                counters.duplicateRecords++;
            } else {
                counters.unknownStepRecords++;
            }
            return -1;
        }
        return b;
    }

    private static void post(final long[] t, final int b, final FlowState flow, final long bytes) {
        final long flags = t[b + StepTable.FLAGS];
        if ((flags & StepTable.COMPLETED) == 0) {
            t[b + StepTable.FLAGS] = flags | StepTable.POSTED;
            flow.outstandingSteps++;
            flow.outstandingBytes += bytes;
            flow.periodPosts++;
        }
    }

    /** When the work was posted to the network: 9 (send) / 10 (recv), else the step's start. */
    private static long postNs(final long[] t, final int b) {
        final long flags = t[b + StepTable.FLAGS];
        if ((flags & StepTable.SEND) != 0) {
            return (flags & StepTable.SEEN_9) != 0 ? t[b + StepTable.TC] : t[b + StepTable.START];
        }
        return (flags & StepTable.SEEN_10) != 0 ? t[b + StepTable.TA] : t[b + StepTable.START];
    }

    private void complete(final long[] t, final int b, final FlowState flow, final long completeNs) {
        final long flags = t[b + StepTable.FLAGS];
        t[b + StepTable.FLAGS] = flags | StepTable.COMPLETED;
        final long bytes = t[b + StepTable.BYTES];
        if ((flags & StepTable.POSTED) != 0) {
            flow.outstandingSteps--;
            if ((flags & StepTable.SEND) != 0) {
                flow.outstandingBytes -= bytes;
            }
        }
        flow.periodCompletions++;
        flow.periodBytes += bytes;
        if (CompletionWindow.recordUnique(flow.window, t[b + StepTable.KEY], postNs(t, b), completeNs, bytes)
                == CompletionWindow.LATE) {
            counters.lateCompletions++;
        }
        if (flow.series != null) {
            flow.series.add(completeNs - flow.host.seriesEpochNs, bytes);
        }
    }

    private FlowState flow(
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {
        for (int attempt = 0; ; attempt++) {
            final long key = FlowState.key(hostId, commHash, rank, peer, channel, isSend, attempt);
            final FlowState f = flowByKey.get(key);
            if (f == null) {
                final FlowState fresh = flows.acquire();
                if (fresh == null) {
                    return null;
                }
                fresh.reset(key, host, commHash, rank, peer, channel, isSend, timeNs);
                flowByKey.put(key, fresh);
                return fresh;
            }
            if (f.is(hostId, commHash, rank, peer, channel, isSend)) {
                return f;
            }
        }
    }

    /** Fills {@code target} with the current state of a QP flow. @return false when the flow is not live. */
    public boolean snapshotQp(final long hostId, final int device, final long qpNum, final FlowSummary target) {
        final FlowState f = qpFlows.find(hostId, device, qpNum);
        if (f == null) {
            return false;
        }
        target.copyFrom(periodSweep.fill(f));
        return true;
    }

    /** Lifetime bytes of a QP flow; -1 when the flow is not live. */
    public long totalBytesQp(final long hostId, final int device, final long qpNum) {
        final FlowState f = qpFlows.find(hostId, device, qpNum);
        return f == null ? -1 : f.totalBytes();
    }

    private static long latest(final long a, final long b) {
        return b - a > 0 ? b : a;
    }

    /** The later of two event times (signed difference: a wrapping clock works). */
    static long latestOf(final long a, final long b) {
        return latest(a, b);
    }

    /** Moves the current host's period on to {@code timeNs}; false when the event has no host (table full). */
    private boolean advance(final long timeNs) {
        final HostState h = host;
        if (h == null) {
            counters.droppedHostTableFull++;
            return false;
        }
        if (!h.started) {
            h.started = true;
            h.seriesEpochNs = timeNs - Math.floorMod(timeNs, 1_000_000_000L);
            h.periodStartNs = Math.floorDiv(timeNs, config.periodNs) * config.periodNs;
            h.periodEndNs = h.periodStartNs + config.periodNs;
            return true;
        }
        if (timeNs - h.periodEndNs >= 0) {
            final long gap = timeNs - h.periodEndNs;
            periodSweep.close(h, h.periodEndNs + gap - Math.floorMod(gap, config.periodNs));
        }
        return true;
    }

    public long droppedAggregateTableFull() {
        return counters.droppedAggregateTableFull;
    }

    public long droppedCollectiveTableFull() {
        return counters.droppedCollectiveTableFull;
    }

    /** Records of unknown collectives or KernelCh events (or children of unknown parents). */
    public long unknownCollRecords() {
        return counters.unknownCollRecords;
    }

    public long collectivesEmitted() {
        return counters.collectivesEmitted;
    }

    /** Collectives emitted at the collective timeout, not all channels reported. */
    public long collectivesIncomplete() {
        return counters.collectivesIncomplete;
    }

    /** Collectives dropped: no host stop within the step timeout. */
    public long collectivesTimedOut() {
        return counters.collectivesTimedOut;
    }

    public int liveCollectives() {
        return collectives.live();
    }

    // GPU clock.

    /**
     * The passive GPU clock estimate of a host ({@link GpuClockEstimate}). @return false when the host is unknown
     * or has no KernelCh start yet.
     */
    public boolean gpuClock(final long hostId, final GpuClockEstimate target) {
        final HostState h = hostById.get(hostId);
        if (h == null || h.clockSamples == 0) {
            return false;
        }
        target.hostId = hostId;
        target.commHash = 0;
        target.rank = -1;
        target.buckets = 0;
        target.steps = 0;
        target.atHostNs = 0;
        target.driftKnown = false;
        target.driftPpm = 0;
        target.samples = h.clockSamples;
        target.offsetNs = h.clockMinNs;
        target.errorBoundNs = config.gpuPollLagBoundNs;
        target.settled = false;
        target.spreadNs = h.clockSamples < 2 ? -1 : h.clockNextNs - h.clockMinNs;
        return true;
    }

    /**
     * The clock estimate of one GPU, (host, commHash, rank) of its collectives, at its latest sample's host time
     * ({@link GpuClock}: windowed minimum, drift, steps). @return false when that GPU has no KernelCh start yet.
     */
    public boolean gpuClock(final long hostId, final long commHash, final int rank, final GpuClockEstimate target) {
        final GpuClock g = gpuClocks.find(hostId, commHash, rank);
        return g != null && g.estimate(g.lastHostNs, config, target);
    }

    /** {@link #gpuClock(long, long, int, GpuClockEstimate)} with the offset given at host time {@code atHostNs}. */
    public boolean gpuClock(
            final long hostId,
            final long commHash,
            final int rank,
            final long atHostNs,
            final GpuClockEstimate target) {
        final GpuClock g = gpuClocks.find(hostId, commHash, rank);
        return g != null && g.estimate(atHostNs, config, target);
    }

    public int liveGpuClocks() {
        return gpuClocks.live();
    }

    public long droppedGpuClockTableFull() {
        return counters.droppedGpuClockTableFull;
    }

    /** KernelCh starts held until their Coll START came, then attached. */
    public long pendingKernelChAttached() {
        return counters.pendingKernelChAttached;
    }

    public int pendingKernelChannels() {
        return collectives.pendingCount();
    }

    // Queries and snapshots.

    public int liveFlows() {
        return flows.activeCount();
    }

    public int liveOps() {
        return ops.activeCount();
    }

    public int liveSteps() {
        return steps.count();
    }

    /**
     * Fills {@code target} with the current state of the flow, as at a period's end (period fields hold the
     * period so far). @return false when the flow is not live.
     */
    public boolean snapshot(
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final FlowSummary target) {
        final FlowState f = find(hostId, commHash, rank, peer, channel, isSend);
        if (f == null) {
            return false;
        }
        target.copyFrom(periodSweep.fill(f));
        return true;
    }

    /** {@link #snapshot(long, long, int, int, int, boolean, FlowSummary)} of host 0. */
    public boolean snapshot(
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final FlowSummary target) {
        return snapshot(0, commHash, rank, peer, channel, isSend, target);
    }

    /** Lifetime bytes of a flow; -1 when the flow is not live. */
    public long totalBytes(
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend) {
        final FlowState f = find(hostId, commHash, rank, peer, channel, isSend);
        return f == null ? -1 : f.totalBytes();
    }

    /** {@link #totalBytes(long, long, int, int, int, boolean)} of host 0. */
    public long totalBytes(
            final long commHash, final int rank, final int peer, final int channel, final boolean isSend) {
        return totalBytes(0, commHash, rank, peer, channel, isSend);
    }

    private FlowState find(
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend) {
        for (int attempt = 0; ; attempt++) {
            final FlowState f = flowByKey.get(FlowState.key(hostId, commHash, rank, peer, channel, isSend, attempt));
            if (f == null || f.is(hostId, commHash, rank, peer, channel, isSend)) {
                return f;
            }
        }
    }

    /**
     * The series of a step flow (null when not live or series are off): valid until the flow is evicted; read
     * between calls. Bucket indexes are relative to {@link #seriesEpochNs(long)}.
     */
    public Series series(
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend) {
        final FlowState f = find(hostId, commHash, rank, peer, channel, isSend);
        return f == null ? null : f.series;
    }

    /** The series of a QP flow (null when not live or series are off). */
    public Series seriesQp(final long hostId, final int device, final long qpNum) {
        final FlowState f = qpFlows.find(hostId, device, qpNum);
        return f == null ? null : f.series;
    }

    /** The origin of a host's series buckets (its first event time floored to a second); 0 when unknown. */
    public long seriesEpochNs(final long hostId) {
        final HostState h = hostById.get(hostId);
        return h == null ? 0 : h.seriesEpochNs;
    }

    public int liveHosts() {
        return hosts.activeCount();
    }

    public long droppedHostTableFull() {
        return counters.droppedHostTableFull;
    }

    /** Adds the phase durations recorded so far (all flows of one direction) to {@code target}. */
    public void addPhaseHistogramTo(final boolean isSend, final int phase, final Histogram target) {
        phaseHistograms.addTo(isSend, phase, target);
    }

    public long duplicateRecords() {
        return counters.duplicateRecords;
    }

    public long lateCompletions() {
        return counters.lateCompletions;
    }

    public long unknownOpRecords() {
        return counters.unknownOpRecords;
    }

    public long unknownStepRecords() {
        return counters.unknownStepRecords;
    }

    public long flowsEvicted() {
        return counters.flowsEvicted;
    }

    public long opsTimedOut() {
        return counters.opsTimedOut;
    }

    public long stepsTimedOut() {
        return counters.stepsTimedOut;
    }

    public long droppedFlowTableFull() {
        return counters.droppedFlowTableFull;
    }

    public long droppedOpTableFull() {
        return counters.droppedOpTableFull;
    }

    public long droppedStepTableFull() {
        return counters.droppedStepTableFull;
    }

    @Override
    public String toString() {
        return "WindowEngine{" + config + ", flows=" + liveFlows() + ", ops=" + liveOps() + ", steps=" + liveSteps()
                + ", duplicates="
                + counters.duplicateRecords + ", late=" + counters.lateCompletions + ", unknownOp="
                + counters.unknownOpRecords + ", unknownStep=" + counters.unknownStepRecords + ", evicted="
                + counters.flowsEvicted + ", stepsTimedOut=" + counters.stepsTimedOut + '}';
    }
}
