package io.flowscope.ring;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Discovers the rings of a directory and drains them all, for one consumer thread. Every
 * {@code scanInterval} it lists {@code *.ring}, attaches a {@link RingReader} to each new file once its
 * header is published (a file still being created is retried at the next scan; a file that is not a
 * ring is reported once and then left alone), and notices producers that are gone: the ring is closed
 * ({@code producer_state} 2), or its pid no longer exists on this host, or the file was removed. A gone
 * ring is drained to the end, detached, and deleted (unless configured to keep files). {@link #poll}
 * reads every host in turn, a bounded batch per ring of it, starting from a rotating host so that none
 * starves: the rings of one host and clock (same hostname, same boot instant by their header anchors) are
 * one {@link RingMerge}, drained in time order across their lanes, so that no producer of a host is read
 * ahead of another still holding older records. Errors of one file never stop the others.
 */
public final class RingDirectory implements AutoCloseable {
    /** What happened to the rings of a directory. Called on the polling thread. */
    public interface Listener {
        /** A reader was attached to a new ring. */
        default void onAttach(final RingReader reader) {}

        /**
         * A drained ring is being detached. The reader is still open during the call (its header and
         * counters can be read one last time); it is closed right after, and the file deleted when
         * {@code delete}.
         */
        default void onDetach(final RingReader reader, final DetachReason reason, final boolean delete) {}

        /** A file that will not be read: not a ring, another layout, held by another consumer, unreadable. */
        default void onIgnored(final Path path, final String reason) {}
    }

    /** Why a ring was detached. */
    public enum DetachReason {
        /** {@code producer_state} is closed: the last communicator was finalized. */
        PRODUCER_CLOSED,
        /** The producer's pid does not exist any more on this host. */
        PRODUCER_GONE,
        /** Someone removed the file. */
        FILE_REMOVED,
        /** The directory was closed. */
        CLOSED
    }

    private static final int DEFAULT_BATCH = 1024;

    private final Path directory;
    private final long scanIntervalNs;
    private final long staleTimeoutNs;
    private final NanoClock clock;
    private final boolean deleteDrained;
    private final Listener listener;
    private final IntPredicate pidAlive;
    private final String localHostname;
    private final int batch;
    private final long mergeSkewNs;

    private final List<Attached> rings = new ArrayList<>();
    /** The rings by host and clock, each drained in time order. */
    private final List<RingMerge> hosts = new ArrayList<>();

    private final Set<Path> attachedPaths = new HashSet<>();
    private final Map<Path, Object> ignored = new HashMap<>();
    private final Set<Path> lockedReported = new HashSet<>();
    private final Map<Path, Object> finished = new HashMap<>();
    private long lastScanNs;
    private boolean scanned;
    private int next;
    private long attachedTotal;
    private long detachedTotal;

    private static final class Attached {
        final RingReader reader;
        final boolean sameHost;
        RingMerge host;
        DetachReason gone;

        Attached(final RingReader reader, final boolean sameHost) {
            this.reader = reader;
            this.sameHost = sameHost;
        }
    }

    private RingDirectory(final Builder builder) {
        this.directory = builder.directory;
        this.scanIntervalNs = builder.scanIntervalNs;
        this.staleTimeoutNs = builder.staleTimeoutNs;
        this.clock = builder.clock;
        this.deleteDrained = builder.deleteDrained;
        this.listener = builder.listener;
        this.pidAlive = builder.pidAlive;
        this.localHostname = builder.localHostname != null ? builder.localHostname : localHostname();
        this.batch = builder.batch;
        this.mergeSkewNs = builder.mergeSkewNs;
    }

    public static Builder builder(final Path directory) {
        return new Builder(directory);
    }

    /** Configuration of a {@link RingDirectory}. */
    public static final class Builder {
        private final Path directory;
        private long scanIntervalNs = TimeUnit.MILLISECONDS.toNanos(100);
        private long staleTimeoutNs = RingReader.DEFAULT_STALE_TIMEOUT_NS;
        private NanoClock clock = SystemNanoClock.INSTANCE;
        private boolean deleteDrained = true;
        private Listener listener = new Listener() {};
        private IntPredicate pidAlive = RingDirectory::isPidAlive;
        private String localHostname;
        private int batch = DEFAULT_BATCH;
        private long mergeSkewNs = RingMerge.DEFAULT_SKEW_NS;

        private Builder(final Path directory) {
            this.directory = Objects.requireNonNull(directory);
        }

        /** How often the directory is listed and producers checked (default 100 ms). */
        public Builder scanInterval(final long duration, final TimeUnit unit) {
            this.scanIntervalNs = unit.toNanos(duration);
            return this;
        }

        /** The stale timeout of each reader (default 100 ms). */
        public Builder staleTimeout(final long duration, final TimeUnit unit) {
            this.staleTimeoutNs = unit.toNanos(duration);
            return this;
        }

        public Builder clock(final NanoClock clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        /** false: leave drained rings of gone producers on disk (default: delete them). */
        public Builder deleteDrained(final boolean deleteDrained) {
            this.deleteDrained = deleteDrained;
            return this;
        }

        public Builder listener(final Listener listener) {
            this.listener = Objects.requireNonNull(listener);
            return this;
        }

        /** How to tell whether a pid of this host is alive (default: {@code /proc/<pid>} exists). */
        public Builder pidAlive(final IntPredicate pidAlive) {
            this.pidAlive = Objects.requireNonNull(pidAlive);
            return this;
        }

        /** The name rings of this host carry (default: the kernel's hostname, as {@code gethostname}). */
        public Builder localHostname(final String localHostname) {
            this.localHostname = localHostname;
            return this;
        }

        /** Records read per poll per ring: a host of n rings gets n times this, in time order (default 1024). */
        public Builder batch(final int batch) {
            if (batch < 1) {
                throw new IllegalArgumentException("batch must be >= 1: " + batch);
            }
            this.batch = batch;
            return this;
        }

        /** How far a lane of a host may run past the next oldest ({@link RingMerge}; default 50 µs, 0: exact). */
        public Builder mergeSkew(final long duration, final TimeUnit unit) {
            if (duration < 0) {
                throw new IllegalArgumentException("merge skew must be >= 0: " + duration);
            }
            this.mergeSkewNs = unit.toNanos(duration);
            return this;
        }

        public RingDirectory build() {
            return new RingDirectory(this);
        }
    }

    /** True when {@code /proc/<pid>} exists (or, without /proc, when the JDK sees the process). */
    public static boolean isPidAlive(final int pid) {
        if (pid <= 0) {
            return false;
        }
        if (Files.isDirectory(Path.of("/proc/self"))) {
            return Files.exists(Path.of("/proc", Integer.toString(pid)));
        }
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** The kernel's hostname ({@code gethostname(2)}), which the C producer stores in the header. */
    public static String localHostname() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8)
                    .trim();
        } catch (final IOException | RuntimeException ex) {
            try {
                return java.net.InetAddress.getLocalHost().getHostName();
            } catch (final IOException ex2) {
                return "";
            }
        }
    }

    /**
     * Scans the directory when due, then reads up to a batch from every attached ring, and detaches the
     * rings whose producer is gone and which are drained.
     *
     * @return the number of records delivered.
     */
    public int poll(final RecordHandler handler) {
        final long now = clock.nanoTime();
        if (!scanned || now - lastScanNs >= scanIntervalNs) {
            scan();
        }
        int delivered = 0;
        final int size = hosts.size();
        if (size > 0) {
            final int first = next++ % size;
            for (int i = 0; i < size; i++) {
                final RingMerge host = hosts.get((first + i) % size);
                delivered += host.poll(handler, batch * host.size());
            }
            if (next < 0) {
                next = 0;
            }
        }
        detachDrained();
        return delivered;
    }

    /**
     * Boot instants (a header's real-time minus monotonic anchor) closer than this are one clock: the real-time clock
     * may be stepped (NTP) between two processes' starts.
     */
    static final long SAME_CLOCK_TOLERANCE_NS = 1_000_000_000L;

    /** Whether two rings' times are of one clock: one hostname, the same boot instant by their anchors. */
    static boolean sameClock(final RingHeader a, final RingHeader b) {
        return a.hostname().equals(b.hostname())
                && Math.abs(a.anchorRealtimeNs()
                                - a.anchorMonotonicNs()
                                - (b.anchorRealtimeNs() - b.anchorMonotonicNs()))
                        < SAME_CLOCK_TOLERANCE_NS;
    }

    private void join(final Attached ring) {
        for (final RingMerge host : hosts) {
            if (sameClock(host.reader(0).header(), ring.reader.header())) {
                host.add(ring.reader);
                ring.host = host;
                return;
            }
        }
        ring.host = new RingMerge(mergeSkewNs);
        ring.host.add(ring.reader);
        hosts.add(ring.host);
    }

    private void leave(final Attached ring) {
        ring.host.remove(ring.reader);
        if (ring.host.size() == 0) {
            hosts.remove(ring.host);
        }
    }

    /** Lists the directory now: attaches new rings, retries pending ones, checks producers. */
    public void scan() {
        scanned = true;
        lastScanNs = clock.nanoTime();
        final Set<Path> present = new HashSet<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "*.ring")) {
            for (final Path path : stream) {
                present.add(path);
                if (!attachedPaths.contains(path)) {
                    tryAttach(path);
                }
            }
        } catch (final NoSuchFileException ex) {
            // No producer has created the directory yet.
        } catch (final IOException | RuntimeException ex) {
            reportOnce(directory, null, "cannot list: " + ex);
        }
        ignored.keySet().retainAll(present);
        lockedReported.retainAll(present);
        finished.keySet().retainAll(present);
        for (final Attached ring : rings) {
            if (ring.gone == null) {
                ring.gone = goneReason(ring, present.contains(ring.reader.path()));
            }
        }
    }

    private DetachReason goneReason(final Attached ring, final boolean fileExists) {
        final RingHeader header = ring.reader.header();
        if (!fileExists) {
            return DetachReason.FILE_REMOVED;
        }
        if (header.isProducerClosed()) {
            return DetachReason.PRODUCER_CLOSED;
        }
        if (ring.sameHost && !pidAlive.test(header.producerPid())) {
            return DetachReason.PRODUCER_GONE;
        }
        return null;
    }

    private void tryAttach(final Path path) {
        final Object fileKey = fileKey(path);
        if (fileKey == null) {
            return;
        }
        if (ignored.containsKey(path) && Objects.equals(ignored.get(path), fileKey)
                || finished.containsKey(path) && Objects.equals(finished.get(path), fileKey)) {
            return;
        }
        try {
            final RingReader reader = RingReader.open(path, clock, staleTimeoutNs);
            ignored.remove(path);
            lockedReported.remove(path);
            final Attached ring =
                    new Attached(reader, localHostname.equals(reader.header().hostname()));
            rings.add(ring);
            join(ring);
            attachedPaths.add(path);
            attachedTotal++;
            listener.onAttach(reader);
        } catch (final RingFormatException ex) {
            if (!ex.isTransient()) {
                reportOnce(path, fileKey, ex.getMessage());
            }
        } catch (final RingLockedException ex) {
            // Another consumer may let go: keep trying, but say it once.
            if (lockedReported.add(path)) {
                reportOnce(path, null, ex.getMessage());
            }
        } catch (final NoSuchFileException ex) {
            // Removed between the listing and the open.
        } catch (final IOException | RuntimeException ex) {
            reportOnce(path, fileKey, ex.toString());
        }
    }

    private void reportOnce(final Path path, final Object fileKey, final String reason) {
        if (fileKey == null || !Objects.equals(ignored.put(path, fileKey), fileKey)) {
            try {
                listener.onIgnored(path, reason);
            } catch (final RuntimeException ex) {
                // A listener's failure must not stop discovery.
            }
        }
    }

    private static Object fileKey(final Path path) {
        try {
            final BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
            return attributes.fileKey() != null ? attributes.fileKey() : attributes.creationTime();
        } catch (final IOException | RuntimeException ex) {
            return null;
        }
    }

    private void detachDrained() {
        for (int i = rings.size() - 1; i >= 0; i--) {
            final Attached ring = rings.get(i);
            if (ring.gone != null && ring.reader.isDrained()) {
                rings.remove(i);
                detach(ring, ring.gone);
            }
        }
    }

    private void detach(final Attached ring, final DetachReason reason) {
        final Path path = ring.reader.path();
        final Object fileKey = fileKey(path);
        attachedPaths.remove(path);
        leave(ring);
        detachedTotal++;
        final boolean delete = deleteDrained && reason != DetachReason.FILE_REMOVED && reason != DetachReason.CLOSED;
        try {
            listener.onDetach(ring.reader, reason, delete);
        } catch (final RuntimeException ex) {
            // A listener's failure must not stop discovery.
        }
        try {
            ring.reader.close();
        } catch (final IOException ex) {
            // Unmapped anyway.
        }
        boolean deleted = false;
        if (delete) {
            try {
                deleted = Files.deleteIfExists(path);
            } catch (final IOException ex) {
                reportOnce(path, null, "cannot delete drained ring: " + ex);
            }
        }
        if (!deleted && fileKey != null && reason != DetachReason.CLOSED) {
            // Drained, producer gone, file kept: do not attach it again.
            finished.put(path, fileKey);
        }
    }

    /** The reader attached at {@code index}, in [0, {@link #attachedCount()}): a walk that allocates nothing. */
    public RingReader reader(final int index) {
        return rings.get(index).reader;
    }

    /** The readers attached now (unmodifiable snapshot). */
    public List<RingReader> readers() {
        final List<RingReader> readers = new ArrayList<>(rings.size());
        for (final Attached ring : rings) {
            readers.add(ring.reader);
        }
        return Collections.unmodifiableList(readers);
    }

    public int attachedCount() {
        return rings.size();
    }

    /** Rings attached since creation. */
    public long attachedTotal() {
        return attachedTotal;
    }

    /** Rings detached since creation. */
    public long detachedTotal() {
        return detachedTotal;
    }

    public Path directory() {
        return directory;
    }

    /** Detaches every ring without deleting any. */
    public void close() {
        for (int i = rings.size() - 1; i >= 0; i--) {
            detach(rings.remove(i), DetachReason.CLOSED);
        }
    }

    public String toString() {
        return "RingDirectory{directory=" + directory + ", scanIntervalNs=" + scanIntervalNs + ", staleTimeoutNs="
                + staleTimeoutNs
                + ", deleteDrained=" + deleteDrained + ", mergeSkewNs=" + mergeSkewNs + ", attached=" + rings.size()
                + ", hosts=" + hosts.size() + '}';
    }
}
