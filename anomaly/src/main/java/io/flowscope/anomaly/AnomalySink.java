package io.flowscope.anomaly;

/** Receives anomalies as they open, change and resolve (same {@link Anomaly#id()} throughout). */
public interface AnomalySink
{
    void onOpened(Anomaly anomaly);

    /** Severity or evidence changed while open. */
    default void onUpdated(final Anomaly anomaly)
    {
    }

    void onResolved(Anomaly anomaly);
}
