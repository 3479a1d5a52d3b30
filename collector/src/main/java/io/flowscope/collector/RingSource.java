package io.flowscope.collector;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.ring.RingDirectory;
import io.flowscope.ring.RingReader;
import io.flowscope.window.ring.RingEventSource;

/**
 * The rings of a directory: attaches rings as producers appear, drains them in batches (the ring module's
 * corruption handling: bad checksums and sequences are skipped and counted, slots claimed by a dead producer are
 * skipped after the stale timeout), detaches them when their producer closed or died and they are drained.
 * Attach and detach are journaled with the ring's identity (host, pid, path). A host whose rings are drained
 * and silent is told the time by {@link IdleHostClock}, so that its periods end and a hang is named while nothing
 * moves.
 */
public final class RingSource implements Source
{
    private final RingDirectory directory;
    private RingEventSource adapter;
    private Pipeline current;
    private JournalWriter journal;
    private final IdleHostClock idleClock = new IdleHostClock(System::nanoTime, System::currentTimeMillis);
    private final java.util.Map<Long, String> hostNames = new java.util.concurrent.ConcurrentHashMap<>();
    private long corruptOfDetached;
    private long dropsOfDetached;

    public RingSource(final Path dir, final long scanMs, final boolean deleteDrained)
    {
        if (!java.nio.file.Files.isDirectory(dir))
        {
            org.slf4j.LoggerFactory.getLogger(RingSource.class).warn(
                "ring directory {} does not exist (yet): waiting for producers (the plugin creates it; its " +
                "FLOWSCOPE_RING_DIR must match ring.dir); ./flowscope demo runs a simulated cluster instead", dir);
        }
        this.directory = RingDirectory.builder(dir)
            .scanInterval(scanMs, TimeUnit.MILLISECONDS)
            .deleteDrained(deleteDrained)
            .listener(new RingDirectory.Listener()
            {
                @Override
                public void onAttach(final RingReader reader)
                {
                    hostNames.put(RingEventSource.hostId(reader.header().hostname()), reader.header().hostname());
                    if (journal != null)
                    {
                        journal.ringAttached(RingEventSource.hostId(reader.header().hostname()),
                            reader.header().producerPid(), reader.header().hostname(), reader.path().toString());
                    }
                }

                @Override
                public void onDetach(final RingReader reader, final RingDirectory.DetachReason reason,
                    final boolean delete)
                {
                    corruptOfDetached += reader.corrupt();
                    dropsOfDetached += drops(reader);
                    if (journal != null)
                    {
                        journal.ringDetached(reader.header().producerPid(), reader.path().toString(), reason.name());
                    }
                }
            })
            .build();
    }

    /** Where attach/detach records go (the drain loop sets it once the journal is open). */
    public void journal(final JournalWriter journal)
    {
        this.journal = journal;
    }

    private static long drops(final RingReader r)
    {
        return r.header().droppedFull() + r.header().droppedAbandoned() + r.header().droppedContended();
    }

    @Override
    public int poll(final Pipeline out)
    {
        if (out != current)
        {
            current = out;
            adapter = new RingEventSource(out);
        }
        final long before = adapter.records();
        directory.poll(adapter);
        idleClock.tick(directory, out);
        return (int)(adapter.records() - before);
    }

    @Override
    public RingFigures ringFigures()
    {
        long corrupt = corruptOfDetached;
        long drops = dropsOfDetached;
        long lag = 0;
        for (final RingReader r : directory.readers())
        {
            corrupt += r.corrupt();
            drops += drops(r);
            lag += Math.max(0, r.lag());
        }
        return new RingFigures(adapter == null ? 0 : adapter.records(), directory.attachedCount(), corrupt, drops,
            lag);
    }

    @Override
    public String hostName(final long hostId)
    {
        return hostNames.get(hostId);
    }

    @Override
    public String describe()
    {
        return "rings in " + directory.directory();
    }

    @Override
    public void close()
    {
        directory.close();
    }
}
