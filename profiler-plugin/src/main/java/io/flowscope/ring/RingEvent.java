package io.flowscope.ring;

/**
 * One record, decoded into an immutable value: the fields every record has, and a typed {@link Payload}
 * per kind (START), {@link Stop} or {@link State}. Payload fields are named as in {@code RING.md};
 * strings are resolved through the string table (null for "no string"); u64 values are held in
 * {@code long} and are unsigned.
 *
 * @param producerPid the producer process ({@code producer_pid} of the ring).
 * @param host        the producer host ({@code hostname} of the ring).
 * @param thread      the producing thread's index in its process.
 * @param timeNs      CLOCK_MONOTONIC of the producer, ns.
 * @param wallTimeNs  {@code timeNs} converted through the ring's anchors, ns since the epoch.
 * @param lane        the lane the record was read from (one per producer thread, RING.md).
 * @param position    the record's position in its lane.
 * @param id          the event's handle (kind, communicator index, serial).
 * @param parent      the parent event's id, 0 for none (always 0 for STOP and STATE).
 * @param commIndex   the communicator table index from the id bits (4095 = unknown).
 * @param commHash    the communicator's hash, 0 when unknown.
 * @param rank        the producer's rank in that communicator, -1 when unknown.
 */
public record RingEvent(
        int producerPid,
        String host,
        int thread,
        long timeNs,
        long wallTimeNs,
        int lane,
        long position,
        long id,
        long parent,
        EventKind kind,
        RecordOp op,
        int commIndex,
        long commHash,
        int rank,
        Payload payload) {
    /** The serial part of the id. */
    public long serial() {
        return RecordLayout.idSerial(id);
    }

    /** What a record carries beyond the common fields. */
    public sealed interface Payload
            permits Stop,
                    State,
                    Group,
                    Coll,
                    P2p,
                    ProxyOp,
                    ProxyStep,
                    ProxyCtrl,
                    KernelCh,
                    NetPlugin,
                    GroupApi,
                    CollApi,
                    P2pApi,
                    KernelLaunch,
                    CeColl,
                    CeSync,
                    CeBatch {}

    /** A STOP record. */
    public record Stop() implements Payload {
        public static final Stop INSTANCE = new Stop();
    }

    /** A STATE record: the NCCL state value and its argument (see {@code RING.md}). */
    public record State(int state, long arg) implements Payload {
        public String stateName() {
            return NcclState.name(state);
        }
    }

    public record Group() implements Payload {
        public static final Group INSTANCE = new Group();
    }

    public record Coll(
            long seqNumber,
            int nChannels,
            int nWarps,
            long count,
            int root,
            String func,
            String datatype,
            String algo,
            String proto)
            implements Payload {}

    public record P2p(long count, int peer, String func, String datatype, int nChannels) implements Payload {}

    public record ProxyOp(int pid, int peer, int nSteps, int chunkSize, int channel, boolean isSend)
            implements Payload {}

    public record ProxyStep(int step) implements Payload {}

    public record ProxyCtrl() implements Payload {
        public static final ProxyCtrl INSTANCE = new ProxyCtrl();
    }

    public record KernelCh(int channel, long pTimer) implements Payload {}

    /**
     * A NetPlugin START. {@code netType} 1 (IB QP) sets opcode, device, qpNum, length (u32), wrId;
     * 2 (socket) sets sockOp, fd, length (u64); 0 (unknown plugin) nothing else. Unset fields are 0.
     */
    public record NetPlugin(
            long pluginId, int netType, int opcode, int device, long qpNum, long length, long wrId, int sockOp, int fd)
            implements Payload {}

    public record GroupApi(boolean graphCaptured, int groupDepth) implements Payload {}

    public record CollApi(long count, int root, String func, String datatype, boolean graphCaptured, long stream)
            implements Payload {}

    public record P2pApi(long count, String func, String datatype, boolean graphCaptured, long stream)
            implements Payload {}

    public record KernelLaunch(long stream) implements Payload {}

    public record CeColl(
            long seqNumber,
            long count,
            int root,
            String func,
            String datatype,
            String syncStrategy,
            boolean intraBatchSync)
            implements Payload {}

    public record CeSync(boolean isComplete, int nRanks) implements Payload {}

    public record CeBatch(int numOps, boolean useIntraSync, long totalBytes) implements Payload {}
}
