package io.flowscope.collector.pipeline;

import io.flowscope.api.anomaly.Anomaly;

/**
 * An anomaly as published on the live stream: {@code type} is opened, updated or resolved (or, recovered,
 * {@link Pipeline#STILL_OPEN}: for the sinks only);
 * {@code publishedMonoNs} is {@code System.nanoTime()} when the stage handed it over (the ring's clock on Linux,
 * so ring record → stream latency is measurable); {@code recovered} marks one re-derived from the journal after a
 * restart that had been announced before (not announced again); {@code culprit} its culprit as named (host, and
 * for a rank its pid and GPU), null when nothing is known of it.
 */
public record AnomalyEvent(
        String type,
        Anomaly anomaly,
        long publishedWallMs,
        long publishedMonoNs,
        boolean recovered,
        RankIdentity culprit) {
    /** Without a named culprit. */
    public AnomalyEvent(
            final String type,
            final Anomaly anomaly,
            final long publishedWallMs,
            final long publishedMonoNs,
            final boolean recovered) {
        this(type, anomaly, publishedWallMs, publishedMonoNs, recovered, null);
    }
}
