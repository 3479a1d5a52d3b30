package io.flowscope.window;

/** Pooled state of one live collective (Coll or P2p event) and what its KernelCh children reported. */
final class CollState extends Pooled {
    long key;
    HostState host;
    int generation;
    long commHash;
    int rank;
    int nranks;
    int func;
    int algo;
    int proto;
    long count;
    int datatypeSize;
    int nChannels;
    long seqNumber;
    long hostStartNs;
    long hostStopNs;
    boolean stopped;
    int chStarted;
    int chStopped;
    long gpuStartNs;
    long gpuEndNs;
    long lastNs;
}
