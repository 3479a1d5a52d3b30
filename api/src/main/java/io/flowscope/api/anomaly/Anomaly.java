package io.flowscope.api.anomaly;

import java.util.SortedMap;

/**
 * One detected anomaly, immutable: a new instance is published when it opens, when its severity or
 * evidence changes materially, and when it resolves. Times are event times (ns of the culprit host's clock),
 * so a replay of the same input gives equal anomalies.
 *
 * @param id          stable identity across its updates: a hash of kind, culprit and start (deterministic)
 * @param kind        what went wrong
 * @param culprit     who is to blame (not the ranks merely blocked behind it)
 * @param severity    current severity
 * @param startNs     onset: the start of the first period that showed it
 * @param detectedNs  the event time at which the detector decided
 * @param resolvedNs  when it cleared (hysteresis passed), or -1 while open
 * @param evidence    named figures that justify it (e.g. "bandwidthBytesPerSecond", "medianPeerBandwidth",
 *                    "outstandingBytes", "peerWaitFraction"), sorted by name
 * @param windowStartNs the evidence window
 * @param windowEndNs   the evidence window
 * @param summary     one sentence for a human ("rank 3 → 4 of comm 0x1a2b at 31% of its peers' median")
 */
public record Anomaly(
        long id,
        AnomalyKind kind,
        Culprit culprit,
        Severity severity,
        long startNs,
        long detectedNs,
        long resolvedNs,
        SortedMap<String, Double> evidence,
        long windowStartNs,
        long windowEndNs,
        String summary) {
    public boolean isOpen() {
        return resolvedNs == -1;
    }

    /** This anomaly as it resolves at {@code nowNs}: all else as it was last published. */
    public Anomaly resolvedAt(final long nowNs) {
        return new Anomaly(
                id, kind, culprit, severity, startNs, detectedNs, nowNs, evidence, windowStartNs, windowEndNs, summary);
    }

    /** The same anomaly under another sentence (a presentation's: the culprit's host name prefixed). */
    public Anomaly withSummary(final String text) {
        return new Anomaly(
                id,
                kind,
                culprit,
                severity,
                startNs,
                detectedNs,
                resolvedNs,
                evidence,
                windowStartNs,
                windowEndNs,
                text);
    }
}
