package io.flowscope.sink.webhook;

import io.flowscope.api.anomaly.Anomaly;

/**
 * One anomaly state to deliver: {@code event} is opened, updated or resolved, or (Alertmanager only) resent: an
 * open anomaly's alert sent again so that Alertmanager keeps it firing.
 */
public record Notification(Anomaly anomaly, Event event) {
    public enum Event {
        OPENED,
        UPDATED,
        RESENT,
        RESOLVED;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * The de-duplication key: the same anomaly, the same firing/resolved state and severity is sent once
     * (an update that raises the severity is a new notification; one that only refreshes evidence is not).
     */
    public String dedupKey() {
        final boolean resolved = event == Event.RESOLVED;
        return Long.toHexString(anomaly.id()) + (resolved ? ":resolved" : ":firing:" + anomaly.severity());
    }
}
