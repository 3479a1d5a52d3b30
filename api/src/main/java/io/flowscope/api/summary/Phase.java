package io.flowscope.api.summary;

/**
 * The phases of a ProxyStep (NCCL profiler ABI §2.5), as indexes into per-phase arrays.
 * <pre>
 *   send: start → 8 SendGPUWait → 20 SendPeerWait (repeatable) → 9 SendWait → stop
 *         GPU_WAIT  = 8 → first 20 (or 9 when no 20)
 *         PEER_WAIT = first 20 → 9
 *         NETWORK   = 9 → stop
 *   recv: start → 10 RecvWait → 11 RecvFlushWait → 12 RecvGPUWait → stop
 *         NETWORK     = 10 → 11
 *         FLUSH       = 11 → 12
 *         GPU_CONSUME = 12 → stop
 * </pre>
 * A phase whose bounding records are missing is not measured.
 */
public final class Phase {
    public static final int GPU_WAIT = 0;
    public static final int PEER_WAIT = 1;
    public static final int NETWORK = 2;
    public static final int FLUSH = 3;
    public static final int GPU_CONSUME = 4;
    public static final int COUNT = 5;

    /** A duration that was not measured. */
    public static final long ABSENT = -1;

    private static final String[] NAMES = {"gpu_wait", "peer_wait", "network", "flush", "gpu_consume"};

    private Phase() {}

    public static String name(final int phase) {
        return NAMES[phase];
    }
}
