package io.flowscope.api.input;

/**
 * A {@link TelemetryListener} that hands the event time of every input call to one method: for readers of recorded
 * input that follow time only (a trace's clock offsets, how far a host's records ran behind). {@link #onHost} and
 * the rings' communicator entries stay the listener's defaults, to override where wanted; so does {@link #advanceTo}
 * (an idle host's time is not a record's: by default it is not handed to {@link #onEventTime}).
 */
public abstract class EventTimeListener implements TelemetryListener {
    /** The event time of one input call, in the order the calls arrive. */
    protected abstract void onEventTime(long timeNs);

    @Override
    public void onProxyOpStart(
            final long opKey,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onQpStart(
            final long wrKey,
            final int device,
            final long qpNum,
            final int opcode,
            final long length,
            final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onQpStop(final long wrKey, final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onCollStart(
            final long collKey,
            final long commHash,
            final int rank,
            final int nranks,
            final int func,
            final int algo,
            final int proto,
            final long count,
            final int datatypeSize,
            final int nChannels,
            final long seqNumber,
            final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onCollStop(final long collKey, final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onKernelChStart(
            final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
        onEventTime(timeNs);
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
        onEventTime(timeNs);
    }
}
