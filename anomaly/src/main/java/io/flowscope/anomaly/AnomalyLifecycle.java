package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * The one lifecycle of every anomaly: opened, updated, resolved, with its hysteresis. The period rules keep a
 * {@link Tracker} per potential anomaly and call {@link #track} once per evaluation (bad, good, or neither): it
 * opens after {@code openAfter} consecutive bad evaluations, raises the severity to CRITICAL when an evaluation
 * says so, and resolves after {@code resolveAfter} consecutive good ones. The wait-state detectors keep an
 * {@link Episode} and publish through {@link #episodes()}. Either way the anomaly enters the open set and the sink
 * here, with an id derived from its kind, culprit and start (the same run gives the same ids: replay = live).
 * <p>
 * Evidence is gathered into the shared {@link #evidence()} scratch (no allocation) and turned into a map only
 * when something is published.
 */
final class AnomalyLifecycle {
    private final AnomalyConfig config;
    private final AnomalySink sink;
    private final Map<Long, Anomaly> open = new LinkedHashMap<>();
    private final Evidence evidence = new Evidence();
    private final Episode.Publisher episodes = new EpisodePublisher();

    AnomalyLifecycle(final AnomalyConfig config, final AnomalySink sink) {
        this.config = config;
        this.sink = sink;
    }

    /** The evidence of the anomaly about to be tracked: cleared and filled by the detector, read on publication. */
    Evidence evidence() {
        return evidence;
    }

    /** Publication for the wait-state detectors' {@link Episode}s. */
    Episode.Publisher episodes() {
        return episodes;
    }

    /** The open anomalies, oldest first. */
    List<Anomaly> openAnomalies() {
        final List<Anomaly> list = new ArrayList<>(open.values());
        list.sort(Comparator.comparingLong(Anomaly::startNs).thenComparingLong(Anomaly::id));
        return Collections.unmodifiableList(list);
    }

    /**
     * The same culprit for de-duplication: a NIC (congestion, NIC stall) by host and device; a rank by communicator
     * and rank, and peer for a link (its host is where the detector saw it, which may differ between detectors).
     */
    static boolean sameCulprit(final AnomalyKind kind, final Culprit o, final Culprit c) {
        if (kind == AnomalyKind.CONGESTION || kind == AnomalyKind.NIC_STALL) {
            return o.hostId() == c.hostId() && o.device() == c.device();
        }
        return o.commHash() == c.commHash()
                && o.rank() == c.rank()
                && (kind != AnomalyKind.SLOW_LINK || o.peer() == c.peer());
    }

    /**
     * Whether a CONGESTION is open on host {@code hostId} (any of its NICs, or its network), by either rule: a link
     * of that host slowing alone while its network is congested is the congestion's share, not a slow link. Asked
     * only when a host has a degraded link, over the few anomalies open.
     */
    boolean congestionOpen(final long hostId) {
        for (final Anomaly a : open.values()) {
            if (a.kind() == AnomalyKind.CONGESTION && a.culprit().hostId() == hostId) {
                return true;
            }
        }
        return false;
    }

    /** Whether an anomaly of this kind and culprit is open, whichever detector opened it. */
    private boolean openAlready(final AnomalyKind kind, final Culprit culprit) {
        for (final Anomaly a : open.values()) {
            if (a.kind() == kind && sameCulprit(kind, a.culprit(), culprit)) {
                return true;
            }
        }
        return false;
    }

    /** Opens at most one anomaly per kind and culprit (rank; and peer for a link) whichever detector asks. */
    private final class EpisodePublisher implements Episode.Publisher {
        @Override
        public Anomaly open(
                final AnomalyKind kind,
                final Culprit culprit,
                final Severity severity,
                final long startNs,
                final long nowNs,
                final SortedMap<String, Double> ev,
                final String summary) {
            if (openAlready(kind, culprit)) {
                return null;
            }
            return publishOpened(kind, culprit, severity, startNs, nowNs, ev, startNs, nowNs, summary);
        }

        @Override
        public Anomaly update(
                final Anomaly o,
                final Severity severity,
                final long nowNs,
                final SortedMap<String, Double> ev,
                final String summary) {
            return publishUpdated(o, o.culprit(), severity, ev, o.windowStartNs(), nowNs, summary);
        }

        @Override
        public void resolve(final Anomaly o, final long nowNs) {
            publishResolved(o, nowNs);
        }

        @Override
        public boolean congestionOpen(final long hostId) {
            return AnomalyLifecycle.this.congestionOpen(hostId);
        }
    }

    /** Whether {@link #track} will publish (so that the sentence is only formatted then). */
    boolean willPublish(final Tracker t, final boolean bad, final Severity severity) {
        return bad
                && ((t.open == null && t.bad + 1 >= config.openAfter)
                        || (t.open != null && t.open.severity() != severity && severity == Severity.CRITICAL));
    }

    void track(
            final Tracker t,
            final boolean bad,
            final boolean good,
            final AnomalyKind kind,
            final Culprit culprit,
            final Severity severity,
            final long periodStart,
            final long now,
            final long windowStart,
            final String summary) {
        if (bad) {
            t.good = 0;
            if (t.bad++ == 0) {
                t.firstBadStartNs = periodStart;
            }
            if (t.open == null && t.bad >= config.openAfter) {
                open(t, kind, culprit, severity, t.firstBadStartNs, now, windowStart, now, summary);
            } else if (t.open != null && t.open.severity() != severity && severity == Severity.CRITICAL) {
                update(t, culprit, severity, now, windowStart, summary);
            }
        } else {
            if (t.open == null) {
                t.bad = 0;
                return;
            }
            if (good) {
                if (++t.good >= config.resolveAfter) {
                    resolve(t, now);
                }
            } else {
                t.good = 0;
            }
        }
    }

    void open(
            final Tracker t,
            final AnomalyKind kind,
            final Culprit culprit,
            final Severity severity,
            final long startNs,
            final long now,
            final long windowStart,
            final long windowEnd,
            final String summary) {
        if (openAlready(kind, culprit)) {
            // Another detector named it first (the wait-state rules): one anomaly per kind and culprit.
            return;
        }
        t.open =
                publishOpened(kind, culprit, severity, startNs, now, evidence.toMap(), windowStart, windowEnd, summary);
        t.good = 0;
    }

    void update(
            final Tracker t,
            final Culprit culprit,
            final Severity severity,
            final long now,
            final long windowStart,
            final String summary) {
        t.open = publishUpdated(t.open, culprit, severity, evidence.toMap(), windowStart, now, summary);
    }

    void resolve(final Tracker t, final long now) {
        publishResolved(t.open, now);
        t.open = null;
        t.bad = 0;
        t.good = 0;
    }

    private Anomaly publishOpened(
            final AnomalyKind kind,
            final Culprit culprit,
            final Severity severity,
            final long startNs,
            final long now,
            final SortedMap<String, Double> ev,
            final long windowStart,
            final long windowEnd,
            final String summary) {
        final Anomaly a = new Anomaly(
                id(kind, culprit, startNs),
                kind,
                culprit,
                severity,
                startNs,
                now,
                -1,
                ev,
                windowStart,
                windowEnd,
                summary);
        open.put(a.id(), a);
        sink.onOpened(a);
        return a;
    }

    private Anomaly publishUpdated(
            final Anomaly o,
            final Culprit culprit,
            final Severity severity,
            final SortedMap<String, Double> ev,
            final long windowStart,
            final long windowEnd,
            final String summary) {
        final Anomaly a = new Anomaly(
                o.id(),
                o.kind(),
                culprit,
                severity,
                o.startNs(),
                o.detectedNs(),
                -1,
                ev,
                windowStart,
                windowEnd,
                summary);
        open.put(a.id(), a);
        sink.onUpdated(a);
        return a;
    }

    private void publishResolved(final Anomaly o, final long now) {
        final Anomaly a = o.resolvedAt(now);
        open.remove(a.id());
        sink.onResolved(a);
    }

    /** The open anomalies, in the order they opened (the order of the open set). */
    void writeTo(final CheckpointOut out) {
        out.writeInt(open.size());
        for (final Anomaly a : open.values()) {
            writeAnomaly(out, a);
        }
    }

    /** Into a fresh lifecycle; the anomalies also go to {@code in}, for the trackers that hold them. */
    void readFrom(final CheckpointIn in) {
        final int n = in.readCount();
        for (int i = 0; i < n; i++) {
            final Anomaly a = readAnomaly(in);
            CheckpointIn.check(!open.containsKey(a.id()), String.format("anomaly %016x open twice", a.id()));
            open.put(a.id(), a);
            in.anomalies.put(a.id(), a);
        }
    }

    private static void writeAnomaly(final CheckpointOut out, final Anomaly a) {
        out.writeAnomalyId(a.id());
        out.writeInt(a.kind().ordinal());
        final Culprit c = a.culprit();
        out.writeLong(c.hostId());
        out.writeLong(c.commHash());
        out.writeInt(c.rank());
        out.writeInt(c.peer());
        out.writeInt(c.channel());
        out.writeInt(c.device());
        out.writeLong(c.qpNum());
        out.writeInt(a.severity().ordinal());
        out.writeLong(a.startNs());
        out.writeLong(a.detectedNs());
        out.writeLong(a.resolvedNs());
        out.writeInt(a.evidence().size());
        for (final Map.Entry<String, Double> e : a.evidence().entrySet()) {
            out.writeString(e.getKey());
            out.writeDouble(e.getValue());
        }
        out.writeLong(a.windowStartNs());
        out.writeLong(a.windowEndNs());
        out.writeString(a.summary());
    }

    private static Anomaly readAnomaly(final CheckpointIn in) {
        final long id = in.readAnomalyId();
        final AnomalyKind kind = AnomalyKind.values()[in.readIndex(AnomalyKind.values().length)];
        final Culprit culprit = new Culprit(
                in.readLong(), in.readLong(), in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readLong());
        final Severity severity = Severity.values()[in.readIndex(Severity.values().length)];
        final long start = in.readLong();
        final long detected = in.readLong();
        final long resolved = in.readLong();
        final int n = in.readCount();
        final java.util.TreeMap<String, Double> evidence = new java.util.TreeMap<>();
        for (int i = 0; i < n; i++) {
            final String name = in.readString();
            CheckpointIn.check(name != null, "an evidence figure without a name");
            evidence.put(name, in.readDouble());
        }
        return new Anomaly(
                id,
                kind,
                culprit,
                severity,
                start,
                detected,
                resolved,
                Collections.unmodifiableSortedMap(evidence),
                in.readLong(),
                in.readLong(),
                in.readString());
    }

    static long id(final AnomalyKind kind, final Culprit c, final long startNs) {
        long h = 0x51_7cc1_b727_220aL ^ kind.ordinal();
        h = mix(h ^ c.hostId());
        h = mix(h ^ c.commHash());
        h = mix(h ^ (((long) c.rank() << 32) | (c.peer() & 0xffffffffL)));
        h = mix(h ^ (((long) c.channel() << 32) | (c.device() & 0xffffffffL)));
        h = mix(h ^ c.qpNum());
        return mix(h ^ startNs);
    }

    static long mix(final long v) {
        long z = v + 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
