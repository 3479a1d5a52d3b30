package io.flowscope.anomaly;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.CollectiveSummary;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Stragglers (SLOW_NODE) from GPU kernel timing (KernelCh, GPU {@code %globaltimer}), where no proxy steps flow
 * (NVLink inside a node). The ranks of a collective leave it together, so the rank whose kernel started last runs
 * the shortest: the others wait inside theirs for its data. Per collective (matched by sequence number across
 * ranks), each rank's lateness is the median of the others' GPU durations minus its own; a rank is late over an
 * evaluation window when its mean lateness exceeds {@code kernelLatenessNs} and the others run
 * {@code kernelLatenessRatio} times as long. Durations only: the GPUs' clocks never meet.
 */
final class KernelLatenessDetector {
    /** A collective of one communicator waiting for every rank's duration. */
    private static final class Round {
        long seq;
        final long[] durationNs;
        final long[] hostIds;
        final long[] hostNs;
        int reported;

        Round(final int nranks) {
            durationNs = new long[nranks];
            hostIds = new long[nranks];
            hostNs = new long[nranks];
        }
    }

    private static final class RankState {
        long hostId;
        long latenessSumNs;
        long ownSumNs;
        long othersSumNs;
        int collectives;
        final Episode straggling;

        RankState(final Episode e) {
            straggling = e;
        }
    }

    private static final class Comm {
        final long commHash;
        final int nranks;
        final long anchorHostId;
        final EvaluationWindow window = new EvaluationWindow();
        final Long2ObjectHashMap<Round> rounds = new Long2ObjectHashMap<>();
        /**
         * By rank, made at the first round the rank completes; judged in rank order (a hash map's order depended
         * on its capacity, which a restored engine would not share).
         */
        final RankState[] ranks;

        Comm(final long commHash, final int nranks, final long anchorHostId) {
            this.commHash = commHash;
            this.nranks = nranks;
            this.anchorHostId = anchorHostId;
            this.ranks = new RankState[nranks];
        }

        /** Its window, its incomplete rounds (by sequence number: the same state, the same bytes), its ranks. */
        void writeTo(final CheckpointOut out) {
            out.writeLong(commHash);
            out.writeInt(nranks);
            out.writeLong(window.startNs);
            out.writeLong(window.endNs);
            final long[] seqs = new long[rounds.size()];
            int n = 0;
            for (final Round r : rounds.values()) {
                seqs[n++] = r.seq;
            }
            Arrays.sort(seqs);
            out.writeInt(n);
            for (final long seq : seqs) {
                final Round r = rounds.get(seq);
                out.writeLong(r.seq);
                out.writeInt(r.reported);
                for (int i = 0; i < nranks; i++) {
                    out.writeLong(r.durationNs[i]);
                    out.writeLong(r.hostIds[i]);
                    out.writeLong(r.hostNs[i]);
                }
            }
            for (int i = 0; i < nranks; i++) {
                final RankState s = ranks[i];
                out.writeBoolean(s != null);
                if (s != null) {
                    out.writeLong(s.hostId);
                    out.writeLong(s.latenessSumNs);
                    out.writeLong(s.ownSumNs);
                    out.writeLong(s.othersSumNs);
                    out.writeInt(s.collectives);
                    s.straggling.writeTo(out);
                }
            }
        }

        static Comm readFrom(final CheckpointIn in, final long anchorHostId, final AnomalyConfig config) {
            final long commHash = in.readLong();
            final int nranks = in.readInt();
            CheckpointIn.check(nranks >= 2 && nranks <= 1 << 16, "a kernel-timed comm of " + nranks + " ranks");
            // Every rank takes a byte at least: no array sized by garbage.
            CheckpointIn.check(nranks <= in.remaining(), "a kernel-timed comm of " + nranks + " ranks");
            final Comm c = new Comm(commHash, nranks, anchorHostId);
            c.window.startNs = in.readLong();
            c.window.endNs = in.readLong();
            final int n = in.readCount();
            for (int k = 0; k < n; k++) {
                final Round r = new Round(nranks);
                r.seq = in.readLong();
                r.reported = in.readInt();
                for (int i = 0; i < nranks; i++) {
                    r.durationNs[i] = in.readLong();
                    r.hostIds[i] = in.readLong();
                    r.hostNs[i] = in.readLong();
                }
                CheckpointIn.check(c.rounds.put(r.seq, r) == null, "a kernel round twice");
            }
            for (int i = 0; i < nranks; i++) {
                if (in.readBoolean()) {
                    final RankState s = new RankState(new Episode(config.waitOpenAfter, config.waitResolveAfter));
                    s.hostId = in.readLong();
                    s.latenessSumNs = in.readLong();
                    s.ownSumNs = in.readLong();
                    s.othersSumNs = in.readLong();
                    s.collectives = in.readInt();
                    s.straggling.readFrom(in);
                    c.ranks[i] = s;
                }
            }
            return c;
        }
    }

