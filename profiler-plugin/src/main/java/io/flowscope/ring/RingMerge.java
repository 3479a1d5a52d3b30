package io.flowscope.ring;

import java.util.Arrays;

/**
 * The rings of one host (one clock), drained as one stream in time order: a k-way merge over every lane of every ring
 * that peeks the record at each lane's head in the mapped ring (no copy) and delivers from the lane whose head is
 * oldest, as long as its records are no later than the next oldest head or its own head plus a skew, whichever is
 * later. So what a consumer hands on never runs ahead of a producer that still holds older records by more than the
 * skew: the host's time advances per producer, not with the lane or ring read furthest (a ring-by-ring drain by record
 * counts read a sparse lane, an application thread's, hundreds of ms of event time ahead of a dense one, a proxy
 * thread's). The skew ({@link #DEFAULT_SKEW_NS}, 0: an exact merge) lets a lane run on for a few records where the
 * lanes of a busy node alternate record by record, instead of paying a choice of lane for each record.
 * <p>
 * A lane with nothing to read (empty, or its head claimed and not yet published) counts as caught up: it does not
 * hold the others back. What it publishes during a poll joins the merge at the next look, every {@value #LOOK_EVERY}
 * records delivered (and whenever a single lane is left). Each poll delivers at most its limit, so a caller polling
 * several hosts in turn starves none. Records of one lane stay in their order (a lane's records are in time order as
 * far as its threads published them in order). Corrupt records, stale claims and already consumed slots are handled
 * as {@link RingReader#poll} does (skipped and counted, never fatal); a record's time is used only once its checksum
 * held.
 * <p>
 * Cost: a peek per lane per poll and per look, and a scan of the lanes with records for the oldest and next oldest head
 * per run of records delivered from one lane. No allocation per poll or record. Single-threaded, as its readers.
 */
public final class RingMerge {
    /**
     * The default skew, 50 µs: a twentieth of the service's 1 ms summary period, and the order of the drain loop's own
     * cadence (it parks 20 µs when idle), far under any detector's threshold.
     */
    public static final long DEFAULT_SKEW_NS = 50_000L;

    /**
     * Records delivered between two looks at the lanes that had nothing to read (and the most one lane delivers
     * alone before the next look): a lane that publishes during a poll waits at most this many records.
     */
    static final int LOOK_EVERY = 256;

    private final long skewNs;
    private RingReader[] readers = new RingReader[0];
    /** Per reader: the clock's now of this poll. */
    private long[] nows = new long[0];
    /** Per lane of every reader: its reader's index, its lane index, its head's time while it has one. */
    private int[] laneOwner = new int[0];

    private int[] laneIndex = new int[0];
    private long[] headTimes = new long[0];
    /** The lanes with a record at their head, this poll, and which those are. */
    private int[] active = new int[0];

    private int activeCount;
    private boolean[] isActive = new boolean[0];

    /** A merge with the {@link #DEFAULT_SKEW_NS default skew}. */
    public RingMerge() {
        this(DEFAULT_SKEW_NS);
    }

    /** A merge whose lanes may run {@code skewNs} past the next oldest head (0: an exact merge). */
    public RingMerge(final long skewNs) {
        if (skewNs < 0) {
            throw new IllegalArgumentException("skew must be >= 0: " + skewNs);
        }
        this.skewNs = skewNs;
    }

    /** Adds a ring; its lanes join the merge from the next poll. */
    public void add(final RingReader reader) {
        readers = Arrays.copyOf(readers, readers.length + 1);
        readers[readers.length - 1] = reader;
        relane();
    }

    /** Removes a ring; false when it was not here. */
    public boolean remove(final RingReader reader) {
        for (int i = 0; i < readers.length; i++) {
            if (readers[i] == reader) {
                final RingReader[] fewer = new RingReader[readers.length - 1];
                System.arraycopy(readers, 0, fewer, 0, i);
                System.arraycopy(readers, i + 1, fewer, i, readers.length - i - 1);
                readers = fewer;
                relane();
                return true;
            }
        }
        return false;
    }

