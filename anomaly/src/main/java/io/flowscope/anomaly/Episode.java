package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;

/**
 * The open / resolve hysteresis of one potential anomaly of a wait-state detector (one rank's straggling, one
 * link's slowdown): it opens after {@code openAfter} consecutive bad evaluations and resolves after
 * {@code resolveAfter} consecutive good (or empty) ones. A single outlier never opens it; a short recovery never
 * closes it. Publishing goes through the engine ({@link Publisher}), which owns the open set and the sink.
 */
final class Episode {
    /** Publishes for the detectors: the engine's open set, ids and sink. */
    interface Publisher {
        /** Opens an anomaly, or returns null when the engine already has one open for the same kind and culprit. */
        Anomaly open(
                AnomalyKind kind,
                Culprit culprit,
                Severity severity,
                long startNs,
                long nowNs,
                java.util.SortedMap<String, Double> evidence,
                String summary);

        Anomaly update(
                Anomaly open,
                Severity severity,
                long nowNs,
                java.util.SortedMap<String, Double> evidence,
                String summary);

        void resolve(Anomaly open, long nowNs);

        /** Whether a CONGESTION is open on the host, by either rule (its lone slow link is then the congestion's). */
        boolean congestionOpen(long hostId);
    }

    private final int openAfter;
    private final int resolveAfter;
    private int bad;
    private int good;
    /** The start of the first bad evaluation window of the current run of bad ones. */
    private long firstBadStartNs;

    private Anomaly open;

    Episode(final int openAfter, final int resolveAfter) {
        this.openAfter = openAfter;
        this.resolveAfter = resolveAfter;
    }

    /** A bad evaluation of the window [startNs, nowNs]: true when the anomaly should be (or stay) open. */
    boolean bad(final long windowStartNs) {
        good = 0;
        if (bad++ == 0) {
            firstBadStartNs = windowStartNs;
        }
        return bad >= openAfter;
    }

    /** A good (or empty) evaluation: resolves an open anomaly after enough of them. */
    void good(final Publisher publisher, final long nowNs) {
        bad = 0;
        if (open != null && ++good >= resolveAfter) {
            publisher.resolve(open, nowNs);
            open = null;
            good = 0;
        }
    }

    /** An evaluation that is neither bad nor good (an open anomaly not yet recovering): resolution starts again. */
    void hold() {
        bad = 0;
        good = 0;
    }

    long firstBadStartNs() {
        return firstBadStartNs;
    }

    Anomaly open() {
        return open;
    }

    /** Opens or updates the anomaly with the evaluation's figures (called when {@link #bad} said so). */
    void publish(
            final Publisher publisher,
            final AnomalyKind kind,
            final Culprit culprit,
            final Severity severity,
            final long startNs,
            final long nowNs,
            final java.util.SortedMap<String, Double> evidence,
            final String summary) {
        if (open == null) {
            open = publisher.open(kind, culprit, severity, startNs, nowNs, evidence, summary);
        } else if (open.severity() != severity) {
            open = publisher.update(open, severity, nowNs, evidence, summary);
        }
    }

    boolean isOpen() {
        return open != null;
    }

    /** Its counters and open anomaly; its thresholds are the configuration's, given by its owner. */
    void writeTo(final CheckpointOut out) {
        out.writeInt(bad);
        out.writeInt(good);
        out.writeLong(firstBadStartNs);
        out.writeAnomalyRef(open);
    }

    void readFrom(final CheckpointIn in) {
        bad = in.readInt();
        good = in.readInt();
        firstBadStartNs = in.readLong();
        open = in.readAnomalyRef();
    }

    /** Bad in its latest evaluation, or open. */
    boolean isBadOrOpen() {
        return bad > 0 || open != null;
    }
}
