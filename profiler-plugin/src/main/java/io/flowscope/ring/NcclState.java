package io.flowscope.ring;

/**
 * Names of the NCCL profiler state values carried by STATE records ({@code ncclProfilerEventState_t},
 * one int enum shared by all ABI versions). Constants rather than an enum: the value in the record is
 * whatever NCCL passed, known or not.
 */
public final class NcclState {
    public static final int PROXY_OP_SEND_POSTED = 0;
    public static final int PROXY_OP_SEND_REM_FIFO_WAIT = 1;
    public static final int PROXY_OP_SEND_TRANSMITTED = 2;
    public static final int PROXY_OP_SEND_DONE = 3;
    public static final int PROXY_OP_RECV_POSTED = 4;
    public static final int PROXY_OP_RECV_RECEIVED = 5;
    public static final int PROXY_OP_RECV_TRANSMITTED = 6;
    public static final int PROXY_OP_RECV_DONE = 7;
    public static final int PROXY_STEP_SEND_GPU_WAIT = 8;
    public static final int PROXY_STEP_SEND_WAIT = 9;
    public static final int PROXY_STEP_RECV_WAIT = 10;
    public static final int PROXY_STEP_RECV_FLUSH_WAIT = 11;
    public static final int PROXY_STEP_RECV_GPU_WAIT = 12;
    public static final int PROXY_CTRL_IDLE = 13;
    public static final int PROXY_CTRL_ACTIVE = 14;
    public static final int PROXY_CTRL_SLEEP = 15;
    public static final int PROXY_CTRL_WAKEUP = 16;
    public static final int PROXY_CTRL_APPEND = 17;
    public static final int PROXY_CTRL_APPEND_END = 18;
    public static final int PROXY_OP_IN_PROGRESS = 19;
    public static final int PROXY_STEP_SEND_PEER_WAIT = 20;
    public static final int NET_PLUGIN_UPDATE = 21;
    public static final int KERNEL_CH_STOP = 22;
    public static final int GROUP_START_API_STOP = 23;
    public static final int GROUP_END_API_START = 24;
    public static final int CE_COLL_START = 25;
    public static final int CE_COLL_COMPLETE = 26;
    public static final int CE_SYNC_START = 27;
    public static final int CE_SYNC_COMPLETE = 28;
    public static final int CE_BATCH_START = 29;
    public static final int CE_BATCH_COMPLETE = 30;

    private static final String[] NAMES = {
        "ProxyOpSendPosted",
        "ProxyOpSendRemFifoWait",
        "ProxyOpSendTransmitted",
        "ProxyOpSendDone",
        "ProxyOpRecvPosted",
        "ProxyOpRecvReceived",
        "ProxyOpRecvTransmitted",
        "ProxyOpRecvDone",
        "ProxyStepSendGPUWait",
        "ProxyStepSendWait",
        "ProxyStepRecvWait",
        "ProxyStepRecvFlushWait",
        "ProxyStepRecvGPUWait",
        "ProxyCtrlIdle",
        "ProxyCtrlActive",
        "ProxyCtrlSleep",
        "ProxyCtrlWakeup",
        "ProxyCtrlAppend",
        "ProxyCtrlAppendEnd",
        "ProxyOpInProgress",
        "ProxyStepSendPeerWait",
        "NetPluginUpdate",
        "KernelChStop",
        "GroupStartApiStop",
        "GroupEndApiStart",
        "CeCollStart",
        "CeCollComplete",
        "CeSyncStart",
        "CeSyncComplete",
        "CeBatchStart",
        "CeBatchComplete",
    };

    private NcclState() {}

    /** The NCCL name of a state value, or {@code "State<n>"} for a value NCCL has not defined. */
    public static String name(final int state) {
        return state >= 0 && state < NAMES.length ? NAMES[state] : "State" + state;
    }

    public static boolean isKnown(final int state) {
        return state >= 0 && state < NAMES.length;
    }
}
