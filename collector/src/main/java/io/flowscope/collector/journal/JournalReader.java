package io.flowscope.collector.journal;

import java.nio.file.Files;
import java.nio.file.Path;

import io.flowscope.window.TelemetryListener;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Reads a journal ({@link JournalFormat}) from its start and hands every entry to a {@link TelemetryListener}
 * (the input calls, and the rings' communicator entries: {@code onRingComm}) and a {@link Meta} listener (the
 * rest). Entries whose event time is outside [{@code fromNs}, {@code toNs}] are skipped (host and communicator
 * entries always pass). A document with an unknown entry type or a truncated entry is counted as corrupt
 * and the rest of it is skipped; the next documents are read.
 */
public final class JournalReader extends EventLogCounts
{
    /** The journal's non-telemetry entries. */
    public interface Meta
    {
        default void onBatch(final long wallNs)
        {
        }

        default void onRingAttached(final long hostId, final int pid, final String hostname, final String path)
        {
        }

        default void onRingDetached(final int pid, final String path, final String reason)
        {
        }

        default void onAnomaly(final long id, final boolean opened, final String summary)
        {
        }

        default void onSource(final String spec)
        {
        }

        /** The live run ended its input here ({@link JournalFormat#END}): its engines' periods ended early. */
        default void onEnd()
        {
        }
    }

    private final ChronicleQueue queue;
    private final ExcerptTailer tailer;
    private long index = -1;

    public JournalReader(final Path dir)
    {
        if (!Files.isDirectory(dir))
        {
            throw new IllegalArgumentException("not a journal directory: " + dir);
        }
        if (JournalWriter.cycleFiles(dir).isEmpty())
        {
            throw new IllegalArgumentException("not a journal (no .cq4 cycle files): " + dir);
        }
        this.queue = ChronicleQueue.singleBuilder(dir).readOnly(true).build();
        this.tailer = queue.createTailer();
    }

    @Override
    public JournalReader timeRange(final long fromNs, final long toNs)
    {
        range(fromNs, toNs);
        return this;
    }

    /** Reads up to {@code maxDocuments} documents; returns how many were read (0 at the end). */
    @Override
    public int read(final TelemetryListener out, final Meta meta, final int maxDocuments)
    {
        int n = 0;
        while (n < maxDocuments)
        {
            try (DocumentContext dc = tailer.readingDocument())
            {
                if (!dc.isPresent())
                {
                    break;
                }
                if (dc.isMetaData())
                {
                    continue;
                }
                n++;
                documents++;
                index = dc.index();
                try
                {
                    decode(dc.wire().bytes(), out, meta);
                }
                catch (final RuntimeException e)
                {
                    corrupt("undecodable entry: " + e);
                }
            }
            catch (final RuntimeException e)
            {
                corrupt("unreadable excerpt: " + e);
                break;
            }
        }
        return n;
    }

