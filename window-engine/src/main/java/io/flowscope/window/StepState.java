package io.flowscope.window;

/** Mutable, pooled state of one live (or recently completed) ProxyStep. Fixed size; reused. */
final class StepState extends Pooled
{
    static final int SEEN_8 = 1;
    static final int SEEN_20 = 1 << 1;
    static final int SEEN_9 = 1 << 2;
    static final int SEEN_10 = 1 << 3;
    static final int SEEN_11 = 1 << 4;
    static final int SEEN_12 = 1 << 5;

    long key;
    HostState host;
    FlowState flow;
    int flowGeneration;
    boolean isSend;
    int step;
    int seen;
    boolean posted;
    boolean completed;
    boolean stopped;
    long startNs;
    long t8;
    long t20;
    long t9;
    long t10;
    long t11;
    long t12;
    long stopNs;
    long bytes;
    long lastNs;

    void reset(final long key, final FlowState flow, final boolean isSend, final int step, final long startNs)
    {
        this.key = key;
        this.flow = flow;
        this.flowGeneration = flow.generation;
        this.isSend = isSend;
        this.step = step;
        this.seen = 0;
        this.posted = false;
        this.completed = false;
        this.stopped = false;
        this.startNs = startNs;
        this.t8 = 0;
        this.t20 = 0;
        this.t9 = 0;
        this.t10 = 0;
        this.t11 = 0;
        this.t12 = 0;
        this.stopNs = 0;
        this.bytes = 0;
        this.lastNs = startNs;
    }

    boolean has(final int bit)
    {
        return (seen & bit) != 0;
    }

    /** When the work was posted to the network: 9 (send) / 10 (recv), else the step's start. */
    long postNs()
    {
        if (isSend)
        {
            return has(SEEN_9) ? t9 : startNs;
        }
        return has(SEEN_10) ? t10 : startNs;
    }
}
