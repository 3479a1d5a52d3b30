package io.flowscope.api.input;

/**
 * The NCCL state values a ProxyStep passes through, as {@link TelemetryListener#onProxyStepState} carries them
 * ({@code ncclProfilerEventState_t}, profiler ABI §2.5). The ring reader names every state value
 * ({@code io.flowscope.ring.NcclState}); these are the ones the input interface gives a meaning, and the collector's
 * {@code StepStateNamesTest} keeps the two equal.
 */
public final class StepState {
    /** Send: the step waits for the GPU to fill its slot. */
    public static final int SEND_GPU_WAIT = 8;
    /** Send: the data is handed to the network ({@code transSize} set). */
    public static final int SEND_WAIT = 9;
    /** Receive: posted to the network, waiting for data. */
    public static final int RECV_WAIT = 10;
    /** Receive: the data arrived ({@code transSize} set), being flushed. */
    public static final int RECV_FLUSH_WAIT = 11;
    /** Receive: flushed, waiting for the GPU to consume it. */
    public static final int RECV_GPU_WAIT = 12;
    /** Send: waiting for the peer's credit (repeatable). */
    public static final int SEND_PEER_WAIT = 20;
    /** The highest state value NCCL defines (CeBatchComplete, NCCL 2.28): tables indexed by state cover it. */
    public static final int HIGHEST_NCCL_STATE = 30;

    private StepState() {}
}