    private void relane() {
        int lanes = 0;
        for (final RingReader r : readers) {
            lanes += r.laneCount();
        }
        nows = new long[readers.length];
        laneOwner = new int[lanes];
        laneIndex = new int[lanes];
        headTimes = new long[lanes];
        active = new int[lanes];
        isActive = new boolean[lanes];
        int c = 0;
        for (int r = 0; r < readers.length; r++) {
            for (int lane = 0; lane < readers[r].laneCount(); lane++) {
                laneOwner[c] = r;
                laneIndex[c++] = lane;
            }
        }
    }

    /** The number of rings. */
    public int size() {
        return readers.length;
    }

    /** The ring at {@code index}, in [0, {@link #size()}). */
    public RingReader reader(final int index) {
        return readers[index];
    }

    /**
     * Delivers up to {@code limit} records of the rings' lanes in time order and returns how many were delivered.
     * Each ring's heartbeat is written. A handler that throws leaves its record unconsumed, as in
     * {@link RingReader#poll}.
     */
    public int poll(final RecordHandler handler, final int limit) {
        final RingReader[] readers = this.readers;
        final long[] nows = this.nows;
        for (int r = 0; r < readers.length; r++) {
            nows[r] = readers[r].beginMerge();
        }
        if (limit <= 0) {
            return 0;
        }
        final int[] laneOwner = this.laneOwner;
        final int[] laneIndex = this.laneIndex;
        final long[] headTimes = this.headTimes;
        final int[] active = this.active;
        final boolean[] isActive = this.isActive;
        Arrays.fill(isActive, false);
        activeCount = 0;
        int count = 0;
        int sinceLook = LOOK_EVERY;
        while (count < limit) {
            if (activeCount <= 1 || sinceLook >= LOOK_EVERY) {
                // the lanes that had nothing to read: what they published since joins the merge
                look();
                sinceLook = 0;
                if (activeCount == 0) {
                    break;
                }
            }
            // the oldest head, and the next oldest: the oldest lane runs until it passes that, or its head + the skew
            int oldest = 0;
            long min = headTimes[active[0]];
            long next = 0;
            boolean hasNext = false;
            for (int i = 1; i < activeCount; i++) {
                final long t = headTimes[active[i]];
                if (t - min < 0) {
                    next = min;
                    min = t;
                    oldest = i;
                    hasNext = true;
                } else if (!hasNext || t - next < 0) {
                    next = t;
                    hasNext = true;
                }
            }
            final int c = active[oldest];
            final RingReader reader = readers[laneOwner[c]];
            final long until = next - (min + skewNs) > 0 ? next : min + skewNs;
            // alone, a lane runs a look's worth at a time: a lane that publishes meanwhile is not left behind
            final int quota = hasNext ? limit - count : Math.min(limit - count, LOOK_EVERY);
            final int n = reader.drainUntil(laneIndex[c], handler, quota, hasNext, until, nows[laneOwner[c]]);
            count += n;
            sinceLook += Math.max(1, n);
            if (reader.headReady()) {
                headTimes[c] = reader.headTimeNs();
            } else {
                isActive[c] = false;
                active[oldest] = active[--activeCount];
            }
        }
        return count;
    }

    /** Peeks the lanes not in the merge now; those with a record join it. */
    private void look() {
        final RingReader[] readers = this.readers;
        for (int c = 0; c < laneOwner.length; c++) {
            if (!isActive[c]) {
                final RingReader reader = readers[laneOwner[c]];
                if (reader.peek(laneIndex[c], nows[laneOwner[c]])) {
                    headTimes[c] = reader.headTimeNs();
                    isActive[c] = true;
                    active[activeCount++] = c;
                }
            }
        }
    }

    public String toString() {
        return "RingMerge{rings=" + readers.length + ", lanes=" + laneOwner.length + ", skewNs=" + skewNs + '}';
    }
}
