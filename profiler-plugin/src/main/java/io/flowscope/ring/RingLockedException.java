package io.flowscope.ring;

import java.io.IOException;
import java.nio.file.Path;

/** Another consumer holds the ring's lock: only one reader may attach to a ring. */
public final class RingLockedException extends IOException {
    private static final long serialVersionUID = 1L;

    public RingLockedException(final Path path, final String holder) {
        super(path + ": ring is already being read by another consumer (" + holder + "); only one reader may attach");
    }
}
