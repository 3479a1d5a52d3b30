package io.flowscope.anomaly;

/**
 * A communicator's evaluation window on its anchor host's clock (the wait-state and kernel-lateness detectors):
 * [{@link #startNs}, {@link #endNs}), then the next one; after a silence the next window starts on the grid of the
 * windows before it, at the latest start not after the time reached.
 */
final class EvaluationWindow {
    long startNs;
    long endNs;

    /** The first window, from {@code startNs}. */
    void start(final long startNs, final long lengthNs) {
        this.startNs = startNs;
        this.endNs = startNs + lengthNs;
    }

    /** Whether {@code timeNs} is at or past the window's end. */
    boolean isOver(final long timeNs) {
        return timeNs - endNs >= 0;
    }

    /** The window after this one, as of {@code nowNs}. */
    void next(final long nowNs, final long lengthNs) {
        startNs = nowNs - endNs >= lengthNs ? nowNs - Math.floorMod(nowNs - endNs, lengthNs) : endNs;
        endNs = startNs + lengthNs;
    }
}
