package io.flowscope.ring;

/** What a record says about its event: {@code startEvent}, {@code stopEvent} or {@code recordEventState}. */
public enum RecordOp {
    START(RecordLayout.OP_START),
    STOP(RecordLayout.OP_STOP),
    STATE(RecordLayout.OP_STATE);

    private final int code;

    RecordOp(final int code) {
        this.code = code;
    }

    /** The op code stored in the record. */
    public int code() {
        return code;
    }

    public static boolean isValid(final int code) {
        return code >= RecordLayout.OP_START && code <= RecordLayout.OP_STATE;
    }

    /** @throws IllegalArgumentException for a code outside 1..3. */
    public static RecordOp of(final int code) {
        switch (code) {
            case RecordLayout.OP_START:
                return START;
            case RecordLayout.OP_STOP:
                return STOP;
            case RecordLayout.OP_STATE:
                return STATE;
            default:
                throw new IllegalArgumentException("unknown record op " + code + " (1 START, 2 STOP, 3 STATE)");
        }
    }
}