    /** Rounds kept per communicator before the oldest incomplete ones are dropped (a rank that never reports). */
    private static final int MAX_ROUNDS = 256;

    private final AnomalyConfig config;
    private final Episode.Publisher publisher;
    private final Long2ObjectHashMap<Comm> comms = new Long2ObjectHashMap<>();
    /** The communicators by anchor host: a host's time closes only its own windows (no pass over all of them). */
    private final Long2ObjectHashMap<List<Comm>> byAnchor = new Long2ObjectHashMap<>();

    private final Long2LongHashMap hostNow = new Long2LongHashMap(Long.MIN_VALUE);
    private long[] scratch = new long[8];

    KernelLatenessDetector(final AnomalyConfig config, final Episode.Publisher publisher) {
        this.config = config;
        this.publisher = publisher;
    }

    void onCollective(final CollectiveSummary cs) {
        final int n = cs.nranks();
        if (!cs.complete()
                || !cs.gpuTimed()
                || n < 2
                || n > 1 << 16
                || cs.rank() < 0
                || cs.rank() >= n
                || cs.durationNs() <= 0) {
            return;
        }
        final long t = cs.hostStopNs();
        if (hostNow.get(cs.hostId()) == Long.MIN_VALUE || t - hostNow.get(cs.hostId()) > 0) {
            hostNow.put(cs.hostId(), t);
        }
        Comm c = comms.get(cs.commHash());
        if (c == null || c.nranks != n) {
            if (c != null) {
                byAnchor.get(c.anchorHostId).remove(c);
            }
            c = new Comm(cs.commHash(), n, cs.hostId());
            c.window.start(t, config.waitWindowNs);
            comms.put(cs.commHash(), c);
            byAnchor.computeIfAbsent(c.anchorHostId, h -> new ArrayList<>()).add(c);
        }
        if (cs.hostId() == c.anchorHostId && c.window.isOver(t)) {
            evaluate(c, t);
        }
        Round r = c.rounds.get(cs.seqNumber());
        if (r == null) {
            if (c.rounds.size() >= MAX_ROUNDS) {
                dropOldest(c);
            }
            r = new Round(n);
            r.seq = cs.seqNumber();
            Arrays.fill(r.durationNs, -1);
            c.rounds.put(cs.seqNumber(), r);
        }
        if (r.durationNs[cs.rank()] < 0) {
            r.durationNs[cs.rank()] = cs.durationNs();
            r.hostIds[cs.rank()] = cs.hostId();
            r.hostNs[cs.rank()] = t;
            if (++r.reported == n) {
                c.rounds.remove(r.seq);
                account(c, r);
            }
        }
    }

    /**
     * A host's time moved on with no collective: the windows anchored there close, empty ones count as good (a
     * straggler's anomaly resolves when its communicator stops, e.g. behind a hang).
     */
    void advanceTo(final long hostId, final long timeNs) {
        if (hostNow.get(hostId) == Long.MIN_VALUE || timeNs - hostNow.get(hostId) > 0) {
            hostNow.put(hostId, timeNs);
        }
        final List<Comm> anchored = byAnchor.get(hostId);
        for (int i = 0; anchored != null && i < anchored.size(); i++) {
            final Comm c = anchored.get(i);
            if (c.window.isOver(timeNs)) {
                evaluate(c, timeNs);
            }
        }
    }

    private static void dropOldest(final Comm c) {
        long oldest = Long.MAX_VALUE;
        for (final Round r : c.rounds.values()) {
            oldest = Math.min(oldest, r.seq);
        }
        c.rounds.remove(oldest);
    }

