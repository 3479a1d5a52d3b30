package io.flowscope.collector.ingest;

import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.pipeline.ProducerDrops;

/** What feeds the engines: the rings of a directory, or the cluster simulator. Used on the drain thread only. */
public interface Source extends AutoCloseable {
    /** Hands what is available now to the pipeline; returns the number of input events (0 when idle). */
    int poll(Pipeline out);

    /** One line for humans (and {@code /api/health}). */
    String describe();

    /** Ring figures for the metrics (zero for the simulator). */
    default RingFigures ringFigures() {
        return RingFigures.NONE;
    }

    /**
     * The name of a host this source has seen (a ring's hostname, a simulated node's name), or null. Read by the
     * sinks for their {@code host} tag and label, from any thread.
     */
    default String hostName(final long hostId) {
        return null;
    }

    /**
     * Why this source cannot give its input on time (one line: a simulator that falls behind its clock), or null
     * while it can. Read from any thread; the service turns DEGRADED and says so while it is set.
     */
    default String behind() {
        return null;
    }

    /** The source's own figures for {@code /api/health} (under its kind), or null. Read from any thread. */
    default java.util.Map<String, Object> health() {
        return null;
    }

    /** True when the source has nothing more to give (a simulation of fixed duration ended). */
    default boolean finished() {
        return false;
    }

    @Override
    void close();

    /** The rings' figures; {@code producers}: each producer's drops ({@link ProducerDrops}). */
    record RingFigures(
            long records,
            int attached,
            long corrupt,
            long producerDrops,
            long lag,
            java.util.List<ProducerDrops> producers) {
        public static final RingFigures NONE = new RingFigures(0, 0, 0, 0, 0, java.util.List.of());
    }
}
