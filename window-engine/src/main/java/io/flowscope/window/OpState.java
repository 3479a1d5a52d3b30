package io.flowscope.window;

/**
 * Pooled state of one live ProxyOp: which flow its steps belong to. The flow's id and direction are copied here, so
 * that a step start reads the op and not the flow (an op's flow is live: the sweep that evicts a flow removes its
 * ops).
 */
final class OpState extends Pooled {
    long key;
    HostState host;
    FlowState flow;
    int flowGeneration;
    int flowId;
    boolean isSend;
    long lastNs;
}
