package io.flowscope.window;

/**
 * One host's clock domain: its own periods (event times of different hosts are never compared), and the
 * passive GPU clock estimator of that host. Pooled; hosts are never evicted (a few hundred at most).
 */
final class HostState extends Pooled {
    /** Index of this object among the engine's hosts, fixed at construction. */
    int index;

    long hostId;
    boolean started;
    long periodStartNs;
    long periodEndNs;
    /** Origin of the series buckets: the host's first event time, floored to a second. */
    long seriesEpochNs;
    /** Passive GPU clock estimator: samples (host time − pTimer at KernelCh start), the lowest two. */
    long clockSamples;

    long clockMinNs;
    long clockNextNs;

    void reset(final long hostId) {
        this.hostId = hostId;
        started = false;
        periodStartNs = 0;
        periodEndNs = 0;
        clockSamples = 0;
        clockMinNs = 0;
        clockNextNs = 0;
    }
}
