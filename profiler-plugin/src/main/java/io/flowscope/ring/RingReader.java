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
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The one consumer of one ring file. {@link #open} maps the file read-write and takes an exclusive lock
 * on it; {@link #poll} follows the consumer protocol of {@code RING.md}:
 *
 * <pre>
 * seq == pos+1               a record: copy, check the checksum (bad: corrupt, skipped), deliver,
 *                            store_release(seq, pos+capacity), head = pos+1
 * seq == pos+capacity(+1)    already consumed by a consumer that died before moving head (+1: a producer
 *                            has since published the next lap there): head = pos+1
 * seq == pos                 tail &gt; pos: claimed, not yet published; skipped (CAS seq pos -&gt; pos+capacity)
 *                            once it has stayed so for the stale timeout. tail &lt;= pos: nothing to read.
 * anything else              corrupt sequence: tail &gt; pos: seq = pos+capacity, skipped; else seq = pos.
 * </pre>
 *
 * Single-threaded: one thread polls. Records with a kind or op outside layout 1.0 fail like a bad checksum.
 * The hot path does not allocate.
 */
public final class RingReader implements AutoCloseable
{
    /** Default time a claimed slot may stay unpublished before the reader skips it. */
    public static final long DEFAULT_STALE_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final int CURRENT_PID = (int)ProcessHandle.current().pid();

    private final Path path;
    private final FileChannel channel;
    private final FileLock lock;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    private final RingHeader header;
    private final RecordView view;
    private final UnsafeBuffer record;
    private final NanoClock clock;
    private final long staleTimeoutNs;
    private final long capacity;
    private final long mask;
    private final int headerSize;

    private long head;
    private long stalePosition = -1;
    private long staleSinceNs;
    private long delivered;
    private long corruptChecksum;
    private long corruptSequence;
    private long skippedStale;
    private long recoveredConsumed;
    private boolean closed;

    private RingReader(
        final Path path, final FileChannel channel, final FileLock lock, final MappedByteBuffer mapped,
        final UnsafeBuffer buffer, final RingHeader header, final NanoClock clock, final long staleTimeoutNs)
    {
        this.path = path;
        this.channel = channel;
        this.lock = lock;
        this.mapped = mapped;
        this.buffer = buffer;
        this.header = header;
        this.view = new RecordView(header);
        this.record = view.recordBuffer();
        this.clock = clock;
        this.staleTimeoutNs = staleTimeoutNs;
        this.capacity = header.capacity();
        this.mask = header.mask();
        this.headerSize = header.headerSize();
        this.head = buffer.getLongVolatile(HEAD_OFFSET);
        buffer.putIntOrdered(CONSUMER_PID_OFFSET, CURRENT_PID);
        buffer.putLongOrdered(CONSUMER_HEARTBEAT_NS_OFFSET, clock.nanoTime());
    }

    /** Opens a ring with the default stale timeout and the system clock. */
    public static RingReader open(final Path path) throws IOException
    {
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
        throws IOException
    {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN)
        {
            throw new IOException("the flowscope ring is little-endian; this platform is not");
        }
        final FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        MappedByteBuffer mapped = null;
        try
        {
            final long size = channel.size();
            if (size > Integer.MAX_VALUE)
            {
                throw new RingFormatException.NotARing(path, "file of " + size + " bytes is larger than this reader maps (2 GiB)");
            }
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, size);
            final UnsafeBuffer buffer = new UnsafeBuffer(mapped);
            final RingHeader header = RingHeader.read(path, buffer, size);
            final FileLock lock;
            try
            {
                lock = channel.tryLock();
            }
            catch (final OverlappingFileLockException ex)
            {
                throw new RingLockedException(path, "this process");
            }
            if (lock == null)
            {
                throw new RingLockedException(path, "consumer_pid " + header.consumerPid());
            }
            return new RingReader(path, channel, lock, mapped, buffer, header, clock, staleTimeoutNs);
        }
        catch (final IOException | RuntimeException ex)
        {
            if (mapped != null)
            {
                IoUtil.unmap(mapped);
            }
            channel.close();
            throw ex;
        }
    }

    /**
     * Delivers up to {@code limit} records to {@code handler}, in ring order, and returns how many were
     * delivered. Skipped slots (bad checksum, stale claims, corrupt sequences, already consumed) do not
     * count; at most {@code capacity} slots are visited per call. A handler that throws leaves its record
     * unconsumed: the next poll delivers it again.
     */
    public int poll(final RecordHandler handler, final int limit)
    {
        final UnsafeBuffer buffer = this.buffer;
        final UnsafeBuffer record = this.record;
        final long capacity = this.capacity;
        long pos = head;
        final long end = pos + capacity;
        int count = 0;
        buffer.putLongOrdered(CONSUMER_HEARTBEAT_NS_OFFSET, clock.nanoTime());

        while (count < limit && pos < end)
        {
            final int slot = headerSize + (int)((pos & mask) << 6);
            final long seq = buffer.getLongVolatile(slot);
            if (seq == pos + 1)
            {
                final long w1 = buffer.getLong(slot + 8);
                final long w2 = buffer.getLong(slot + 16);
                final long w3 = buffer.getLong(slot + 24);
                final long w4 = buffer.getLong(slot + 32);
                final long w5 = buffer.getLong(slot + 40);
                final long w6 = buffer.getLong(slot + 48);
                final long w7 = buffer.getLong(slot + 56);
                final int kind = (int)w1 & 0xFF;
                final int op = (int)(w1 >>> 8) & 0xFF;
                if ((int)(w1 >>> 32) == RecordChecksum.compute(pos, w1, w2, w3, w4, w5, w6, w7) &&
                    kind < EventKind.COUNT && op >= RecordLayout.OP_START && op <= RecordLayout.OP_STATE)
                {
                    record.putLong(0, seq);
                    record.putLong(8, w1);
                    record.putLong(16, w2);
                    record.putLong(24, w3);
                    record.putLong(32, w4);
                    record.putLong(40, w5);
                    record.putLong(48, w6);
                    record.putLong(56, w7);
                    view.position(pos);
                    handler.onRecord(view);
                    count++;
                    delivered++;
                }
                else
                {
                    corruptChecksum++;
                    addCorrupt();
                }
                buffer.putLongOrdered(slot, pos + capacity);
                buffer.putLongOrdered(HEAD_OFFSET, ++pos);
            }
            else if (seq == pos + capacity || seq == pos + capacity + 1)
            {
                recoveredConsumed++;
                buffer.putLongOrdered(HEAD_OFFSET, ++pos);
            }
            else if (seq == pos)
            {
                if (buffer.getLongVolatile(TAIL_OFFSET) - pos <= 0)
                {
                    break;
                }
                if (!skipIfStale(slot, pos))
                {
                    break;
                }
                buffer.putLongOrdered(HEAD_OFFSET, ++pos);
            }
            else
            {
                corruptSequence++;
                addCorrupt();
                if (buffer.getLongVolatile(TAIL_OFFSET) - pos > 0)
                {
                    if (buffer.compareAndSetLong(slot, seq, pos + capacity))
                    {
                        buffer.putLongOrdered(HEAD_OFFSET, ++pos);
                    }
                }
                else
                {
                    buffer.compareAndSetLong(slot, seq, pos);
                    break;
                }
            }
        }
        head = pos;
        return count;
    }

    private boolean skipIfStale(final int slot, final long pos)
    {
        final long now = clock.nanoTime();
        if (stalePosition != pos)
        {
            stalePosition = pos;
            staleSinceNs = now;
            return false;
        }
        if (now - staleSinceNs < staleTimeoutNs)
        {
            return false;
        }
        if (buffer.compareAndSetLong(slot, pos, pos + capacity))
        {
            skippedStale++;
            buffer.putLongOrdered(CONSUMER_SKIPPED_STALE_OFFSET, buffer.getLong(CONSUMER_SKIPPED_STALE_OFFSET) + 1);
            return true;
        }
        // Published meanwhile: the next round reads it.
        return false;
    }

    private void addCorrupt()
    {
        buffer.putLongOrdered(CONSUMER_CORRUPT_OFFSET, buffer.getLong(CONSUMER_CORRUPT_OFFSET) + 1);
    }

    /** True when the reader has consumed every position producers have claimed ({@code head >= tail}). */
    public boolean isDrained()
    {
        return head - buffer.getLongVolatile(TAIL_OFFSET) >= 0;
    }

    /** Positions claimed by producers and not yet consumed. */
    public long lag()
    {
        return Math.max(0, buffer.getLongVolatile(TAIL_OFFSET) - head);
    }

    public Path path()
    {
        return path;
    }

    public RingHeader header()
    {
        return header;
    }

    /** The next position this reader reads. */
    public long head()
    {
        return head;
    }

    /** Records delivered to handlers by this reader. */
    public long delivered()
    {
        return delivered;
    }

    /** Published records skipped because of a bad checksum or an unknown kind/op. */
    public long corruptChecksum()
    {
        return corruptChecksum;
    }

    /** Slots with a sequence that fits no state of the protocol. */
    public long corruptSequence()
    {
        return corruptSequence;
    }

    /** {@link #corruptChecksum()} + {@link #corruptSequence()}. */
    public long corrupt()
    {
        return corruptChecksum + corruptSequence;
    }

    /** Claimed slots skipped after the stale timeout. */
    public long skippedStale()
    {
        return skippedStale;
    }

    /** Positions found already consumed by an earlier consumer that died before moving head. */
    public long recoveredConsumed()
    {
        return recoveredConsumed;
    }

    public boolean isClosed()
    {
        return closed;
    }

    /** Clears {@code consumer_pid}, releases the lock and unmaps the file. */
    public void close() throws IOException
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try
        {
            buffer.putIntOrdered(CONSUMER_PID_OFFSET, 0);
            lock.release();
        }
        finally
        {
            channel.close();
            IoUtil.unmap(mapped);
        }
    }

    public String toString()
    {
        return "RingReader{path=" + path + ", head=" + head + ", delivered=" + delivered + ", corrupt=" + corrupt() +
            ", skippedStale=" + skippedStale + '}';
    }
}
