package io.flowscope.collector.fleet;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import java.util.BitSet;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Which of an agent's summaries travel to the aggregators (docs/fleet-wire.md, "The decision"). With
 * {@code fleet.publish = all}, every one. With {@code central} (the default), three cuts, each of something no
 * central rule needs:
 *
 * <ol>
 *   <li><b>Kinds</b> ({@link FleetWire#judgedCentrally}): receive STEP flows and LINK aggregates travel; QP flows,
 *       send STEP flows, RANK and COMM aggregates stay on the node.
 *   <li><b>Node-local communicators</b> stay on the node: once one host holds every rank of a communicator
 *       (tensor parallelism inside a node), the agent's own stage judges all of it and only its anomalies travel.
 *       The ranks a host holds come from its rings' communicator entries and its collectives' starts
 *       ({@link #onRank}). Until the last one is seen the communicator travels: on the recorded two-GPU host the
 *       second ring's records reach the journal after the first ring's first summaries, so a few summaries
 *       travel, then none. The aggregators then see the communicator fall silent, as they see any communicator
 *       end; no central rule reads a silence as a fault (the hang rule reads only receives reported in the
 *       period, {@code HostState.recvWaiting}).
 *   <li><b>Collectives sampled by sequence number</b> ({@code fleet.collectiveEvery = N}): a collective travels
 *       when its sequence number is a multiple of N. Every rank of a communicator numbers its collectives alike, so
 *       the aggregators receive whole rounds (one in N), each as exact as before; the rules that compare ranks
 *       over windows (kernel and credit lateness) see N times fewer rounds.
 * </ol>
 *
 * <p>A summary left out is still numbered by the agent (a gap the consumers' high-water marks pass over). Written
 * and read by the agent's publisher thread only. The decisions depend only on the journal's order, so a session that
 * re-reads the journal decides alike.
 */
public final class CentralSelection {
    /** The ranks of one communicator seen on one host. */
    private static final class HostComm {
        final long hostId;
        final BitSet ranks = new BitSet();
        /** How many bits of {@link #ranks} are set (a 16,384-rank communicator's bit set is 256 words). */
        int seen;

        int nranks;

        HostComm next;

        HostComm(final long hostId) {
            this.hostId = hostId;
        }
    }

    private final boolean all;
    private final long collectiveEvery;
    /** By communicator hash: its hosts (one, usually) in a short chain. */
    private final Long2ObjectHashMap<HostComm> comms = new Long2ObjectHashMap<>();

    private long localSummaries;
    private long sampledOut;

    public CentralSelection(final boolean all, final long collectiveEvery) {
        if (collectiveEvery < 1) {
            throw new IllegalArgumentException("collectiveEvery must be >= 1: " + collectiveEvery);
        }
        this.all = all;
        this.collectiveEvery = collectiveEvery;
    }

    public static CentralSelection of(final FleetConfig fleet) {
        return new CentralSelection(fleet.publishAll(), fleet.collectiveEvery());
    }

    /**
     * Rank {@code rank} of {@code nranks} of the communicator lives on this host: a ring's communicator entry, or a
     * collective it started (recordings made before the rings' entries were journaled have only these).
     */
    public void onRank(final long hostId, final long commHash, final int rank, final int nranks) {
        if (rank < 0 || nranks < 1 || rank >= nranks) {
            return;
        }
        final HostComm h = hostComm(hostId, commHash);
        if (h.nranks != nranks) {
            h.ranks.clear(); // a communicator hash reused with another size: its ranks start again
            h.seen = 0;
            h.nranks = nranks;
        }
        if (!h.ranks.get(rank)) {
            h.ranks.set(rank);
            h.seen++;
        }
    }

    /** Whether this flow summary travels. */
    public boolean flow(final FlowSummary s) {
        if (all) {
            return true;
        }
        return FleetWire.judgedCentrally(s) && !local(s.hostId(), s.commHash());
    }

    /** Whether this collective summary travels. */
    public boolean collective(final CollectiveSummary s) {
        if (all) {
            return true;
        }
        if (local(s.hostId(), s.commHash())) {
            return false;
        }
        if (collectiveEvery > 1 && Math.floorMod(s.seqNumber(), collectiveEvery) != 0) {
            sampledOut++;
            return false;
        }
        return true;
    }

    /** Summaries of node-local communicators kept on the node so far (of the kinds that would travel). */
    public long localSummaries() {
        return localSummaries;
    }

    /** Collectives left out by the sampling so far. */
    public long sampledOut() {
        return sampledOut;
    }

    /**
     * Whether a communicator's summaries on this host stay there: with {@code central}, once every rank of it was
     * seen on the host.
     */
    public boolean keptOnNode(final long hostId, final long commHash) {
        if (all) {
            return false;
        }
        final HostComm h = hostComm(hostId, commHash);
        return h.nranks > 0 && h.seen == h.nranks;
    }

    private boolean local(final long hostId, final long commHash) {
        if (keptOnNode(hostId, commHash)) {
            localSummaries++;
            return true;
        }
        return false;
    }

    private HostComm hostComm(final long hostId, final long commHash) {
        HostComm first = comms.get(commHash);
        for (HostComm h = first; h != null; h = h.next) {
            if (h.hostId == hostId) {
                return h;
            }
        }
        final HostComm h = new HostComm(hostId);
        h.next = first;
        comms.put(commHash, h);
        return h;
    }
}