    /** Each rank's lateness in one complete collective. */
    private void account(final Comm c, final Round r) {
        final int n = c.nranks;
        if (scratch.length < n) {
            scratch = new long[n];
        }
        for (int i = 0; i < n; i++) {
            // The median of the others: over all n with this rank's own duration replaced by the others' spread
            // is not exact, so sort the others (n is a communicator's size; rounds are rare next to summaries).
            int k = 0;
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    scratch[k++] = r.durationNs[j];
                }
            }
            Arrays.sort(scratch, 0, k);
            final long others = k % 2 == 1 ? scratch[k / 2] : (scratch[k / 2 - 1] + scratch[k / 2]) / 2;
            RankState s = c.ranks[i];
            if (s == null) {
                s = new RankState(new Episode(config.waitOpenAfter, config.waitResolveAfter));
                c.ranks[i] = s;
            }
            s.hostId = r.hostIds[i];
            s.latenessSumNs += others - r.durationNs[i];
            s.ownSumNs += r.durationNs[i];
            s.othersSumNs += others;
            s.collectives++;
        }
    }

    private void evaluate(final Comm c, final long nowNs) {
        final long commHash = c.commHash;
        final long anchorEnd = c.window.endNs;
        for (int rank = 0; rank < c.nranks; rank++) {
            final RankState s = c.ranks[rank];
            if (s == null) {
                continue;
            }
            final long now = hostNow.get(s.hostId);
            final boolean enough = s.collectives >= config.minEntrySteps;
            final double late = enough ? (double) s.latenessSumNs / s.collectives : 0;
            final double own = enough ? (double) s.ownSumNs / s.collectives : 0;
            final double others = enough ? (double) s.othersSumNs / s.collectives : 0;
            final boolean bad = enough
                    && late >= config.kernelLatenessNs
                    && others >= config.kernelLatenessRatio * Math.max(own, 1.0);
            final int collectives = s.collectives;
            s.latenessSumNs = 0;
            s.ownSumNs = 0;
            s.othersSumNs = 0;
            s.collectives = 0;
            if (!bad) {
                s.straggling.good(publisher, now);
                continue;
            }
            if (!s.straggling.bad(c.window.startNs)) {
                continue;
            }
            final SortedMap<String, Double> ev = new TreeMap<>();
            ev.put("latenessNsPerOp", late);
            ev.put("ownGpuDurationNs", own);
            ev.put("othersGpuDurationNs", others);
            ev.put("operations", (double) collectives);
            final String summary = String.format(
                    "rank %d delays comm 0x%x by %.3f ms per collective: its kernels "
                            + "start last and run %.3f ms while the others' run %.3f ms waiting for it (GPU timestamps)",
                    rank, commHash, late / 1e6, own / 1e6, others / 1e6);
            final Severity sev = late >= config.slowNodeCriticalNs ? Severity.CRITICAL : Severity.WARNING;
            s.straggling.publish(
                    publisher,
                    AnomalyKind.SLOW_NODE,
                    Culprit.rank(s.hostId, commHash, rank),
                    sev,
                    now - (anchorEnd - s.straggling.firstBadStartNs()),
                    now,
                    ev,
                    summary);
        }
        c.window.next(nowNs, config.waitWindowNs);
    }

    /*
     * Checkpoint: the hosts' times, then per anchor host (by id: the same state, the same bytes) its communicators
     * in the order its time closes their windows. The comms map is rebuilt from them (a comm replaced when its size
     * changed is in neither); the sort scratch is not written.
     */

    void writeTo(final CheckpointOut out) {
        final long[] hosts = new long[hostNow.size()];
        int n = 0;
        for (final Long2LongHashMap.KeyIterator it = hostNow.keySet().iterator(); it.hasNext(); ) {
            hosts[n++] = it.nextValue();
        }
        Arrays.sort(hosts);
        out.writeInt(n);
        for (final long h : hosts) {
            out.writeLong(h);
            out.writeLong(hostNow.get(h));
        }
        final long[] anchors = new long[byAnchor.size()];
        int a = 0;
        for (final Long2ObjectHashMap<List<Comm>>.KeyIterator it =
                        byAnchor.keySet().iterator();
                it.hasNext(); ) {
            anchors[a++] = it.nextLong();
        }
        Arrays.sort(anchors);
        out.writeInt(a);
        for (final long anchor : anchors) {
            final List<Comm> list = byAnchor.get(anchor);
            out.writeLong(anchor);
            out.writeInt(list.size());
            for (final Comm c : list) {
                c.writeTo(out);
            }
        }
    }

    /** Into a fresh detector. */
    void readFrom(final CheckpointIn in) {
        final int n = in.readCount();
        for (int i = 0; i < n; i++) {
            final long h = in.readLong();
            final long t = in.readLong();
            CheckpointIn.check(hostNow.get(h) == Long.MIN_VALUE && t != Long.MIN_VALUE, "a host's kernel time twice");
            hostNow.put(h, t);
        }
        final int anchors = in.readCount();
        for (int i = 0; i < anchors; i++) {
            final long anchor = in.readLong();
            CheckpointIn.check(!byAnchor.containsKey(anchor), "an anchor host twice");
            final List<Comm> list = new ArrayList<>();
            byAnchor.put(anchor, list);
            final int k = in.readCount();
            for (int j = 0; j < k; j++) {
                final Comm c = Comm.readFrom(in, anchor, config);
                CheckpointIn.check(comms.put(c.commHash, c) == null, "a kernel-timed comm twice");
                list.add(c);
            }
        }
    }
}
