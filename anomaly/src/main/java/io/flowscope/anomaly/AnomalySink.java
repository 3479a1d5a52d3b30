package io.flowscope.anomaly;

import java.util.function.BiConsumer;

/** Receives anomalies as they open, change and resolve (same {@link Anomaly#id()} throughout). */
public interface AnomalySink
{
    String OPENED = "opened";
    String UPDATED = "updated";
    String RESOLVED = "resolved";

    void onOpened(Anomaly anomaly);

    /** Severity or evidence changed while open. */
    default void onUpdated(final Anomaly anomaly)
    {
    }

    void onResolved(Anomaly anomaly);

    /** A sink that hands each callback on as one event: {@link #OPENED}, {@link #UPDATED} or {@link #RESOLVED}. */
    static AnomalySink of(final BiConsumer<String, Anomaly> onEvent)
    {
        return new AnomalySink()
        {
            @Override
            public void onOpened(final Anomaly anomaly)
            {
                onEvent.accept(OPENED, anomaly);
            }

            @Override
            public void onUpdated(final Anomaly anomaly)
            {
                onEvent.accept(UPDATED, anomaly);
            }

            @Override
            public void onResolved(final Anomaly anomaly)
            {
                onEvent.accept(RESOLVED, anomaly);
            }
        };
    }
}
