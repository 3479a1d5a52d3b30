package io.flowscope.window;

/**
 * KernelCh records that came before their Coll START (another ring lane): held until that START attaches them, or
 * until they expire ({@code WindowConfig.pendingKernelChNs}, checked by the host's sweep). A fixed table, nothing
 * allocated after construction.
 * <p>
 * <b>Layout</b>: entry i is column i of nine parallel arrays, dense over {@code [0, count)} and unordered (a removal
 * moves the last entry into the hole). Linear scans: the table is empty in a stream whose lanes keep their order,
 * and at most {@code maxPendingKernelChannels} (256 by default) entries otherwise.
 * <pre>
 *   key        the KernelCh key          host        the host whose ring it came from (keys are per host)
 *   coll       its collective's key      channel     its channel
 *   pTimer     start pTimer (GPU ns)     ns          start host time; the expiry is counted from it
 *   stopped    its state-22 stop came    stopPTimer, stopNs   that stop's pTimer and host time
 * </pre>
 */
final class PendingKernelChannels {
    final long[] key;
    final long[] coll;
    final int[] channel;
    final long[] pTimer;
    final long[] ns;
    final HostState[] host;
    final boolean[] stopped;
    final long[] stopPTimer;
    final long[] stopNs;
    private int count;

    PendingKernelChannels(final int capacity) {
        key = new long[capacity];
        coll = new long[capacity];
        channel = new int[capacity];
        pTimer = new long[capacity];
        ns = new long[capacity];
        host = new HostState[capacity];
        stopped = new boolean[capacity];
        stopPTimer = new long[capacity];
        stopNs = new long[capacity];
    }

    int count() {
        return count;
    }

    /** Holds a KernelCh start; false when the table is full. */
    boolean add(
            final long chKey,
            final long collKey,
            final int ch,
            final long pTimerNs,
            final long timeNs,
            final HostState h) {
        if (count == key.length) {
            return false;
        }
        final int n = count++;
        key[n] = chKey;
        coll[n] = collKey;
        channel[n] = ch;
        pTimer[n] = pTimerNs;
        ns[n] = timeNs;
        host[n] = h;
        stopped[n] = false;
        return true;
    }

    /** The entry of KernelCh {@code chKey} of host {@code h}, or -1. */
    int find(final long chKey, final HostState h) {
        for (int i = 0; i < count; i++) {
            if (key[i] == chKey && host[i] == h) {
                return i;
            }
        }
        return -1;
    }

    /** Records the stop (state 22) of entry i. */
    void stop(final int i, final long pTimerNs, final long timeNs) {
        stopped[i] = true;
        stopPTimer[i] = pTimerNs;
        stopNs[i] = timeNs;
    }

    /** Removes entry i, keeping the table dense (the last entry moves into i; order is not needed). */
    void remove(final int i) {
        final int last = --count;
        key[i] = key[last];
        coll[i] = coll[last];
        channel[i] = channel[last];
        pTimer[i] = pTimer[last];
        ns[i] = ns[last];
        host[i] = host[last];
        stopped[i] = stopped[last];
        stopPTimer[i] = stopPTimer[last];
        stopNs[i] = stopNs[last];
        host[last] = null;
    }
}
