package io.flowscope.collector.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.flowscope.window.TelemetryListener;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.RollCycle;

/**
 * Appends the engines' input to a Chronicle Queue ({@link JournalFormat}). A {@link TelemetryListener} that
 * buffers the calls of one drain batch and writes them as one excerpt at {@link #flush(long)}. Single-threaded:
 * create, use and close it on the drain thread (Chronicle appenders are bound to their thread).
 * <p>
 * Never stops the live path: when the journal reaches {@code maxBytes} or a write fails (disk full), it stops
 * journaling, keeps the reason ({@link #failure()}) and drops what it is handed from then on (counted).
 * Retention: cycle files older than {@code retentionMs} are deleted (never the current one).
 */
public final class JournalWriter implements TelemetryListener, AutoCloseable
{
    private final Path dir;
    private final long maxBytes;
    private final long retentionMs;
    private final ChronicleQueue queue;
    private final ExcerptAppender appender;
    private final Bytes<?> batch = Bytes.allocateElasticDirect(1 << 16);
    private volatile String failure;
    private volatile long bytesOnDisk;
    private volatile long batchesWritten;
    private volatile long entriesWritten;
    private volatile long entriesDropped;
    private long entriesInBatch;
    private long lastHousekeepingMs;

    public JournalWriter(final Path dir, final RollCycle rollCycle, final long maxBytes, final long retentionMs)
    {
        this.dir = dir;
        this.maxBytes = maxBytes;
        this.retentionMs = retentionMs;
        try
        {
            Files.createDirectories(dir);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException("journal: cannot create " + dir + ": " + e.getMessage(), e);
        }
        this.queue = ChronicleQueue.singleBuilder(dir).rollCycle(rollCycle).build();
        this.appender = queue.createAppender();
        this.bytesOnDisk = sizeOnDisk(dir);
        batch.writeLong(0L);
    }

    public Path dir()
    {
        return dir;
    }

    /** Why journaling stopped, or null while it works. */
    public String failure()
    {
        return failure;
    }

    public long bytesOnDisk()
    {
        return bytesOnDisk;
    }

    public long batchesWritten()
    {
        return batchesWritten;
    }

    public long entriesWritten()
    {
        return entriesWritten;
    }

    public long entriesDropped()
    {
        return entriesDropped;
    }

    private boolean open()
    {
        if (failure != null)
        {
            entriesDropped++;
            return false;
        }
        entriesInBatch++;
        return true;
    }

    /** Writes the buffered batch as one excerpt (nothing when empty) and does the housekeeping once a second. */
    public void flush(final long wallNowNs)
    {
        if (entriesInBatch > 0 && failure == null)
        {
            final long estimate = batch.writePosition() + 8;
            if (maxBytes > 0 && bytesOnDisk + estimate > maxBytes)
            {
                fail("journal full: the size cap journal.maxBytes=" + maxBytes + " B is reached (" + bytesOnDisk +
                    " B on disk in " + dir + "); journaling stopped, live data is still served");
            }
            else
            {
                try
                {
                    batch.writeLong(0, wallNowNs);
                    appender.writeBytes(batch);
                    batchesWritten++;
                    entriesWritten += entriesInBatch;
                    bytesOnDisk += estimate;
                }
                catch (final RuntimeException e)
                {
                    fail("journal write failed (" + e + "); journaling stopped, live data is still served");
                }
            }
        }
        if (failure != null)
        {
            entriesDropped += entriesInBatch;
        }
        entriesInBatch = 0;
        batch.clear();
        batch.writeLong(0L);
        final long nowMs = wallNowNs / 1_000_000L;
        if (nowMs - lastHousekeepingMs >= 1000)
        {
            lastHousekeepingMs = nowMs;
            housekeeping(nowMs);
        }
    }

    private void fail(final String reason)
    {
        if (failure == null)
        {
            failure = reason;
        }
    }

    private void housekeeping(final long nowMs)
    {
        if (retentionMs > 0)
        {
            final List<Path> cycles = cycleFiles(dir);
            for (int i = 0; i < cycles.size() - 1; i++)
            {
                final Path p = cycles.get(i);
                try
                {
                    if (nowMs - Files.getLastModifiedTime(p).toMillis() > retentionMs)
                    {
                        Files.deleteIfExists(p);
                    }
                }
                catch (final IOException ignored)
                {
                    // gone already, or not ours to delete: retried next second
                }
            }
        }
        bytesOnDisk = sizeOnDisk(dir);
    }

