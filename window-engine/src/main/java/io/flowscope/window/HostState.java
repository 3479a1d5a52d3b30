package io.flowscope.window;

/**
 * One host's clock domain: its own periods (event times of different hosts are never compared), and the
 * passive GPU clock estimator of that host. Pooled; hosts are never evicted (a few hundred at most).
 */
final class HostState extends Pooled
{
    long hostId;
    boolean started;
    long periodStartNs;
    long periodEndNs;

    void reset(final long hostId)
    {
        this.hostId = hostId;
        started = false;
        periodStartNs = 0;
        periodEndNs = 0;
    }
}
