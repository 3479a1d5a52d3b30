package io.flowscope.collector.fleet.wire;

/**
 * A record that is not a readable fleet wire record (truncated, corrupt, an unknown schema or template): its
 * message says what and where, in one line. Readers count the record and skip it; they never stop on one.
 */
public final class WireFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public WireFormatException(final String message) {
        super(message);
    }
}
