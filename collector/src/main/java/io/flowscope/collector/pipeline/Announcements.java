package io.flowscope.collector.pipeline;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Where a {@link Detector}'s anomaly events go: built before the detector, its receivers (the HTTP stream, the sinks,
 * the console) attached by the composition root once they exist and before the detector starts. So the detector and
 * the HTTP side, which serves the detector's snapshots, need not exist before each other. Events go to the receivers
 * in the order they were attached, on the detector's thread.
 */
public final class Announcements implements Consumer<AnomalyEvent> {
    private final List<Consumer<AnomalyEvent>> receivers = new CopyOnWriteArrayList<>();

    /** Adds a receiver (before the detector starts). */
    public Announcements to(final Consumer<AnomalyEvent> receiver) {
        receivers.add(receiver);
        return this;
    }

    @Override
    public void accept(final AnomalyEvent e) {
        for (final Consumer<AnomalyEvent> r : receivers) {
            r.accept(e);
        }
    }
}
