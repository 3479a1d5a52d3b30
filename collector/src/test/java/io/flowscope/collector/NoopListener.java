package io.flowscope.collector;

import io.flowscope.api.input.TelemetryListener;

/** Ignores every call (for reading a journal's metadata or counting it). */
public class NoopListener implements TelemetryListener {
    @Override
    public void onProxyOpStart(
            final long opKey,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {}

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {}

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {}

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {}

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {}
}
