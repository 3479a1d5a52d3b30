package io.flowscope.collector.journal;

import io.flowscope.api.input.TelemetryListener;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.RollingResourcesCache;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;
import net.openhft.chronicle.wire.DocumentContext;
import org.agrona.UnsafeApi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends the engines' input to a Chronicle Queue ({@link JournalFormat}, format 2: each batch with its index and a
 * CRC32C). A {@link TelemetryListener} that buffers the calls of one drain batch and writes them as one excerpt at
 * {@link #flush(long)}. Single-threaded: create, use and close it on the drain thread (Chronicle appenders are
 * bound to their thread). The write of a batch allocates nothing (the buffer, the checksum and Chronicle's
 * appender are reused).
 * <p>
 * <b>Bounded by retiring, never by stopping.</b> Whole cycle files (one per {@code rollCycle}, e.g. a minute) are
 * retired, oldest first and never the one being written: when the journal is larger than {@code maxBytes}, when a
 * cycle is older than {@code retentionMs}, and when the file system has less than the reserve free
 * ({@link #reserveBytes()}). So the journal holds the latest {@code maxBytes} (less up to one cycle) of input.
 * <p>
 * <b>Full disk.</b> Free space is checked before a batch opens a new cycle file (Chronicle maps it, and a write to
 * a mapped page that the file system cannot back is a SIGBUS) and after every quarter of the reserve written. When
 * retiring cannot keep the reserve free, journaling pauses ({@link #failure()} says why; what it is handed is
 * dropped and counted) and resumes by itself once there is room again. A write that fails all the same (an I/O
 * error, or the JVM's {@code InternalError} for a SIGBUS on the mapping) stops journaling for the rest of the run
 * ({@link #failure()}); the live path goes on either way.
 */
public final class JournalWriter implements TelemetryListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);

    /** The reserve is this fraction of the file system's size, between the two bounds below. */
    private static final long RESERVE_DIVISOR = 20;

    private static final long RESERVE_MIN = 1L << 20;
    private static final long RESERVE_MAX = 4L << 30;
    /** Zeros are written ahead in pieces of this size. */
    private static final int BACK_CHUNK = 1 << 20;

    private final Path dir;
    private final long maxBytes;
    private final long retentionMs;
    private final long reserveBytes;
    private final FileStore fileStore;
    private final SingleChronicleQueue queue;
    private final ExcerptAppender appender;
    private final Bytes<ByteBuffer> batch = Bytes.elasticByteBuffer(1 << 16);
    /**
     * Entries that go last in the batch ({@link JournalFormat#RING_CLOCK}, {@link JournalFormat#RING_GPU_UUID}):
     * appended by {@link #flush}.
     */
    private final Bytes<ByteBuffer> trailer = Bytes.elasticByteBuffer(256);

    private final CRC32C crc = new CRC32C();
    /** Where {@link #batch}'s bytes are while its capacity is {@link #batchCapacity} (-1: not looked up yet). */
    private long batchAddress;

    private long batchCapacity = -1;
    /** The journal had cycle files but no format file: it is written after the first batch, with its index. */
    private boolean formatFilePending;
    /** Why journaling stopped for good (a write failed), or null. */
    private volatile String fault;
    /** Why journaling is paused (no room on the file system), or null. */
    private volatile String paused;

    private volatile long bytesOnDisk;
    private volatile long batchesWritten;
    private volatile long entriesWritten;
    private volatile long entriesDropped;
    private volatile long retiredCycles;
    private volatile long retiredBytes;
    private long entriesInBatch;
    /** The host of the input calls (the last onHost), whether one was said, and whether this batch said it. */
    private long currentHost;

    private boolean hostKnown;
    private boolean hostInBatch;
    private long lastHousekeepingMs;
    private int lastCycle = Integer.MIN_VALUE;
    /** Where the last batch ended in the cycle being written (its file and cycle); closed cycles' sizes, by cycle. */
    private long cursor;

    private int cursorCycle = Integer.MIN_VALUE;
    private Path cursorFile;
    private final java.util.Map<String, Cycle> closed = new java.util.HashMap<>();
    /** Chronicle's names of cycle files, to tell a file's cycle. */
    private final RollingResourcesCache names;

    private boolean warnedOversize;
    /**
     * The current cycle file, opened for writing zeros ahead of Chronicle's write position: pages the file system
     * backs before the mapping touches them, so a full disk is an {@code IOException} here, not a SIGBUS there.
     */
    private FileChannel ahead;

    private int aheadCycle = Integer.MIN_VALUE;
    private long backedTo;
    private final ByteBuffer zeros = ByteBuffer.allocateDirect(BACK_CHUNK);
    /** Backed beyond the batch: room for the next document's header and a new index array of the queue. */
    private final long backMargin;

    /** With the reserve of free space chosen from the file system's size ({@link #reserveBytes()}). */
    public JournalWriter(final Path dir, final RollCycle rollCycle, final long maxBytes, final long retentionMs) {
        this(dir, rollCycle, maxBytes, retentionMs, -1);
    }

    /**
     * @param maxBytes     the journal's bound on disk: oldest cycles are retired above it (0: none)
     * @param retentionMs  cycles older than this are retired (0: none)
     * @param reserveBytes free space to keep on the journal's file system (retiring first, then pausing); negative:
     *                     5 % of the file system's size, at least 1 MiB and at most 4 GiB
     */
    public JournalWriter(
            final Path dir,
            final RollCycle rollCycle,
            final long maxBytes,
            final long retentionMs,
            final long reserveBytes) {
        this.dir = dir;
        this.maxBytes = maxBytes;
        this.retentionMs = retentionMs;
        try {
            Files.createDirectories(dir);
            this.fileStore = Files.getFileStore(dir);
            this.reserveBytes = reserveBytes >= 0
                    ? reserveBytes
                    : Math.max(RESERVE_MIN, Math.min(RESERVE_MAX, fileStore.getTotalSpace() / RESERVE_DIVISOR));
        } catch (final IOException e) {
            throw new UncheckedIOException("journal: cannot create " + dir + ": " + e.getMessage(), e);
        }
        final boolean fresh = cycleFiles(dir).isEmpty();
        final boolean hasFormatFile = JournalFormat.checksummedFrom(dir) != JournalFormat.NEVER;
        try {
            if (fresh && !hasFormatFile) {
                JournalFormat.writeFormatFile(dir, 0);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(
                    "journal: cannot write " + dir.resolve(JournalFormat.FORMAT_FILE) + ": " + e.getMessage(), e);
        }
        this.formatFilePending = !fresh && !hasFormatFile;
        this.queue = open(dir, rollCycle);
        this.appender = queue.createAppender();
        this.names = new RollingResourcesCache(
                queue.rollCycle(), queue.epoch(), n -> new java.io.File(dir.toFile(), n + ".cq4"), f -> f.getName()
                        .replace(".cq4", ""));
        this.backMargin = 2L * indexCount(queue.rollCycle()) * 8 + (256 << 10);
        this.bytesOnDisk = total(cycles());
        resetBatch();
    }

    /**
     * Opens the queue with every document indexed where the roll cycle's capacity allows it (index spacing 1 for a
     * minutely cycle: a reader can step past a damaged document to the very next one; Chronicle's default indexes
     * every 16th to 256th). An existing journal keeps its own roll cycle (Chronicle reads it from its metadata), so
     * the indexing is chosen for the cycle the queue really has.
     */
    private static SingleChronicleQueue open(final Path dir, final RollCycle asked) {
        SingleChronicleQueue q = build(dir, asked);
        if (!q.rollCycle().format().equals(asked.format())) {
            final RollCycle actual = q.rollCycle();
            q.close();
            q = build(dir, actual);
        }
        return q;
    }

    private static int indexCount(final RollCycle rollCycle) {
        final long capacity = rollCycle.maxMessagesPerCycle();
        int count = 8;
        while ((long) count * count < capacity && count < RollCycle.MAX_INDEX_COUNT) {
            count <<= 1;
        }
        return count;
    }

    private static SingleChronicleQueue build(final Path dir, final RollCycle rollCycle) {
        final long capacity = rollCycle.maxMessagesPerCycle();
        final int count = indexCount(rollCycle);
        long spacing = 1;
        while ((long) count * count * spacing < capacity) {
            spacing <<= 1;
        }
        return SingleChronicleQueueBuilder.single(dir.toFile())
                .rollCycle(rollCycle)
                .indexCount(count)
                .indexSpacing((int) spacing)
                .build();
    }

    public Path dir() {
        return dir;
    }

    /** Why journaling stopped (a failed write) or pauses (no room), or null while it works. */
    public String failure() {
        final String f = fault;
        return f != null ? f : paused;
    }

    /** Free space kept on the journal's file system. */
    public long reserveBytes() {
        return reserveBytes;
    }

    public long bytesOnDisk() {
        return bytesOnDisk;
    }

    public long batchesWritten() {
        return batchesWritten;
    }

    public long entriesWritten() {
        return entriesWritten;
    }

    public long entriesDropped() {
        return entriesDropped;
    }

    /** Cycle files retired (deleted) to keep the journal within its bounds. */
    public long retiredCycles() {
        return retiredCycles;
    }

    public long retiredBytes() {
        return retiredBytes;
    }

    private boolean open() {
        if (fault != null || paused != null) {
            entriesDropped++;
            return false;
        }
        entriesInBatch++;
        return true;
    }

    private void resetBatch() {
        hostInBatch = false;
        batch.clear();
        batch.writeLong(0L).writeLong(0L).writeInt(0);
    }

    /** Writes the buffered batch as one excerpt (nothing when empty) and does the housekeeping once a second. */
    public void flush(final long wallNowNs) {
        if (trailer.writePosition() > 0) {
            batch.write(trailer);
            trailer.clear();
        }
        if (entriesInBatch > 0) {
            if (fault == null && paused == null && room(batch.writePosition())) {
                write(wallNowNs);
            } else {
                entriesDropped += entriesInBatch;
            }
        }
        entriesInBatch = 0;
        resetBatch();
        final long nowMs = wallNowNs / 1_000_000L;
        if (nowMs - lastHousekeepingMs >= 1000) {
            lastHousekeepingMs = nowMs;
            housekeeping(nowMs);
        }
    }

    /**
     * Whether a batch of {@code length} bytes may be written: before the batch that opens a new cycle file (Chronicle
     * maps it and writes its header and index there) the bound is kept and the free space checked (retiring old
     * cycles, else pausing); within a cycle it is checked whenever more of the file is backed ({@link #backed}).
     */
    private boolean room(final long length) {
        final int cycle = queue.cycle();
        if (cycle != lastCycle) {
            if (lastCycle != Integer.MIN_VALUE) {
                retireBySize();
            }
            checkSpace(length + backMargin + BACK_CHUNK);
            if (paused != null) {
                return false;
            }
            lastCycle = cycle;
        }
        return true;
    }

    private void write(final long wallNowNs) {
        final int length = (int) batch.writePosition();
        DocumentContext dc = null;
        try {
            dc = appender.writingDocument();
            final Bytes<?> out = dc.wire().bytes();
            if (length > out.writeRemaining()) {
                oversize(length, out.writeRemaining());
                rollback(dc);
                return;
            }
            if (!backed(out.writePosition(), length)) {
                entriesDropped += entriesInBatch;
                rollback(dc);
                return;
            }
            final long index = dc.index();
            batch.writeLong(0, wallNowNs | JournalFormat.FORMAT2);
            batch.writeLong(8, index);
            batch.writeInt(JournalFormat.CRC_OFFSET, checksum(batch.underlyingObject(), length, crc));
            out.write(batch);
            final long end = out.writePosition();
            final DocumentContext written = dc;
            dc = null;
            written.close();
            if (appender.cycle() != cursorCycle) {
                cursorCycle = appender.cycle();
                cursorFile = appender.currentFile().toPath();
            }
            cursor = end;
            batchesWritten++;
            entriesWritten += entriesInBatch;
            bytesOnDisk += length + 4;
            if (formatFilePending) {
                formatFilePending = false;
                writeFormatFileAfter(index);
            }
        } catch (final RuntimeException | InternalError e) {
            // InternalError: "a fault occurred in a recent unsafe memory access operation", the JVM's word for a
            // SIGBUS on the mapped cycle file (the file system could not back a page: disk full); the mapping and
            // the appender are not touched again
            if (dc != null) {
                try {
                    dc.rollbackOnClose();
                    dc.close();
                } catch (final RuntimeException | InternalError ignored) {
                    // the same fault again
                }
            }
            fault("journal write failed (" + e + "); journaling stopped for the rest of this run, live data is "
                    + "still served (free space on " + fileStore + ": " + usableSpace() + " B)");
            entriesDropped += entriesInBatch;
        }
    }

    /** Closes a writing context without writing its document (Chronicle resets the header it wrote). */
    private static void rollback(final DocumentContext dc) {
        dc.rollbackOnClose();
        dc.close();
    }

    /**
     * Makes the file system back the pages the batch at {@code position} (Chronicle's write position in the current
     * cycle file) and what may follow it will touch, by writing zeros ahead of the write position through a file
     * channel, a piece at a time: an {@code IOException} (no space) pauses journaling here, synchronously and with
     * nothing written, instead of a SIGBUS on the mapping later. Only the region after the write position is
     * written, where Chronicle has written nothing yet.
     */
    private boolean backed(final long position, final long length) {
        try {
            final int cycle = appender.cycle();
            if (cycle != aheadCycle) {
                if (ahead != null) {
                    ahead.close();
                }
                ahead = FileChannel.open(appender.currentFile().toPath(), StandardOpenOption.WRITE);
                aheadCycle = cycle;
                backedTo = 0;
            }
            final long need = position + 4 + length + backMargin;
            if (backedTo >= need) {
                return true;
            }
            long at = Math.max(backedTo, position + 4); // after the document's header, which Chronicle wrote
            final long to = (need + BACK_CHUNK - 1) / BACK_CHUNK * BACK_CHUNK;
            checkSpace(to - at); // the reserve is kept with what is about to be taken
            if (paused != null) {
                return false;
            }
            while (at < to) {
                zeros.clear().limit((int) Math.min(BACK_CHUNK, to - at));
                at += ahead.write(zeros, at);
            }
            backedTo = to;
            return true;
        } catch (final IOException | RuntimeException e) {
            if (paused == null) {
                paused = "journal paused: the file system cannot back the next batch (" + e.getMessage() + "; "
                        + usableSpace()
                        + " B free on " + fileStore + ", " + dir + "); input is dropped (counted) until "
                        + "there is room again; live data is still served";
                LOG.warn("journal {}: {}", dir, paused);
            }
            backedTo = 0; // tried again from the write position once there is room
            return false;
        }
    }

    /**
     * CRC32C of a format-2 document's bytes but its checksum field: {@code [0, 16)} and {@code [20, length)} of
     * {@code doc} (a direct buffer; position and limit are used, then cleared).
     */
    static int checksum(final ByteBuffer doc, final int length, final CRC32C crc) {
        crc.reset();
        doc.limit(JournalFormat.CRC_OFFSET).position(0);
        crc.update(doc);
        doc.limit(length).position(JournalFormat.HEADER_BYTES);
        crc.update(doc);
        doc.clear();
        return (int) crc.getValue();
    }

    private void oversize(final long length, final long limit) {
        entriesDropped += entriesInBatch;
        if (!warnedOversize) {
            warnedOversize = true;
            LOG.warn(
                    "journal {}: a batch of {} B is larger than a Chronicle document may be here ({} B); not "
                            + "journaled (counted as dropped; said once)",
                    dir,
                    length,
                    limit);
        }
    }

    private void writeFormatFileAfter(final long index) {
        try {
            JournalFormat.writeFormatFile(dir, index);
            LOG.info(
                    "journal {}: written before checksums; batches from index {} on carry one",
                    dir,
                    Long.toHexString(index));
        } catch (final IOException e) {
            LOG.warn(
                    "journal {}: cannot write its format file ({}); its checksummed batches are still verified "
                            + "by their own format bit",
                    dir,
                    e.toString());
        }
    }

    private void fault(final String reason) {
        if (fault == null) {
            fault = reason;
            LOG.error("journal {}: {}", dir, reason);
        }
    }

    private long usableSpace() {
        try {
            return fileStore.getUsableSpace();
        } catch (final IOException e) {
            return Long.MAX_VALUE; // unknown: the write itself will tell
        }
    }

    /**
     * Keeps {@link #reserveBytes} free (plus what is about to be written): retires old cycles first (until twice
     * the reserve is free, so that it does not retire one per check), pauses when that is not enough, resumes when
     * it is.
     */
    private void checkSpace(final long length) {
        long free = usableSpace();
        if (free - length < reserveBytes) {
            final List<Cycle> cycles = cycles();
            for (int i = 0; i < cycles.size() - 1 && free - length < 2 * reserveBytes; i++) {
                if (retire(cycles.get(i), "keep " + reserveBytes + " B free on " + fileStore) > 0) {
                    // A deleted cycle's pages come back only once nothing maps it: Chronicle unmaps the stores it
                    // rolled away from on its background releaser thread, late under load (a CI run retired the
                    // two newest closed cycles and still hit ENOSPC 10 ms later). Wait for those releases, then
                    // read the space back instead of counting the file's bytes as free.
                    BackgroundResourceReleaser.releasePendingResources();
                    free = usableSpace();
                }
            }
        }
        if (free - length < reserveBytes || paused != null && free - length < reserveBytes + backMargin + BACK_CHUNK) {
            if (paused == null) {
                paused = "journal paused: " + Math.max(0, free) + " B free on " + fileStore + " (" + dir
                        + "): writing on would leave less than the "
                        + reserveBytes + " B kept free, and no older cycle is "
                        + "left to retire; input is dropped (counted) until there is room again; live data is still served";
                LOG.warn("journal {}: {}", dir, paused);
            }
        } else if (paused != null) {
            LOG.info("journal {}: room again ({} B free); journaling resumes", dir, free);
            paused = null;
        }
    }

    /** A cycle file of the journal: its cycle, its file and the bytes written in it. */
    private record Cycle(int cycle, Path file, long bytes) {}

    /**
     * The journal's cycle files, oldest first (by name), with the bytes written in each: the one being written by
     * where this writer's last batch ended, the others by their store's write position (read once per file: it no
     * longer changes). Not the files' length, which Chronicle extends a mapping chunk (64 MiB) at a time, sparse; a
     * file that is not a readable store of this queue counts by its length.
     */
    private List<Cycle> cycles() {
        final List<Cycle> out = new ArrayList<>();
        for (final Path file : cycleFiles(dir)) {
            if (file.equals(cursorFile)) {
                out.add(new Cycle(cursorCycle, file, cursor));
                continue;
            }
            final String name = file.getFileName().toString();
            Cycle known = closed.get(name);
            if (known == null) {
                known = measure(file, name);
                closed.put(name, known);
            }
            out.add(known);
        }
        return out;
    }

    private Cycle measure(final Path file, final String name) {
        int cycle = Integer.MIN_VALUE;
        try {
            cycle = names.parseCount(name.substring(0, name.length() - ".cq4".length()));
            final SingleChronicleQueueStore store = queue.storeForCycle(cycle, queue.epoch(), false, null);
            if (store != null) {
                try {
                    return new Cycle(cycle, file, store.writePosition());
                } finally {
                    queue.closeStore(store);
                }
            }
        } catch (final RuntimeException e) {
            // not a store of this queue (another roll cycle's name, a damaged header): its length
        }
        try {
            return new Cycle(cycle, file, Files.size(file));
        } catch (final IOException e) {
            return new Cycle(cycle, file, 0);
        }
    }

    private static long total(final List<Cycle> cycles) {
        long sum = 0;
        for (final Cycle c : cycles) {
            sum += c.bytes();
        }
        return sum;
    }

    /** Deletes one cycle file; returns the bytes it held (0 if it could not be deleted). */
    private long retire(final Cycle cycle, final String why) {
        if (cycle.file().equals(cursorFile)) {
            return 0; // the cycle being written, whatever its name
        }
        try {
            if (Files.deleteIfExists(cycle.file())) {
                closed.remove(cycle.file().getFileName().toString());
                retiredCycles++;
                retiredBytes += cycle.bytes();
                bytesOnDisk = Math.max(0, bytesOnDisk - cycle.bytes());
                LOG.info(
                        "journal {}: retired cycle {} ({} B) to {}",
                        dir,
                        cycle.file().getFileName(),
                        cycle.bytes(),
                        why);
                queue.refreshDirectoryListing();
                return cycle.bytes();
            }
        } catch (final IOException | RuntimeException e) {
            LOG.warn("journal {}: cannot retire {}: {}", dir, cycle.file().getFileName(), e.toString());
        }
        return 0;
    }

    /** Retires the oldest cycles (never the newest) while the journal is larger than {@code maxBytes}. */
    private void retireBySize() {
        final List<Cycle> cycles = cycles();
        long total = total(cycles);
        for (int i = 0; maxBytes > 0 && i < cycles.size() - 1 && total > maxBytes; i++) {
            total -= retire(cycles.get(i), "keep the journal under journal.maxBytes=" + maxBytes + " B");
        }
        bytesOnDisk = total;
    }

    private void housekeeping(final long nowMs) {
        if (retentionMs > 0) {
            final List<Cycle> cycles = cycles();
            for (int i = 0; i < cycles.size() - 1; i++) {
                final Cycle c = cycles.get(i);
                try {
                    if (nowMs - Files.getLastModifiedTime(c.file()).toMillis() > retentionMs) {
                        retire(c, "keep journal.retentionHours");
                    }
                } catch (final IOException ignored) {
                    // gone already: retried next second
                }
            }
        }
        retireBySize();
        if (fault == null) {
            checkSpace(0);
        }
    }

    /** The cycle files of a journal, oldest first (names sort by time). */
    public static List<Path> cycleFiles(final Path dir) {
        final List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> p.getFileName().toString().endsWith(".cq4")).sorted().forEach(out::add);
        } catch (final IOException e) {
            return out;
        }
        return out;
    }

    /**
     * Bytes written in a journal's cycle files (by their stores' write positions, as the writer counts them; not
     * the files' sparse length), read through a read-only queue.
     */
    public static long sizeOnDisk(final Path dir) {
        if (cycleFiles(dir).isEmpty()) {
            return 0;
        }
        long sum = 0;
        try (SingleChronicleQueue q =
                SingleChronicleQueueBuilder.single(dir.toFile()).readOnly(true).build()) {
            final int first = q.firstCycle();
            final int last = q.lastCycle();
            if (first > last || first == Integer.MAX_VALUE) {
                return 0;
            }
            for (final Long c : q.listCyclesBetween(first, last)) {
                final SingleChronicleQueueStore store = q.storeForCycle(c.intValue(), q.epoch(), false, null);
                if (store != null) {
                    try {
                        sum += store.writePosition();
                    } finally {
                        q.closeStore(store);
                    }
                }
            }
        }
        return sum;
    }

    // ---- metadata -------------------------------------------------------------------------------------------

    public void ringAttached(final long hostId, final int pid, final String hostname, final String path) {
        if (open()) {
            batch.writeByte(JournalFormat.RING_ATTACH).writeLong(hostId).writeInt(pid);
            batch.writeUtf8(hostname);
            batch.writeUtf8(path);
        }
    }

    /**
     * A ring's clock anchor ({@link JournalFormat#RING_CLOCK}): kept aside and written last in the batch (at its
     * flush), so that a reader that does not know the entry type loses nothing else of the batch.
     */
    public void ringClock(final long hostId, final int pid, final long realtimeNs, final long monotonicNs) {
        if (open()) {
            trailer.writeByte(JournalFormat.RING_CLOCK).writeLong(hostId).writeInt(pid);
            trailer.writeLong(realtimeNs).writeLong(monotonicNs);
        }
    }

    public void ringDetached(final int pid, final String path, final String reason) {
        if (open()) {
            batch.writeByte(JournalFormat.RING_DETACH).writeInt(pid);
            batch.writeUtf8(path);
            batch.writeUtf8(reason);
        }
    }

    public void anomaly(final long id, final boolean opened, final String summary) {
        if (open()) {
            batch.writeByte(JournalFormat.ANOMALY).writeLong(id).writeByte((byte) (opened ? 1 : 0));
            batch.writeUtf8(summary);
        }
    }

    /** The live run's input ends here (see {@link JournalFormat#END}); written with the next flush. */
    public void end() {
        if (open()) {
            batch.writeByte(JournalFormat.END);
        }
    }

    public void source(final String spec) {
        if (open()) {
            batch.writeByte(JournalFormat.SOURCE);
            batch.writeUtf8(spec);
        }
    }

    /**
     * The run's engine settings (see {@link JournalFormat#ENGINE_SETTINGS}), first in each run's journal and in a batch
     * of their own (flushed here; call before anything else is written): a reader from before the entry type skips
     * that batch alone.
     */
    public void engineSettings(final String settings, final long wallNowNs) {
        if (open()) {
            batch.writeByte(JournalFormat.ENGINE_SETTINGS);
            batch.writeUtf8(settings);
        }
        flush(wallNowNs);
    }

    // ---- TelemetryListener ----------------------------------------------------------------------------------

    @Override
    public void onRingComm(
            final long hostId,
            final String hostname,
            final int pid,
            final long commHash,
            final int rank,
            final int nranks,
            final int cudaDevice,
            final String pciBusId) {
        if (open()) {
            batch.writeByte(JournalFormat.RING_COMM)
                    .writeLong(hostId)
                    .writeInt(pid)
                    .writeLong(commHash)
                    .writeInt(rank)
                    .writeInt(nranks)
                    .writeInt(cudaDevice);
            batch.writeUtf8(hostname);
            batch.writeUtf8(pciBusId);
        }
    }

    /** Kept aside and written last in the batch (see {@link JournalFormat#RING_GPU_UUID}). */
    @Override
    public void onRingGpuUuid(
            final long hostId, final int pid, final long commHash, final int rank, final String gpuUuid) {
        if (open()) {
            trailer.writeByte(JournalFormat.RING_GPU_UUID)
                    .writeLong(hostId)
                    .writeInt(pid)
                    .writeLong(commHash)
                    .writeInt(rank);
            trailer.writeUtf8(gpuUuid);
        }
    }

    /**
     * A change of host is journaled; the same host again within a batch is not (the ring adapter says the host before
     * every record: 9 bytes and an entry per record, for nothing a reader needs).
     */
    @Override
    public void onHost(final long hostId) {
        if (hostInBatch && hostId == currentHost) {
            return;
        }
        currentHost = hostId;
        hostKnown = true;
        if (open()) {
            hostInBatch = true;
            UnsafeApi.putLong(entry(JournalFormat.HOST, 8), hostId);
        }
    }

    /**
     * Before a batch's first input call: its host, when the batch has not said it yet, so that every batch says
     * whose clock its calls are on (a reader that skipped a damaged batch, which may have held the host's change,
     * does not give the next batch's calls to the wrong host).
     */
    private boolean openTelemetry() {
        if (!hostInBatch && hostKnown && fault == null && paused == null) {
            hostInBatch = true;
            entriesInBatch++;
            UnsafeApi.putLong(entry(JournalFormat.HOST, 8), currentHost);
        }
        return open();
    }

    /**
     * Room for an input entry at the end of the batch: writes its type and returns the address of its {@code size}
     * bytes of fields (valid until the batch grows again), which the caller stores at fixed offsets in the batch's
     * native order, as {@link Bytes}' writes would. One bounds and capacity check per entry: Chronicle's checks per
     * field written were about a quarter of the journal's own cost per ring record (docs/perf-journal/6-collector.md).
     */
    private long entry(final byte type, final int size) {
        final long at = batch.writePosition();
        batch.writeSkip(1 + size); // grows the buffer when needed
        if (batch.realCapacity() != batchCapacity) {
            // grown: elsewhere in memory
            batchCapacity = batch.realCapacity();
            batchAddress = batch.addressForWrite(0);
        }
        final long address = batchAddress + at;
        UnsafeApi.putByte(address, type);
        return address + 1;
    }

    @Override
    public void onProxyOpStart(
            final long opKey,
            final long commHash,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long timeNs) {
        if (openTelemetry()) {
            final long a = entry(JournalFormat.PROXY_OP_START, 8 + 8 + 4 + 4 + 4 + 1 + 8);
            UnsafeApi.putLong(a, opKey);
            UnsafeApi.putLong(a + 8, commHash);
            UnsafeApi.putInt(a + 16, rank);
            UnsafeApi.putInt(a + 20, peer);
            UnsafeApi.putInt(a + 24, channel);
            UnsafeApi.putByte(a + 28, (byte) (isSend ? 1 : 0));
            UnsafeApi.putLong(a + 29, timeNs);
        }
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        if (openTelemetry()) {
            keyAndTime(JournalFormat.PROXY_OP_STOP, opKey, timeNs);
        }
    }

    /** An idle host's time: its own entry, with its host (the batch's current host is left as it was). */
    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        if (open()) {
            keyAndTime(JournalFormat.ADVANCE_TO, hostId, timeNs);
        }
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        if (openTelemetry()) {
            final long a = entry(JournalFormat.PROXY_STEP_START, 8 + 8 + 4 + 8);
            UnsafeApi.putLong(a, stepKey);
            UnsafeApi.putLong(a + 8, opKey);
            UnsafeApi.putInt(a + 16, step);
            UnsafeApi.putLong(a + 20, timeNs);
        }
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        if (openTelemetry()) {
            final long a = entry(JournalFormat.PROXY_STEP_STATE, 8 + 4 + 8 + 8);
            UnsafeApi.putLong(a, stepKey);
            UnsafeApi.putInt(a + 8, state);
            UnsafeApi.putLong(a + 12, transSize);
            UnsafeApi.putLong(a + 20, timeNs);
        }
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        if (openTelemetry()) {
            keyAndTime(JournalFormat.PROXY_STEP_STOP, stepKey, timeNs);
        }
    }

    @Override
    public void onQpStart(
            final long wrKey,
            final int device,
            final long qpNum,
            final int opcode,
            final long length,
            final long timeNs) {
        if (openTelemetry()) {
            final long a = entry(JournalFormat.QP_START, 8 + 4 + 8 + 4 + 8 + 8);
            UnsafeApi.putLong(a, wrKey);
            UnsafeApi.putInt(a + 8, device);
            UnsafeApi.putLong(a + 12, qpNum);
            UnsafeApi.putInt(a + 20, opcode);
            UnsafeApi.putLong(a + 24, length);
            UnsafeApi.putLong(a + 32, timeNs);
        }
    }

    @Override
    public void onQpStop(final long wrKey, final long timeNs) {
        if (openTelemetry()) {
            keyAndTime(JournalFormat.QP_STOP, wrKey, timeNs);
        }
    }

    @Override
    public void onCollStart(
            final long collKey,
            final long commHash,
            final int rank,
            final int nranks,
            final int func,
            final int algo,
            final int proto,
            final long count,
            final int datatypeSize,
            final int nChannels,
            final long seqNumber,
            final long timeNs) {
        if (openTelemetry()) {
            final long a = entry(JournalFormat.COLL_START, 8 + 8 + 4 * 5 + 8 + 4 + 4 + 8 + 8);
            UnsafeApi.putLong(a, collKey);
            UnsafeApi.putLong(a + 8, commHash);
            UnsafeApi.putInt(a + 16, rank);
            UnsafeApi.putInt(a + 20, nranks);
            UnsafeApi.putInt(a + 24, func);
            UnsafeApi.putInt(a + 28, algo);
            UnsafeApi.putInt(a + 32, proto);
            UnsafeApi.putLong(a + 36, count);
            UnsafeApi.putInt(a + 44, datatypeSize);
            UnsafeApi.putInt(a + 48, nChannels);
            UnsafeApi.putLong(a + 52, seqNumber);
            UnsafeApi.putLong(a + 60, timeNs);
        }
    }

    @Override
    public void onCollStop(final long collKey, final long timeNs) {
        if (openTelemetry()) {
            keyAndTime(JournalFormat.COLL_STOP, collKey, timeNs);
        }
    }

    @Override
    public void onKernelChStart(
            final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
        if (openTelemetry()) {
            final long a = entry(JournalFormat.KERNEL_CH_START, 8 + 8 + 4 + 8 + 8);
            UnsafeApi.putLong(a, chKey);
            UnsafeApi.putLong(a + 8, collKey);
            UnsafeApi.putInt(a + 16, channel);
            UnsafeApi.putLong(a + 20, pTimerNs);
            UnsafeApi.putLong(a + 28, timeNs);
        }
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
        if (openTelemetry()) {
            final long a = entry(JournalFormat.KERNEL_CH_STOP, 8 + 8 + 8);
            UnsafeApi.putLong(a, chKey);
            UnsafeApi.putLong(a + 8, pTimerNs);
            UnsafeApi.putLong(a + 16, timeNs);
        }
    }

    /** A stop: the key and the time. */
    private void keyAndTime(final byte type, final long key, final long timeNs) {
        final long a = entry(type, 8 + 8);
        UnsafeApi.putLong(a, key);
        UnsafeApi.putLong(a + 8, timeNs);
    }

    @Override
    public void close() {
        try {
            flush(System.currentTimeMillis() * 1_000_000L);
        } finally {
            try {
                if (ahead != null) {
                    ahead.close();
                }
            } catch (final IOException e) {
                LOG.warn("journal {}: close: {}", dir, e.toString());
            }
            try {
                appender.close();
                queue.close();
            } catch (final RuntimeException | InternalError e) {
                // after a fault on the mapping, closing may touch it again: the files are what they are
                LOG.warn("journal {}: close: {}", dir, e.toString());
            }
            batch.releaseLast();
        }
    }
}
