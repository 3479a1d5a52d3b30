package io.flowscope.sim;

import io.flowscope.api.input.TelemetryListener;
import java.util.Arrays;

/**
 * The simulator's first model ({@code model=classic}), kept for the labelled suite its detectors were tuned on:
 * collectives run one at a time with a barrier and a compute gap between them (every rank starts each at about the
 * same time), an op's steps are posted one after the other, a receive when its slot is free (step s − 8 consumed),
 * and a send waits for the receiver's credit. Steps are at most {@code step} bytes (ring: 2 (n − 1) × loops steps
 * of size / channels / n). See docs/simulator-calibration.md for how it compares with real NCCL and with
 * {@link NcclModel}.
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
 */
final class ClassicModel extends SimModel {
    private static final int NCCL_STEPS = 8;
    private static final long FLUSH_NS = 1_500;
    private static final long PROXY_NS = 500;

    private long nextIterationNs;
    private long iteration;

    // Per-collective scratch, reused.
    /** The pattern of the collective being scheduled ({@link SimModel#ring}, {@link SimModel#tree} ...). */
    private int[] edgeSrc = new int[0];

    private int[] edgeDst = new int[0];
    private int[][] edgePreds = new int[0][];
    private int[][] edgeSuccs = new int[0][];
    /** Step s of an edge forwards what step s + predOffset of its predecessors brought (ring: the step before). */
    private int predOffset;

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

    ClassicModel(
            final Scenario scenario,
            final long commHash,
            final long[] hostIds,
            final long[] hostOffset,
            final long[] gpuOffset) {
        super(scenario, commHash, hostIds, hostOffset, gpuOffset);
        rankStart = new long[ranks];
        blocked = new boolean[ranks];
        gpuFree = new long[ranks];
        rankLast = new long[ranks];
        rankChannelLast = new long[ranks * channels];
        nextIterationNs = 1_000_000;
    }

    @Override
    void advanceTo(final long eventTimeNs, final TelemetryListener out) {
        final long until = Math.min(eventTimeNs, scenario.durationNs());
        lastNode = -1; // the listener may have been told of another host between calls
        while (true) {
            emitBefore(until, out);
            if (buffer.hasNext() || stalled || nextIterationNs >= until) {
                break;
            }
            buffer.clear();
            generate(nextIterationNs);
            buffer.sort();
        }
        nowNs = Math.max(nowNs, eventTimeNs);
    }

    // One collective.

