package io.flowscope.collector.replay;

import io.flowscope.api.input.EventTimeListener;
import io.flowscope.api.input.TelemetryListener;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Puts a host's event times (its CLOCK_MONOTONIC, as the rings and the journal carry them) on the epoch
 * (CLOCK_REALTIME), per host, for the Perfetto export (issue #18), from the best source the input has:
 * <ol>
 *   <li>{@link Source#RING_ANCHOR}: the ring header's anchor, journaled as {@code ringClock} (realtime and
 *   monotonic read back to back at ring creation): exact up to the two reads' gap and later NTP slew.</li>
 *   <li>{@link Source#BATCH_WALL}: no anchor (a journal written before the entry, or the simulator's): the least of
 *   (batch wall time − event time) over the host's events. A batch is written after its events, so this is the
 *   offset plus the drain lag, less up to 1 ms (batch wall times are whole milliseconds). For the simulator it
 *   defines simulated time 0 as about when the simulation started (exact only at {@code --speed 1}).</li>
 *   <li>{@link Source#EVENT_TIME}: neither (a trace without wall times): event time, offset 0.</li>
 * </ol>
 * The offsets are taken from the input's first {@link #SCAN_BATCHES} batches before the export starts, so that each
 * host keeps one offset for the whole file; a host first seen later takes its anchor when the replay reaches it, or
 * its first batch-wall sample.
 */
public final class TraceClock {
    /** Where a host's offset comes from; {@code label} as the export's otherData says it. */
    public enum Source {
        RING_ANCHOR("ring-anchor"),
        BATCH_WALL("batch-wall-estimate"),
        EVENT_TIME("event-time");

        private final String label;

        Source(final String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** One host's offset: wall = event time + offsetNs. */
    public record Offset(long offsetNs, Source source) {}

    /** Batches read at most, from the start, for the offsets. */
    static final int SCAN_BATCHES = 20_000;

    private final Map<Long, Offset> fixed = new LinkedHashMap<>();
    /** Batch-wall samples of hosts not yet fixed (seen after the scan): the first one fixes them. */
    private long batchWallNs;

    /** The offsets of the input's first batches ({@link #SCAN_BATCHES}); an unreadable input gives none. */
    public static TraceClock of(final Path input) {
        final TraceClock clock = new TraceClock();
        final Map<Long, Long> anchors = new LinkedHashMap<>();
        final Map<Long, Long> least = new LinkedHashMap<>();
        final long[] wall = {0};
        final long[] host = {0};
        final boolean[] hostKnown = {false};
        final TelemetryListener sample = new EventTimeListener() {
            @Override
            protected void onEventTime(final long timeNs) {
                if (wall[0] > 0 && hostKnown[0]) {
                    least.merge(host[0], wall[0] - timeNs, Math::min);
                }
            }

            @Override
            public void onHost(final long hostId) {
                host[0] = hostId;
                hostKnown[0] = true;
            }
        };
        final JournalReader.Meta meta = new JournalReader.Meta() {
            @Override
            public void onBatch(final long wallNs) {
                wall[0] = wallNs;
                // each batch starts a host run anew (the writer repeats the host at a batch's first entry)
                hostKnown[0] = false;
            }

            @Override
            public void onRingClock(final long hostId, final int pid, final long realtimeNs, final long monotonicNs) {
                anchors.putIfAbsent(hostId, realtimeNs - monotonicNs);
            }
        };
        try (EventLog reader = EventLog.open(input)) {
            for (int i = 0; i < SCAN_BATCHES && reader.read(sample, meta, 1) > 0; i++) {
                // reading
            }
        } catch (final RuntimeException e) {
            // an input the replay cannot read either: it says why; no offsets here
        }
        anchors.forEach((h, o) -> clock.fixed.put(h, new Offset(o, Source.RING_ANCHOR)));
        least.forEach((h, o) -> clock.fixed.putIfAbsent(h, new Offset(o, Source.BATCH_WALL)));
        return clock;
    }

    /** A ring's anchor met during the export: fixes a host that the scan did not see. */
    void onRingClock(final long hostId, final long realtimeNs, final long monotonicNs) {
        fixed.putIfAbsent(hostId, new Offset(realtimeNs - monotonicNs, Source.RING_ANCHOR));
    }

    void onBatch(final long wallNs) {
        batchWallNs = wallNs;
    }

    /** Host {@code hostId}'s event time {@code timeNs} on the epoch (or as it is, {@link Source#EVENT_TIME}). */
    long toWallNs(final long hostId, final long timeNs) {
        Offset o = fixed.get(hostId);
        if (o == null) {
            o = batchWallNs > 0
                    ? new Offset(batchWallNs - timeNs, Source.BATCH_WALL)
                    : new Offset(0, Source.EVENT_TIME);
            fixed.put(hostId, o);
        }
        return timeNs + o.offsetNs();
    }

    /**
     * The time base the export writes its timestamps from when not given one: the first host's offset (its boot
     * instant on the epoch, realtime − monotonic) down to the whole second, as PyTorch's profiler (Kineto) bases its
     * traces, so that ts are about the host's CLOCK_MONOTONIC in µs (exact in a double, unlike epoch µs); 0 on event
     * time.
     */
    public long defaultBaseNs() {
        for (final Offset o : fixed.values()) {
            return o.source() == Source.EVENT_TIME ? 0 : Math.floorDiv(o.offsetNs(), 1_000_000_000L) * 1_000_000_000L;
        }
        return 0;
    }

    /** The hosts' offsets so far, in the order first fixed. */
    public Map<Long, Offset> offsets() {
        return java.util.Collections.unmodifiableMap(fixed);
    }

    /** The least precise source of any host (the file's clock, as a whole); RING_ANCHOR when no host is known. */
    public Source source() {
        Source worst = Source.RING_ANCHOR;
        for (final Offset o : fixed.values()) {
            if (o.source().ordinal() > worst.ordinal()) {
                worst = o.source();
            }
        }
        return worst;
    }

    /** One line for stderr: the clock the export is on, and how good it is. */
    public String describe() {
        if (fixed.isEmpty()) {
            return "no host's events were exported";
        }
        return switch (source()) {
            case RING_ANCHOR -> "on the epoch (CLOCK_REALTIME) by the rings' clock anchors";
            case BATCH_WALL ->
                "on the epoch estimated from the journal's batch wall times (within about 1 ms plus "
                        + "the drain lag): the input has no ring clock anchor (a journal written before issue #18, or a "
                        + "simulated run)";
            case EVENT_TIME ->
                "on event time (CLOCK_MONOTONIC), not the epoch: the input has neither ring clock "
                        + "anchors nor batch wall times, so it will not line up with other traces";
        };
    }
}
