package io.flowscope.ring;

/**
 * The kind of a record: the NCCL profiler event bit index ({@code ncclProfileGroup} = bit 0 ...).
 * {@link #label()} is the name used by {@code RING.md}, the harness and the JSON output.
 */
public enum EventKind {
    GROUP("Group"),
    COLL("Coll"),
    P2P("P2p"),
    PROXY_OP("ProxyOp"),
    PROXY_STEP("ProxyStep"),
    PROXY_CTRL("ProxyCtrl"),
    KERNEL_CH("KernelCh"),
    NET_PLUGIN("NetPlugin"),
    GROUP_API("GroupApi"),
    COLL_API("CollApi"),
    P2P_API("P2pApi"),
    KERNEL_LAUNCH("KernelLaunch"),
    CE_COLL("CeColl"),
    CE_SYNC("CeSync"),
    CE_BATCH("CeBatch");

    /** Number of kinds layout 1.0 knows (0..14). */
    public static final int COUNT = 15;

    private static final EventKind[] BY_CODE = values();

    private final String label;

    EventKind(final String label) {
        this.label = label;
    }

    /** The kind code stored in the record (= the NCCL event bit index). */
    public int code() {
        return ordinal();
    }

    /** The NCCL event mask bit of this kind. */
    public int maskBit() {
        return 1 << ordinal();
    }

    public String label() {
        return label;
    }

    public static boolean isValid(final int code) {
        return code >= 0 && code < COUNT;
    }

    /** @throws IllegalArgumentException for a code outside 0..14. */
    public static EventKind of(final int code) {
        if (!isValid(code)) {
            throw new IllegalArgumentException(
                    "unknown event kind " + code + " (layout 1.0 has 0.." + (COUNT - 1) + ")");
        }
        return BY_CODE[code];
    }

    /** @throws IllegalArgumentException for an unknown label. */
    public static EventKind ofLabel(final String label) {
        for (final EventKind kind : BY_CODE) {
            if (kind.label.equals(label)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown event kind '" + label + "'");
    }
}
