package io.flowscope.collector.pipeline;

import io.flowscope.api.anomaly.Anomaly;
import java.util.List;
import java.util.Map;

/**
 * What the HTTP side serves, published by the drain thread every {@code publish.intervalMs}: immutable, read
 * through one volatile reference. Flow rows hold each flow's latest period summary; {@code culprits} the
 * anomalies' culprits as named (by anomaly id; absent where nothing is known of one); {@code live} what the live page
 * shows beyond the latest period (links against their baselines, ranks' waits: {@link LiveTracker}); {@code
 * hostNowNs} each host's latest event time (its own clock).
 */
public record Snapshot(
        long wallMs,
        long lastEventNs,
        List<FlowRow> flows,
        List<FlowRow> ranks,
        List<FlowRow> links,
        List<FlowRow> qps,
        List<FlowRow> comms,
        List<Anomaly> anomalies,
        Stats stats,
        Map<Long, RankIdentity> culprits,
        LiveTracker.View live,
        Map<Long, Long> hostNowNs) {
    /** Without named culprits (a fleet aggregator's). */
    public Snapshot(
            final long wallMs,
            final long lastEventNs,
            final List<FlowRow> flows,
            final List<FlowRow> ranks,
            final List<FlowRow> links,
            final List<FlowRow> qps,
            final List<FlowRow> comms,
            final List<Anomaly> anomalies,
            final Stats stats) {
        this(
                wallMs,
                lastEventNs,
                flows,
                ranks,
                links,
                qps,
                comms,
                anomalies,
                stats,
                Map.of(),
                LiveTracker.View.EMPTY,
                Map.of());
    }

    public static Snapshot empty() {
        return new Snapshot(
                System.currentTimeMillis(),
                Long.MIN_VALUE,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                Stats.ZERO);
    }
}
