package io.flowscope.sim;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.input.TelemetryListener;
import io.flowscope.api.summary.Collectives;
import java.util.SplittableRandom;

/**
 * What the {@link ClusterSimulator}'s two models share: the scenario, the seeded random source, the pending events,
 * keys, hosts and clocks, and the faults' effect on links, NICs and GPUs. A model generates collectives into
 * {@link #buffer} and emits them in time order from {@link #advanceTo}.
 */
abstract class SimModel {
    /** A time that never comes (a hung rank's). */
    static final long NEVER = Long.MAX_VALUE / 4;

    static final int OPCODE_RDMA_WRITE_WITH_IMM = 1;
    /** How long after a kernel channel's GPU timestamp the host sees it (the proxy polls the GPU's counter). */
    static final long KERNEL_POLL_LAG_NS = 3_000;

    final Scenario scenario;
    final SplittableRandom random;
    final EventBuffer buffer = new EventBuffer();
    final int ranks;
    final int gpus;
    final int channels;
    final long commHash;
    final long[] hostIds;
    final long[] hostOffset;
    final long[] gpuOffset;
    /** The communicator's collective patterns (the ranks do not change: built once). */
    final Topology ring;

    final Topology pairs;
    final Topology tree;

    long nowNs;
    boolean stalled;
    long keys = 1;
    long eventsEmitted;
    int lastNode = -1;

    SimModel(
            final Scenario scenario,
            final long commHash,
            final long[] hostIds,
            final long[] hostOffset,
            final long[] gpuOffset) {
        this.scenario = scenario;
        this.random = new SplittableRandom(scenario.seed());
        this.ranks = scenario.ranks();
        this.gpus = scenario.gpusPerNode();
        this.channels = scenario.channels();
        this.commHash = commHash;
        this.hostIds = hostIds;
        this.hostOffset = hostOffset;
        this.gpuOffset = gpuOffset;
        this.ring = Topology.ring(ranks);
        this.pairs = Topology.pairs(ranks);
        this.tree = Topology.tree(ranks);
    }

    /** See {@link ClusterSimulator#advanceTo}. */
    abstract void advanceTo(long eventTimeNs, TelemetryListener out);

    /** Emits the pending events before {@code limit}, in time order, telling the listener of host changes. */
    final void emitBefore(final long limit, final TelemetryListener out) {
        while (buffer.hasNext() && buffer.nextTime() < limit) {
            final int node = buffer.nextNode();
            if (node != lastNode) {
                out.onHost(hostIds[node]);
                lastNode = node;
            }
            buffer.emitNext(out, hostOffset);
            eventsEmitted++;
        }
    }

    /**
     * The two ProxyOps of one connection src → dst on channel {@code c} that a collective posts: the sender's at
     * {@code opSrc}, the receiver's at {@code opDst} ({@link #NEVER}: never posted, e.g. a hung rank's). Returns the
     * send op's key; the receive op's is the next one.
     */
    final long opStarts(final int c, final int src, final int dst, final long opSrc, final long opDst) {
        final long sendOp = keys++;
        final long recvOp = keys++;
        if (opSrc < NEVER) {
            buffer.opStart(opSrc, scenario.nodeOf(src), sendOp, commHash, src, dst, c, true);
        }
        if (opDst < NEVER) {
            buffer.opStart(opDst, scenario.nodeOf(dst), recvOp, commHash, dst, src, c, false);
        }
        return sendOp;
    }

    /**
     * Rank {@code r}'s kernel channel {@code c} of a collective: its GPU start and, unless {@code gpuEnd} is
     * {@link #NEVER}, its GPU end, each seen by the host {@link #KERNEL_POLL_LAG_NS} later, stamped with the
     * node's GPU clock.
     */
    final void kernelChannel(final int r, final int c, final long collKey, final long gpuStart, final long gpuEnd) {
        final int node = scenario.nodeOf(r);
        final long chKey = keys++;
        buffer.kernelChStart(gpuStart + KERNEL_POLL_LAG_NS, node, chKey, collKey, c, gpuStart + gpuOffset[node]);
        if (gpuEnd < NEVER) {
            buffer.kernelChStop(gpuEnd + KERNEL_POLL_LAG_NS, node, chKey, gpuEnd + gpuOffset[node]);
        }
    }

    /** The send's work request(s): on a NIC that went down, a WR flushed at failover and its repost. */
    final void emitSendWr(
            final int c,
            final int e,
            final int src,
            final int dst,
            final int srcNode,
            final long post,
            final long stop,
            final long bytes) {
        final long opcode = OPCODE_RDMA_WRITE_WITH_IMM;
        final int dev = device(src, post);
        final long wr = keys++;
        buffer.qpStart(post, srcNode, wr, dev, qpNum(e, c, dev, false), (int) opcode, bytes);
        final long stall = nicStallUntil(src, dst, post);
        if (stall > post && device(src, stall) != dev) {
            buffer.key(stall, EventBuffer.QP_STOP, srcNode, wr);
            final int dev2 = device(src, stall);
            final long wr2 = keys++;
            buffer.qpStart(stall, srcNode, wr2, dev2, qpNum(e, c, dev2, false), (int) opcode, bytes);
            buffer.key(stop, EventBuffer.QP_STOP, srcNode, wr2);
        } else {
            buffer.key(stop, EventBuffer.QP_STOP, srcNode, wr);
        }
    }

    final long qpNum(final int edge, final int channel, final int device, final boolean recv) {
        return 0x100 + ((((long) edge * channels + channel) * 16 + device) << 1) + (recv ? 1 : 0);
    }

    // Faults.

