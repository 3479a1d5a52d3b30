package io.flowscope.api.anomaly;

/** How bad an anomaly is now; it may rise while the anomaly stays open. */
public enum Severity {
    WARNING,
    CRITICAL
}
