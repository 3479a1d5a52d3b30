package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;

/**
 * Open / closing state of one potential anomaly. Links, ranks and devices are their own trackers (they extend
 * this: a tracker of its own was one more object, a cache miss each, where one is judged). The period end
 * reads dense mirrors instead (CommState.lTracked / rTracked, HostState.nicStallsOpen), kept where the trackers change,
 * and a link's or rank's object only when it is bad or tracked.
 */
class Tracker {
    int bad;
    int good;
    long firstBadStartNs;
    Anomaly open;

    /** Its counters and open anomaly (by id: the lifecycle's section holds the anomaly). */
    final void writeTracker(final CheckpointOut out) {
        out.writeInt(bad);
        out.writeInt(good);
        out.writeLong(firstBadStartNs);
        out.writeAnomalyRef(open);
    }

    final void readTracker(final CheckpointIn in) {
        bad = in.readInt();
        good = in.readInt();
        firstBadStartNs = in.readLong();
        open = in.readAnomalyRef();
    }
}
