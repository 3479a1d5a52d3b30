package io.flowscope.sink.webhook;

/** The JSON a webhook receives (sinks/README.md shows both). */
public enum WebhookFormat {
    /** {@code {"schema":"flowscope.alerts.v1","notifications":[{event, anomaly...}]}}. */
    GENERIC,
    /** An Alertmanager {@code POST /api/v2/alerts} body: an array of {labels, annotations, startsAt, endsAt}. */
    ALERTMANAGER
}
