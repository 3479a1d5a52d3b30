package io.flowscope.ring;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A file that cannot be read as a flowscope ring (yet). The subclasses say whether waiting can help:
 * {@link NotPublished} and {@link Truncated} may resolve themselves (a producer is creating the file),
 * {@link NotARing} and {@link UnsupportedVersion} will not.
 */
public abstract class RingFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    private final Path path;

    RingFormatException(final Path path, final String message) {
        super(path + ": " + message);
        this.path = path;
    }

    public Path path() {
        return path;
    }

    /** True when the same file may become readable later (the producer is still creating it). */
    public abstract boolean isTransient();

    /** The magic number is not "FSRING1\n", or the header is inconsistent. */
    public static final class NotARing extends RingFormatException {
        private static final long serialVersionUID = 1L;

        public NotARing(final Path path, final String message) {
            super(path, message);
        }

        public boolean isTransient() {
            return false;
        }
    }

    /** A layout major version this reader does not implement. */
    public static final class UnsupportedVersion extends RingFormatException {
        private static final long serialVersionUID = 1L;

        private final int layoutVersion;

        public UnsupportedVersion(final Path path, final int layoutVersion) {
            super(
                    path,
                    "ring layout " + RingLayout.layoutVersionString(layoutVersion)
                            + " is not supported by this reader (" + RingLayout.LAYOUT_MAJOR + ".x)");
            this.layoutVersion = layoutVersion;
        }

        public int layoutVersion() {
            return layoutVersion;
        }

        public boolean isTransient() {
            return false;
        }
    }

    /** The file is shorter than its header says: the producer may still be sizing it. */
    public static final class Truncated extends RingFormatException {
        private static final long serialVersionUID = 1L;

        public Truncated(final Path path, final String message) {
            super(path, message);
        }

        public boolean isTransient() {
            return true;
        }
    }

    /** {@code layout_version} is still 0: the producer has not finished writing the header. */
    public static final class NotPublished extends RingFormatException {
        private static final long serialVersionUID = 1L;

        public NotPublished(final Path path) {
            super(path, "ring header not yet published (layout_version 0); retry later");
        }

        public boolean isTransient() {
            return true;
        }
    }
}
