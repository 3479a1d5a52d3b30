package io.flowscope.sink;

/**
 * Who a communicator rank is, as people name it: its process and GPU, as the collector learnt them from the rings'
 * communicator entries. The sinks put these beside their host names (InfluxDB tags and fields, alert annotations).
 * Called on the sink's caller thread and on a webhook's re-send timer: an implementation must be thread-safe.
 */
@FunctionalInterface
public interface RankNames {
    /** Nothing known of any rank (a simulated cluster, a test). */
    RankNames NONE = (hostId, commHash, rank) -> null;

    /** The rank's names, null when no ring described it. */
    Name of(long hostId, long commHash, int rank);

    /**
     * @param pid      the rank's process
     * @param gpu      its CUDA device ordinal in that process, -1 when unknown
     * @param pciBusId that device's PCI bus id as CUDA writes it ("0000:19:00.0"), empty when unknown
     * @param gpuUuid  that device's UUID as nvidia-smi prints it ("GPU-1a2b3c4d-..."), empty when unknown
     */
    record Name(int pid, int gpu, String pciBusId, String gpuUuid) {}
}
