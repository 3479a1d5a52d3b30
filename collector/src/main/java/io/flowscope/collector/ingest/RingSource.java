package io.flowscope.collector.ingest;

import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.collector.pipeline.ProducerDrops;
import io.flowscope.ring.RingDirectory;
import io.flowscope.ring.RingReader;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The rings of a directory: attaches rings as producers appear, drains them in batches (the ring module's
 * corruption handling: bad checksums and sequences are skipped and counted, slots claimed by a dead producer are
 * skipped after the stale timeout), detaches them when their producer closed or died and they are drained.
 * Attach and detach are journaled with the ring's identity (host, pid, path). A host whose rings are drained
 * and silent is told the time by {@link IdleHostClock}, so that its periods end and a hang is named while nothing
 * moves. Each producer's drops (its ring header's counters) are watched: {@link #ringFigures} lists them per
 * producer ({@link ProducerDrops}) for {@code /metrics} and {@code /api/health}.
 */
public final class RingSource implements Source {
    private final RingDirectory directory;
    private RingEventSource adapter;
    private Pipeline current;
    private JournalWriter journal;
    private final IdleHostClock idleClock = new IdleHostClock(System::nanoTime, System::currentTimeMillis);
    private final java.util.Map<Long, String> hostNames = new java.util.concurrent.ConcurrentHashMap<>();
    private long corruptOfDetached;
    private long dropsOfDetached;
    /** Each attached ring's producer and its drops as last seen; detached ones that dropped, the latest last. */
    private final java.util.Map<RingReader, Watched> watched = new java.util.IdentityHashMap<>();

    private final java.util.ArrayDeque<ProducerDrops> detachedDrops = new java.util.ArrayDeque<>();

    private static final java.util.Comparator<ProducerDrops> BY_PRODUCER = java.util.Comparator.comparing(
                    ProducerDrops::host)
            .thenComparingInt(ProducerDrops::pid)
            .thenComparing(ProducerDrops::ring);

    /** A producer's drops as last seen by {@link #ringFigures}, and when they last grew. */
    private static final class Watched {
        final String host;
        final int pid;
        final String ring;
        long dropped;
        long lastDropWallMs;

        Watched(final RingReader reader) {
            this.host = reader.header().hostname();
            this.pid = reader.header().producerPid();
            this.ring = reader.path().getFileName().toString();
        }

        /** Reads the ring's counters: the producer's drops now, {@code attached} or not. */
        ProducerDrops look(final RingReader reader, final boolean attached, final long nowWallMs) {
            final long full = reader.header().droppedFull();
            final long abandoned = reader.header().droppedAbandoned();
            final long contended = reader.header().droppedContended();
            final long sum = full + abandoned + contended;
            if (sum != dropped) {
                // a ring found with drops counts as dropping from now: when they happened is not known
                dropped = sum;
                lastDropWallMs = nowWallMs;
            }
            return new ProducerDrops(host, pid, ring, attached, full, abandoned, contended, lastDropWallMs);
        }
    }

    public RingSource(final Path dir, final long scanMs, final boolean deleteDrained) {
        if (!java.nio.file.Files.isDirectory(dir)) {
            org.slf4j.LoggerFactory.getLogger(RingSource.class)
                    .warn(
                            "ring directory {} does not exist (yet): waiting for producers (the plugin creates it; its "
                                    + "FLOWSCOPE_RING_DIR must match ring.dir); ./flowscope demo runs a simulated cluster instead",
                            dir);
        }
        this.directory = RingDirectory.builder(dir)
                .scanInterval(scanMs, TimeUnit.MILLISECONDS)
                .deleteDrained(deleteDrained)
                .listener(new RingDirectory.Listener() {
                    @Override
                    public void onAttach(final RingReader reader) {
                        hostNames.put(
                                RingEventSource.hostId(reader.header().hostname()),
                                reader.header().hostname());
                        watched.put(reader, new Watched(reader));
                        if (journal != null) {
                            journal.ringAttached(
                                    RingEventSource.hostId(reader.header().hostname()),
                                    reader.header().producerPid(),
                                    reader.header().hostname(),
                                    reader.path().toString());
                            journal.ringClock(
                                    RingEventSource.hostId(reader.header().hostname()),
                                    reader.header().producerPid(),
                                    reader.header().anchorRealtimeNs(),
                                    reader.header().anchorMonotonicNs());
                        }
                    }

                    @Override
                    public void onDetach(
                            final RingReader reader, final RingDirectory.DetachReason reason, final boolean delete) {
                        corruptOfDetached += reader.corrupt();
                        dropsOfDetached += drops(reader);
                        final Watched w = watched.remove(reader);
                        if (w != null) {
                            final ProducerDrops last = w.look(reader, false, System.currentTimeMillis());
                            if (last.dropped() > 0) {
                                if (detachedDrops.size() == ProducerDrops.MAX_DETACHED) {
                                    detachedDrops.removeFirst();
                                }
                                detachedDrops.addLast(last);
                            }
                        }
                        if (journal != null) {
                            journal.ringDetached(
                                    reader.header().producerPid(), reader.path().toString(), reason.name());
                        }
                    }
                })
                .build();
    }

    /** Where attach/detach records go (the drain loop sets it once the journal is open). */
    public void journal(final JournalWriter journal) {
        this.journal = journal;
    }

    private static long drops(final RingReader r) {
        return r.header().droppedFull()
                + r.header().droppedAbandoned()
                + r.header().droppedContended();
    }

    @Override
    public int poll(final Pipeline out) {
        if (out != current) {
            current = out;
            adapter = new RingEventSource(out);
        }
        final long before = adapter.records();
        directory.poll(adapter);
        idleClock.tick(directory, out);
        return (int) (adapter.records() - before);
    }

    @Override
    public RingFigures ringFigures() {
        long corrupt = corruptOfDetached;
        long drops = dropsOfDetached;
        long lag = 0;
        final long now = System.currentTimeMillis();
        final java.util.List<ProducerDrops> producers = new java.util.ArrayList<>();
        for (final RingReader r : directory.readers()) {
            corrupt += r.corrupt();
            drops += drops(r);
            lag += Math.max(0, r.lag());
            final Watched w = watched.get(r);
            if (w != null && producers.size() < ProducerDrops.MAX_ATTACHED) {
                producers.add(w.look(r, true, now));
            }
        }
        // in a stable order (the directory's rotates): a health reason naming them stays the same line
        producers.sort(BY_PRODUCER);
        producers.addAll(detachedDrops);
        return new RingFigures(
                adapter == null ? 0 : adapter.records(),
                directory.attachedCount(),
                corrupt,
                drops,
                lag,
                java.util.List.copyOf(producers));
    }

    @Override
    public String hostName(final long hostId) {
        return hostNames.get(hostId);
    }

    @Override
    public String describe() {
        return "rings in " + directory.directory();
    }

    @Override
    public void close() {
        directory.close();
    }
}
