package io.flowscope.window;

/** Pooled state of one live ProxyOp: which flow its steps belong to. */
final class OpState extends Pooled
{
    long key;
    HostState host;
    FlowState flow;
    int flowGeneration;
    long lastNs;
}
