package io.flowscope.collector.pipeline;

/**
 * Who a culprit is, as an operator acts on it: the host by name, and for a rank its process and GPU. From a ring's
 * header (hostname, producer pid) and communicator table entry (rank, CUDA device, PCI bus id).
 *
 * @param hostId     the host id the engines key it by (FNV-1a of the hostname)
 * @param hostname   the ring's hostname, empty when the producer could not read it
 * @param pid        the rank's process, -1 when only the host is known (a NIC culprit)
 * @param commHash   the communicator, 0 when only the host is known
 * @param rank       the rank in it, -1 when only the host is known
 * @param nranks     the communicator's size, -1 when unknown
 * @param cudaDevice the rank's CUDA device ordinal in its process, -1 when unknown
 * @param pciBusId   that device's PCI bus id as CUDA gives it ("0000:19:00.0"), empty when unknown
 * @param gpuUuid    that device's UUID as nvidia-smi prints it ("GPU-1a2b3c4d-..."), empty when unknown
 */
public record RankIdentity(
        long hostId,
        String hostname,
        int pid,
        long commHash,
        int rank,
        int nranks,
        int cudaDevice,
        String pciBusId,
        String gpuUuid) {
    /** Without a known GPU UUID (a ring before format 1.2, a journal without its entry). */
    public RankIdentity(
            final long hostId,
            final String hostname,
            final int pid,
            final long commHash,
            final int rank,
            final int nranks,
            final int cudaDevice,
            final String pciBusId) {
        this(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId, "");
    }

    /** The same rank with its GPU's UUID now known. */
    public RankIdentity withGpuUuid(final String uuid) {
        return new RankIdentity(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId, uuid);
    }

    /** Only the host's name is known. */
    public static RankIdentity host(final long hostId, final String hostname) {
        return new RankIdentity(hostId, hostname, -1, 0, -1, -1, -1, "", "");
    }

    public boolean isRank() {
        return pid >= 0 && rank >= 0;
    }

    /**
     * The words a summary opens with: {@code host gpu-node-17 pid 48213 rank 1 GPU 1 (0000:19:00.0)}; without a
     * known device {@code host gpu-node-17 pid 48213 rank 1}; only the host: {@code host gpu-node-17}. The UUID is
     * left to the structured fields (API {@code gpuUuid}, alert annotation {@code gpu_uuid}): 40 characters more in
     * every summary, for an id the bus id already gives on its host.
     */
    public String words() {
        final StringBuilder b = new StringBuilder();
        if (!hostname.isEmpty()) {
            b.append("host ").append(hostname);
        }
        if (isRank()) {
            b.append(b.length() == 0 ? "" : " ")
                    .append("pid ")
                    .append(pid)
                    .append(" rank ")
                    .append(rank);
            if (cudaDevice >= 0) {
                b.append(" GPU ").append(cudaDevice);
                if (!pciBusId.isEmpty()) {
                    b.append(" (").append(pciBusId).append(')');
                }
            }
        }
        return b.toString();
    }
}