    /** The NIC device of a rank at a time: its own, or the next one while its own is down after failover. */
    final int device(final int rank, final long t) {
        final int nics = scenario.nicsPerNode();
        final int own = (rank % gpus) * nics / gpus;
        for (final Fault f : scenario.faults()) {
            if (f.kind() == AnomalyKind.NIC_STALL
                    && f.node() == scenario.nodeOf(rank)
                    && f.device() == own
                    && t >= f.atNs() + scenario.failoverNs()
                    && t < f.endNs()
                    && nics > 1) {
                return (own + 1) % nics;
            }
        }
        return own;
    }

    final int ownDevice(final int rank) {
        return (rank % gpus) * scenario.nicsPerNode() / gpus;
    }

    /** Until when a transfer starting at t waits for a NIC that went down (failover), or t. */
    final long nicStallUntil(final int src, final int dst, final long t) {
        long until = t;
        for (final Fault f : scenario.faults()) {
            if (f.kind() != AnomalyKind.NIC_STALL) {
                continue;
            }
            final boolean uses = (scenario.nodeOf(src) == f.node() && ownDevice(src) == f.device())
                    || (scenario.nodeOf(dst) == f.node() && ownDevice(dst) == f.device());
            final long failover = f.atNs() + scenario.failoverNs();
            if (uses && t >= f.atNs() && t < Math.min(failover, f.endNs())) {
                until = Math.max(until, Math.min(failover, f.endNs()));
            }
        }
        return until;
    }

    /** Bytes/s of src → dst at time t. */
    final double bandwidth(final int src, final int dst, final long t) {
        double bw = scenario.linkBytesPerSecond();
        for (final Fault f : scenario.faults()) {
            if (!f.activeAt(t)) {
                continue;
            }
            switch (f.kind()) {
                case SLOW_LINK:
                    if (f.rank() == src && f.peer() == dst) {
                        bw *= f.fraction();
                    }
                    break;
                case CONGESTION:
                    if (scenario.nodeOf(src) == f.node() && ownDevice(src) == f.device()) {
                        bw *= 1 - (1 - f.fraction()) * ramp(f, t);
                    }
                    break;
                default:
                    break;
            }
        }
        return bw;
    }

    /** Congestion depth 0..1: 2 ms ramp in, then full, then 2 ms ramp out before the end. */
    static double ramp(final Fault f, final long t) {
        final double rampNs = 2_000_000;
        final double in = (t - f.atNs()) / rampNs;
        final double out = f.durationNs() < 0 ? 1 : (f.endNs() - t) / rampNs;
        return Math.max(0, Math.min(1, Math.min(in, out)));
    }

    /** GPU slowdown factor of a rank at a time (1 = normal). */
    final double gpuSlowdown(final int rank, final long t) {
        double k = 1;
        for (final Fault f : scenario.faults()) {
            if (f.kind() == AnomalyKind.SLOW_NODE && f.rank() == rank && f.activeAt(t)) {
                k /= f.fraction();
            }
        }
        return k;
    }

    final boolean hungBy(final int rank, final long t) {
        for (final Fault f : scenario.faults()) {
            if (f.kind() == AnomalyKind.HANG && f.rank() == rank && t >= f.atNs()) {
                return true;
            }
        }
        return false;
    }

    static long add(final long a, final long b) {
        return a >= NEVER || b >= NEVER ? NEVER : a + b;
    }

    /** The pattern of collective {@code it}: the scenario's, or ring, tree and send/recv in turn for "mixed". */
    final String algoOf(final long it) {
        if (!Scenario.ALGO_MIXED.equals(scenario.algo())) {
            return scenario.algo();
        }
        final int k = (int) (it % 3);
        return k == 0 ? Scenario.ALGO_RING : k == 1 ? Scenario.ALGO_TREE : Scenario.ALGO_SENDRECV;
    }

    /** The compute gap before the next collective: exponential around the scenario's, now and then an idle 1–5 ms. */
    final double drawGap() {
        final double mean = scenario.gapNs();
        double g = mean * (0.5 + 0.5 * -Math.log(1 - random.nextDouble()));
        if (scenario.jitter() > 0 && random.nextInt(50) == 0) {
            g += 1_000_000 + random.nextInt(4_000_000);
        }
        return g;
    }

    /**
     * Each rank's Coll start (at {@code start[r]}, none for a rank that never gets there) and its stop
     * {@code stopAfterNs} later, for collective {@code seq} of pattern {@code algo}; returns the ranks' Coll keys.
     */
    final long[] collStarts(
            final String algo, final long[] start, final long size, final long seq, final long stopAfterNs) {
        final int func;
        final int algoCode;
        final int proto;
        switch (algo) {
            case Scenario.ALGO_TREE:
                func = Collectives.ALL_REDUCE;
                algoCode = Collectives.ALGO_TREE;
                proto = Collectives.PROTO_SIMPLE;
                break;
            case Scenario.ALGO_SENDRECV:
                func = Collectives.SEND_RECV;
                algoCode = Collectives.UNKNOWN;
                proto = Collectives.UNKNOWN;
                break;
            default:
                func = Collectives.ALL_REDUCE;
                algoCode = Collectives.ALGO_RING;
                proto = Collectives.PROTO_SIMPLE;
        }
        final long[] collKeys = new long[ranks];
        for (int r = 0; r < ranks; r++) {
            final long st = start[r];
            if (st >= NEVER) {
                continue;
            }
            final int node = scenario.nodeOf(r);
            collKeys[r] = keys++;
            buffer.collStart(st, node, collKeys[r], commHash, r, ranks, func, algoCode, proto, size / 4, channels, seq);
            buffer.key(st + stopAfterNs, EventBuffer.COLL_STOP, node, collKeys[r]);
        }
        return collKeys;
    }

    static long ceilDiv(final long a, final long b) {
        return (a + b - 1) / b;
    }

    static long mix(final long v) {
        long z = v + 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
