package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.zip.CRC32;

/**
 * Writes an engine checkpoint (layout in anomaly/README.md, "Checkpoints"): a header, length-prefixed sections of
 * variable-length integers (most counters and times are small or close to each other: a varint is 1–3 bytes where a
 * long is 8), raw doubles, and a CRC32. Objects that refer to each other (a link to its host, a tracker to its open
 * anomaly) are written as indexes into the hosts and communicators in the order the checkpoint lists them.
 */
final class CheckpointOut {
    static final int MAGIC = 0x4653_434B; // "FSCK"
    static final int VERSION = 1;
    /** Magic, version, config fingerprint, payload length. */
    static final int HEADER = 4 + 2 + 8 + 4;

    static final int CRC = 4;

    private byte[] buf;
    private int pos = HEADER;
    private final long fingerprint;
    private final IdentityHashMap<HostState, Integer> hostIndex = new IdentityHashMap<>();
    private final IdentityHashMap<CommState, Integer> commIndex = new IdentityHashMap<>();

    /**
     * {@code expectedBytes}: about the size this checkpoint will have (the last one's: state grows slowly), so
     * that the buffer is not doubled and copied a dozen times on the way to megabytes.
     */
    CheckpointOut(
            final long configFingerprint, final HostState[] hosts, final CommState[] comms, final int expectedBytes) {
        this.fingerprint = configFingerprint;
        this.buf = new byte[Math.max(1 << 12, expectedBytes)];
        for (int i = 0; i < hosts.length; i++) {
            hostIndex.put(hosts[i], i);
        }
        for (int i = 0; i < comms.length; i++) {
            commIndex.put(comms[i], i);
        }
    }

    private void ensure(final int n) {
        if (pos + n > buf.length) {
            buf = java.util.Arrays.copyOf(buf, Math.max(pos + n, buf.length * 2));
        }
    }

    void writeByte(final int b) {
        ensure(1);
        buf[pos++] = (byte) b;
    }

    void writeBoolean(final boolean b) {
        writeByte(b ? 1 : 0);
    }

    /** Zigzag varint: small magnitudes of either sign take few bytes (Long.MIN_VALUE, "none", takes 10). */
    void writeLong(final long v) {
        ensure(10);
        long z = (v << 1) ^ (v >> 63);
        while ((z & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((z & 0x7F) | 0x80);
            z >>>= 7;
        }
        buf[pos++] = (byte) z;
    }

    void writeInt(final int v) {
        writeLong(v);
    }

    /** Raw IEEE bits (exact: NaN payloads and −0.0 included). */
    void writeDouble(final double v) {
        writeFixed(Double.doubleToRawLongBits(v), 8);
    }

    private void writeFixed(final long v, final int bytes) {
        ensure(bytes);
        for (int i = bytes - 1; i >= 0; i--) {
            buf[pos++] = (byte) (v >>> (8 * i));
        }
    }

    /** UTF-8 with its length; -1 for null. */
    void writeString(final String s) {
        if (s == null) {
            writeInt(-1);
            return;
        }
        final byte[] b = s.getBytes(StandardCharsets.UTF_8);
        writeInt(b.length);
        ensure(b.length);
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
    }

    /** A set of longs, sorted (a hash set's order depends on its history: the same set, the same bytes). */
    void writeSet(final org.agrona.collections.LongHashSet set) {
        final long[] v = new long[set.size()];
        int n = 0;
        for (final org.agrona.collections.LongHashSet.LongIterator it = set.iterator(); it.hasNext(); ) {
            v[n++] = it.nextValue();
        }
        java.util.Arrays.sort(v);
        writeInt(n);
        for (final long x : v) {
            writeLong(x);
        }
    }

    /** Opens a section: its tag, then its length (patched by {@link #endSection}). Returns the mark to pass there. */
    int beginSection(final int tag) {
        writeByte(tag);
        ensure(4);
        final int mark = pos;
        pos += 4;
        return mark;
    }

    void endSection(final int mark) {
        final int length = pos - mark - 4;
        for (int i = 0; i < 4; i++) {
            buf[mark + i] = (byte) (length >>> (8 * (3 - i)));
        }
    }

    /** A host by its index in the checkpoint's host list; -1 for null. */
    void writeHost(final HostState h) {
        writeInt(h == null ? -1 : hostIndex.get(h));
    }

    void writeComm(final CommState c) {
        writeInt(commIndex.get(c));
    }

    /** A receive flow by its host and its row there. */
    void writeRecvFlow(final RecvFlow f) {
        writeHost(f.host);
        writeInt(f.idx);
    }

    /** A NIC by its host and its row there. */
    void writeNic(final NicState d) {
        writeHost(d.host);
        writeInt(d.idx);
    }

    /** A tracker's open anomaly by its id (the lifecycle section holds the anomaly itself). */
    void writeAnomalyRef(final Anomaly a) {
        writeBoolean(a != null);
        if (a != null) {
            writeFixed(a.id(), 8);
        }
    }

    void writeAnomalyId(final long id) {
        writeFixed(id, 8);
    }

    /** The header filled in and the CRC appended: the checkpoint. */
    byte[] finish() {
        final int payload = pos - HEADER;
        final int end = pos;
        pos = 0;
        writeFixed(MAGIC, 4);
        writeFixed(VERSION, 2);
        writeFixed(fingerprint, 8);
        writeFixed(payload, 4);
        pos = end;
        final CRC32 crc = new CRC32();
        crc.update(buf, 0, end);
        writeFixed(crc.getValue(), 4);
        return pos == buf.length ? buf : java.util.Arrays.copyOf(buf, pos);
    }
}
