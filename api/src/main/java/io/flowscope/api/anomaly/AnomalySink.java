package io.flowscope.api.anomaly;

import java.util.function.BiConsumer;

/** Receives anomalies as they open, change and resolve (same {@link Anomaly#id()} throughout). */
public interface AnomalySink {
    String OPENED = "opened";
    String UPDATED = "updated";
    String RESOLVED = "resolved";

    void onOpened(Anomaly anomaly);

    /** Severity or evidence changed while open. */
    default void onUpdated(final Anomaly anomaly) {}

    void onResolved(Anomaly anomaly);

    /**
     * Open since an earlier run of the service, which already announced it (after a restart): a sink that keeps
     * state about open anomalies takes it up again (the Alertmanager webhook re-sends its alert); one that announces
     * each event does nothing. Its update or resolution follows as for any other.
     */
    default void onStillOpen(final Anomaly anomaly) {}

    /** A sink that hands each callback on as one event: {@link #OPENED}, {@link #UPDATED} or {@link #RESOLVED}. */
    static AnomalySink of(final BiConsumer<String, Anomaly> onEvent) {
        return new AnomalySink() {
            @Override
            public void onOpened(final Anomaly anomaly) {
                onEvent.accept(OPENED, anomaly);
            }

            @Override
            public void onUpdated(final Anomaly anomaly) {
                onEvent.accept(UPDATED, anomaly);
            }

            @Override
            public void onResolved(final Anomaly anomaly) {
                onEvent.accept(RESOLVED, anomaly);
            }
        };
    }
}
