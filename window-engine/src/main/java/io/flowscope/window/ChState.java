package io.flowscope.window;

/** Pooled state of one KernelCh event: its collective and whether its stop (state 22) came. */
final class ChState extends Pooled {
    long key;
    HostState host;
    CollState coll;
    int collGeneration;
    boolean stopped;
    long lastNs;
}
