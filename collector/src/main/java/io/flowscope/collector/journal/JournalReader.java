package io.flowscope.collector.journal;

import io.flowscope.api.input.TelemetryListener;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Reads a journal ({@link JournalFormat}) from its start and hands every entry to a {@link TelemetryListener}
 * (the input calls, and the rings' communicator entries: {@code onRingComm}) and a {@link Meta} listener (the
 * rest). Entries whose event time is outside [{@code fromNs}, {@code toNs}] are skipped (host and communicator
 * entries always pass).
 * <p>
 * <b>Damage.</b> Each batch is copied out of the mapped file and verified before any of its entries is handed on:
 * a format-2 batch by its CRC32C and its own index, a format-1 batch (a journal written before checksums) by its
 * structure ({@link JournalFormat}). A damaged batch is skipped whole, so it never reaches the engines. Damage to
 * Chronicle's own framing (a document header: its length, its flags, a forged end of cycle) is found by the
 * batches' indexes: a batch that does not follow the last one in order leaves a gap, and a document that cannot be
 * read is stepped over by the queue's index (every document is indexed in a format-2 journal; older ones every 16th
 * to 256th), to the next batch that reads, in its cycle or the next. Every range skipped is reported, with where it
 * is and why ({@link #onDamage}, {@link #damage()}, {@link #corruptDocuments()} counts the batches).
 */
public final class JournalReader extends EventLogCounts {
    /** The journal's non-telemetry entries. */
    public interface Meta {
        default void onBatch(final long wallNs) {}

        default void onRingAttached(final long hostId, final int pid, final String hostname, final String path) {}

        /** A ring's clock anchor ({@link JournalFormat#RING_CLOCK}): CLOCK_REALTIME and CLOCK_MONOTONIC, ns. */
        default void onRingClock(final long hostId, final int pid, final long realtimeNs, final long monotonicNs) {}

        default void onRingDetached(final int pid, final String path, final String reason) {}

        default void onAnomaly(final long id, final boolean opened, final String summary) {}

        default void onSource(final String spec) {}

        /** The run's engine settings ({@link JournalFormat#ENGINE_SETTINGS}): {@code key=value} pairs, spaced. */
        default void onEngineSettings(final String settings) {}

        /** The live run ended its input here ({@link JournalFormat#END}): its engines' periods ended early. */
        default void onEnd() {}
    }

    /** The batches after a damaged one tried one by one (every document indexed) before the indexed positions. */
    private static final int LINEAR_PROBES = 64;
    /** The positions older journals index: every 16th (minutely) to 256th document. */
    private static final int[] OLD_SPACINGS = {16, 64, 256};
    /** Indexed positions tried in a row without finding a batch before a cycle is given up. */
    private static final int ALIGNED_MISSES = 64;

    private static final int READ = 1;
    private static final int NOTHING = 0;
    private static final int BROKEN = -1;
    private static final long UNKNOWN = Long.MIN_VALUE;

    private final Path dir;
    private final SingleChronicleQueue queue;
    private final RollCycle rollCycle;
    private final long checksummedFrom;
    /** The batch read last, copied out of the mapped file: verified before anything of it is handed on. */
    private Bytes<ByteBuffer> doc = Bytes.elasticByteBuffer(1 << 16);

    private Bytes<ByteBuffer> spare = Bytes.elasticByteBuffer(1 << 16);
    private final CRC32C crc = new CRC32C();
    private final StringBuilder text = new StringBuilder();
    private ExcerptTailer tailer;
    /** The index of the batch being (or last) handed on. */
    private long index = -1;
    /** The host of the last {@link JournalFormat#HOST} entry: a legacy idle tick's host. */
    private long host;
    /** The index the next batch in order has. */
    private long expected;
    /** Of the batch in {@link #doc} once verified: its index, its wall time, where its entries start. */
    private long docIndex;

    private long docWallNs;
    private int docEntries;
    /** Chronicle's index of the document read last; why the last read failed. */
    private long chronicleIndex;

    private String broken;
    /** A batch in {@link #doc}, verified, found by a search: handed on by the next {@link #next}. */
    private boolean adopted;

    private long endProbedAt = UNKNOWN;
    /** Where a search after damage found nothing readable, and when (tried again at most once a second). */
    private long stalledAt = UNKNOWN;

    private long stalledMs;
    private long endProbedMs;

    public JournalReader(final Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("not a journal directory: " + dir);
        }
        if (JournalWriter.cycleFiles(dir).isEmpty()) {
            throw new IllegalArgumentException("not a journal (no .cq4 cycle files): " + dir);
        }
        this.dir = dir;
        this.checksummedFrom = JournalFormat.checksummedFrom(dir);
        this.queue =
                SingleChronicleQueueBuilder.single(dir.toFile()).readOnly(true).build();
        this.rollCycle = queue.rollCycle();
        this.tailer = queue.createTailer();
        final long first = queue.firstIndex();
        this.expected = first == Long.MAX_VALUE ? UNKNOWN : first;
    }

    @Override
    public JournalReader timeRange(final long fromNs, final long toNs) {
        range(fromNs, toNs);
        return this;
    }

    /**
     * Reads up to {@code maxDocuments} batches; returns how many were read (0 at the end). Only verified batches
     * are handed on, whole: a damaged one (checksum, framing, structure) is skipped with the batches it spans,
     * reported as a range ({@link #onDamage}, {@link #damage()}), and reading goes on after it.
     */
    @Override
    public int read(final TelemetryListener out, final Meta meta, final int maxDocuments) {
        int n = 0;
        while (n < maxDocuments) {
            if (!next()) {
                break;
            }
            n++;
            documents++;
            index = docIndex;
            meta.onBatch(docWallNs);
            doc.readLimit(doc.writePosition());
            doc.readPosition(docEntries);
            try {
                decode(doc, out, meta);
            } catch (final RuntimeException e) {
                corrupt(where(docIndex) + ": undecodable entry: " + e);
            }
        }
        return n;
    }

    /** Positions {@link #doc} on the next verified batch in order; false at the end of what can be read. */
    private boolean next() {
        if (stalledAt != UNKNOWN && stalledAt == expected && System.currentTimeMillis() - stalledMs < 1000) {
            return false; // damage with nothing readable after it: tried again at most once a second
        }
        while (true) {
            if (adopted) {
                adopted = false;
                if (accept()) {
                    return true;
                }
                continue;
            }
            final int r = readOne(tailer);
            if (r == READ) {
                final String bad = verify();
                if (bad == null) {
                    if (accept()) {
                        return true;
                    }
                    continue;
                }
                // the batch after the last good one is damaged: it is `expected`, and reading goes on after it
                if (expected == UNKNOWN) {
                    corrupt("a batch at the journal's start: " + bad);
                    continue;
                }
                if (!searchAfter(expected, bad)) {
                    return stall();
                }
                continue;
            }
            if (expected == UNKNOWN) {
                if (r == BROKEN) {
                    corrupt("the journal's start is unreadable: " + broken);
                }
                return false;
            }
            if (r == BROKEN) {
                if (!searchAfter(expected, broken)) {
                    return stall();
                }
                continue;
            }
            // nothing more in order: the end, or a batch whose framing says "nothing here" (zeroed, or marked as
            // being written) with more after it
            if (!probeEnd()) {
                return false;
            }
        }
    }

    private boolean stall() {
        stalledAt = expected;
        stalledMs = System.currentTimeMillis();
        return false;
    }

    /**
     * A verified batch in {@link #doc}: handed on if it is the next in order. A batch before that was handed on
     * already (a search went back); one after it leaves a gap, which is searched (the framing may have hidden a
     * batch, or marked a cycle's end early) and reported if it holds no readable batch.
     */
    private boolean accept() {
        final long s = docIndex;
        if (expected != UNKNOWN && s < expected) {
            return false;
        }
        if (expected != UNKNOWN && s > expected && missing(expected, s) > 0) {
            final long gapFrom = expected;
            // the batch in hand is kept aside while the gap is searched
            final Bytes<ByteBuffer> found = doc;
            final long wallNs = docWallNs;
            final int entries = docEntries;
            doc = spare;
            spare = found;
            for (long k = gapFrom;
                    k < s && rollCycle.toCycle(k) == rollCycle.toCycle(gapFrom) && k - gapFrom < LINEAR_PROBES;
                    k++) {
                if (tryAt(k)) {
                    adopted = false; // handed on now
                    if (k > gapFrom) {
                        damagedRange(gapFrom, k, "skipped by the journal's framing (a damaged document header)");
                    }
                    expected = k + 1;
                    stalledAt = UNKNOWN;
                    return true;
                }
            }
            spare = doc;
            doc = found;
            docIndex = s;
            docWallNs = wallNs;
            docEntries = entries;
            damagedRange(gapFrom, s, "skipped by the journal's framing (a damaged document header)");
        }
        expected = s + 1;
        stalledAt = UNKNOWN;
        return true;
    }

    /** Reports [{@code from}, {@code to}) as damaged and reads on at {@code to} (the batch found there). */
    private boolean skipTo(final long from, final long to, final String why) {
        // A later batch reads, so the writer finished every one before it (a queue is appended in order): the one
        // at `from` may only have been in progress when it was first tried (a reader following a live journal:
        // the fleet agent). It is damaged only if it still does not read; if it reads, reading goes on there.
        if (tryAt(from)) {
            expected = from;
            return true;
        }
        if (!tryAt(to)) {
            return false;
        }
        damagedRange(from, to, why);
        expected = to;
        return true;
    }

    /**
     * After a damaged batch at {@code e}: finds the first batch after it that reads and verifies (the ones right
     * after it one by one, then the positions older journals index, then the next cycles), reports the range
     * skipped and positions on it; false when nothing readable follows (the range is reported up to the end).
     */
    private boolean searchAfter(final long e, final String why) {
        final int cycle = rollCycle.toCycle(e);
        final long seq = rollCycle.toSequenceNumber(e);
        for (long k = 1; k <= LINEAR_PROBES; k++) {
            if (tryAt(rollCycle.toIndex(cycle, seq + k))) {
                return skipTo(e, docIndex, why);
            }
        }
        if (searchAligned(cycle, seq + LINEAR_PROBES + 1)) {
            return skipTo(e, docIndex, why);
        }
        for (final int c : cyclesAfter(cycle)) {
            if (tryAt(rollCycle.toIndex(c, 0)) || searchAligned(c, 1)) {
                return skipTo(e, docIndex, why);
            }
        }
        final long inCycle = e != stalledAt ? excerptsIn(cycle) : -1;
        if (e != stalledAt && !(inCycle - seq <= 1 && cyclesAfter(cycle).isEmpty())) {
            // (the last batch of the newest cycle that does not read yet is being written, not damaged)
            final long lost = Math.max(1, inCycle - seq);
            damaged(
                    lost,
                    where(e) + (lost > 1 ? " and the " + (lost - 1) + " after it to the end of its cycle" : "")
                            + ", the last in the journal that its index knows: " + why);
        }
        return false;
    }
    /** Tries the indexed positions of older journals from {@code fromSeq} on in a cycle. */
    private boolean searchAligned(final int cycle, final long fromSeq) {
        final long last = excerptsIn(cycle) - 1;
        for (final int spacing : OLD_SPACINGS) {
            int misses = 0;
            for (long a = (fromSeq + spacing - 1) / spacing * spacing;
                    misses < ALIGNED_MISSES && (last < 0 || a <= last);
                    a += spacing) {
                if (tryAt(rollCycle.toIndex(cycle, a))) {
                    return true;
                }
                misses++;
            }
        }
        return false;
    }

    /**
     * Nothing more reads in order at {@link #expected}: the end, unless the batch there (or after it) can be reached
     * by its index; a batch that exists by the index but does not read is damaged, and reading goes on after it.
     * Not tried again for a second at the same place (a reader following a live journal asks often).
     */
    private boolean probeEnd() {
        final long e = expected;
        final long now = System.currentTimeMillis();
        if (e == endProbedAt && now - endProbedMs < 1000) {
            return false;
        }
        endProbedAt = e;
        endProbedMs = now;
        if (tryAt(e)) {
            return true;
        }
        final int cycle = rollCycle.toCycle(e);
        final long seq = rollCycle.toSequenceNumber(e);
        final boolean exists = indexed(e);
        final List<Integer> later = cyclesAfter(cycle);
        if (!exists && later.isEmpty()) {
            // the end, unless an older journal's framing broke before its next indexed position
            for (final int spacing : OLD_SPACINGS) {
                final long a = (seq / spacing + 1) * spacing;
                if (tryAt(rollCycle.toIndex(cycle, a))) {
                    return skipTo(e, docIndex, "unreadable (a damaged document header)");
                }
            }
            return false;
        }
        if (exists) {
            return searchAfter(e, "unreadable (a damaged document header)");
        }
        // this cycle ends early and a later one exists: search on, and report what its index says is missing
        for (long k = 1; k <= LINEAR_PROBES; k++) {
            if (tryAt(rollCycle.toIndex(cycle, seq + k))) {
                return skipTo(e, docIndex, "unreadable (a damaged document header)");
            }
        }
        for (final int c : later) {
            if (tryAt(rollCycle.toIndex(c, 0)) || searchAligned(c, 1)) {
                if (missing(e, docIndex) > 0) {
                    return skipTo(e, docIndex, "unreadable (a damaged document header)");
                }
                expected = docIndex;
                return true;
            }
        }
        return false;
    }

    /** Reads the document at {@code index} with a tailer of its own; when it verifies, that tailer reads on. */
    private boolean tryAt(final long at) {
        final ExcerptTailer t = queue.createTailer();
        boolean keep = false;
        try {
            if (!t.moveToIndex(at) || readOne(t) != READ || verify() != null || docIndex != at) {
                return false;
            }
            keep = true;
            tailer.close();
            tailer = t;
            adopted = true;
            return true;
        } catch (final RuntimeException | AssertionError | InternalError e) {
            return false;
        } finally {
            if (!keep) {
                t.close();
            }
        }
    }

    /** Whether the journal's index has an entry for {@code at} (the document was written). */
    private boolean indexed(final long at) {
        try (ExcerptTailer t = queue.createTailer()) {
            return t.moveToIndex(at);
        } catch (final RuntimeException | AssertionError | InternalError e) {
            return false;
        }
    }

    /** Documents in a cycle by its index (-1 when it cannot say). */
    private long excerptsIn(final int cycle) {
        try (ExcerptTailer t = queue.createTailer()) {
            return t.excerptsInCycle(cycle);
        } catch (final RuntimeException | AssertionError | InternalError e) {
            return -1;
        }
    }

    /** The cycles with a file after {@code cycle}, in order. */
    private List<Integer> cyclesAfter(final int cycle) {
        final List<Integer> out = new ArrayList<>();
        try {
            final int last = queue.lastCycle();
            if (last > cycle) {
                for (final Long c : queue.listCyclesBetween(cycle + 1, last)) {
                    out.add(c.intValue());
                }
            }
        } catch (final RuntimeException e) {
            // no listing: no later cycle known
        }
        return out;
    }

    /**
     * How many batches lie in [{@code from}, {@code to}): within a cycle the difference, across cycles what the
     * cycles' indexes hold (a cycle whose file was retired meanwhile counts nothing: not damage).
     */
    private long missing(final long from, final long to) {
        final int c0 = rollCycle.toCycle(from);
        final int c1 = rollCycle.toCycle(to);
        if (c0 == c1) {
            return to - from;
        }
        long n = Math.max(0, excerptsIn(c0) - rollCycle.toSequenceNumber(from));
        for (final int c : cyclesAfter(c0)) {
            if (c >= c1) {
                break;
            }
            n += Math.max(0, excerptsIn(c));
        }
        return n + rollCycle.toSequenceNumber(to);
    }

    private void damagedRange(final long from, final long to, final String why) {
        final long n = Math.max(1, missing(from, to));
        final String what;
        if (n == 1) {
            what = where(from);
        } else if (rollCycle.toCycle(from) == rollCycle.toCycle(to)) {
            what = n + " batches, sequence " + rollCycle.toSequenceNumber(from) + " to "
                    + (rollCycle.toSequenceNumber(to) - 1)
                    + " of cycle " + cycleName(rollCycle.toCycle(from)) + " (index 0x"
                    + Long.toHexString(from) + " to 0x" + Long.toHexString(to - 1) + ")";
        } else {
            what = n + " batches from sequence " + rollCycle.toSequenceNumber(from) + " of cycle "
                    + cycleName(rollCycle.toCycle(from))
                    + " to sequence " + rollCycle.toSequenceNumber(to) + " of cycle " + cycleName(rollCycle.toCycle(to))
                    + " (excluded; index 0x" + Long.toHexString(from) + " to 0x" + Long.toHexString(to)
                    + ")";
        }
        damaged(n, what + ": " + why);
    }

    /** One batch by its place: its cycle file, its sequence in it and its index. */
    private String where(final long at) {
        return "batch " + rollCycle.toSequenceNumber(at) + " of cycle " + cycleName(rollCycle.toCycle(at))
                + " (index 0x" + Long.toHexString(at) + ")";
    }

    private String cycleName(final int cycle) {
        try {
            return java.time.format.DateTimeFormatter.ofPattern(rollCycle.format())
                            .withZone(java.time.ZoneOffset.UTC)
                            .format(java.time.Instant.ofEpochMilli(
                                    (long) cycle * rollCycle.lengthInMillis() + queue.epoch()))
                    + ".cq4";
        } catch (final RuntimeException e) {
            return Integer.toString(cycle);
        }
    }

    /**
     * Reads the next document of {@code t} into {@link #doc}; {@link #BROKEN} (with {@link #broken} saying why)
     * when Chronicle cannot read it (a damaged header: a length past the file, a reader fault on the mapping).
     */
    private int readOne(final ExcerptTailer t) {
        try {
            return readDocument(t);
        } catch (final RuntimeException | AssertionError | InternalError e) {
            broken = "unreadable (" + e + ")";
            return BROKEN;
        }
    }

    private int readDocument(final ExcerptTailer t) {
        try (DocumentContext dc = t.readingDocument()) {
            if (!dc.isPresent()) {
                return NOTHING;
            }
            chronicleIndex = dc.index();
            final Bytes<?> b = dc.wire().bytes();
            final long length = b.readRemaining();
            if (length > Integer.MAX_VALUE - 8) {
                broken = "unreadable: a document of " + length + " B (a damaged header)";
                return BROKEN;
            }
            doc.clear();
            doc.write(b, b.readPosition(), length);
            return READ;
        }
    }

    /**
     * Verifies the document in {@link #doc}: a format-2 batch by its checksum, a format-1 batch (only below the
     * journal's {@code checksummedFrom}) by its structure; sets its index, wall time and where its entries start.
     * Returns null when it is good, else why not.
     */
    private String verify() {
        final long length = doc.writePosition();
        if (length < JournalFormat.HEADER_BYTES_V1) {
            return "shorter than a batch's header (" + length + " B)";
        }
        final long head = doc.readLong(0);
        if (head < 0) {
            if (length < JournalFormat.HEADER_BYTES) {
                return "shorter than a checksummed batch's header (" + length + " B)";
            }
            final int stored = doc.readInt(JournalFormat.CRC_OFFSET);
            final int actual = JournalWriter.checksum(doc.underlyingObject(), (int) length, crc);
            if (stored != actual) {
                return "checksum mismatch (CRC32C " + Integer.toHexString(actual) + ", stored "
                        + Integer.toHexString(stored) + ")";
            }
            docIndex = doc.readLong(8);
            docWallNs = head & ~JournalFormat.FORMAT2;
            docEntries = JournalFormat.HEADER_BYTES;
            return null;
        }
        if (chronicleIndex >= checksummedFrom) {
            return "no checksum where the journal has them (the batch's head is damaged)";
        }
        docIndex = chronicleIndex;
        docWallNs = head;
        docEntries = JournalFormat.HEADER_BYTES_V1;
        return structure();
    }

    /** A format-1 batch (no checksum): whether its entries parse to its end; null when they do, else why not. */
    private String structure() {
        final Bytes<?> b = doc;
        b.readLimit(b.writePosition());
        b.readPosition(docEntries);
        try {
            while (b.readRemaining() > 0) {
                final byte type = b.readByte();
                final int need = fixedSize(type);
                if (need < 0) {
                    return "unknown entry type " + type + " at offset " + (b.readPosition() - 1);
                }
                if (b.readRemaining() < need) {
                    return "entry type " + type + " truncated";
                }
                final int strings = strings(type);
                b.readSkip(need - strings);
                for (int i = 0; i < strings; i++) {
                    text.setLength(0);
                    b.readUtf8(text);
                }
            }
            return null;
        } catch (final RuntimeException e) {
            return "undecodable entry (" + e + ")";
        }
    }

    /** How many strings end an entry of this type (each counted as one byte by {@link #fixedSize}). */
    private static int strings(final byte type) {
        return switch (type) {
            case JournalFormat.RING_ATTACH, JournalFormat.RING_COMM, JournalFormat.RING_DETACH -> 2;
            case JournalFormat.ANOMALY,
                    JournalFormat.SOURCE,
                    JournalFormat.ENGINE_SETTINGS,
                    JournalFormat.RING_GPU_UUID -> 1;
            default -> 0;
        };
    }

    /**
     * Hands on the entries of a verified batch. An entry type this reader does not know (a batch a newer writer
     * wrote) ends the batch there: counted, the entries before it were handed on.
     */
    private void decode(final Bytes<?> b, final TelemetryListener out, final Meta meta) {
        while (b.readRemaining() > 0) {
            final byte type = b.readByte();
            final int need = fixedSize(type);
            if (need < 0) {
                corrupt(where(docIndex) + ": unknown entry type " + type + " at offset " + (b.readPosition() - 1)
                        + " (written by a newer flowscope?); the rest of the batch skipped");
                return;
            }
            if (b.readRemaining() < need) {
                corrupt(where(docIndex) + ": entry type " + type + " truncated");
                return;
            }
            entries++;
            switch (type) {
                case JournalFormat.HOST -> {
                    host = b.readLong();
                    out.onHost(host);
                }
                case JournalFormat.PROXY_OP_START -> {
                    final long opKey = b.readLong();
                    final long comm = b.readLong();
                    final int rank = b.readInt();
                    final int peer = b.readInt();
                    final int channel = b.readInt();
                    final boolean send = b.readByte() != 0;
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onProxyOpStart(opKey, comm, rank, peer, channel, send, t);
                    }
                }
                case JournalFormat.PROXY_OP_STOP -> {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        if (k == JournalFormat.LEGACY_IDLE_TICK_KEY) {
                            out.advanceTo(host, t); // written before ADVANCE_TO: the idle host's time, not a record
                        } else {
                            out.onProxyOpStop(k, t);
                        }
                    }
                }
                case JournalFormat.ADVANCE_TO -> {
                    final long h = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.advanceTo(h, t);
                    }
                }
                case JournalFormat.PROXY_STEP_START -> {
                    final long k = b.readLong();
                    final long op = b.readLong();
                    final int step = b.readInt();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onProxyStepStart(k, op, step, t);
                    }
                }
                case JournalFormat.PROXY_STEP_STATE -> {
                    final long k = b.readLong();
                    final int state = b.readInt();
                    final long size = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onProxyStepState(k, state, size, t);
                    }
                }
                case JournalFormat.PROXY_STEP_STOP -> {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onProxyStepStop(k, t);
                    }
                }
                case JournalFormat.QP_START -> {
                    final long k = b.readLong();
                    final int device = b.readInt();
                    final long qp = b.readLong();
                    final int opcode = b.readInt();
                    final long length = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onQpStart(k, device, qp, opcode, length, t);
                    }
                }
                case JournalFormat.QP_STOP -> {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onQpStop(k, t);
                    }
                }
                case JournalFormat.COLL_START -> {
                    final long k = b.readLong();
                    final long comm = b.readLong();
                    final int rank = b.readInt();
                    final int nranks = b.readInt();
                    final int func = b.readInt();
                    final int algo = b.readInt();
                    final int proto = b.readInt();
                    final long count = b.readLong();
                    final int dt = b.readInt();
                    final int nch = b.readInt();
                    final long seq = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onCollStart(k, comm, rank, nranks, func, algo, proto, count, dt, nch, seq, t);
                    }
                }
                case JournalFormat.COLL_STOP -> {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onCollStop(k, t);
                    }
                }
                case JournalFormat.KERNEL_CH_START -> {
                    final long k = b.readLong();
                    final long coll = b.readLong();
                    final int ch = b.readInt();
                    final long p = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onKernelChStart(k, coll, ch, p, t);
                    }
                }
                case JournalFormat.KERNEL_CH_STOP -> {
                    final long k = b.readLong();
                    final long p = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t)) {
                        out.onKernelChStop(k, p, t);
                    }
                }
                case JournalFormat.RING_ATTACH -> {
                    final long host = b.readLong();
                    final int pid = b.readInt();
                    final String hostname = b.readUtf8();
                    final String path = b.readUtf8();
                    meta.onRingAttached(host, pid, hostname, path);
                }
                case JournalFormat.RING_CLOCK -> {
                    final long host = b.readLong();
                    final int pid = b.readInt();
                    final long realtime = b.readLong();
                    meta.onRingClock(host, pid, realtime, b.readLong());
                }
                case JournalFormat.RING_DETACH -> {
                    final int pid = b.readInt();
                    final String path = b.readUtf8();
                    final String reason = b.readUtf8();
                    meta.onRingDetached(pid, path, reason);
                }
                case JournalFormat.ANOMALY -> {
                    final long id = b.readLong();
                    final boolean opened = b.readByte() != 0;
                    meta.onAnomaly(id, opened, b.readUtf8());
                }
                case JournalFormat.RING_COMM -> {
                    final long host = b.readLong();
                    final int pid = b.readInt();
                    final long comm = b.readLong();
                    final int rank = b.readInt();
                    final int nranks = b.readInt();
                    final int device = b.readInt();
                    final String hostname = b.readUtf8();
                    final String busId = b.readUtf8();
                    out.onRingComm(
                            host,
                            hostname == null ? "" : hostname,
                            pid,
                            comm,
                            rank,
                            nranks,
                            device,
                            busId == null ? "" : busId);
                }
                case JournalFormat.RING_GPU_UUID -> {
                    final long host = b.readLong();
                    final int pid = b.readInt();
                    final long comm = b.readLong();
                    final int rank = b.readInt();
                    final String uuid = b.readUtf8();
                    out.onRingGpuUuid(host, pid, comm, rank, uuid == null ? "" : uuid);
                }
                case JournalFormat.SOURCE -> meta.onSource(b.readUtf8());
                case JournalFormat.ENGINE_SETTINGS -> meta.onEngineSettings(b.readUtf8());
                case JournalFormat.END -> meta.onEnd();
                default -> throw new IllegalStateException("unreachable");
            }
        }
    }

    /** The fixed bytes after the type byte (strings: at least their length byte); -1 for an unknown type. */
    private static int fixedSize(final byte type) {
        return switch (type) {
            case JournalFormat.HOST -> 8;
            case JournalFormat.PROXY_OP_START -> 8 + 8 + 4 + 4 + 4 + 1 + 8;
            case JournalFormat.PROXY_OP_STOP,
                    JournalFormat.PROXY_STEP_STOP,
                    JournalFormat.QP_STOP,
                    JournalFormat.COLL_STOP,
                    JournalFormat.ADVANCE_TO -> 16;
            case JournalFormat.PROXY_STEP_START -> 8 + 8 + 4 + 8;
            case JournalFormat.PROXY_STEP_STATE -> 8 + 4 + 8 + 8;
            case JournalFormat.QP_START -> 8 + 4 + 8 + 4 + 8 + 8;
            case JournalFormat.COLL_START -> 8 + 8 + 4 * 5 + 8 + 4 + 4 + 8 + 8;
            case JournalFormat.KERNEL_CH_START -> 8 + 8 + 4 + 8 + 8;
            case JournalFormat.KERNEL_CH_STOP -> 24;
            case JournalFormat.RING_ATTACH -> 8 + 4 + 2;
            case JournalFormat.RING_COMM -> 8 + 4 + 8 + 4 + 4 + 4 + 2;
            case JournalFormat.RING_DETACH -> 4 + 2;
            case JournalFormat.RING_CLOCK -> 8 + 4 + 8 + 8;
            case JournalFormat.RING_GPU_UUID -> 8 + 4 + 8 + 4 + 1;
            case JournalFormat.ANOMALY -> 8 + 1 + 1;
            case JournalFormat.SOURCE, JournalFormat.ENGINE_SETTINGS -> 1;
            case JournalFormat.END -> 0;
            default -> -1;
        };
    }

    /**
     * The queue index of the document being (or last) read: stable for the life of the journal, also when older
     * cycle files are deleted (retention), unlike a count from the reader's start. Valid from {@link Meta#onBatch}.
     */
    @Override
    public long index() {
        return index;
    }

    @Override
    public String corruptionUnit() {
        return "batches";
    }

    @Override
    public void close() {
        try {
            tailer.close();
            queue.close();
        } finally {
            doc.releaseLast();
            spare.releaseLast();
        }
    }
}
