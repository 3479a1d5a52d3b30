package io.flowscope.sink;

/** The outcome of one {@link Exporter#export} call. */
public enum ExportResult {
    /** Delivered. */
    SUCCESS,
    /** Not delivered, may succeed later (server down, 5xx, timeout): the processor backs off and retries. */
    RETRYABLE,
    /** Not delivered and never will be (4xx: malformed, refused; exporter shut down): counted as rejected. */
    FAILED
}
