package io.flowscope.ring;

import static io.flowscope.ring.RingLayout.*;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.agrona.IoUtil;
import org.agrona.UnsafeApi;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The one consumer of one ring file. {@link #open} maps the file read-write and takes an exclusive lock
 * on it; {@link #poll} drains the ring's lanes, each an independent MPSC ring, following the consumer
 * protocol of {@code RING.md} per lane ({@code capacity} below is {@code lane_capacity}):
 *
 * <pre>
 * seq == pos+1               a record: copy, check the checksum (bad: corrupt, skipped), deliver,
 *                            store_release(seq, pos+capacity), head = pos+1
 * seq == pos+capacity(+1)    already consumed by a consumer that died before moving head (+1: a producer
 *                            has since published the next lap there): head = pos+1
 * seq == pos                 nothing to read now. tail is NOT read here (it would pull the producers' cache
 *                            line on every empty poll): the reader notes when it first saw pos unpublished;
 *                            once that is a stale timeout ago it reads tail: tail &lt;= pos: the lane is empty,
 *                            the timer restarts; tail &gt; pos the first time: claimed (maybe nanoseconds ago),
 *                            the timer restarts; tail &gt; pos seen claimed a timeout ago and still unpublished:
 *                            skipped (CAS seq pos -&gt; pos+capacity).
 * seq == pos-capacity+1      late publication (1.3): the owner of the lane, stalled past the timeout, stored its
 *                            publication over the slot skipped a lap ago (counted then): seq = pos, as if consumed.
 * anything else              corrupt sequence: tail &gt; pos: seq = pos+capacity, skipped; else seq = pos.
 * </pre>
 *
 * Lanes are drained round-robin: each pass of a poll gives every lane a fair share of the remaining limit,
 * and the next poll starts at the lane after the one that ended this one. Records of one producer thread
 * (one lane) arrive in order; there is no order across lanes: {@link RingMerge} drains the lanes of one or more
 * rings in time order, one lane at a time up to a time, through the same protocol (package-private
 * {@code peek} / {@code drainUntil}). Single-threaded: one thread polls. Records
 * with a kind or op outside layout 1.0 fail like a bad checksum. The hot path does not allocate.
 */
public final class RingReader implements AutoCloseable {
    /** Default time a claimed slot may stay unpublished before the reader skips it. */
    public static final long DEFAULT_STALE_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final int CURRENT_PID = (int) ProcessHandle.current().pid();

    private final Path path;
    private final FileChannel channel;
    private final FileLock lock;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    /** The mapping's address (slots are read in place). */
    private final long address;

    private final RingHeader header;
    private final RecordView view;
    private final NanoClock clock;
    private final long staleTimeoutNs;
    private final int laneCount;
    private final int laneIndexMask;
    private final long laneCapacity;
    private final long laneMask;
    /** Per lane: offset of its slot 0, of its head, of its tail. */
    private final int[] laneBase;

    private final int[] headOffsets;
    private final int[] tailOffsets;
    /** Per lane: the next position to read. */
    private final long[] heads;
    /** Per lane: the most positions one poll may visit (head at the start of the poll + lane_capacity). */
    private final long[] pollEnds;
    /** Per lane: the position seen unpublished (seq == pos), and since when (-1: none yet). */
    private final long[] stalePositions;

    private final long[] staleSinceNs;
    /** Per lane: tail &gt; stalePositions was seen (at staleSinceNs): the slot is claimed. */
    private final boolean[] staleClaimed;

    private int nextLane;
    /** What the last {@link #drainLane} in a bounded or peek mode stopped at: a record, and its time. */
    private boolean headReady;

    private long headTimeNs;
    private long delivered;
    private long corruptChecksum;
    private long corruptSequence;
    private long skippedStale;
    private long recoveredConsumed;
    private long latePublications;
    private boolean closed;

    private RingReader(
            final Path path,
            final FileChannel channel,
            final FileLock lock,
            final MappedByteBuffer mapped,
            final UnsafeBuffer buffer,
            final RingHeader header,
            final NanoClock clock,
            final long staleTimeoutNs) {
        this.path = path;
        this.channel = channel;
        this.lock = lock;
        this.mapped = mapped;
        this.buffer = buffer;
        this.address = buffer.addressOffset();
        this.header = header;
        this.view = new RecordView(header);
        this.clock = clock;
        this.staleTimeoutNs = staleTimeoutNs;
        this.laneCount = header.laneCount();
        this.laneIndexMask = laneCount - 1;
        this.laneCapacity = header.laneCapacity();
        this.laneMask = header.laneMask();
        this.laneBase = new int[laneCount];
        this.headOffsets = new int[laneCount];
        this.tailOffsets = new int[laneCount];
        this.heads = new long[laneCount];
        this.pollEnds = new long[laneCount];
        this.stalePositions = new long[laneCount];
        this.staleSinceNs = new long[laneCount];
        this.staleClaimed = new boolean[laneCount];
        for (int lane = 0; lane < laneCount; lane++) {
            laneBase[lane] = (int) slotOffset(header.headerSize(), laneCapacity, lane, 0);
            headOffsets[lane] = laneHeadOffset(lane);
            tailOffsets[lane] = laneTailOffset(lane);
            heads[lane] = buffer.getLongVolatile(headOffsets[lane]);
            stalePositions[lane] = -1;
        }
        buffer.putIntOrdered(CONSUMER_PID_OFFSET, CURRENT_PID);
        buffer.putLongOrdered(CONSUMER_HEARTBEAT_NS_OFFSET, clock.nanoTime());
    }

    /** Opens a ring with the default stale timeout and the system clock. */
    public static RingReader open(final Path path) throws IOException {
        return open(path, SystemNanoClock.INSTANCE, DEFAULT_STALE_TIMEOUT_NS);
    }

    /**
     * Maps {@code path}, checks its header and takes the consumer lock.
     *
     * @param clock          CLOCK_MONOTONIC-like ns; used for the stale timeout and the heartbeat.
     * @param staleTimeoutNs how long a claimed slot may stay unpublished before it is skipped.
     * @throws RingFormatException    the file is not (yet) a readable ring; see its subclasses.
     * @throws RingLockedException    another consumer holds the ring.
     */
    public static RingReader open(final Path path, final NanoClock clock, final long staleTimeoutNs)
            throws IOException {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new IOException("the flowscope ring is little-endian; this platform is not");
        }
        final FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        MappedByteBuffer mapped = null;
        try {
            final long size = channel.size();
            if (size > Integer.MAX_VALUE) {
                throw new RingFormatException.NotARing(
                        path, "file of " + size + " bytes is larger than this reader maps (2 GiB)");
            }
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, size);
            final UnsafeBuffer buffer = new UnsafeBuffer(mapped);
            final RingHeader header = RingHeader.read(path, buffer, size);
            final FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (final OverlappingFileLockException ex) {
                throw new RingLockedException(path, "this process");
            }
            if (lock == null) {
                throw new RingLockedException(path, "consumer_pid " + header.consumerPid());
            }
            return new RingReader(path, channel, lock, mapped, buffer, header, clock, staleTimeoutNs);
        } catch (final IOException | RuntimeException ex) {
            if (mapped != null) {
                IoUtil.unmap(mapped);
            }
            channel.close();
            throw ex;
        }
    }

    /**
     * Delivers up to {@code limit} records to {@code handler} and returns how many were delivered. Lanes
     * are drained round-robin (fair shares of the limit per pass, rotating start lane), each lane in its
     * order; the call returns when the limit is reached or no lane made progress in a pass. Skipped slots
     * (bad checksum, stale claims, corrupt sequences, already consumed) do not count; at most
     * {@code lane_capacity} positions of each lane are visited per call. A handler that throws leaves its
     * record unconsumed: the next poll delivers it again.
     */
    public int poll(final RecordHandler handler, final int limit) {
        final long now = clock.nanoTime();
        buffer.putLongOrdered(CONSUMER_HEARTBEAT_NS_OFFSET, now);
        if (limit <= 0) {
            return 0;
        }
        final int lanes = laneCount;
        if (lanes == 1) {
            return drainLane(0, handler, limit, heads[0] + laneCapacity, now, ALL, 0);
        }
        final long[] heads = this.heads;
        final long[] pollEnds = this.pollEnds;
        for (int lane = 0; lane < lanes; lane++) {
            pollEnds[lane] = heads[lane] + laneCapacity;
        }
        int count = 0;
        int lane = nextLane;
        while (true) {
            final int share = Math.max(1, (limit - count + lanes - 1) / lanes);
            boolean progress = false;
            for (int i = 0; i < lanes; i++) {
                final long before = heads[lane];
                count += drainLane(lane, handler, Math.min(share, limit - count), pollEnds[lane], now, ALL, 0);
                progress |= heads[lane] != before;
                lane = (lane + 1) & laneIndexMask;
                if (count >= limit) {
                    nextLane = lane;
                    return count;
                }
            }
            if (!progress) {
                break;
            }
        }
        nextLane = (nextLane + 1) & laneIndexMask;
        return count;
    }

    // ---- time-ordered draining (RingMerge): one lane at a time, up to a time ------------------------------

    /** Starts a merge pass over this ring's lanes: the heartbeat, each lane's visit bound; returns the clock's now. */
    long beginMerge() {
        final long now = clock.nanoTime();
        buffer.putLongOrdered(CONSUMER_HEARTBEAT_NS_OFFSET, now);
        for (int lane = 0; lane < laneCount; lane++) {
            pollEnds[lane] = heads[lane] + laneCapacity;
        }
        return now;
    }

    /**
     * Moves lane {@code lane}'s head past what cannot be delivered (corrupt records, already consumed slots, stale
     * claims: as {@link #poll} does) and tells whether a record is at its head now; its time is then
     * {@link #headTimeNs()}. Delivers nothing; the record is checked again when it is delivered.
     */
    boolean peek(final int lane, final long now) {
        drainLane(lane, null, 1, pollEnds[lane], now, PEEK, 0);
        return headReady;
    }

    /**
     * Delivers lane {@code lane}'s records in its order, up to {@code quota}, while their time is at most {@code
     * untilNs} (signed difference; the record at the head when called is delivered whatever its time: the caller
     * peeked it as the oldest); {@code bounded} false: no time bound. Afterwards {@link #headReady()} tells whether
     * it stopped at a later record (its time: {@link #headTimeNs()}) rather than at nothing to read or the quota.
     */
    int drainUntil(
            final int lane,
            final RecordHandler handler,
            final int quota,
            final boolean bounded,
            final long untilNs,
            final long now) {
        return drainLane(lane, handler, quota, pollEnds[lane], now, bounded ? UNTIL : ALL, untilNs);
    }

    /** Whether the last {@link #peek} or {@link #drainUntil} stopped at a record it did not deliver. */
    boolean headReady() {
        return headReady;
    }

    /** The time of that record. */
    long headTimeNs() {
        return headTimeNs;
    }

    /** {@link #drainLane} modes: every record up to the quota; records up to a time; none (find the head). */
    private static final int ALL = 0;

    private static final int UNTIL = 1;
    private static final int PEEK = 2;

    /**
     * Reads lane {@code lane} from its head until {@code quota} records were delivered, {@code end}, or nothing to
     * read; in mode UNTIL also until a record later than {@code untilNs} (not the first), in mode PEEK until the first
     * record (neither delivered: {@link #headReady}).
     */
    private int drainLane(
            final int lane,
            final RecordHandler handler,
            final int quota,
            final long end,
            final long now,
            final int mode,
            final long untilNs) {
        final UnsafeBuffer buffer = this.buffer;
        final long address = this.address;
        final long capacity = this.laneCapacity;
        final long mask = this.laneMask;
        final int base = laneBase[lane];
        final int headOffset = headOffsets[lane];
        final long[] heads = this.heads;
        final long first = heads[lane];
        long pos = first;
        int count = 0;
        headReady = false;

        while (count < quota && pos - end < 0) {
            final int slot = base + (int) ((pos & mask) << 6);
            final long seq = buffer.getLongVolatile(slot);
            if (seq == pos + 1) {
                // read in place, unchecked: the slot lies within the mapping by construction (a lane's base plus
                // its masked position), and the bounds checks were 7-13 % of the drain's profile
                final long at = address + slot;
                final long w1 = UnsafeApi.getLong(at + 8);
                final long w2 = UnsafeApi.getLong(at + 16);
                final long w3 = UnsafeApi.getLong(at + 24);
                final long w4 = UnsafeApi.getLong(at + 32);
                final long w5 = UnsafeApi.getLong(at + 40);
                final long w6 = UnsafeApi.getLong(at + 48);
                final long w7 = UnsafeApi.getLong(at + 56);
                final int kind = (int) w1 & 0xFF;
                final int op = (int) (w1 >>> 8) & 0xFF;
                if ((int) (w1 >>> 32) == RecordChecksum.compute(pos, w1, w2, w3, w4, w5, w6, w7)
                        && kind < EventKind.COUNT
                        && op >= RecordLayout.OP_START
                        && op <= RecordLayout.OP_STATE) {
                    // w2 is the record's time
                    if (mode != ALL && (mode == PEEK || pos != first && w2 - untilNs > 0)) {
                        headReady = true;
                        headTimeNs = w2;
                        break;
                    }
                    view.set(lane, pos, seq, w1, w2, w3, w4, w5, w6, w7);
                    handler.onRecord(view);
                    count++;
                    delivered++;
                } else {
                    corruptChecksum++;
                    addCorrupt();
                }
                buffer.putLongOrdered(slot, pos + capacity);
                heads[lane] = ++pos;
                buffer.putLongOrdered(headOffset, pos);
            } else if (seq == pos + capacity || seq == pos + capacity + 1) {
                recoveredConsumed++;
                heads[lane] = ++pos;
                buffer.putLongOrdered(headOffset, pos);
            } else if (seq == pos) {
                // Empty, or claimed and not yet published: tail is read only once the stale timeout has passed.
                if (stalePositions[lane] != pos) {
                    stalePositions[lane] = pos;
                    staleSinceNs[lane] = now;
                    staleClaimed[lane] = false;
                    break;
                }
                if (now - staleSinceNs[lane] < staleTimeoutNs) {
                    break;
                }
                if (buffer.getLongVolatile(tailOffsets[lane]) - pos <= 0) {
                    // Empty: the timer restarts.
                    staleSinceNs[lane] = now;
                    staleClaimed[lane] = false;
                    break;
                }
                if (!staleClaimed[lane]) {
                    // Claimed, maybe nanoseconds ago: give the producer one more timeout from now.
                    staleClaimed[lane] = true;
                    staleSinceNs[lane] = now;
                    break;
                }
                if (!buffer.compareAndSetLong(slot, pos, pos + capacity)) {
                    // Published meanwhile: the next round reads it.
                    break;
                }
                skippedStale++;
                buffer.putLongOrdered(CONSUMER_SKIPPED_STALE_OFFSET, buffer.getLong(CONSUMER_SKIPPED_STALE_OFFSET) + 1);
                heads[lane] = ++pos;
                buffer.putLongOrdered(headOffset, pos);
            } else if (seq == pos - capacity + 1) {
                // A lane owner stalled past the stale timeout published late, by a store, over the slot skipped a lap
                // ago (RING.md, "Late publication"); that record was counted as skipped. Free the slot for pos.
                if (buffer.compareAndSetLong(slot, seq, pos)) {
                    latePublications++;
                }
            } else {
                corruptSequence++;
                addCorrupt();
                if (buffer.getLongVolatile(tailOffsets[lane]) - pos > 0) {
                    if (buffer.compareAndSetLong(slot, seq, pos + capacity)) {
                        heads[lane] = ++pos;
                        buffer.putLongOrdered(headOffset, pos);
                    }
                } else {
                    buffer.compareAndSetLong(slot, seq, pos);
                    break;
                }
            }
        }
        return count;
    }

    private void addCorrupt() {
        buffer.putLongOrdered(CONSUMER_CORRUPT_OFFSET, buffer.getLong(CONSUMER_CORRUPT_OFFSET) + 1);
    }

    /** True when the reader has consumed every position producers have claimed, in every lane ({@code head >= tail}). */
    public boolean isDrained() {
        for (int lane = 0; lane < laneCount; lane++) {
            if (heads[lane] - buffer.getLongVolatile(tailOffsets[lane]) < 0) {
                return false;
            }
        }
        return true;
    }

    /** Positions claimed by producers and not yet consumed, summed over the lanes. */
    public long lag() {
        long lag = 0;
        for (int lane = 0; lane < laneCount; lane++) {
            lag += lag(lane);
        }
        return lag;
    }

    /** Positions claimed in lane {@code lane} and not yet consumed. */
    public long lag(final int lane) {
        return Math.max(0, buffer.getLongVolatile(tailOffsets[lane]) - heads[lane]);
    }

    public Path path() {
        return path;
    }

    public RingHeader header() {
        return header;
    }

    public int laneCount() {
        return laneCount;
    }

    /** The next position this reader reads in lane {@code lane}. */
    public long head(final int lane) {
        return heads[lane];
    }

    /** Records delivered to handlers by this reader. */
    public long delivered() {
        return delivered;
    }

    /** Published records skipped because of a bad checksum or an unknown kind/op. */
    public long corruptChecksum() {
        return corruptChecksum;
    }

    /** Slots with a sequence that fits no state of the protocol. */
    public long corruptSequence() {
        return corruptSequence;
    }

    /** {@link #corruptChecksum()} + {@link #corruptSequence()}. */
    public long corrupt() {
        return corruptChecksum + corruptSequence;
    }

    /** Claimed slots skipped after the stale timeout. */
    public long skippedStale() {
        return skippedStale;
    }

    /**
     * Slots freed a lap after a lane owner published into a slot already skipped as stale (its record was counted in
     * {@link #skippedStale()} then).
     */
    public long latePublications() {
        return latePublications;
    }

    /** Positions found already consumed by an earlier consumer that died before moving head. */
    public long recoveredConsumed() {
        return recoveredConsumed;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Clears {@code consumer_pid}, releases the lock and unmaps the file. */
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            buffer.putIntOrdered(CONSUMER_PID_OFFSET, 0);
            lock.release();
        } finally {
            channel.close();
            IoUtil.unmap(mapped);
        }
    }

    public String toString() {
        return "RingReader{path=" + path + ", lanes=" + laneCount + ", delivered=" + delivered + ", corrupt="
                + corrupt() + ", skippedStale=" + skippedStale + '}';
    }
}
