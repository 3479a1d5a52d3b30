package io.flowscope.api.input;

/**
 * The host id of {@link TelemetryListener#onHost} from a hostname, the same in every producer (the ring adapter
 * hashes a ring's hostname, the simulator a scenario's), so that one host keeps one id across runs and modules.
 */
public final class HostIds {
    private HostIds() {}

    /** 64-bit FNV-1a of the hostname's chars: stable across runs and JVMs. */
    public static long of(final String hostname) {
        long h = 0xCBF29CE484222325L;
        for (int i = 0; i < hostname.length(); i++) {
            h ^= hostname.charAt(i);
            h *= 0x100000001B3L;
        }
        return h;
    }
}
