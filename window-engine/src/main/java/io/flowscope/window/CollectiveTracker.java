package io.flowscope.window;

import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.Collectives;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Collectives (Coll / P2p records) and their KernelCh children, to one {@link CollectiveSummary} per operation into
 * a {@link CollectiveSink}: GPU start = min over the children's start pTimers, GPU end = max of their state-22
 * pTimers; emitted when the Coll has stopped and every announced channel started and stopped, incomplete at the
 * collective timeout, dropped at the step timeout when never stopped. KernelCh records that come before their
 * Coll START wait in {@link PendingKernelChannels}. Every KernelCh start is a GPU clock sample ({@link GpuClocks}).
 * <p>
 * The engine moves the host's period on ({@code WindowEngine#advance}) before each call and sweeps through
 * {@link #sweep}; pools and maps are sized at construction and never grow.
 */
final class CollectiveTracker {
    private final WindowConfig config;
    private final CollectiveSink collectiveSink;
    private final GpuClocks gpuClocks;
    private final EngineCounters counters;
    private final CollectiveSummary.Builder collective = CollectiveSummary.into(new CollectiveSummary());
    private final GpuClockEstimate clockScratch = new GpuClockEstimate();
    private final Pool<CollState> colls;
    private final Long2ObjectHashMap<CollState> collByKey;
    private final Pool<ChState> channels;
    private final Long2ObjectHashMap<ChState> chByKey;
    /** KernelCh records whose Coll START has not come yet (another ring lane). */
    private final PendingKernelChannels pending;

    CollectiveTracker(
            final WindowConfig config,
            final CollectiveSink collectiveSink,
            final GpuClocks gpuClocks,
            final EngineCounters counters) {
        this.config = config;
        this.collectiveSink = collectiveSink;
        this.gpuClocks = gpuClocks;
        this.counters = counters;
        colls = new Pool<>(config.maxCollectives, CollState::new);
        collByKey = new Long2ObjectHashMap<>(config.maxCollectives * 2, 0.55f);
        channels = new Pool<>(config.maxKernelChannels, ChState::new);
        chByKey = new Long2ObjectHashMap<>(config.maxKernelChannels * 2, 0.55f);
        pending = new PendingKernelChannels(config.maxPendingKernelChannels);
    }

    int live() {
        return colls.activeCount();
    }

    int pendingCount() {
        return pending.count();
    }

    void onCollStart(
            final HostState host,
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
        if (collByKey.get(collKey) != null) {
            counters.duplicateRecords++;
            return;
        }
        final CollState c = colls.acquire();
        if (c == null) {
            counters.droppedCollectiveTableFull++;
            return;
        }
        c.key = collKey;
        c.host = host;
        c.commHash = commHash;
        c.rank = rank;
        c.nranks = nranks;
        c.func = func;
        c.algo = algo;
        c.proto = proto;
        c.count = count;
        c.datatypeSize = datatypeSize;
        c.nChannels = nChannels;
        c.seqNumber = seqNumber;
        c.hostStartNs = timeNs;
        c.hostStopNs = timeNs;
        c.stopped = false;
        c.chStarted = 0;
        c.chStopped = 0;
        c.gpuStartNs = 0;
        c.gpuEndNs = 0;
        c.lastNs = timeNs;
        collByKey.put(collKey, c);
        if (pending.count() != 0) {
            attachPending(c);
        }
    }

    /** Attaches the pending KernelCh records of {@code c} (same host, its key), in table order. */
    private void attachPending(final CollState c) {
        final PendingKernelChannels p = pending;
        for (int i = 0; i < p.count(); ) {
            if (p.coll[i] == c.key && p.host[i] == c.host) {
                counters.pendingKernelChAttached++;
                final ChState ch = startChannel(p.key[i], c, p.pTimer[i], p.ns[i]);
                if (ch != null && p.stopped[i]) {
                    stopChannel(ch, p.stopPTimer[i], p.stopNs[i]);
                }
                p.remove(i);
            } else {
                i++;
            }
        }
    }

    void onCollStop(final long collKey, final long timeNs) {
        final CollState c = collByKey.get(collKey);
        if (c == null) {
            counters.unknownCollRecords++;
            return;
        }
        if (c.stopped) {
            counters.duplicateRecords++;
            return;
        }
        c.stopped = true;
        c.hostStopNs = timeNs;
        c.lastNs = WindowEngine.latestOf(c.lastNs, timeNs);
        if (c.chStopped >= c.nChannels && c.chStopped == c.chStarted) {
            emitCollective(c, true);
        }
    }

    void onKernelChStart(
            final HostState host,
            final long chKey,
            final long collKey,
            final int channel,
            final long pTimerNs,
            final long timeNs) {
        if (chByKey.get(chKey) != null || (pending.count() != 0 && pending.find(chKey, host) >= 0)) {
            counters.duplicateRecords++;
            return;
        }
        // A host-level clock sample whatever the parent: the GPU start and its host time are all it needs.
        GpuClocks.sampleHost(host, timeNs - pTimerNs);
        final CollState c = collByKey.get(collKey);
        if (c == null) {
            // Maybe its Coll START is still on its way (another ring lane): held for pendingKernelChNs.
            if (!pending.add(chKey, collKey, channel, pTimerNs, timeNs, host)) {
                counters.unknownCollRecords++;
            }
            return;
        }
        startChannel(chKey, c, pTimerNs, timeNs);
    }

    private ChState startChannel(final long chKey, final CollState c, final long pTimerNs, final long timeNs) {
        final GpuClock clock = gpuClocks.acquire(c.host, c.commHash, c.rank);
        if (clock != null) {
            clock.sample(timeNs, timeNs - pTimerNs, config);
        }
        final ChState ch = channels.acquire();
        if (ch == null) {
            counters.droppedCollectiveTableFull++;
            return null;
        }
        ch.key = chKey;
        ch.host = c.host;
        ch.coll = c;
        ch.collGeneration = c.generation;
        ch.stopped = false;
        ch.lastNs = timeNs;
        chByKey.put(chKey, ch);
        if (c.chStarted == 0 || pTimerNs - c.gpuStartNs < 0) {
            c.gpuStartNs = pTimerNs;
        }
        c.chStarted++;
        c.lastNs = WindowEngine.latestOf(c.lastNs, timeNs);
        return ch;
    }

    void onKernelChStop(final HostState host, final long chKey, final long pTimerNs, final long timeNs) {
        final ChState ch = chByKey.get(chKey);
        if (ch == null && pending.count() != 0) {
            final int i = pending.find(chKey, host);
            if (i >= 0) {
                if (pending.stopped[i]) {
                    counters.duplicateRecords++;
                } else {
                    pending.stop(i, pTimerNs, timeNs);
                }
                return;
            }
        }
        if (ch == null || ch.coll.generation != ch.collGeneration) {
            counters.unknownCollRecords++;
            return;
        }
        if (ch.stopped) {
            counters.duplicateRecords++;
            return;
        }
        stopChannel(ch, pTimerNs, timeNs);
    }

    private void stopChannel(final ChState ch, final long pTimerNs, final long timeNs) {
        ch.stopped = true;
        ch.lastNs = WindowEngine.latestOf(ch.lastNs, timeNs);
        final CollState c = ch.coll;
        if (c.chStopped == 0 || pTimerNs - c.gpuEndNs > 0) {
            c.gpuEndNs = pTimerNs;
        }
        c.chStopped++;
        c.lastNs = WindowEngine.latestOf(c.lastNs, timeNs);
        if (c.stopped && c.chStopped >= c.nChannels && c.chStopped == c.chStarted) {
            emitCollective(c, true);
        }
    }

    private void emitCollective(final CollState c, final boolean complete) {
        final CollectiveSummary.Builder s = collective;
        final boolean gpuTimed = c.chStopped > 0;
        // The GPU start on the host clock by the estimate of this GPU (host, commHash, rank) at the host start.
        final GpuClock clock = gpuTimed ? gpuClocks.find(c.host.hostId, c.commHash, c.rank) : null;
        final boolean gpuStartHostKnown = clock != null && clock.estimate(c.hostStartNs, config, clockScratch);
        final long bytes = Collectives.algorithmBytes(c.func, c.count, c.datatypeSize, c.nranks);
        final long durationNs = gpuTimed ? c.gpuEndNs - c.gpuStartNs : c.hostStopNs - c.hostStartNs;
        final double algBandwidth = durationNs > 0 ? bytes * 1e9 / durationNs : 0;
        s.hostId(c.host.hostId)
                .collKey(c.key)
                .commHash(c.commHash)
                .rank(c.rank)
                .nranks(c.nranks)
                .seqNumber(c.seqNumber)
                .func(c.func)
                .algo(c.algo)
                .proto(c.proto)
                .count(c.count)
                .datatypeSize(c.datatypeSize)
                .bytes(bytes)
                .nChannels(c.nChannels)
                .kernelChannels(c.chStopped)
                .complete(complete)
                .gpuTimed(gpuTimed)
                .hostStartNs(c.hostStartNs)
                .hostStopNs(c.hostStopNs)
                .gpuStartNs(c.gpuStartNs)
                .gpuEndNs(c.gpuEndNs)
                .gpuStartHostKnown(gpuStartHostKnown)
                .gpuStartHostNs(gpuStartHostKnown ? clockScratch.toHostNs(c.gpuStartNs) : 0)
                .durationNs(durationNs)
                .algBandwidthBytesPerSecond(algBandwidth)
                .busBandwidthBytesPerSecond(algBandwidth * Collectives.busFactor(c.func, c.nranks));
        counters.collectivesEmitted++;
        if (!complete) {
            counters.collectivesIncomplete++;
        }
        collectiveSink.onCollective(s.build());
        releaseCollective(c);
    }

    private void releaseCollective(final CollState c) {
        collByKey.remove(c.key);
        c.generation++;
        c.host = null;
        colls.release(c);
    }

    /**
     * Host {@code h}'s collectives at {@code nowNs}: stopped ones past the collective timeout are emitted incomplete,
     * never-stopped ones past the step timeout dropped; channels of gone collectives or past the step timeout and
     * pending KernelCh past their hold are dropped.
     */
    void sweep(final HostState h, final long nowNs) {
        for (int i = colls.activeCount() - 1; i >= 0; i--) {
            final CollState c = colls.active(i);
            if (c.host != h) {
                continue;
            }
            if (c.stopped && nowNs - c.lastNs >= config.collectiveTimeoutNs) {
                emitCollective(c, false);
            } else if (!c.stopped && nowNs - c.lastNs >= config.stepTimeoutNs) {
                counters.collectivesTimedOut++;
                releaseCollective(c);
            }
        }
        for (int i = channels.activeCount() - 1; i >= 0; i--) {
            final ChState ch = channels.active(i);
            if (ch.host == h
                    && (ch.coll.generation != ch.collGeneration || nowNs - ch.lastNs >= config.stepTimeoutNs)) {
                chByKey.remove(ch.key);
                ch.coll = null;
                channels.release(ch);
            }
        }
        for (int i = pending.count() - 1; i >= 0; i--) {
            if (pending.host[i] == h && nowNs - pending.ns[i] >= config.pendingKernelChNs) {
                counters.unknownCollRecords++;
                pending.remove(i);
            }
        }
    }
}
