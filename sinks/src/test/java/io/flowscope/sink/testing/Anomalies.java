package io.flowscope.sink.testing;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import java.util.TreeMap;

/** Test fixture: anomalies as the anomaly stage publishes them. */
public final class Anomalies {
    private Anomalies() {}

    public static Anomaly slowLink(
            final long id,
            final long hostId,
            final long commHash,
            final int rank,
            final int peer,
            final Severity severity,
            final long startNs,
            final long resolvedNs) {
        final TreeMap<String, Double> evidence = new TreeMap<>();
        evidence.put("bandwidthBytesPerSecond", 3.1e9);
        evidence.put("medianPeerBandwidth", 10.0e9);
        return new Anomaly(
                id,
                AnomalyKind.SLOW_LINK,
                Culprit.link(hostId, commHash, rank, peer),
                severity,
                startNs,
                startNs + 2_000_000,
                resolvedNs,
                evidence,
                startNs - 1_000_000_000L,
                startNs + 2_000_000,
                "rank " + rank + " → " + peer + " of comm 0x" + Long.toHexString(commHash)
                        + " at 31% of its peers' median");
    }

    public static Anomaly nicStall(
            final long id, final long hostId, final int device, final long startNs, final long resolvedNs) {
        final TreeMap<String, Double> evidence = new TreeMap<>();
        evidence.put("outstandingBytes", 8.0e6);
        return new Anomaly(
                id,
                AnomalyKind.NIC_STALL,
                Culprit.nic(hostId, device),
                Severity.CRITICAL,
                startNs,
                startNs + 5_000_000,
                resolvedNs,
                evidence,
                startNs - 500_000_000L,
                startNs + 5_000_000,
                "NIC device " + device + " stopped completing work requests");
    }

    public static Anomaly resolved(final Anomaly a, final long resolvedNs) {
        return new Anomaly(
                a.id(),
                a.kind(),
                a.culprit(),
                a.severity(),
                a.startNs(),
                a.detectedNs(),
                resolvedNs,
                a.evidence(),
                a.windowStartNs(),
                a.windowEndNs(),
                a.summary());
    }

    public static Anomaly escalated(final Anomaly a) {
        return new Anomaly(
                a.id(),
                a.kind(),
                a.culprit(),
                Severity.CRITICAL,
                a.startNs(),
                a.detectedNs() + 1_000_000,
                a.resolvedNs(),
                a.evidence(),
                a.windowStartNs(),
                a.windowEndNs(),
                a.summary());
    }
}
