package io.flowscope.collector.pipeline;

/**
 * The service's own figures at one snapshot (immutable): what {@code /metrics} and {@code /api/health} show.
 *
 * @param eventsTotal         engine input calls since start
 * @param eventsPerSecond     over the last publish interval
 * @param ringRecordsTotal    ring records drained
 * @param ringsAttached       rings attached now
 * @param ringCorrupt         records dropped by the reader as corrupt (checksum, sequence)
 * @param ringProducerDrops   records the producers dropped (full ring, abandoned, contended), summed over rings
 * @param ringLagRecords      records published and not yet drained, summed over rings
 * @param engineDrops         window-engine table-full drops (steps, ops, flows, aggregates, collectives, hosts)
 * @param journalBytes        journal size on disk
 * @param journalEntries      entries journaled
 * @param journalDropped      entries not journaled (journal stopped)
 * @param journalFailure      why journaling stopped, or null
 * @param drainLoopLagMs      age of the drain loop's last iteration when this was taken
 * @param summariesTotal      flow summaries emitted by the window engine
 * @param anomaliesOpen       anomalies open now
 * @param source              what feeds the service
 * @param failures            exceptions caught while handling input, by stage (ingest went on)
 * @param producers           each ring producer's drops ({@link ProducerDrops}; empty for other sources)
 * @param traffic             the traffic counters and histograms at this publish ({@link TrafficCounters})
 */
public record Stats(
        long eventsTotal,
        double eventsPerSecond,
        long ringRecordsTotal,
        int ringsAttached,
        long ringCorrupt,
        long ringProducerDrops,
        long ringLagRecords,
        long engineDrops,
        long journalBytes,
        long journalEntries,
        long journalDropped,
        String journalFailure,
        long drainLoopLagMs,
        long summariesTotal,
        long anomaliesOpen,
        String source,
        IngestFailures.Counts failures,
        java.util.List<ProducerDrops> producers,
        TrafficCounters.View traffic) {
    /** Without traffic counters (a fleet aggregator's). */
    public Stats(
            final long eventsTotal,
            final double eventsPerSecond,
            final long ringRecordsTotal,
            final int ringsAttached,
            final long ringCorrupt,
            final long ringProducerDrops,
            final long ringLagRecords,
            final long engineDrops,
            final long journalBytes,
            final long journalEntries,
            final long journalDropped,
            final String journalFailure,
            final long drainLoopLagMs,
            final long summariesTotal,
            final long anomaliesOpen,
            final String source,
            final IngestFailures.Counts failures,
            final java.util.List<ProducerDrops> producers) {
        this(
                eventsTotal,
                eventsPerSecond,
                ringRecordsTotal,
                ringsAttached,
                ringCorrupt,
                ringProducerDrops,
                ringLagRecords,
                engineDrops,
                journalBytes,
                journalEntries,
                journalDropped,
                journalFailure,
                drainLoopLagMs,
                summariesTotal,
                anomaliesOpen,
                source,
                failures,
                producers,
                TrafficCounters.View.EMPTY);
    }

    /** Without producers (a source of no rings). */
    public Stats(
            final long eventsTotal,
            final double eventsPerSecond,
            final long ringRecordsTotal,
            final int ringsAttached,
            final long ringCorrupt,
            final long ringProducerDrops,
            final long ringLagRecords,
            final long engineDrops,
            final long journalBytes,
            final long journalEntries,
            final long journalDropped,
            final String journalFailure,
            final long drainLoopLagMs,
            final long summariesTotal,
            final long anomaliesOpen,
            final String source,
            final IngestFailures.Counts failures) {
        this(
                eventsTotal,
                eventsPerSecond,
                ringRecordsTotal,
                ringsAttached,
                ringCorrupt,
                ringProducerDrops,
                ringLagRecords,
                engineDrops,
                journalBytes,
                journalEntries,
                journalDropped,
                journalFailure,
                drainLoopLagMs,
                summariesTotal,
                anomaliesOpen,
                source,
                failures,
                java.util.List.of());
    }

    public static final Stats ZERO =
            new Stats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, 0, 0, 0, "starting", IngestFailures.Counts.NONE);
}
