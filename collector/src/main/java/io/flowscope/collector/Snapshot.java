package io.flowscope.collector;

import java.util.List;

import io.flowscope.anomaly.Anomaly;

/**
 * What the HTTP side serves, published by the drain thread every {@code publish.intervalMs}: immutable, read
 * through one volatile reference. Flow rows hold each flow's latest period summary.
 */
public record Snapshot(long wallMs, long lastEventNs, List<FlowRow> flows, List<FlowRow> ranks, List<FlowRow> links,
    List<FlowRow> qps, List<FlowRow> comms, List<Anomaly> anomalies, Stats stats)
{
    public static Snapshot empty()
    {
        return new Snapshot(System.currentTimeMillis(), Long.MIN_VALUE, List.of(), List.of(), List.of(), List.of(),
            List.of(), List.of(), Stats.ZERO);
    }
}
