package io.flowscope.sim;

import io.flowscope.anomaly.AnomalyKind;
import io.flowscope.window.Collectives;
import io.flowscope.window.TelemetryListener;
import io.flowscope.window.ring.RingEventSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A deterministic cluster simulator: N nodes × G GPUs (one communicator of all ranks, node-major) running ring
 * AllReduce, tree AllReduce and pairwise send/recv over several channels, emitting the events a flowscope ring
 * would carry (ProxyOp / ProxyStep with NCCL's states, IB QP work requests, Coll + KernelCh with GPU timestamps)
 * through a {@link TelemetryListener}, each node as its own host (clock domain).
 * <p>
 * <b>Model.</b> Every rank-to-rank hop is a network connection (one per channel) with its own bandwidth per
 * direction, shared by the channels; a rank's NIC device is its local GPU index × nics / gpus. Collectives run
 * one after the other with a barrier between (the iteration's compute gap, drawn with noise). A collective's
 * steps follow a credit protocol, computed step by step (no event queue):
 * <pre>
 *   sender:   start + 8 at max(op start, previous step posted); 20 when the GPU data is ready but no credit yet;
 *             9 (posted, transSize) at max(ready, credit); stop at arrival + latency (the ack)
 *   receiver: start + 10 when a buffer slot is free (step s − 8 consumed); 11 (transSize) at arrival,
 *             12 after the flush; stop when its GPU has consumed the data
 *   credit  = the receiver's post of that step + latency; arrival = max(post, link free) + bytes / bandwidth + latency
 *   consume = data arrived, GPU free, and room in the buffer it forwards into (back-pressure)
 *   ready   = the data this step forwards was consumed (ring: previous step from the left neighbour; tree: this
 *             step from every child going up, from the parent going down) + GPU work
 * </pre>
 * Faults change the inputs: a slow link scales one direction's bandwidth, a slow GPU delays its rank's start by
 * the compute gap × (1/fraction − 1) and scales its GPU work, congestion scales the bandwidth of the links out of
 * one NIC (its uplink: every rank on that device) with a 2 ms ramp in and out, a NIC going down stalls the
 * transfers through it for {@code failover} (its posted work requests complete with an error then) and moves
 * its QPs to the next device, and a hang makes every GPU action of one rank after the onset never
 * happen (its steps stay in 8 / 12, its peers' in 20 / 10).
 */
public final class ClusterSimulator
{
    /** A time that never comes (a hung rank's). */
    static final long NEVER = Long.MAX_VALUE / 4;

    private static final long COMM_SALT = 0x5eed_c0ffee_1234L;
    private static final int NCCL_STEPS = 8;
    private static final long FLUSH_NS = 1_500;
    private static final long PROXY_NS = 500;
    private static final long KERNEL_POLL_LAG_NS = 3_000;
    private static final int OPCODE_RDMA_WRITE_WITH_IMM = 1;

    private final Scenario scenario;
    private final SplittableRandom random;
    private final EventBuffer buffer = new EventBuffer();
    private final int ranks;
    private final int gpus;
    private final int channels;
    private final long commHash;
    private final long[] hostIds;
    private final long[] hostOffset;
    private final long[] gpuOffset;
    private final List<GroundTruth> truth;

    private long nowNs;
    private long nextIterationNs;
    private long iteration;
    private boolean stalled;
    private long keys = 1;
    private long eventsEmitted;
    private int lastNode = -1;

    // Per-collective scratch, reused.
    private int[] edgeSrc = new int[0];
    private int[] edgeDst = new int[0];
    private int[][] edgePreds = new int[0][];
    private int[] edgePredOffset = new int[0];
    private int[][] edgeSuccs = new int[0][];
    private long[] ready = new long[0];
    private long[] sendPost = new long[0];
    private long[] sendStop = new long[0];
    private long[] recvStart = new long[0];
    private long[] arrive = new long[0];
    private long[] consumed = new long[0];
    private long[] linkFree = new long[0];
    private final long[] rankStart;
    private final boolean[] blocked;
    private final long[] gpuFree;
    private final long[] rankLast;
    private final long[] rankChannelLast;

    public ClusterSimulator(final Scenario scenario)
    {
        this.scenario = scenario;
        random = new SplittableRandom(scenario.seed());
        ranks = scenario.ranks();
        gpus = scenario.gpusPerNode();
        channels = scenario.channels();
        commHash = mix(scenario.seed() ^ COMM_SALT) | 1;
        final int nodes = scenario.nodes();
        hostIds = new long[nodes];
        hostOffset = new long[nodes];
        gpuOffset = new long[nodes];
        final SplittableRandom clocks = new SplittableRandom(scenario.seed() * 31 + 7);
        for (int n = 0; n < nodes; n++)
        {
            hostIds[n] = mix(hostSalt(scenario.hosts()) * 1_000_003L + n);
            hostOffset[n] = scenario.clockOffsets() ? 1_000_000_000L + clocks.nextLong(500_000_000_000L) : 0;
            gpuOffset[n] = 3_000_000_000L + clocks.nextLong(1_000_000_000_000L);
        }
        rankStart = new long[ranks];
        blocked = new boolean[ranks];
        gpuFree = new long[ranks];
        rankLast = new long[ranks];
        rankChannelLast = new long[ranks * channels];
        nextIterationNs = 1_000_000;
        truth = Collections.unmodifiableList(labels());
    }

    public Scenario scenario()
    {
        return scenario;
    }

    /** Simulated time reached by {@link #advanceTo} (events before it were emitted). */
    public long nowNs()
    {
        return nowNs;
    }

    /** The communicator hash of the simulated job (one communicator of all ranks). */
    public long commHash()
    {
        return commHash;
    }

    /** The host id (clock domain) of a node. */
    public long hostId(final int node)
    {
        return hostIds[node];
    }

    /** A simulated node's host name: {@code <hosts>-node-<n>}. */
    public String hostName(final int node)
    {
        return scenario.hosts() + "-node-" + node;
    }

    private static long hostSalt(final String hosts)
    {
        // the default keeps the ids every scenario had before host prefixes; another prefix hashes as ring
        // hostnames do
        return Scenario.DEFAULT_HOSTS.equals(hosts) ? 0x4057L : RingEventSource.hostId(hosts);
    }

    /** Host clock − simulated time of a node (0 unless the scenario asks for clock offsets). */
    public long clockOffsetNs(final int node)
    {
        return hostOffset[node];
    }

    /** The node whose host id this is, or -1. */
    public int nodeOfHost(final long hostId)
    {
        for (int n = 0; n < hostIds.length; n++)
        {
            if (hostIds[n] == hostId)
            {
                return n;
            }
        }
        return -1;
    }

    /** Ground-truth labels of the injected faults. */
    public List<GroundTruth> groundTruth()
    {
        return truth;
    }

    /** Events emitted so far. */
    public long eventsEmitted()
    {
        return eventsEmitted;
    }

    /** True once a hang stopped every rank (no collective can start any more). */
    public boolean stalled()
    {
        return stalled;
    }

    /**
     * Emits every event with simulated time below {@code eventTimeNs} (and below the scenario's duration), in
     * time order, calling {@link TelemetryListener#onHost} whenever the node changes.
     */
    public void advanceTo(final long eventTimeNs, final TelemetryListener out)
    {
        final long until = Math.min(eventTimeNs, scenario.durationNs());
        lastNode = -1; // the listener may have been told of another host between calls
        while (true)
        {
            while (buffer.hasNext() && buffer.nextTime() < until)
            {
                final int node = buffer.nextNode();
                if (node != lastNode)
                {
                    out.onHost(hostIds[node]);
                    lastNode = node;
                }
                buffer.emitNext(out, hostOffset);
                eventsEmitted++;
            }
            if (buffer.hasNext() || stalled || nextIterationNs >= until)
            {
                break;
            }
            buffer.clear();
            generate(nextIterationNs);
            buffer.sort();
        }
        nowNs = Math.max(nowNs, eventTimeNs);
    }

    private List<GroundTruth> labels()
    {
        final List<GroundTruth> out = new ArrayList<>();
        for (final Fault f : scenario.faults())
        {
            final int node = f.node() >= 0 ? f.node() : scenario.nodeOf(f.rank());
            final long off = hostOffset[node];
            final long end = f.durationNs() < 0 ? Long.MAX_VALUE : f.endNs() + off;
            final boolean nic = f.kind() == AnomalyKind.CONGESTION || f.kind() == AnomalyKind.NIC_STALL;
            out.add(new GroundTruth(f.kind(), hostIds[node], nic ? -1 : f.rank(),
                f.kind() == AnomalyKind.SLOW_LINK ? f.peer() : -1, nic ? f.device() : -1, f.atNs() + off, end));
        }
        return out;
    }

    // One collective.

    private void generate(final long startNs)
    {
        final String algo = algoOf(iteration);
        long size = scenario.sizeBytes();
        if (scenario.bursty())
        {
            final int r = random.nextInt(4);
            size = r == 0 ? size / 4 : r == 1 ? size / 2 : r == 2 ? size : size * 2;
        }
        final double gap = drawGap();
        for (int r = 0; r < ranks; r++)
        {
            long s = startNs + (long)(random.nextDouble() * scenario.jitter() * 100_000);
            final double slow = gpuSlowdown(r, s);
            if (slow > 1)
            {
                s += (long)(gap * (slow - 1));
            }
            if (hungBy(r, s) || blocked[r])
            {
                s = NEVER;
            }
            rankStart[r] = s;
            gpuFree[r] = s;
            rankLast[r] = s;
        }
        Arrays.fill(rankChannelLast, 0);

        final int steps;
        final long stepBytes;
        final long perChannel = Math.max(1, size / channels);
        switch (algo)
        {
            case Scenario.ALGO_TREE:
            {
                buildTree();
                final long loops = Math.max(1, ceilDiv(perChannel, scenario.stepBytes()));
                steps = (int)loops;
                stepBytes = ceilDiv(perChannel, loops);
                break;
            }
            case Scenario.ALGO_SENDRECV:
            {
                buildPairs();
                final long loops = Math.max(1, ceilDiv(perChannel, scenario.stepBytes()));
                steps = (int)loops;
                stepBytes = ceilDiv(perChannel, loops);
                break;
            }
            default:
            {
                buildRing();
                final long chunk = Math.max(1, perChannel / ranks);
                final long loops = Math.max(1, ceilDiv(chunk, scenario.stepBytes()));
                steps = (int)(2 * (ranks - 1) * loops);
                stepBytes = ceilDiv(chunk, loops);
            }
        }
        final int edges = edgeSrc.length;
        successors(edges);
        schedule(edges, steps, stepBytes);
        emit(algo, edges, steps, stepBytes, size);

        // A rank that never finished stays in this collective; the others go on to the next one and block there.
        long finish = -1;
        for (int r = 0; r < ranks; r++)
        {
            if (rankLast[r] >= NEVER)
            {
                blocked[r] = true;
            }
            else
            {
                finish = Math.max(finish, rankLast[r]);
            }
        }
        if (finish < 0)
        {
            stalled = true;
            return;
        }
        iteration++;
        nextIterationNs = finish + (long)gap;
    }

    private String algoOf(final long it)
    {
        if (!Scenario.ALGO_MIXED.equals(scenario.algo()))
        {
            return scenario.algo();
        }
        final int k = (int)(it % 3);
        return k == 0 ? Scenario.ALGO_RING : k == 1 ? Scenario.ALGO_TREE : Scenario.ALGO_SENDRECV;
    }

    /** The compute gap before the next collective: exponential around the mean, now and then a long idle gap. */
    private double drawGap()
    {
        final double mean = scenario.gapNs();
        double g = mean * (0.5 + 0.5 * -Math.log(1 - random.nextDouble()));
        if (scenario.jitter() > 0 && random.nextInt(50) == 0)
        {
            g += 1_000_000 + random.nextInt(4_000_000);
        }
        return g;
    }

    private void edges(final int n)
    {
        if (edgeSrc.length != n)
        {
            edgeSrc = new int[n];
            edgeDst = new int[n];
            edgePreds = new int[n][];
            edgePredOffset = new int[n];
        }
    }

    /** Ring: edge r = r → r+1; step s forwards what step s − 1 of the left edge brought. */
    private void buildRing()
    {
        edges(ranks);
        for (int r = 0; r < ranks; r++)
        {
            edgeSrc[r] = r;
            edgeDst[r] = (r + 1) % ranks;
            edgePreds[r] = new int[] {(r - 1 + ranks) % ranks};
            edgePredOffset[r] = -1;
        }
    }

    /** Pairwise exchange: r → r + n/2 (mod n), no dependency between edges. */
    private void buildPairs()
    {
        edges(ranks);
        final int half = Math.max(1, ranks / 2);
        for (int r = 0; r < ranks; r++)
        {
            edgeSrc[r] = r;
            edgeDst[r] = (r + half) % ranks;
            edgePreds[r] = new int[0];
            edgePredOffset[r] = 0;
        }
    }

    /**
     * Binary tree (parent of r = (r − 1) / 2), pipelined: up edges leaves first (each waits for its children's up
     * edges of the same step), then down edges root first (each waits for the edge into its sender).
     */
    private void buildTree()
    {
        final int n = ranks;
        edges(2 * (n - 1));
        final int[] upEdgeOf = new int[n];
        int e = 0;
        for (int r = n - 1; r >= 1; r--)
        {
            upEdgeOf[r] = e;
            edgeSrc[e] = r;
            edgeDst[e] = (r - 1) / 2;
            e++;
        }
        for (int r = n - 1; r >= 1; r--)
        {
            final int edge = upEdgeOf[r];
            final int c1 = 2 * r + 1;
            final int c2 = 2 * r + 2;
            final int k = (c1 < n ? 1 : 0) + (c2 < n ? 1 : 0);
            final int[] preds = new int[k];
            int i = 0;
            if (c1 < n)
            {
                preds[i++] = upEdgeOf[c1];
            }
            if (c2 < n)
            {
                preds[i] = upEdgeOf[c2];
            }
            edgePreds[edge] = preds;
            edgePredOffset[edge] = 0;
        }
        final int[] downEdgeInto = new int[n];
        for (int r = 1; r < n; r++)
        {
            downEdgeInto[r] = e;
            edgeSrc[e] = (r - 1) / 2;
            edgeDst[e] = r;
            final int parent = (r - 1) / 2;
            if (parent == 0)
            {
                final int c1 = 1;
                final int c2 = 2;
                edgePreds[e] = c2 < n ? new int[] {upEdgeOf[c1], upEdgeOf[c2]} : new int[] {upEdgeOf[c1]};
            }
            else
            {
                edgePreds[e] = new int[] {downEdgeInto[parent]};
            }
            edgePredOffset[e] = 0;
            e++;
        }
    }

    /** The edges that forward what each edge brings (the inverse of the predecessor lists). */
    private void successors(final int edges)
    {
        final int[] count = new int[edges];
        for (int e = 0; e < edges; e++)
        {
            for (final int p : edgePreds[e])
            {
                count[p]++;
            }
        }
        edgeSuccs = new int[edges][];
        for (int e = 0; e < edges; e++)
        {
            edgeSuccs[e] = new int[count[e]];
            count[e] = 0;
        }
        for (int e = 0; e < edges; e++)
        {
            for (final int p : edgePreds[e])
            {
                edgeSuccs[p][count[p]++] = e;
            }
        }
    }

    private void scratch(final int n, final int edges)
    {
        if (ready.length < n)
        {
            ready = new long[n];
            sendPost = new long[n];
            sendStop = new long[n];
            recvStart = new long[n];
            arrive = new long[n];
            consumed = new long[n];
        }
        if (linkFree.length < edges)
        {
            linkFree = new long[edges];
        }
    }

    /** The step-by-step recurrence (see the class comment); fills the per (channel, edge, step) times. */
    private void schedule(final int edges, final int steps, final long bytes)
    {
        scratch(channels * edges * steps, edges);
        for (int e = 0; e < edges; e++)
        {
            linkFree[e] = 0;
        }
        for (int s = 0; s < steps; s++)
        {
            for (int c = 0; c < channels; c++)
            {
                for (int e = 0; e < edges; e++)
                {
                    final int src = edgeSrc[e];
                    final int dst = edgeDst[e];
                    final int i = idx(c, e, s, edges, steps);
                    final long opStart = add(rankStart[src], PROXY_NS);
                    final long stepStart = s == 0 ? opStart : Math.max(opStart, sendPost[i - 1]);
                    // GPU data ready.
                    long rd = rankStart[src];
                    final int[] preds = edgePreds[e];
                    final int ps = s + edgePredOffset[e];
                    if (ps >= 0)
                    {
                        for (final int p : preds)
                        {
                            rd = Math.max(rd, consumed[idx(c, p, ps, edges, steps)]);
                        }
                    }
                    rd = add(rd, gpuWork(src, bytes, rd) / 4);
                    if (hungBy(src, rd))
                    {
                        rd = NEVER;
                    }
                    rd = Math.max(rd, stepStart);
                    ready[i] = rd;
                    // Receiver posts the buffer when slot s − 8 was consumed.
                    long rs = add(rankStart[dst], PROXY_NS);
                    if (s > 0)
                    {
                        rs = Math.max(rs, recvStart[i - 1]);
                    }
                    if (s >= NCCL_STEPS)
                    {
                        rs = Math.max(rs, consumed[i - NCCL_STEPS]);
                    }
                    recvStart[i] = rs;
                    final long credit = add(rs, scenario.latencyNs());
                    final long post = Math.max(rd, credit);
                    sendPost[i] = post;
                    // Transfer.
                    if (post >= NEVER)
                    {
                        arrive[i] = NEVER;
                        sendStop[i] = NEVER;
                        consumed[i] = NEVER;
                        continue;
                    }
                    long txStart = Math.max(post, linkFree[e]);
                    final long stall = nicStallUntil(src, dst, txStart);
                    txStart = Math.max(txStart, stall);
                    final double bw = bandwidth(src, dst, txStart);
                    double jit = 1 + scenario.jitter() * (random.nextDouble() - 0.5) * 2;
                    final long tx = Math.max(1, (long)(bytes / bw * 1e9 * jit));
                    linkFree[e] = txStart + tx;
                    final long arr = txStart + tx + scenario.latencyNs();
                    arrive[i] = arr;
                    sendStop[i] = arr + scenario.latencyNs();
                    // Receiver's GPU consumes: the data, the GPU, and room in the buffers it forwards into (the
                    // slot of step s' of each successor edge is free once step s' - 8 there was consumed).
                    long cs = Math.max(arr + FLUSH_NS, gpuFree[dst]);
                    for (final int f : edgeSuccs[e])
                    {
                        final int target = s - edgePredOffset[f] - NCCL_STEPS;
                        if (target >= 0 && s - edgePredOffset[f] < steps)
                        {
                            cs = Math.max(cs, consumed[idx(c, f, target, edges, steps)]);
                        }
                    }
                    cs = add(cs, gpuWork(dst, bytes, cs));
                    if (hungBy(dst, cs))
                    {
                        cs = NEVER;
                    }
                    else
                    {
                        gpuFree[dst] = cs;
                    }
                    consumed[i] = cs;
                }
            }
        }
    }

    private static int idx(final int c, final int e, final int s, final int edges, final int steps)
    {
        return (c * edges + e) * steps + s;
    }

    private void emit(final String algo, final int edges, final int steps, final long bytes, final long size)
    {
        final int func;
        final int algoCode;
        final int proto;
        switch (algo)
        {
            case Scenario.ALGO_TREE: func = Collectives.ALL_REDUCE; algoCode = Collectives.ALGO_TREE;
                proto = Collectives.PROTO_SIMPLE; break;
            case Scenario.ALGO_SENDRECV: func = Collectives.SEND_RECV; algoCode = Collectives.UNKNOWN;
                proto = Collectives.UNKNOWN; break;
            default: func = Collectives.ALL_REDUCE; algoCode = Collectives.ALGO_RING;
                proto = Collectives.PROTO_SIMPLE;
        }
        final long[] collKeys = new long[ranks];
        for (int r = 0; r < ranks; r++)
        {
            final long st = rankStart[r];
            if (st >= NEVER)
            {
                continue;
            }
            final int node = scenario.nodeOf(r);
            collKeys[r] = keys++;
            buffer.collStart(st, node, collKeys[r], commHash, r, ranks, func, algoCode, proto, size / 4, channels,
                iteration);
            buffer.key(st + 8_000, EventBuffer.COLL_STOP, node, collKeys[r]);
        }
        final long opcode = OPCODE_RDMA_WRITE_WITH_IMM;
        for (int c = 0; c < channels; c++)
        {
            for (int e = 0; e < edges; e++)
            {
                final int src = edgeSrc[e];
                final int dst = edgeDst[e];
                final int srcNode = scenario.nodeOf(src);
                final int dstNode = scenario.nodeOf(dst);
                final long sendOp = keys++;
                final long recvOp = keys++;
                final long opSrc = add(rankStart[src], PROXY_NS);
                final long opDst = add(rankStart[dst], PROXY_NS);
                if (opSrc < NEVER)
                {
                    buffer.opStart(opSrc, srcNode, sendOp, commHash, src, dst, c, true);
                }
                if (opDst < NEVER)
                {
                    buffer.opStart(opDst, dstNode, recvOp, commHash, dst, src, c, false);
                }
                long lastSend = opSrc;
                long lastRecv = opDst;
                for (int s = 0; s < steps; s++)
                {
                    final int i = idx(c, e, s, edges, steps);
                    // Sender side.
                    final long stepStart = s == 0 ? opSrc : Math.max(opSrc, sendPost[i - 1]);
                    if (stepStart < NEVER)
                    {
                        final long key = keys++;
                        buffer.stepStart(stepStart, srcNode, key, sendOp, s);
                        buffer.stepState(stepStart, srcNode, key, 8, 0);
                        final long post = sendPost[i];
                        if (ready[i] < NEVER && post > ready[i])
                        {
                            buffer.stepState(ready[i], srcNode, key, 20, 0);
                        }
                        if (post < NEVER)
                        {
                            buffer.stepState(post, srcNode, key, 9, bytes);
                            emitSendWr(i, c, e, src, dst, srcNode, post, bytes, opcode);
                            buffer.key(sendStop[i], EventBuffer.STEP_STOP, srcNode, key);
                            lastSend = sendStop[i];
                            rankLast[src] = Math.max(rankLast[src], sendStop[i]);
                            final int rc = src * channels + c;
                            rankChannelLast[rc] = Math.max(rankChannelLast[rc], sendStop[i]);
                        }
                        else
                        {
                            lastSend = NEVER;
                            rankLast[src] = NEVER;
                        }
                    }
                    // Receiver side.
                    final long rs = recvStart[i];
                    if (rs < NEVER)
                    {
                        final long key = keys++;
                        buffer.stepStart(rs, dstNode, key, recvOp, s);
                        buffer.stepState(rs, dstNode, key, 10, 0);
                        final long wr = keys++;
                        final int dev = device(dst, rs);
                        buffer.qpStart(rs, dstNode, wr, dev, qpNum(e, c, dev, true), -1, 0);
                        final long arr = arrive[i];
                        if (arr < NEVER)
                        {
                            buffer.key(arr, EventBuffer.QP_STOP, dstNode, wr);
                            buffer.stepState(arr, dstNode, key, 11, bytes);
                            buffer.stepState(arr + FLUSH_NS, dstNode, key, 12, 0);
                            final long cs = consumed[i];
                            if (cs < NEVER)
                            {
                                buffer.key(cs, EventBuffer.STEP_STOP, dstNode, key);
                                lastRecv = cs;
                                rankLast[dst] = Math.max(rankLast[dst], cs);
                                final int rc = dst * channels + c;
                                rankChannelLast[rc] = Math.max(rankChannelLast[rc], cs);
                            }
                            else
                            {
                                lastRecv = NEVER;
                                rankLast[dst] = NEVER;
                            }
                        }
                        else
                        {
                            lastRecv = NEVER;
                            rankLast[dst] = NEVER;
                        }
                    }
                    else
                    {
                        lastRecv = NEVER;
                        rankLast[dst] = NEVER;
                    }
                }
                if (lastSend < NEVER)
                {
                    buffer.key(lastSend + PROXY_NS, EventBuffer.OP_STOP, srcNode, sendOp);
                }
                if (lastRecv < NEVER)
                {
                    buffer.key(lastRecv + PROXY_NS, EventBuffer.OP_STOP, dstNode, recvOp);
                }
            }
        }
        // Kernel channels, GPU-timed, seen by the host after a poll lag.
        for (int r = 0; r < ranks; r++)
        {
            final long st = rankStart[r];
            if (st >= NEVER)
            {
                continue;
            }
            final int node = scenario.nodeOf(r);
            for (int c = 0; c < channels; c++)
            {
                final long chKey = keys++;
                final long gpuStart = st + 5_000;
                buffer.kernelChStart(gpuStart + KERNEL_POLL_LAG_NS, node, chKey, collKeys[r], c,
                    gpuStart + gpuOffset[node]);
                final long end = rankLast[r] >= NEVER ? NEVER : Math.max(gpuStart, rankChannelLast[r * channels + c]);
                if (end < NEVER)
                {
                    buffer.kernelChStop(end + KERNEL_POLL_LAG_NS, node, chKey, end + gpuOffset[node]);
                }
            }
        }
        for (int r = 0; r < ranks; r++)
        {
            if (rankLast[r] < NEVER)
            {
                rankLast[r] += PROXY_NS + KERNEL_POLL_LAG_NS;
            }
        }
    }

    /** The send's work request(s): on a NIC that went down, a WR flushed at failover and its repost. */
    private void emitSendWr(final int i, final int c, final int e, final int src, final int dst, final int srcNode,
        final long post, final long bytes, final long opcode)
    {
        final int dev = device(src, post);
        final long wr = keys++;
        buffer.qpStart(post, srcNode, wr, dev, qpNum(e, c, dev, false), (int)opcode, bytes);
        final long stall = nicStallUntil(src, dst, post);
        if (stall > post && device(src, stall) != dev)
        {
            buffer.key(stall, EventBuffer.QP_STOP, srcNode, wr);
            final int dev2 = device(src, stall);
            final long wr2 = keys++;
            buffer.qpStart(stall, srcNode, wr2, dev2, qpNum(e, c, dev2, false), (int)opcode, bytes);
            buffer.key(sendStop[i], EventBuffer.QP_STOP, srcNode, wr2);
        }
        else
        {
            buffer.key(sendStop[i], EventBuffer.QP_STOP, srcNode, wr);
        }
    }

    private long qpNum(final int edge, final int channel, final int device, final boolean recv)
    {
        return 0x100 + ((((long)edge * channels + channel) * 16 + device) << 1) + (recv ? 1 : 0);
    }

    // Faults.

    /** The NIC device of a rank at a time: its own, or the next one while its own is down after failover. */
    private int device(final int rank, final long t)
    {
        final int nics = scenario.nicsPerNode();
        final int own = (rank % gpus) * nics / gpus;
        for (final Fault f : scenario.faults())
        {
            if (f.kind() == AnomalyKind.NIC_STALL && f.node() == scenario.nodeOf(rank) && f.device() == own
                && t >= f.atNs() + scenario.failoverNs() && t < f.endNs() && nics > 1)
            {
                return (own + 1) % nics;
            }
        }
        return own;
    }

    private int ownDevice(final int rank)
    {
        return (rank % gpus) * scenario.nicsPerNode() / gpus;
    }

    /** Until when a transfer starting at t waits for a NIC that went down (failover), or t. */
    private long nicStallUntil(final int src, final int dst, final long t)
    {
        long until = t;
        for (final Fault f : scenario.faults())
        {
            if (f.kind() != AnomalyKind.NIC_STALL)
            {
                continue;
            }
            final boolean uses = (scenario.nodeOf(src) == f.node() && ownDevice(src) == f.device())
                || (scenario.nodeOf(dst) == f.node() && ownDevice(dst) == f.device());
            final long failover = f.atNs() + scenario.failoverNs();
            if (uses && t >= f.atNs() && t < Math.min(failover, f.endNs()))
            {
                until = Math.max(until, Math.min(failover, f.endNs()));
            }
        }
        return until;
    }

    /** Bytes/s of src → dst at time t. */
    private double bandwidth(final int src, final int dst, final long t)
    {
        double bw = scenario.linkBytesPerSecond();
        for (final Fault f : scenario.faults())
        {
            if (!f.activeAt(t))
            {
                continue;
            }
            switch (f.kind())
            {
                case SLOW_LINK:
                    if (f.rank() == src && f.peer() == dst)
                    {
                        bw *= f.fraction();
                    }
                    break;
                case CONGESTION:
                    if (scenario.nodeOf(src) == f.node() && ownDevice(src) == f.device())
                    {
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
    private static double ramp(final Fault f, final long t)
    {
        final double rampNs = 2_000_000;
        final double in = (t - f.atNs()) / rampNs;
        final double out = f.durationNs() < 0 ? 1 : (f.endNs() - t) / rampNs;
        return Math.max(0, Math.min(1, Math.min(in, out)));
    }

    /** GPU slowdown factor of a rank at a time (1 = normal). */
    private double gpuSlowdown(final int rank, final long t)
    {
        double k = 1;
        for (final Fault f : scenario.faults())
        {
            if (f.kind() == AnomalyKind.SLOW_NODE && f.rank() == rank && f.activeAt(t))
            {
                k /= f.fraction();
            }
        }
        return k;
    }

    private long gpuWork(final int rank, final long bytes, final long t)
    {
        if (t >= NEVER)
        {
            return 0;
        }
        final double jit = 1 + scenario.jitter() * (random.nextDouble() - 0.5);
        return (long)(bytes / scenario.gpuBytesPerSecond() * 1e9 * gpuSlowdown(rank, t) * jit);
    }

    private boolean hungBy(final int rank, final long t)
    {
        for (final Fault f : scenario.faults())
        {
            if (f.kind() == AnomalyKind.HANG && f.rank() == rank && t >= f.atNs())
            {
                return true;
            }
        }
        return false;
    }

    private static long add(final long a, final long b)
    {
        return a >= NEVER || b >= NEVER ? NEVER : a + b;
    }

    private static long ceilDiv(final long a, final long b)
    {
        return (a + b - 1) / b;
    }

    static long mix(final long v)
    {
        long z = v + 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