    private void generate(final long startNs) {
        final String algo = algoOf(iteration);
        long size = scenario.sizeBytes();
        if (scenario.bursty()) {
            final int r = random.nextInt(4);
            size = r == 0 ? size / 4 : r == 1 ? size / 2 : r == 2 ? size : size * 2;
        }
        final double gap = drawGap();
        for (int r = 0; r < ranks; r++) {
            long s = startNs + (long) (random.nextDouble() * scenario.jitter() * 100_000);
            final double slow = gpuSlowdown(r, s);
            if (slow > 1) {
                s += (long) (gap * (slow - 1));
            }
            if (hungBy(r, s) || blocked[r]) {
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
        switch (algo) {
            case Scenario.ALGO_TREE: {
                use(tree, 0);
                final long loops = Math.max(1, ceilDiv(perChannel, scenario.stepBytes()));
                steps = (int) loops;
                stepBytes = ceilDiv(perChannel, loops);
                break;
            }
            case Scenario.ALGO_SENDRECV: {
                use(pairs, 0);
                final long loops = Math.max(1, ceilDiv(perChannel, scenario.stepBytes()));
                steps = (int) loops;
                stepBytes = ceilDiv(perChannel, loops);
                break;
            }
            default: {
                use(ring, -1);
                final long chunk = Math.max(1, perChannel / ranks);
                final long loops = Math.max(1, ceilDiv(chunk, scenario.stepBytes()));
                steps = (int) (2 * (ranks - 1) * loops);
                stepBytes = ceilDiv(chunk, loops);
            }
        }
        final int edges = edgeSrc.length;
        schedule(edges, steps, stepBytes);
        emit(algo, edges, steps, stepBytes, size);

        // A rank that never finished stays in this collective; the others go on to the next one and block there.
        long finish = -1;
        for (int r = 0; r < ranks; r++) {
            if (rankLast[r] >= NEVER) {
                blocked[r] = true;
            } else {
                finish = Math.max(finish, rankLast[r]);
            }
        }
        if (finish < 0) {
            stalled = true;
            return;
        }
        iteration++;
        nextIterationNs = finish + (long) gap;
    }

    private void use(final Topology t, final int offset) {
        edgeSrc = t.src;
        edgeDst = t.dst;
        edgePreds = t.preds;
        edgeSuccs = t.succs;
        predOffset = offset;
    }

    private void scratch(final int n, final int edges) {
        if (ready.length < n) {
            ready = new long[n];
            sendPost = new long[n];
            sendStop = new long[n];
            recvStart = new long[n];
            arrive = new long[n];
            consumed = new long[n];
        }
        if (linkFree.length < edges) {
            linkFree = new long[edges];
        }
    }

    /** The step-by-step recurrence (see the class comment); fills the per (channel, edge, step) times. */
    private void schedule(final int edges, final int steps, final long bytes) {
        scratch(channels * edges * steps, edges);
        for (int e = 0; e < edges; e++) {
            linkFree[e] = 0;
        }
        for (int s = 0; s < steps; s++) {
            for (int c = 0; c < channels; c++) {
                for (int e = 0; e < edges; e++) {
                    final int src = edgeSrc[e];
                    final int dst = edgeDst[e];
                    final int i = idx(c, e, s, edges, steps);
                    final long opStart = add(rankStart[src], PROXY_NS);
                    final long stepStart = s == 0 ? opStart : Math.max(opStart, sendPost[i - 1]);
                    // GPU data ready.
                    long rd = rankStart[src];
                    final int[] preds = edgePreds[e];
                    final int ps = s + predOffset;
                    if (ps >= 0) {
                        for (final int p : preds) {
                            rd = Math.max(rd, consumed[idx(c, p, ps, edges, steps)]);
                        }
                    }
                    rd = add(rd, gpuWork(src, bytes, rd) / 4);
                    if (hungBy(src, rd)) {
                        rd = NEVER;
                    }
                    rd = Math.max(rd, stepStart);
                    ready[i] = rd;
                    // Receiver posts the buffer when slot s − 8 was consumed.
                    long rs = add(rankStart[dst], PROXY_NS);
                    if (s > 0) {
                        rs = Math.max(rs, recvStart[i - 1]);
                    }
                    if (s >= NCCL_STEPS) {
                        rs = Math.max(rs, consumed[i - NCCL_STEPS]);
                    }
                    recvStart[i] = rs;
                    final long credit = add(rs, scenario.latencyNs());
                    final long post = Math.max(rd, credit);
                    sendPost[i] = post;
                    // Transfer.
                    if (post >= NEVER) {
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
                    final long tx = Math.max(1, (long) (bytes / bw * 1e9 * jit));
                    linkFree[e] = txStart + tx;
                    final long arr = txStart + tx + scenario.latencyNs();
                    arrive[i] = arr;
                    sendStop[i] = arr + scenario.latencyNs();
                    // Receiver's GPU consumes: the data, the GPU, and room in the buffers it forwards into (the
                    // slot of step s' of each successor edge is free once step s' - 8 there was consumed).
                    long cs = Math.max(arr + FLUSH_NS, gpuFree[dst]);
                    for (final int f : edgeSuccs[e]) {
                        final int target = s - predOffset - NCCL_STEPS;
                        if (target >= 0 && s - predOffset < steps) {
                            cs = Math.max(cs, consumed[idx(c, f, target, edges, steps)]);
                        }
                    }
                    cs = add(cs, gpuWork(dst, bytes, cs));
                    if (hungBy(dst, cs)) {
                        cs = NEVER;
                    } else {
                        gpuFree[dst] = cs;
                    }
                    consumed[i] = cs;
                }
            }
        }
    }

    private static int idx(final int c, final int e, final int s, final int edges, final int steps) {
        return (c * edges + e) * steps + s;
    }

    private void emit(final String algo, final int edges, final int steps, final long bytes, final long size) {
        final long[] collKeys = collStarts(algo, rankStart, size, iteration, 8_000);
        for (int c = 0; c < channels; c++) {
            for (int e = 0; e < edges; e++) {
                final int src = edgeSrc[e];
                final int dst = edgeDst[e];
                final int srcNode = scenario.nodeOf(src);
                final int dstNode = scenario.nodeOf(dst);
                final long opSrc = add(rankStart[src], PROXY_NS);
                final long opDst = add(rankStart[dst], PROXY_NS);
                final long sendOp = opStarts(c, src, dst, opSrc, opDst);
                final long recvOp = sendOp + 1;
                long lastSend = opSrc;
                long lastRecv = opDst;
                for (int s = 0; s < steps; s++) {
                    final int i = idx(c, e, s, edges, steps);
                    // Sender side.
                    final long stepStart = s == 0 ? opSrc : Math.max(opSrc, sendPost[i - 1]);
                    if (stepStart < NEVER) {
                        final long key = keys++;
                        buffer.stepStart(stepStart, srcNode, key, sendOp, s);
                        buffer.stepState(stepStart, srcNode, key, 8, 0);
                        final long post = sendPost[i];
                        if (ready[i] < NEVER && post > ready[i]) {
                            buffer.stepState(ready[i], srcNode, key, 20, 0);
                        }
                        if (post < NEVER) {
                            buffer.stepState(post, srcNode, key, 9, bytes);
                            emitSendWr(c, e, src, dst, srcNode, post, sendStop[i], bytes);
                            buffer.key(sendStop[i], EventBuffer.STEP_STOP, srcNode, key);
                            lastSend = sendStop[i];
                            rankLast[src] = Math.max(rankLast[src], sendStop[i]);
                            final int rc = src * channels + c;
                            rankChannelLast[rc] = Math.max(rankChannelLast[rc], sendStop[i]);
                        } else {
                            lastSend = NEVER;
                            rankLast[src] = NEVER;
                        }
                    }
                    // Receiver side.
                    final long rs = recvStart[i];
                    if (rs < NEVER) {
                        final long key = keys++;
                        buffer.stepStart(rs, dstNode, key, recvOp, s);
                        buffer.stepState(rs, dstNode, key, 10, 0);
                        final long wr = keys++;
                        final int dev = device(dst, rs);
                        buffer.qpStart(rs, dstNode, wr, dev, qpNum(e, c, dev, true), -1, 0);
                        final long arr = arrive[i];
                        if (arr < NEVER) {
                            buffer.key(arr, EventBuffer.QP_STOP, dstNode, wr);
                            buffer.stepState(arr, dstNode, key, 11, bytes);
                            buffer.stepState(arr + FLUSH_NS, dstNode, key, 12, 0);
                            final long cs = consumed[i];
                            if (cs < NEVER) {
                                buffer.key(cs, EventBuffer.STEP_STOP, dstNode, key);
                                lastRecv = cs;
                                rankLast[dst] = Math.max(rankLast[dst], cs);
                                final int rc = dst * channels + c;
                                rankChannelLast[rc] = Math.max(rankChannelLast[rc], cs);
                            } else {
                                lastRecv = NEVER;
                                rankLast[dst] = NEVER;
                            }
                        } else {
                            lastRecv = NEVER;
                            rankLast[dst] = NEVER;
                        }
                    } else {
                        lastRecv = NEVER;
                        rankLast[dst] = NEVER;
                    }
                }
                if (lastSend < NEVER) {
                    buffer.key(lastSend + PROXY_NS, EventBuffer.OP_STOP, srcNode, sendOp);
                }
                if (lastRecv < NEVER) {
                    buffer.key(lastRecv + PROXY_NS, EventBuffer.OP_STOP, dstNode, recvOp);
                }
            }
        }
        // Kernel channels, GPU-timed, seen by the host after a poll lag.
        for (int r = 0; r < ranks; r++) {
            final long st = rankStart[r];
            if (st >= NEVER) {
                continue;
            }
            for (int c = 0; c < channels; c++) {
                final long gpuStart = st + 5_000;
                kernelChannel(
                        r,
                        c,
                        collKeys[r],
                        gpuStart,
                        rankLast[r] >= NEVER ? NEVER : Math.max(gpuStart, rankChannelLast[r * channels + c]));
            }
        }
        for (int r = 0; r < ranks; r++) {
            if (rankLast[r] < NEVER) {
                rankLast[r] += PROXY_NS + KERNEL_POLL_LAG_NS;
            }
        }
    }

    private long gpuWork(final int rank, final long bytes, final long t) {
        if (t >= NEVER) {
            return 0;
        }
        final double jit = 1 + scenario.jitter() * (random.nextDouble() - 0.5);
        return (long) (bytes / scenario.gpuBytesPerSecond() * 1e9 * gpuSlowdown(rank, t) * jit);
    }
}
