package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * Reads what {@link CheckpointOut} wrote. Every read is checked against the bytes left and every index against what
 * it indexes, so that a truncated, damaged or foreign checkpoint ends in one {@link IllegalArgumentException} naming
 * what was wrong, never in an exception from deep inside the engine or an allocation sized by garbage.
 */
final class CheckpointIn {
    private final byte[] buf;
    private int pos;
    private int limit;
    /** The limits of the enclosing sections, and their tags (for messages). */
    private final int[] limits = new int[8];

    private final int[] tags = new int[8];
    private int depth;

    HostState[] hosts = new HostState[0];
    CommState[] comms = new CommState[0];
    /** The open anomalies by id (the lifecycle section), for the trackers that hold them. */
    final Map<Long, Anomaly> anomalies = new HashMap<>();

    private CheckpointIn(final byte[] buf, final int from, final int limit) {
        this.buf = buf;
        this.pos = from;
        this.limit = limit;
    }

    /**
     * The payload of a checkpoint, after its header, length, CRC and the fingerprint of the configuration it was
     * made under are checked (in that order: a damaged checkpoint reads as damaged, not as another configuration's).
     */
    static CheckpointIn open(final byte[] b, final long fingerprint) {
        if (b == null) {
            throw new IllegalArgumentException("anomaly checkpoint: null");
        }
        if (b.length < CheckpointOut.HEADER + CheckpointOut.CRC) {
            throw new IllegalArgumentException("anomaly checkpoint truncated: " + b.length
                    + " bytes, the header alone takes " + (CheckpointOut.HEADER + CheckpointOut.CRC));
        }
        final CheckpointIn in = new CheckpointIn(b, 0, b.length);
        final long magic = in.readFixed(4);
        if (magic != CheckpointOut.MAGIC) {
            throw new IllegalArgumentException(String.format(
                    "not an anomaly checkpoint: starts with 0x%08x, not 0x%08x", magic, CheckpointOut.MAGIC));
        }
        final long version = in.readFixed(2);
        if (version != CheckpointOut.VERSION) {
            throw new IllegalArgumentException("anomaly checkpoint of format version " + version
                    + "; this engine reads version " + CheckpointOut.VERSION + " only");
        }
        final long madeUnder = in.readFixed(8);
        final long payload = in.readFixed(4);
        final long expected = CheckpointOut.HEADER + payload + CheckpointOut.CRC;
        if (expected != b.length) {
            throw new IllegalArgumentException("anomaly checkpoint " + (b.length < expected ? "truncated" : "too long")
                    + ": " + b.length + " bytes, its header announces " + expected);
        }
        final CRC32 crc = new CRC32();
        crc.update(b, 0, b.length - CheckpointOut.CRC);
        final CheckpointIn tail = new CheckpointIn(b, b.length - CheckpointOut.CRC, b.length);
        if (tail.readFixed(4) != crc.getValue()) {
            throw new IllegalArgumentException("anomaly checkpoint damaged: CRC32 mismatch");
        }
        if (madeUnder != fingerprint) {
            throw new IllegalArgumentException(String.format(
                    "anomaly checkpoint made under other thresholds (config fingerprint %016x, this engine's %016x):"
                            + " restore it into an engine built with the same AnomalyConfig",
                    madeUnder, fingerprint));
        }
        return new CheckpointIn(b, CheckpointOut.HEADER, b.length - CheckpointOut.CRC);
    }

    static IllegalArgumentException damaged(final String what) {
        return new IllegalArgumentException("anomaly checkpoint damaged: " + what);
    }

    /** Throws unless {@code ok}: a value the checkpoint holds is impossible. */
    static void check(final boolean ok, final String what) {
        if (!ok) {
            throw damaged(what);
        }
    }

    int remaining() {
        return limit - pos;
    }

    int readByte() {
        if (pos >= limit) {
            throw damaged(depth == 0 ? "ends early" : "section " + tags[depth - 1] + " ends early");
        }
        return buf[pos++] & 0xFF;
    }

    private long readFixed(final int bytes) {
        long v = 0;
        for (int i = 0; i < bytes; i++) {
            v = (v << 8) | readByte();
        }
        return v;
    }

    boolean readBoolean() {
        final int b = readByte();
        check(b <= 1, "a flag reads " + b);
        return b == 1;
    }

    long readLong() {
        long z = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            final int b = readByte();
            z |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return (z >>> 1) ^ -(z & 1);
            }
        }
        throw damaged("a number runs over 10 bytes");
    }

    int readInt() {
        final long v = readLong();
        check(v == (int) v, "an int reads " + v);
        return (int) v;
    }

    double readDouble() {
        return Double.longBitsToDouble(readFixed(8));
    }

    String readString() {
        final int n = readInt();
        if (n == -1) {
            return null;
        }
        check(n >= 0 && n <= remaining(), "a string of " + n + " bytes");
        final String s = new String(buf, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return s;
    }

    /** A count of items that take a byte or more each: never more than the bytes left (no allocation by garbage). */
    int readCount() {
        final int n = readInt();
        check(n >= 0 && n <= remaining(), "a count of " + n + " with " + remaining() + " bytes left");
        return n;
    }

    /** An index into something of {@code bound} items. */
    int readIndex(final int bound) {
        final int i = readInt();
        check(i >= 0 && i < bound, "an index " + i + " of " + bound);
        return i;
    }

    /** What {@link CheckpointOut#writeSet} wrote, added to {@code set}. */
    void readSet(final org.agrona.collections.LongHashSet set) {
        final int n = readCount();
        for (int i = 0; i < n; i++) {
            set.add(readLong());
        }
    }

    /** The start of section {@code tag}: its tag and length checked; reads stay inside it. */
    void section(final int tag) {
        final int t = readByte();
        check(t == tag, "section " + tag + " expected, found " + t);
        final long length = readFixed(4);
        check(length <= remaining(), "section " + tag + " of " + length + " bytes, " + remaining() + " left");
        check(depth < limits.length, "sections nested too deep");
        limits[depth] = limit;
        tags[depth++] = tag;
        limit = pos + (int) length;
    }

    /** The end of the current section: all of it read. */
    void endSection() {
        check(pos == limit, "section " + tags[depth - 1] + " has " + remaining() + " bytes unread");
        limit = limits[--depth];
    }

    /** The end of the checkpoint: nothing left. */
    void end() {
        check(depth == 0 && pos == limit, (limit - pos) + " bytes after the last section");
    }

    HostState readHost() {
        return hosts[readIndex(hosts.length)];
    }

    /** A host or null (-1). */
    HostState readHostOrNull() {
        final int i = readInt();
        check(i >= -1 && i < hosts.length, "a host index " + i + " of " + hosts.length);
        return i < 0 ? null : hosts[i];
    }

    CommState readComm() {
        return comms[readIndex(comms.length)];
    }

    RecvFlow readRecvFlow() {
        final HostState h = readHost();
        return h.recvFlows[readIndex(h.recvFlowCount)];
    }

    NicState readNic() {
        final HostState h = readHost();
        return h.deviceList.get(readIndex(h.deviceCount));
    }

    Anomaly readAnomalyRef() {
        return readBoolean() ? readAnomaly() : null;
    }

    /** An open anomaly by id, which the lifecycle section must hold. */
    Anomaly readAnomaly() {
        final long id = readFixed(8);
        final Anomaly a = anomalies.get(id);
        check(a != null, String.format("a tracker holds anomaly %016x, which is not open", id));
        return a;
    }

    long readAnomalyId() {
        return readFixed(8);
    }
}
