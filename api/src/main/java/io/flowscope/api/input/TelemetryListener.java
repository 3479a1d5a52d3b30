package io.flowscope.api.input;

/**
 * The window engine's one input: typed telemetry events as primitive arguments, so that a producer (the ring
 * adapter {@code io.flowscope.collector.ingest.RingEventSource}, a journal replay, the simulator) hands them over
 * without allocating. Times are event times in ns of one host clock (the ring's {@code CLOCK_MONOTONIC});
 * the engine never reads a clock of its own, so a replay of the same calls gives the same output.
 * <p>
 * Keys ({@code opKey}, {@code stepKey}) are opaque 64-bit identities chosen by the producer, unique among
 * the live events of one engine (the ring adapter mixes the record id with the producer pid).
 * <p>
 * <b>Hosts.</b> Every host has its own clock ({@code CLOCK_MONOTONIC} of different nodes are unrelated):
 * {@link #onHost} names the host of the calls that follow it, until the next {@code onHost} (host 0 until
 * the first). A producer calls it when the host changes (the ring adapter: once per ring, from its hostname),
 * so the per-event calls stay as they are. Keys must be unique across the hosts fed to one engine.
 * <p>
 * <b>Idle time.</b> A host with nothing to say still moves on: {@link #advanceTo} says how far its time has come
 * (the collector's idle-host clock, the simulator between events), so that its periods end and a hang is named
 * with no event arriving. It is not an event (nothing is counted) and no record carries it.
 * <p>
 * Records may come out of order across producer threads; the records of one step come in their thread's
 * order, but may be missing, duplicated or late. See {@link WindowEngine} for how each case is handled.
 */
public interface TelemetryListener {
    /** The calls that follow come from host {@code hostId} (its clock domain), until the next {@code onHost}. */
    default void onHost(long hostId) {}

    /**
     * Who a communicator's rank is, from a ring's communicator table: the process {@code pid} on host
     * {@code hostId} (named {@code hostname}) is rank {@code rank} of {@code nranks} in communicator
     * {@code commHash}, on CUDA device {@code cudaDevice} (-1 unknown) whose PCI bus id is {@code pciBusId} (empty
     * when unknown). Not an engine input (the engine ignores it): the ring adapter hands it on once per
     * communicator entry of a ring, before the first record it hands on after the entry appeared, so that the
     * journal and whoever names a culprit know the rank's process and GPU. Takes no time and no host.
     */
    default void onRingComm(
            long hostId,
            String hostname,
            int pid,
            long commHash,
            int rank,
            int nranks,
            int cudaDevice,
            String pciBusId) {}

    /**
     * The GPU UUID of a rank {@link #onRingComm} just described ({@code GPU-1a2b3c4d-...} as nvidia-smi prints it;
     * ring layout 1.2): handed on right after that call, only when the ring knows it. Not an engine input.
     */
    default void onRingGpuUuid(long hostId, int pid, long commHash, int rank, String gpuUuid) {}

    /**
     * A ProxyOp started: the flow it belongs to is (commHash, rank, peer, channel, isSend).
     */
    void onProxyOpStart(long opKey, long commHash, int rank, int peer, int channel, boolean isSend, long timeNs);

    void onProxyOpStop(long opKey, long timeNs);

    /** A ProxyStep of the ProxyOp {@code opKey} started. */
    void onProxyStepStart(long stepKey, long opKey, int step, long timeNs);

    /**
     * A ProxyStep state (NCCL state value: 8 SendGPUWait, 20 SendPeerWait, 9 SendWait, 10 RecvWait,
     * 11 RecvFlushWait, 12 RecvGPUWait) with its {@code transSize} (bytes; meaningful at 9 and 11).
     */
    void onProxyStepState(long stepKey, int state, long transSize, long timeNs);

    void onProxyStepStop(long stepKey, long timeNs);

    /**
     * A work request was posted on queue pair {@code qpNum} of NIC {@code device} (NetPlugin IB QP START):
     * {@code length} bytes (the SGE length; stale for receives, where NCCL does not set it), {@code opcode}
     * the {@code ibv_wr_opcode}. {@code wrKey} identifies the event like a step key.
     */
    default void onQpStart(long wrKey, int device, long qpNum, int opcode, long length, long timeNs) {}

    /** The work request {@code wrKey} completed (its CQ completion: NetPlugin STOP). */
    default void onQpStop(long wrKey, long timeNs) {}

    /**
     * A collective (Coll START) or a P2p operation (func {@link Collectives#SEND} / {@link Collectives#RECV},
     * algo and proto {@link Collectives#UNKNOWN}) started on the host. {@code func}, {@code algo}, {@code proto}:
     * {@link Collectives} codes; {@code datatypeSize} in bytes; {@code nranks} of the communicator.
     */
    default void onCollStart(
            long collKey,
            long commHash,
            int rank,
            int nranks,
            int func,
            int algo,
            int proto,
            long count,
            int datatypeSize,
            int nChannels,
            long seqNumber,
            long timeNs) {}

    /** The collective's host-side stop (Coll STOP; NCCL may call it before the kernel finished). */
    default void onCollStop(long collKey, long timeNs) {}

    /** A KernelCh child of {@code collKey} started on the GPU at {@code pTimerNs} ({@code %globaltimer}). */
    default void onKernelChStart(long chKey, long collKey, int channel, long pTimerNs, long timeNs) {}

    /** The KernelCh {@code chKey} stopped on the GPU at {@code pTimerNs} (state 22 KernelChStop). */
    default void onKernelChStop(long chKey, long pTimerNs, long timeNs) {}

    /**
     * Event time on host {@code hostId} has reached {@code timeNs} with nothing to report (not an event: no record,
     * no key). Leaves the host of the calls that follow as it was ({@link #onHost}). The window engine ends the
     * host's periods up to it, as an event at that time would; the journal records it; a listener that follows
     * records only ignores it (the default).
     */
    default void advanceTo(long hostId, long timeNs) {}

    /** Takes every call and does nothing: for a reader that wants only a log's metadata, or nothing of a stretch. */
    TelemetryListener IGNORE = new TelemetryListener() {
        @Override
        public void onProxyOpStart(
                final long opKey,
                final long commHash,
                final int rank,
                final int peer,
                final int channel,
                final boolean isSend,
                final long timeNs) {}

        @Override
        public void onProxyOpStop(final long opKey, final long timeNs) {}

        @Override
        public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {}

        @Override
        public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {}

        @Override
        public void onProxyStepStop(final long stepKey, final long timeNs) {}
    };
}
