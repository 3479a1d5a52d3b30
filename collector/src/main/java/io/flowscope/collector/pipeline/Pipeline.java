package io.flowscope.collector.pipeline;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.input.TelemetryListener;
import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The engines, on one thread: input calls go to the journal (when one is attached), then the window engine;
 * its flow and collective summaries go to the anomaly stage and to the latest-value tables; anomalies go to the
 * listener (the live stream) and the journal. {@link #snapshot} copies what the HTTP side serves into an immutable
 * {@link Snapshot}. Nothing here is shared: the drain thread owns it (or the replay command).
 * <p>
 * An exception thrown by one of them is caught where it was thrown, counted in {@link #failures()} and logged
 * (rate-limited), and the rest goes on: the journal has already taken the input (it is written before the engine
 * sees it), an anomaly stage that throws on a summary does not stop the window engine from emitting the period's
 * other summaries, a listener that throws does not stop the other announcements, and the drain loop gets the next
 * batch. One bad input costs what it touched, never the service.
 */
public final class Pipeline implements TelemetryListener, AnomalySink {
    /**
     * The event type of an anomaly still open at the end of the catch-up that an earlier run announced (always
     * {@link AnomalyEvent#recovered()}): see {@link #endCatchUp}.
     */
    public static final String STILL_OPEN = "still-open";

    private final WindowEngine engine;
    private final AnomalyStage stage;
    private JournalWriter journal;
    private final Consumer<AnomalyEvent> anomalyListener;
    /** Anomaly events of the current batch, announced once the journal has written it ({@link #endBatch}). */
    private final List<AnomalyEvent> pendingAnnouncements = new ArrayList<>();

    private final Set<Long> announcedBefore = new HashSet<>();
    private final Map<Long, Anomaly> anomalies = new LinkedHashMap<>();
    private final List<AnomalyEvent> history = new ArrayList<>();
    private final Long2ObjectHashMap<FlowSummary> latest = new Long2ObjectHashMap<>();
    /** Links against their baselines and ranks' waits, for the live page. */
    private final LiveTracker live = new LiveTracker();

    private long idleTicks;
    private final Long2LongHashMap hostTimes = new Long2LongHashMap(Long.MIN_VALUE);
    private long currentHost;
    /** The current host's latest event time, written to {@link #hostTimes} when the host changes or is read. */
    private long currentHostTimeNs = Long.MIN_VALUE;
    /** Whether {@link #currentHost} was said by an {@link #onHost} call (before: host 0 by default). */
    private boolean hostSaid;

    private long currentTimeNs = Long.MIN_VALUE;
    private long events;
    /** {@link #events} at the last {@link #finish}: -1 before any. */
    private long eventsAtFinish = -1;

    private long summaries;
    private long collectives;
    private boolean anomaliesChanged = true;
    private boolean catchingUp;
    private FlowSummarySink summaryTap;
    private LongFunction<String> hostNames = id -> null;
    /** The rings' communicator ranks (their processes and GPUs): what names a culprit. */
    private final RankIdentities rankIdentities = new RankIdentities();
    /** Each anomaly's culprit as named (by anomaly id), for the API; copied into snapshots when it changes. */
    private final Map<Long, RankIdentity> culprits = new LinkedHashMap<>();

    private Map<Long, RankIdentity> culpritMap = Map.of();
    private CollectiveSink collectiveTap;
    private List<Anomaly> anomalyList = List.of();
    private final IngestFailures failures;
    /** Tells the stage one host's time; a field, so that ending a batch allocates and boxes nothing. */
    private final org.agrona.collections.LongLongConsumer advanceHost = this::advanceStage;

    public Pipeline(
            final WindowConfig windowConfig,
            final Function<AnomalySink, AnomalyStage> stageFactory,
            final Consumer<AnomalyEvent> anomalyListener) {
        this(windowConfig, stageFactory, anomalyListener, new IngestFailures());
    }

    public Pipeline(
            final WindowConfig windowConfig,
            final Function<AnomalySink, AnomalyStage> stageFactory,
            final Consumer<AnomalyEvent> anomalyListener,
            final IngestFailures failures) {
        this.failures = failures;
        this.stage = stageFactory.apply(this);
        this.anomalyListener = anomalyListener;
        this.engine = new WindowEngine(windowConfig, this::onFlowSummary, this::onCollectiveSummary);
    }

    /** The window configuration the service and replay use. */
    public static WindowConfig windowConfig(final CollectorConfig c) {
        return new WindowConfig()
                .periodNs(c.windowPeriodMs() * 1_000_000L)
                .windowSize(c.windowSize())
                .maxFlows(8192)
                .maxOps(16_384)
                .maxSteps(131_072)
                .maxHosts(256);
    }

    /** Also hands every flow and collective summary to these (trace export); null for none. */
    public void tap(final FlowSummarySink summaries, final CollectiveSink collectives) {
        this.summaryTap = summaries;
        this.collectiveTap = collectives;
    }

    public void journal(final JournalWriter journal) {
        this.journal = journal;
    }

    /** Anomaly ids announced by an earlier run (from the journal): not announced again. */
    public void announcedBefore(final long id) {
        announcedBefore.add(id);
    }

    public WindowEngine engine() {
        return engine;
    }

    /** Exceptions caught while handling input (by stage), here and in the drain loop around it. */
    public IngestFailures failures() {
        return failures;
    }

    public long events() {
        return events;
    }

    public long summaries() {
        return summaries;
    }

    public long collectives() {
        return collectives;
    }

    public long lastEventNs() {
        return currentTimeNs;
    }

    /** The latest event time of a host (its own clock), or {@link Long#MIN_VALUE} before its first event. */
    public long hostTimeNs(final long hostId) {
        return hostId == currentHost && currentHostTimeNs != Long.MIN_VALUE ? currentHostTimeNs : hostTimes.get(hostId);
    }

    /** The host of the current input calls. */
    public long currentHost() {
        return currentHost;
    }

    /**
     * An idle host's clock moves on ({@link IdleHostClock}, the simulator between its steps, a replay's journaled
     * ticks): journaled and handed to the window engine as {@code advanceTo}, not counted as an ingested event.
     * The current host is left as it was, here and in the journal and the engine.
     */
    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        final long saved = currentHost;
        if (saved != hostId) {
            saveHostTime();
            currentHost = hostId;
        }
        currentTimeNs = timeNs;
        currentHostTimeNs = timeNs;
        if (journal != null) {
            journal.advanceTo(hostId, timeNs);
        }
        try {
            engine.advanceTo(hostId, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "idle tick", e);
        }
        idleTicks++;
        if (saved != hostId) {
            saveHostTime();
            currentHost = saved;
            currentHostTimeNs = hostTimes.get(saved);
        }
    }

    /** Idle ticks fed so far. */
    public long idleTicks() {
        return idleTicks;
    }

    /** Anomalies open now. */
    public long snapshotOpenCount() {
        long n = 0;
        for (final Anomaly a : anomalies.values()) {
            if (a.isOpen()) {
                n++;
            }
        }
        return n;
    }

    /** Every anomaly event so far, in order (replay prints these). */
    public List<AnomalyEvent> history() {
        return history;
    }

    /**
     * End of a drain batch: the anomaly stage learns how far each host's time went, the journal writes the batch,
     * then the batch's anomalies are announced. Journal first: an announced anomaly is always in the journal with
     * the input that raised it, so a service killed right after announcing finds it on restart and does not
     * announce it again.
     */
    public void endBatch(final long wallNowNs) {
        saveHostTime();
        hostTimes.forEachLong(advanceHost);
        if (journal != null) {
            journal.flush(wallNowNs);
        }
        announcePending();
    }

    /**
     * End of input (the live run stopping, a replay's end, the journal's end marker): every host's period ends now.
     * Once per input: a second call with no event since (a replay's end right after the live run's end marker) would
     * end another, empty, period the live run never ended. Returns whether it ended the periods.
     */
    public boolean finish() {
        if (events == eventsAtFinish) {
            return false;
        }
        eventsAtFinish = events;
        try {
            engine.flush();
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "end of input", e);
        }
        saveHostTime();
        hostTimes.forEachLong(advanceHost);
        announcePending();
        return true;
    }

    /** One host at a time: a stage that throws on one host's clock still hears the others'. */
    private void advanceStage(final long hostId, final long timeNs) {
        try {
            stage.advanceTo(hostId, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.ANOMALY, "advanceTo(host " + FlowRow.hex(hostId) + ")", e);
        }
    }

    private void announcePending() {
        for (int i = 0; i < pendingAnnouncements.size(); i++) {
            try {
                anomalyListener.accept(pendingAnnouncements.get(i));
            } catch (final RuntimeException e) {
                failures.record(IngestFailures.Stage.OUTPUT, "anomaly announcement", e);
            }
        }
        pendingAnnouncements.clear();
    }

    private void time(final long t) {
        events++;
        currentTimeNs = t;
        currentHostTimeNs = t;
    }

    /** The current host's latest time into {@link #hostTimes} (kept in a field per record: no map write per record). */
    private void saveHostTime() {
        if (currentHostTimeNs != Long.MIN_VALUE) {
            hostTimes.put(currentHost, currentHostTimeNs);
        }
    }

    // ---- input ----------------------------------------------------------------------------------------------

    /** A ring's communicator rank (its process and GPU): journaled, and kept to name culprits with. */
    @Override
    public void onRingComm(
            final long hostId,
            final String hostname,
            final int pid,
            final long commHash,
            final int rank,
            final int nranks,
            final int cudaDevice,
            final String pciBusId) {
        if (journal != null) {
            journal.onRingComm(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId);
        }
        rankIdentities.put(new RankIdentity(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId));
    }

    /** The GPU UUID of a rank {@link #onRingComm} described: journaled, and kept with its identity. */
    @Override
    public void onRingGpuUuid(
            final long hostId, final int pid, final long commHash, final int rank, final String gpuUuid) {
        if (journal != null) {
            journal.onRingGpuUuid(hostId, pid, commHash, rank, gpuUuid);
        }
        rankIdentities.gpuUuid(hostId, pid, commHash, rank, gpuUuid);
    }

    @Override
    public void onHost(final long hostId) {
        if (hostId == currentHost && hostSaid) {
            return; // the ring adapter says the host before every record: a change is news, the same host is not
        }
        saveHostTime();
        currentHost = hostId;
        currentHostTimeNs = hostTimes.get(hostId);
        hostSaid = true;
        if (journal != null) {
            journal.onHost(hostId);
        }
        try {
            engine.onHost(hostId);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "host", e);
        }
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
        time(timeNs);
        if (journal != null) {
            journal.onProxyOpStart(opKey, commHash, rank, peer, channel, isSend, timeNs);
        }
        try {
            engine.onProxyOpStart(opKey, commHash, rank, peer, channel, isSend, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "ProxyOp start", e);
        }
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onProxyOpStop(opKey, timeNs);
        }
        try {
            engine.onProxyOpStop(opKey, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "ProxyOp stop", e);
        }
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onProxyStepStart(stepKey, opKey, step, timeNs);
        }
        try {
            engine.onProxyStepStart(stepKey, opKey, step, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "ProxyStep start", e);
        }
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onProxyStepState(stepKey, state, transSize, timeNs);
        }
        try {
            engine.onProxyStepState(stepKey, state, transSize, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "ProxyStep state", e);
        }
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onProxyStepStop(stepKey, timeNs);
        }
        try {
            engine.onProxyStepStop(stepKey, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "ProxyStep stop", e);
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
        time(timeNs);
        if (journal != null) {
            journal.onQpStart(wrKey, device, qpNum, opcode, length, timeNs);
        }
        try {
            engine.onQpStart(wrKey, device, qpNum, opcode, length, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "QP work request posted", e);
        }
    }

    @Override
    public void onQpStop(final long wrKey, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onQpStop(wrKey, timeNs);
        }
        try {
            engine.onQpStop(wrKey, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "QP work request completed", e);
        }
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
        time(timeNs);
        if (journal != null) {
            journal.onCollStart(
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
        try {
            engine.onCollStart(
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
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "collective start", e);
        }
    }

    @Override
    public void onCollStop(final long collKey, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onCollStop(collKey, timeNs);
        }
        try {
            engine.onCollStop(collKey, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "collective stop", e);
        }
    }

    @Override
    public void onKernelChStart(
            final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onKernelChStart(chKey, collKey, channel, pTimerNs, timeNs);
        }
        try {
            engine.onKernelChStart(chKey, collKey, channel, pTimerNs, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "KernelCh start", e);
        }
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
        time(timeNs);
        if (journal != null) {
            journal.onKernelChStop(chKey, pTimerNs, timeNs);
        }
        try {
            engine.onKernelChStop(chKey, pTimerNs, timeNs);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.WINDOW, "KernelCh stop", e);
        }
    }

    // ---- window engine output -------------------------------------------------------------------------------

    private void onFlowSummary(final FlowSummary s) {
        summaries++;
        try {
            stage.onSummary(s);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.ANOMALY, "flow summary", e);
        }
        if (summaryTap != null) {
            try {
                summaryTap.onSummary(s);
            } catch (final RuntimeException e) {
                failures.record(IngestFailures.Stage.OUTPUT, "flow summary tap", e);
            }
        }
        try {
            live.onSummary(s);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.OUTPUT, "live page tracker", e);
        }
        final long key = key(s);
        FlowSummary copy = latest.get(key);
        if (copy == null) {
            copy = new FlowSummary();
            latest.put(key, copy);
        }
        copy.copyFrom(s);
    }

    private void onCollectiveSummary(final CollectiveSummary s) {
        collectives++;
        try {
            stage.onCollective(s);
        } catch (final RuntimeException e) {
            failures.record(IngestFailures.Stage.ANOMALY, "collective summary", e);
        }
        if (collectiveTap != null) {
            try {
                collectiveTap.onCollective(s);
            } catch (final RuntimeException e) {
                failures.record(IngestFailures.Stage.OUTPUT, "collective summary tap", e);
            }
        }
    }

    static long key(final FlowSummary s) {
        long h = s.kind();
        h = mix(h, s.hostId());
        if (s.kind() == FlowSummary.KIND_QP) {
            h = mix(h, s.device());
            return mix(h, s.qpNum());
        }
        h = mix(h, s.commHash());
        h = mix(h, s.rank());
        h = mix(h, s.peer());
        h = mix(h, s.channel());
        return mix(h, s.isSend() ? 1 : 0);
    }

    private static long mix(final long h, final long v) {
        long x = (h ^ v) * 0x9E3779B97F4A7C15L;
        x ^= x >>> 29;
        return x * 0xBF58476D1CE4E5B9L;
    }

    // ---- anomaly stage output -------------------------------------------------------------------------------

    @Override
    public void onOpened(final Anomaly a) {
        publish("opened", a);
    }

    @Override
    public void onUpdated(final Anomaly a) {
        publish("updated", a);
    }

    @Override
    public void onResolved(final Anomaly a) {
        publish("resolved", a);
    }

    /**
     * Where a culprit's host id has a name (a ring's hostname, a simulated node's): live, the source's; in a replay,
     * the journal's ring attachments. Unset: no names.
     */
    /** Who the ranks are, for the sinks (thread-safe: the entries are written on this pipeline's thread). */
    public io.flowscope.sink.RankNames rankNames() {
        return rankIdentities.rankNames();
    }

    public void hostNames(final LongFunction<String> names) {
        this.hostNames = names;
    }

    /**
     * Publishes the anomaly as operators read it: its summary opens with its culprit where known, a rank as
     * {@code host gpu-node-17 pid 48213 rank 1 GPU 1 (0000:19:00.0)} (the rings' communicator entries), else its
     * host's name ({@link RankIdentities}).
     */
    private void publish(final String type, final Anomaly engineAnomaly) {
        final RankIdentity who = rankIdentities.culprit(engineAnomaly.culprit(), hostNames);
        announce(type, RankIdentities.named(engineAnomaly, who), who);
    }

    /**
     * Records the anomaly as published and queues its announcement. Recovered (derived, not announced): everything
     * while catching up, and an opening already announced. Not an update or a resolution once caught up: they are
     * news, also for an anomaly an earlier run announced.
     */
    private void announce(final String type, final Anomaly a, final RankIdentity who) {
        final long mono = System.nanoTime();
        anomalies.put(a.id(), a);
        if (who != null) {
            culprits.put(a.id(), who);
        }
        anomaliesChanged = true;
        final boolean recovered = catchingUp || "opened".equals(type) && announcedBefore.contains(a.id());
        final AnomalyEvent e = new AnomalyEvent(type, a, System.currentTimeMillis(), mono, recovered, who);
        history.add(e);
        if (history.size() > 10_000) {
            history.remove(0);
        }
        if (recovered) {
            return;
        }
        if (journal != null && !"updated".equals(type)) {
            journal.anomaly(a.id(), "opened".equals(type), a.summary());
        }
        if ("opened".equals(type)) {
            announcedBefore.add(a.id());
        }
        pendingAnnouncements.add(e);
    }

    /**
     * While catching up on the journal of an earlier run: anomalies are derived (state, list) but neither
     * announced nor journaled; {@link #endCatchUp} then announces those still open that the earlier run had not.
     */
    public void beginCatchUp() {
        catchingUp = true;
    }

    /**
     * The end of the catch-up: an anomaly still open that the earlier run did not announce is announced now; one it
     * did is handed over as {@link #STILL_OPEN} (recovered: for the sinks that keep state, such as the Alertmanager
     * webhook re-sending its alert, which would otherwise expire while the anomaly lasts; nothing that announces
     * each event gets it again). Either one's resolution in this run is announced as any other.
     */
    public void endCatchUp() {
        catchingUp = false;
        for (final Anomaly a : List.copyOf(anomalies.values())) {
            if (!a.isOpen()) {
                continue;
            }
            final RankIdentity who = culprits.get(a.id());
            if (!announcedBefore.contains(a.id())) {
                announce("opened", a, who); // already named when it was derived
            } else {
                pendingAnnouncements.add(
                        new AnomalyEvent(STILL_OPEN, a, System.currentTimeMillis(), System.nanoTime(), true, who));
            }
        }
        announcePending();
    }

    /** Copies the latest summaries and anomalies into an immutable snapshot. */
    public Snapshot snapshot(final long wallNowMs, final Stats stats) {
        final List<FlowRow> flows = new ArrayList<>();
        final List<FlowRow> ranks = new ArrayList<>();
        final List<FlowRow> links = new ArrayList<>();
        final List<FlowRow> qps = new ArrayList<>();
        final List<FlowRow> comms = new ArrayList<>();
        latest.forEach((k, s) -> {
            final String source = hostNames.apply(s.hostId());
            final FlowRow row = FlowRow.of(
                    s,
                    source != null ? source : rankIdentities.hostname(s.hostId()),
                    s.rank() >= 0 && s.commHash() != 0
                            ? rankIdentities.rank(s.hostId(), s.commHash(), s.rank())
                            : null);
            switch (s.kind()) {
                case FlowSummary.KIND_STEP -> flows.add(row);
                case FlowSummary.KIND_QP -> qps.add(row);
                case FlowSummary.KIND_RANK -> ranks.add(row);
                case FlowSummary.KIND_LINK -> links.add(row);
                default -> comms.add(row);
            }
        });
        if (anomaliesChanged) {
            anomalyList = List.copyOf(anomalies.values());
            culpritMap = Map.copyOf(culprits);
            anomaliesChanged = false;
        }
        final Map<Long, Long> hostNow = new HashMap<>();
        saveHostTime();
        hostTimes.forEachLong(hostNow::put);
        return new Snapshot(
                wallNowMs,
                currentTimeNs,
                List.copyOf(flows),
                List.copyOf(ranks),
                List.copyOf(links),
                List.copyOf(qps),
                List.copyOf(comms),
                anomalyList,
                stats,
                culpritMap,
                live.view(rankIdentities::rank),
                Map.copyOf(hostNow));
    }

    /** Drops the latest-value entries whose period ended before {@code cutoffNs} (flows gone quiet). */
    public void expireBefore(final long cutoffNs) {
        latest.values().removeIf(s -> s.periodEndNs() - cutoffNs < 0);
        live.expireBefore(cutoffNs);
    }
}
