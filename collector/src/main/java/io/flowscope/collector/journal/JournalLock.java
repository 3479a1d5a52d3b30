package io.flowscope.collector.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One writer per journal: an exclusive lock ({@link FileChannel#tryLock}, a POSIX record lock the kernel drops when
 * the process dies, also on SIGKILL) on {@value #FILE} in the journal directory, held by the service for its life.
 * The file says who holds it ({@code pid <pid> host <host> since <time>}), so a second service names the first.
 * Readers (replay, inspect, a fleet agent's publisher, the service's own catch-up) take no lock.
 * <p>
 * A process must never open the lock file while it holds the lock: closing any descriptor of a file drops the
 * process's record locks on it. So the locks this JVM holds are also kept in a table, checked before the file is
 * opened (two services in one JVM, as tests run them).
 */
public final class JournalLock implements AutoCloseable {
    /** The lock file's name in the journal directory. */
    public static final String FILE = "flowscope.lock";

    private static final Map<Path, JournalLock> HELD = new ConcurrentHashMap<>();

    /** Another service holds the journal directory: the message is the one line to print. */
    public static final class InUseException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        InUseException(final String message) {
            super(message);
        }
    }

    private final Path dir;
    private final Path key;
    private final FileChannel channel;
    private final FileLock lock;

    private JournalLock(final Path dir, final Path key, final FileChannel channel, final FileLock lock) {
        this.dir = dir;
        this.key = key;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the lock of journal directory {@code dir} (created when missing); an {@link InUseException} naming the
     * directory and, where the lock file says it, the other process when another holds it.
     */
    public static JournalLock acquire(final Path dir) {
        final Path key;
        try {
            Files.createDirectories(dir);
            key = dir.toRealPath();
        } catch (final IOException e) {
            throw new UncheckedIOException("journal: cannot create " + dir + ": " + e.getMessage(), e);
        }
        final long pid = ProcessHandle.current().pid();
        synchronized (HELD) {
            if (HELD.containsKey(key)) {
                throw inUse(dir, "pid " + pid + ", this process");
            }
            final Path file = dir.resolve(FILE);
            FileChannel ch = null;
            try {
                ch = FileChannel.open(
                        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                FileLock l;
                try {
                    l = ch.tryLock();
                } catch (final OverlappingFileLockException e) {
                    l = null; // held in this JVM by a channel outside the table: said as another holder
                }
                if (l == null) {
                    final String who = holder(ch);
                    ch.close();
                    throw inUse(dir, who);
                }
                ch.truncate(0);
                ch.write(
                        ByteBuffer.wrap(("pid " + pid + " host " + hostName() + " since " + Instant.now() + "\n")
                                .getBytes(StandardCharsets.UTF_8)),
                        0);
                ch.force(false);
                final JournalLock held = new JournalLock(dir, key, ch, l);
                HELD.put(key, held);
                return held;
            } catch (final IOException e) {
                if (ch != null) {
                    try {
                        ch.close();
                    } catch (final IOException ignored) {
                        // closing after a failure
                    }
                }
                throw new UncheckedIOException("journal: cannot lock " + file + ": " + e.getMessage(), e);
            }
        }
    }

    private static InUseException inUse(final Path dir, final String who) {
        return new InUseException("the journal directory " + dir + " is in use by another flowscope service"
                + (who != null ? " (" + who + ")" : "")
                + "; give this one its own (--journal-dir DIR or journal.dir; the "
                + "default is per port), or stop the other");
    }

    /** Who holds the lock, from the file's first line read through the channel already open; null if unknown. */
    private static String holder(final FileChannel ch) {
        try {
            final ByteBuffer b = ByteBuffer.allocate(512);
            ch.read(b, 0);
            final String line = new String(b.array(), 0, b.position(), StandardCharsets.UTF_8).strip();
            if (!line.startsWith("pid ")) {
                return null;
            }
            final int nl = line.indexOf('\n');
            return nl < 0 ? line : line.substring(0, nl);
        } catch (final IOException e) {
            return null;
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (final IOException e) {
            return "unknown";
        }
    }

    public Path dir() {
        return dir;
    }

    /** Releases the lock (the file stays: deleting it could let two services lock two different files). */
    @Override
    public void close() {
        synchronized (HELD) {
            HELD.remove(key, this);
            try {
                lock.release();
                channel.close();
            } catch (final IOException e) {
                // the process ending releases it too
            }
        }
    }
}
