package io.flowscope.sink;

/** The outcome of one {@link Exporter#export} call. */
public enum ExportResult {
    /** Delivered. */
    SUCCESS,
    /** Not delivered, may succeed later (server down, 5xx, timeout): the processor backs off and retries. */
    RETRYABLE,
    /** Not delivered and never will be (4xx: malformed, refused; exporter shut down): counted as rejected. */
    FAILED;

    /**
     * An HTTP server's answer: 2xx delivered; 5xx, 408 (request timeout) and 429 (too many requests) retryable, as
     * the server will take the same request later; any other status (401, a malformed body's 400) failed.
     */
    public static ExportResult ofHttpStatus(final int status) {
        if (status / 100 == 2) {
            return SUCCESS;
        }
        return status >= 500 || status == 408 || status == 429 ? RETRYABLE : FAILED;
    }
}