    /** The cycle files of a journal, oldest first (names sort by time). */
    public static List<Path> cycleFiles(final Path dir)
    {
        final List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir))
        {
            s.filter(p -> p.getFileName().toString().endsWith(".cq4")).sorted().forEach(out::add);
        }
        catch (final IOException e)
        {
            return out;
        }
        return out;
    }

    /** Bytes used by a journal's cycle files (their written length, not the sparse preallocation). */
    public static long sizeOnDisk(final Path dir)
    {
        long sum = 0;
        for (final Path p : cycleFiles(dir))
        {
            try
            {
                final Object blocks = Files.getAttribute(p, "unix:blocks");
                sum += blocks instanceof Long ? (Long)blocks * 512L : Files.size(p);
            }
            catch (final IOException | UnsupportedOperationException | IllegalArgumentException e)
            {
                try
                {
                    sum += Files.size(p);
                }
                catch (final IOException ignored)
                {
                    // removed meanwhile
                }
            }
        }
        return sum;
    }

    // ---- metadata -------------------------------------------------------------------------------------------

    public void ringAttached(final long hostId, final int pid, final String hostname, final String path)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.RING_ATTACH).writeLong(hostId).writeInt(pid);
            batch.writeUtf8(hostname);
            batch.writeUtf8(path);
        }
    }

    public void ringDetached(final int pid, final String path, final String reason)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.RING_DETACH).writeInt(pid);
            batch.writeUtf8(path);
            batch.writeUtf8(reason);
        }
    }

    public void anomaly(final long id, final boolean opened, final String summary)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.ANOMALY).writeLong(id).writeByte((byte)(opened ? 1 : 0));
            batch.writeUtf8(summary);
        }
    }

    /** The live run's input ends here (see {@link JournalFormat#END}); written with the next flush. */
    public void end()
    {
        if (open())
        {
            batch.writeByte(JournalFormat.END);
        }
    }

    public void source(final String spec)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.SOURCE);
            batch.writeUtf8(spec);
        }
    }

    // ---- TelemetryListener ----------------------------------------------------------------------------------

    @Override
    public void onRingComm(final long hostId, final String hostname, final int pid, final long commHash,
        final int rank, final int nranks, final int cudaDevice, final String pciBusId)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.RING_COMM).writeLong(hostId).writeInt(pid).writeLong(commHash).writeInt(rank)
                .writeInt(nranks).writeInt(cudaDevice);
            batch.writeUtf8(hostname);
            batch.writeUtf8(pciBusId);
        }
    }

    @Override
    public void onHost(final long hostId)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.HOST).writeLong(hostId);
        }
    }

    @Override
    public void onProxyOpStart(final long opKey, final long commHash, final int rank, final int peer,
        final int channel, final boolean isSend, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.PROXY_OP_START).writeLong(opKey).writeLong(commHash).writeInt(rank)
                .writeInt(peer).writeInt(channel).writeByte((byte)(isSend ? 1 : 0)).writeLong(timeNs);
        }
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.PROXY_OP_STOP).writeLong(opKey).writeLong(timeNs);
        }
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.PROXY_STEP_START).writeLong(stepKey).writeLong(opKey).writeInt(step)
                .writeLong(timeNs);
        }
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.PROXY_STEP_STATE).writeLong(stepKey).writeInt(state).writeLong(transSize)
                .writeLong(timeNs);
        }
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.PROXY_STEP_STOP).writeLong(stepKey).writeLong(timeNs);
        }
    }

    @Override
    public void onQpStart(final long wrKey, final int device, final long qpNum, final int opcode, final long length,
        final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.QP_START).writeLong(wrKey).writeInt(device).writeLong(qpNum).writeInt(opcode)
                .writeLong(length).writeLong(timeNs);
        }
    }

    @Override
    public void onQpStop(final long wrKey, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.QP_STOP).writeLong(wrKey).writeLong(timeNs);
        }
    }

    @Override
    public void onCollStart(final long collKey, final long commHash, final int rank, final int nranks, final int func,
        final int algo, final int proto, final long count, final int datatypeSize, final int nChannels,
        final long seqNumber, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.COLL_START).writeLong(collKey).writeLong(commHash).writeInt(rank)
                .writeInt(nranks).writeInt(func).writeInt(algo).writeInt(proto).writeLong(count).writeInt(datatypeSize)
                .writeInt(nChannels).writeLong(seqNumber).writeLong(timeNs);
        }
    }

    @Override
    public void onCollStop(final long collKey, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.COLL_STOP).writeLong(collKey).writeLong(timeNs);
        }
    }

    @Override
    public void onKernelChStart(final long chKey, final long collKey, final int channel, final long pTimerNs,
        final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.KERNEL_CH_START).writeLong(chKey).writeLong(collKey).writeInt(channel)
                .writeLong(pTimerNs).writeLong(timeNs);
        }
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs)
    {
        if (open())
        {
            batch.writeByte(JournalFormat.KERNEL_CH_STOP).writeLong(chKey).writeLong(pTimerNs).writeLong(timeNs);
        }
    }

    @Override
    public void close()
    {
        try
        {
            flush(System.currentTimeMillis() * 1_000_000L);
        }
        finally
        {
            appender.close();
            queue.close();
            batch.releaseLast();
        }
    }
}