    private void decode(final Bytes<?> b, final TelemetryListener out, final Meta meta)
    {
        if (b.readRemaining() < 8)
        {
            corrupt("document shorter than its header");
            return;
        }
        meta.onBatch(b.readLong());
        while (b.readRemaining() > 0)
        {
            final byte type = b.readByte();
            final int need = fixedSize(type);
            if (need < 0)
            {
                corrupt("unknown entry type " + type + " at offset " + (b.readPosition() - 1));
                return;
            }
            if (b.readRemaining() < need)
            {
                corrupt("entry type " + type + " truncated");
                return;
            }
            entries++;
            switch (type)
            {
                case JournalFormat.HOST -> out.onHost(b.readLong());
                case JournalFormat.PROXY_OP_START ->
                {
                    final long opKey = b.readLong();
                    final long comm = b.readLong();
                    final int rank = b.readInt();
                    final int peer = b.readInt();
                    final int channel = b.readInt();
                    final boolean send = b.readByte() != 0;
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onProxyOpStart(opKey, comm, rank, peer, channel, send, t);
                    }
                }
                case JournalFormat.PROXY_OP_STOP ->
                {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onProxyOpStop(k, t);
                    }
                }
                case JournalFormat.PROXY_STEP_START ->
                {
                    final long k = b.readLong();
                    final long op = b.readLong();
                    final int step = b.readInt();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onProxyStepStart(k, op, step, t);
                    }
                }
                case JournalFormat.PROXY_STEP_STATE ->
                {
                    final long k = b.readLong();
                    final int state = b.readInt();
                    final long size = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onProxyStepState(k, state, size, t);
                    }
                }
                case JournalFormat.PROXY_STEP_STOP ->
                {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onProxyStepStop(k, t);
                    }
                }
                case JournalFormat.QP_START ->
                {
                    final long k = b.readLong();
                    final int device = b.readInt();
                    final long qp = b.readLong();
                    final int opcode = b.readInt();
                    final long length = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onQpStart(k, device, qp, opcode, length, t);
                    }
                }
                case JournalFormat.QP_STOP ->
                {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onQpStop(k, t);
                    }
                }
                case JournalFormat.COLL_START ->
                {
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
                    if (inRange(t))
                    {
                        out.onCollStart(k, comm, rank, nranks, func, algo, proto, count, dt, nch, seq, t);
                    }
                }
                case JournalFormat.COLL_STOP ->
                {
                    final long k = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onCollStop(k, t);
                    }
                }
                case JournalFormat.KERNEL_CH_START ->
                {
                    final long k = b.readLong();
                    final long coll = b.readLong();
                    final int ch = b.readInt();
                    final long p = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onKernelChStart(k, coll, ch, p, t);
                    }
                }
                case JournalFormat.KERNEL_CH_STOP ->
                {
                    final long k = b.readLong();
                    final long p = b.readLong();
                    final long t = b.readLong();
                    if (inRange(t))
                    {
                        out.onKernelChStop(k, p, t);
                    }
                }
                case JournalFormat.RING_ATTACH ->
                {
                    final long host = b.readLong();
                    final int pid = b.readInt();
                    final String hostname = b.readUtf8();
                    final String path = b.readUtf8();
                    meta.onRingAttached(host, pid, hostname, path);
                }
                case JournalFormat.RING_DETACH ->
                {
                    final int pid = b.readInt();
                    final String path = b.readUtf8();
                    final String reason = b.readUtf8();
                    meta.onRingDetached(pid, path, reason);
                }
                case JournalFormat.ANOMALY ->
                {
                    final long id = b.readLong();
                    final boolean opened = b.readByte() != 0;
                    meta.onAnomaly(id, opened, b.readUtf8());
                }
                case JournalFormat.RING_COMM ->
                {
                    final long host = b.readLong();
                    final int pid = b.readInt();
                    final long comm = b.readLong();
                    final int rank = b.readInt();
                    final int nranks = b.readInt();
                    final int device = b.readInt();
                    final String hostname = b.readUtf8();
                    final String busId = b.readUtf8();
                    out.onRingComm(host, hostname == null ? "" : hostname, pid, comm, rank, nranks, device,
                        busId == null ? "" : busId);
                }
                case JournalFormat.SOURCE -> meta.onSource(b.readUtf8());
                case JournalFormat.END -> meta.onEnd();
                default -> throw new IllegalStateException("unreachable");
            }
        }
    }

    /** The fixed bytes after the type byte (strings: at least their length byte); -1 for an unknown type. */
    private static int fixedSize(final byte type)
    {
        return switch (type)
        {
            case JournalFormat.HOST -> 8;
            case JournalFormat.PROXY_OP_START -> 8 + 8 + 4 + 4 + 4 + 1 + 8;
            case JournalFormat.PROXY_OP_STOP, JournalFormat.PROXY_STEP_STOP, JournalFormat.QP_STOP,
                JournalFormat.COLL_STOP -> 16;
            case JournalFormat.PROXY_STEP_START -> 8 + 8 + 4 + 8;
            case JournalFormat.PROXY_STEP_STATE -> 8 + 4 + 8 + 8;
            case JournalFormat.QP_START -> 8 + 4 + 8 + 4 + 8 + 8;
            case JournalFormat.COLL_START -> 8 + 8 + 4 * 5 + 8 + 4 + 4 + 8 + 8;
            case JournalFormat.KERNEL_CH_START -> 8 + 8 + 4 + 8 + 8;
            case JournalFormat.KERNEL_CH_STOP -> 24;
            case JournalFormat.RING_ATTACH -> 8 + 4 + 2;
            case JournalFormat.RING_COMM -> 8 + 4 + 8 + 4 + 4 + 4 + 2;
            case JournalFormat.RING_DETACH -> 4 + 2;
            case JournalFormat.ANOMALY -> 8 + 1 + 1;
            case JournalFormat.SOURCE -> 1;
            case JournalFormat.END -> 0;
            default -> -1;
        };
    }

    /**
     * The queue index of the document being (or last) read: stable for the life of the journal, also when older
     * cycle files are deleted (retention), unlike a count from the reader's start. Valid from {@link Meta#onBatch}.
     */
    @Override
    public long index()
    {
        return index;
    }

    @Override
    public String corruptionUnit()
    {
        return "batches";
    }

    @Override
    public void close()
    {
        tailer.close();
        queue.close();
    }
}
