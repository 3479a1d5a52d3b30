package io.flowscope.sim;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.input.TelemetryListener;
import java.util.Arrays;
import org.agrona.collections.Long2LongHashMap;

/**
 * The simulator's NCCL model ({@code model=nccl}), calibrated on real NCCL 2.28.9 traces
 * (docs/simulator-calibration.md).
 * <p>
 * Every rank-to-rank hop is a network connection (one per channel) with its own bandwidth per
 * direction, shared by the channels; a rank's NIC device is its local GPU index × nics / gpus. Each rank has
 * three clocks that meet only through data, as in NCCL:
 * <ul>
 * <li><b>CPU</b>: it calls collective k at E(k) = max(E(k − 1) + cpu, K(k − ahead)): it runs up to {@code ahead}
 * collectives ahead of its GPU, and every {@code sync} collectives waits for every GPU. The call is the Coll event
 * and posts the collective's proxy ops (ProxyOp start), long before their steps.</li>
 * <li><b>GPU</b>: its kernel for k starts at K(k) = max(E(k) + launch, end of its kernel k − 1 + compute gap);
 * one cursor per channel then writes its own slices into send slots (a slot is free once the proxy sent what it
 * held), reduces what it received into the next send, and copies the last received slices out; the kernel ends
 * when every channel is done.</li>
 * <li><b>Proxy</b>: per connection (rank, peer, channel, direction) op k begins when op k − 1 on it stopped; it
 * posts up to {@code W} steps at once (NCCL_STEPS / slice steps: 4 for collectives, 8 for send/recv), step s
 * once step s − W stopped.</li>
 * </ul>
 * <pre>
 *   send:    8 at the post; 20 when the GPU filled the slot (seen by the proxy); 9 (transSize) when the network send
 *            is posted: at once over sockets, on IB once the receiver's buffer is posted (its credit);
 *            stop when the bytes left (socket) or were acknowledged (IB)
 *   receive: 10 at the post; 11 (transSize) when the bytes are in (socket: read out of the socket, which starts
 *            once posted); 12 after the flush; stop when its GPU consumed them
 *   network: a transfer starts at max(9, the link free) and takes bytes / bandwidth (± jitter, slow rate noise);
 *            over sockets the sender is done when the socket took the bytes, and the receiver reads them out at
 *            its own rate, one step after the other
 * </pre>
 * Steps and step sizes are NCCL 2.28's for SIMPLE: a ring AllReduce sends each rank's share of a channel in
 * chunks of at most 4 buffer steps ({@code step}, NCCL's 512 KiB), each chunk as 2 slices (proxy steps), over
 * 2 (n − 1) chunk steps a loop; send/recv moves 128 KiB steps. Over sockets the proxy thread notices GPU and
 * network progress late (exponential delays that grow with the step's bytes) and flushes late; these delays and
 * the socket's read rate are calibrated on the real traces; over IB (the default transport, no real traces yet) the
 * proxy reacts at once and a send waits for its credit.
 * <p>
 * Faults change the inputs: a slow link scales one direction's bandwidth; a slow GPU stretches its rank's compute
 * gap and GPU work by 1 / fraction and keeps its GPU busy {@code delay} more before each collective; a late CPU
 * calls each collective {@code delay} after its GPU finished the previous one; congestion scales the bandwidth of
 * the links out of one NIC (its uplink: every rank on that device) with a 2 ms ramp in and out; a NIC going down
 * stalls the transfers through it for {@code failover} (its posted work requests complete then) and moves its QPs
 * to the next device; a hang makes every GPU action of one rank after the onset never happen (its sends stay in 8,
 * its receives in 12; its peers' receives in 10, and their sends in 8 once their GPUs wait for its data).
 * <p>
 * Events are generated one collective at a time, ahead of the emission: a collective's events all come after its
 * ranks' CPU calls, so whatever lies before the earliest call of the next ungenerated collective is final and is
 * emitted in time order.
 */
final class NcclModel extends SimModel {
    /** NCCL_STEPS: buffer slots per connection. */
    private static final int NCCL_STEPS = 8;
    /** Buffer steps per chunk (ALLREDUCE_CHUNKSTEPS) and per slice, the unit of a proxy step (SLICESTEPS). */
    private static final int CHUNK_STEPS = NCCL_STEPS / 2;

    private static final int SLICE_STEPS = NCCL_STEPS / 4;
    /** NCCL_P2P_NET_CHUNKSIZE: a send/recv proxy step. */
    private static final long P2P_CHUNK = 128 << 10;
    /** Host time of a collective call (Coll START → STOP) and from the call to its ProxyOps' post. */
    private static final long COLL_HOST_NS = 5_000;

    private static final long OP_POST_NS = 12_000;
    /** The earliest a kernel starts after its call (launch), and what a synchronize adds. */
    private static final long LAUNCH_NS = 10_000;

    private static final long SYNC_NS = 60_000;
    /** IB: the receive flush (GDR) and the proxy's reaction time. */
    private static final long IB_FLUSH_NS = 1_500;

    private static final long IB_PROXY_NS = 500;
    /** Op stop after its last step. */
    private static final long OP_STOP_NS = 100;
    /** GPU work per slice, in bytes / gpubw: write own data, reduce a received slice into the next send, copy out. */
    private static final double OWN_WORK = 0.4;

    private static final double FORWARD_WORK = 1.6;
    private static final double FINAL_WORK = 0.35;
    /**
     * Sockets (calibrated on the real traces, docs/simulator-calibration.md). The proxy thread notices a slot
     * filled, a send done or a receive in after {@link #SOCKET_NOTICE_NS} plus an exponential delay of mean
     * {@link #SOCKET_NOTICE_NS_PER_BYTE} × the step's bytes (at most {@link #SOCKET_BUSY_CAP_BYTES} of them: it is
     * busy with the other connections' bytes). It begins a send op after an exponential delay of mean
     * {@link #SOCKET_BEGIN_NS_PER_BYTE} × bytes, or with a receive op of the channel if that comes first, and a
     * receive op ~1 µs after the previous one stopped (one time in 1 / {@link #SOCKET_RECV_BEGIN_LATE} after such a
     * delay too). A transfer costs {@link #SOCKET_TX_NS} on top of bytes / bandwidth on the sender's side; the
     * receiver reads the bytes out of its socket once its receive is posted, at {@link #SOCKET_COPY_BPS}, one step
     * after the other on the link. A receive's flush (11 → 12) takes ~1 µs one time in 1 /
     * {@link #SOCKET_FLUSH_FAST}, else an exponential delay of mean {@link #SOCKET_FLUSH_NS_PER_BYTE} × bytes (at
     * most {@link #SOCKET_FLUSH_CAP_BYTES}; × {@link #SOCKET_FLUSH_LAST} for a loop's last slice, with nothing left
     * to receive). A send is posted to the network {@link #SOCKET_POST_NS} after its slot filled: no credit to wait
     * for, the socket buffers take the bytes.
     */
    private static final long SOCKET_NOTICE_NS = 12_000;

    private static final double SOCKET_NOTICE_NS_PER_BYTE = 0.03;
    private static final long SOCKET_BUSY_CAP_BYTES = 1 << 20;
    private static final double SOCKET_BEGIN_NS_PER_BYTE = 0.2;
    private static final double SOCKET_RECV_BEGIN_LATE = 0.2;
    private static final long SOCKET_TX_NS = 16_000;
    private static final double SOCKET_COPY_BPS = 7e9;
    private static final double SOCKET_FLUSH_NS_PER_BYTE = 0.3;
    private static final double SOCKET_FLUSH_FAST = 0.08;
    private static final double SOCKET_FLUSH_LAST = 0.5;
    private static final long SOCKET_FLUSH_CAP_BYTES = 768 << 10;
    private static final long SOCKET_POST_NS = 200;
    /** Slow network noise: a link's rate factor holds for an epoch of this length (each link its own phase). */
    private static final long NET_EPOCH_NS = 8_000_000;

    private final boolean socket;

    // Across collectives.
    /** Collectives generated: the index of the next one. */
    private long generated;
    /** Each rank's CPU call of the next collective (NEVER: it never calls it). */
    private final long[] cpuCall;
    /** When each rank's GPU finished its previous collective. */
    private final long[] gpuDone;
    /** Kernel starts of each rank's last {@code ahead} collectives: [rank × ahead + k mod ahead]. */
    private final long[] kernelHistory;
    /** Per connection (rank, peer, channel, direction): its last op's stop. */
    private final Long2LongHashMap connFree = new Long2LongHashMap(0);
    /** Per link (src → dst, all channels): the end of its last transfer. */
    private final Long2LongHashMap linkFree = new Long2LongHashMap(0);
    /** Sockets, per link: the end of the receiver's last read out of the socket. */
    private final Long2LongHashMap rxFree = new Long2LongHashMap(0);

    // Per collective, reused.
    private int[] edgeSrc = new int[0];
    private int[] edgeDst = new int[0];
    private int[][] edgePreds = new int[0][];
    private int[][] edgeSuccs = new int[0][];
    private int steps;
    private long stepBytes;
    private int window;
    /** Step s of a non-own send forwards what step s + predOffset of its predecessor edges brought. */
    private int predOffset;
    /** Ring: steps per loop and how many of them at its start carry the sender's own data. */
    private int period;

    private int ownSlices;
    /** GPU actions that copy out a received slice come this many steps after it (ring: with the next chunk). */
    private int finalLag;

    private final long[] call;
    private final long[] kernel;
    private long[] cursor = new long[0];
    private long[] firstRecvBegin = new long[0];
    private long[] beginSend = new long[0];
    private long[] beginRecv = new long[0];
    private long[] prevSendStop = new long[0];
    private long[] post8 = new long[0];
    private long[] at20 = new long[0];
    private long[] at9 = new long[0];
    private long[] sendStop = new long[0];
    private long[] arrive = new long[0];
    private long[] post10 = new long[0];
    private long[] at11 = new long[0];
    private long[] at12 = new long[0];
    private long[] consumed = new long[0];
    private long[] recvStop = new long[0];

    NcclModel(
            final Scenario scenario,
            final long commHash,
            final long[] hostIds,
            final long[] hostOffset,
            final long[] gpuOffset) {
        super(scenario, commHash, hostIds, hostOffset, gpuOffset);
        socket = scenario.socket();
        cpuCall = new long[ranks];
        gpuDone = new long[ranks];
        kernelHistory = new long[ranks * scenario.ahead()];
        call = new long[ranks];
        kernel = new long[ranks];
        Arrays.fill(cpuCall, 1_000_000);
        Arrays.fill(gpuDone, 1_000_000);
    }

    @Override
    void advanceTo(final long eventTimeNs, final TelemetryListener out) {
        final long until = Math.min(eventTimeNs, scenario.durationNs());
        lastNode = -1; // the listener may have been told of another host between calls
        while (true) {
            // Nothing not yet generated can come before the next collective's earliest call.
            final long horizon = horizon();
            emitBefore(Math.min(until, horizon), out);
            if (horizon >= until) {
                break;
            }
            buffer.compact();
            generate();
            buffer.sort();
        }
        nowNs = Math.max(nowNs, eventTimeNs);
    }

    private long horizon() {
        long h = NEVER;
        for (int r = 0; r < ranks; r++) {
            h = Math.min(h, cpuCall[r]);
        }
        stalled = h >= NEVER;
        return h;
    }

    // One collective.

    private void generate() {
        final long k = generated;
        final String algo = algoOf(k);
        long size = scenario.sizeBytes();
        if (scenario.bursty()) {
            final int r = random.nextInt(4);
            size = r == 0 ? size / 4 : r == 1 ? size / 2 : r == 2 ? size : size * 2;
        }
        final double gap = drawGap();
        shape(algo, size);
        final int edges = edgeSrc.length;
        for (int r = 0; r < ranks; r++) {
            call[r] = cpuCall[r];
            kernel[r] = kernelStart(r, gap);
        }
        schedule(edges);
        emit(algo, edges, size);
        afterCollective(k, edges);
        generated++;
    }

    /** Edges, steps per op and step bytes as NCCL 2.28 chooses them (SIMPLE protocol). */
    private void shape(final String algo, final long size) {
        final long perChannel = Math.max(1, size / channels);
        final long bufStep = scenario.stepBytes();
        switch (algo) {
            case Scenario.ALGO_TREE: {
                use(tree);
                final long loops = Math.max(1, ceilDiv(perChannel, bufStep));
                steps = (int) loops;
                stepBytes = ceilDiv(perChannel, loops);
                window = NCCL_STEPS / SLICE_STEPS;
                predOffset = 0;
                period = 1;
                ownSlices = 0;
                finalLag = 0;
                break;
            }
            case Scenario.ALGO_SENDRECV: {
                use(pairs);
                final long loops = Math.max(1, ceilDiv(perChannel, P2P_CHUNK));
                steps = (int) loops;
                stepBytes = ceilDiv(perChannel, loops);
                window = NCCL_STEPS;
                predOffset = 0;
                period = 1;
                ownSlices = 0;
                finalLag = 0;
                break;
            }
            default: {
                // Each rank's share of a channel in chunks of at most CHUNK_STEPS buffer steps, each chunk as
                // CHUNK_STEPS / SLICE_STEPS slices, 2 (n - 1) chunk steps a loop (reduce-scatter, then all-gather).
                use(ring);
                final long share = Math.max(1, ceilDiv(perChannel, ranks));
                final long loops = Math.max(1, ceilDiv(share, CHUNK_STEPS * bufStep));
                final int slices = CHUNK_STEPS / SLICE_STEPS;
                final long chunk = ceilDiv(share, loops);
                stepBytes = Math.max(1, ceilDiv(chunk, slices));
                period = 2 * (ranks - 1) * slices;
                steps = (int) (loops * period);
                window = NCCL_STEPS / SLICE_STEPS;
                predOffset = -slices;
                ownSlices = slices;
                finalLag = slices;
            }
        }
    }

    /** Whether send step s of edge e carries its sender's own data (no received data to forward). */
    private boolean own(final int e, final int s) {
        return edgePreds[e].length == 0 || period > 1 && s % period < ownSlices;
    }

    /** Whether receive step s of edge e is copied out by its receiver, not forwarded. */
    private boolean isFinal(final int e, final int s) {
        if (edgeSuccs[e].length == 0) {
            return true;
        }
        final int f = s - predOffset;
        return f >= steps || period > 1 && f % period < ownSlices;
    }

    /** The kernel start of a rank's collective: after its call's launch and its previous kernel plus the gap. */
    private long kernelStart(final int r, final double gap) {
        final long e = call[r];
        final long done = gpuDone[r];
        final long skew = (long) (random.nextDouble() * scenario.jitter() * 100_000);
        if (e >= NEVER || done >= NEVER) {
            return NEVER;
        }
        long ready = done + (long) (gap * gpuSlowdown(r, done)) + skew;
        for (final Fault f : scenario.faults()) {
            if (f.kind() == AnomalyKind.SLOW_NODE && !f.cpu() && f.rank() == r && f.activeAt(done)) {
                ready += f.delayNs();
            }
        }
        final long start = Math.max(e + LAUNCH_NS, ready);
        return hungBy(r, start) ? NEVER : start;
    }

    /** Cross-collective state after collective k: connections' and GPUs' ends, the CPUs' next calls. */
    private void afterCollective(final long k, final int edges) {
        final int ahead = scenario.ahead();
        for (int r = 0; r < ranks; r++) {
            long done = kernel[r];
            for (int c = 0; c < channels && done < NEVER; c++) {
                done = Math.max(done, cursor[r * channels + c]);
            }
            gpuDone[r] = done;
            kernelHistory[r * ahead + (int) (k % ahead)] = kernel[r];
            long next = add(call[r], scenario.cpuNs());
            final long throttle = k + 1 - ahead;
            if (throttle >= 0) {
                next = Math.max(next, kernelHistory[r * ahead + (int) (throttle % ahead)]);
            }
            for (final Fault f : scenario.faults()) {
                if (f.kind() == AnomalyKind.SLOW_NODE && f.cpu() && f.rank() == r && done < NEVER && f.activeAt(done)) {
                    next = Math.max(next, done + f.delayNs());
                }
            }
            cpuCall[r] = next >= NEVER ? NEVER : next;
        }
        final int sync = scenario.syncEvery();
        if (sync > 0 && (k + 1) % sync == 0) {
            long all = 0;
            for (int r = 0; r < ranks; r++) {
                all = Math.max(all, gpuDone[r]);
            }
            for (int r = 0; r < ranks; r++) {
                cpuCall[r] = Math.max(cpuCall[r], add(all, SYNC_NS));
            }
        }
    }

    private void use(final Topology t) {
        edgeSrc = t.src;
        edgeDst = t.dst;
        edgePreds = t.preds;
        edgeSuccs = t.succs;
    }

    private void scratch(final int n, final int edges) {
        if (post8.length < n) {
            post8 = new long[n];
            at20 = new long[n];
            at9 = new long[n];
            sendStop = new long[n];
            arrive = new long[n];
            post10 = new long[n];
            at11 = new long[n];
            at12 = new long[n];
            consumed = new long[n];
            recvStop = new long[n];
        }
        if (beginSend.length < channels * edges) {
            beginSend = new long[channels * edges];
            beginRecv = new long[channels * edges];
            prevSendStop = new long[channels * edges];
        }
        if (cursor.length < ranks * channels) {
            cursor = new long[ranks * channels];
            firstRecvBegin = new long[ranks * channels];
        }
    }

    private static long sendConn(final int src, final int dst, final int c) {
        return (((long) src << 24 | dst) << 8 | c) << 1 | 1;
    }

    private static long recvConn(final int src, final int dst, final int c) {
        return (((long) dst << 24 | src) << 8 | c) << 1;
    }

    /** The step-by-step recurrence (see the class comment); fills the per (channel, edge, step) times. */
    private void schedule(final int edges) {
        scratch(channels * edges * steps, edges);
        Arrays.fill(consumed, 0, channels * edges * steps, -1);
        Arrays.fill(recvStop, 0, channels * edges * steps, -1);
        for (int r = 0; r < ranks; r++) {
            for (int c = 0; c < channels; c++) {
                cursor[r * channels + c] = kernel[r];
            }
        }
        // Each connection's op begins when its previous op stopped (and after its own post); a rank's proxy begins
        // a send op at the latest when it begins a receive op of the same channel (one pass of its progress loop).
        Arrays.fill(firstRecvBegin, 0, ranks * channels, NEVER);
        for (int c = 0; c < channels; c++) {
            for (int e = 0; e < edges; e++) {
                final int src = edgeSrc[e];
                final int dst = edgeDst[e];
                final int ce = c * edges + e;
                final long prevR = connFree.get(recvConn(src, dst, c));
                beginRecv[ce] = add(Math.max(add(call[dst], OP_POST_NS), prevR), beginLag(false));
                final int rc = dst * channels + c;
                firstRecvBegin[rc] = Math.min(firstRecvBegin[rc], beginRecv[ce]);
            }
        }
        for (int c = 0; c < channels; c++) {
            for (int e = 0; e < edges; e++) {
                final int src = edgeSrc[e];
                final int dst = edgeDst[e];
                final int ce = c * edges + e;
                final long prevS = connFree.get(sendConn(src, dst, c));
                prevSendStop[ce] = prevS;
                final long base = Math.max(add(call[src], OP_POST_NS), prevS);
                final long withRecv = add(firstRecvBegin[src * channels + c], SOCKET_POST_NS);
                beginSend[ce] = Math.max(base, Math.min(add(base, beginLag(true)), withRecv));
            }
        }
        for (int a = 0; a < steps + finalLag; a++) {
            for (int c = 0; c < channels; c++) {
                if (finalLag > 0) {
                    finals(c, a - finalLag, edges);
                }
                if (a < steps) {
                    for (int e = 0; e < edges; e++) {
                        step(c, e, a, edges);
                    }
                }
                if (finalLag == 0) {
                    finals(c, a, edges);
                }
            }
        }
    }

    /** The receivers' GPUs copy out the slices of step s that they do not forward. */
    private void finals(final int c, final int s, final int edges) {
        if (s < 0 || s >= steps) {
            return;
        }
        for (int e = 0; e < edges; e++) {
            if (isFinal(e, s)) {
                final int i = idx(c, e, s, edges);
                consumed[i] = gpu(edgeDst[e], c, at12[i], FINAL_WORK);
                recvStop[i] = add(consumed[i], notice());
            }
        }
    }

    private void step(final int c, final int e, final int s, final int edges) {
        final int src = edgeSrc[e];
        final int dst = edgeDst[e];
        final int i = idx(c, e, s, edges);
        final int ce = c * edges + e;
        // The receiver posts its buffer (a slot is free once step s - W was consumed).
        final long p10 = s < window ? beginRecv[ce] : add(Math.max(beginRecv[ce], recvStop[i - window]), postLag());
        post10[i] = p10;
        // The sender's GPU fills the slot once the proxy sent what it held: its own data, or a received slice.
        final long slotFree = s < window ? prevSendStop[ce] : sendStop[i - window];
        final long ready;
        if (own(e, s)) {
            ready = gpu(src, c, slotFree, OWN_WORK);
        } else {
            long in = slotFree;
            final int ps = s + predOffset;
            for (final int p : edgePreds[e]) {
                in = Math.max(in, at12[idx(c, p, ps, edges)]);
            }
            ready = gpu(src, c, in, FORWARD_WORK);
        }
        final long p8 = s < window ? beginSend[ce] : add(Math.max(beginSend[ce], sendStop[i - window]), postLag());
        post8[i] = p8;
        // The proxy sees the slot filled, and the received slice it was made from consumed, in one pass.
        final long seen = notice();
        final long t20 = add(Math.max(p8, ready), seen);
        if (!own(e, s)) {
            final int ps = s + predOffset;
            for (final int p : edgePreds[e]) {
                final int pi = idx(c, p, ps, edges);
                consumed[pi] = Math.max(consumed[pi], ready);
                recvStop[pi] = Math.max(recvStop[pi], add(ready, seen));
            }
        }
        at20[i] = t20;
        final long t9 = socket ? add(t20, SOCKET_POST_NS) : Math.max(t20, add(p10, scenario.latencyNs()));
        at9[i] = t9;
        if (t9 >= NEVER) {
            sendStop[i] = NEVER;
            arrive[i] = NEVER;
            at11[i] = NEVER;
            at12[i] = NEVER;
            return;
        }
        // The transfer, first in first out on the link.
        final long link = (long) src << 32 | dst;
        long txStart = Math.max(t9, linkFree.get(link));
        txStart = Math.max(txStart, nicStallUntil(src, dst, txStart));
        final double bw = bandwidth(src, dst, txStart) / netNoise(src, dst, txStart);
        final double jit = 1 + scenario.jitter() * (random.nextDouble() - 0.5) * 2;
        final long tx = Math.max(1, (long) (stepBytes / bw * 1e9 * jit)) + (socket ? SOCKET_TX_NS : 0);
        linkFree.put(link, txStart + tx);
        final long arr = txStart + tx + scenario.latencyNs();
        arrive[i] = arr;
        final long t11;
        if (socket) {
            sendStop[i] = txStart + tx + notice();
            // The receiver reads the bytes out of its socket once the receive is posted, one step after the other
            // on the link, at its own rate: its 11 comes after the sender's stop (real: 0.19 ns a byte later).
            if (p10 >= NEVER) {
                t11 = NEVER;
            } else {
                final long rxStart = Math.max(Math.max(txStart + scenario.latencyNs(), p10), rxFree.get(link));
                final long rxEnd = Math.max(arr, rxStart + (long) (stepBytes / SOCKET_COPY_BPS * 1e9));
                rxFree.put(link, rxEnd);
                t11 = rxEnd + notice();
            }
        } else {
            sendStop[i] = arr + scenario.latencyNs();
            t11 = arr;
        }
        at11[i] = t11;
        at12[i] = add(t11, flush(s));
    }

    /** One GPU action of a rank's channel: at the earliest when its cursor is free, {@code work} × bytes / gpubw. */
    private long gpu(final int rank, final int c, final long earliest, final double work) {
        final int rc = rank * channels + c;
        final long start = Math.max(cursor[rc], earliest);
        if (start >= NEVER || hungBy(rank, start)) {
            cursor[rc] = NEVER;
            return NEVER;
        }
        final double jit = 1 + scenario.jitter() * (random.nextDouble() - 0.5);
        final long end =
                start + (long) (work * stepBytes / scenario.gpuBytesPerSecond() * 1e9 * gpuSlowdown(rank, start) * jit);
        cursor[rc] = end;
        return end;
    }

    // Proxy timing: IB reacts at once; over sockets the busy proxy thread notices late (calibrated).

    private long busyBytes() {
        return Math.min(stepBytes, SOCKET_BUSY_CAP_BYTES);
    }

    private long exponential(final double mean) {
        return (long) (-mean * Math.log(1 - random.nextDouble()));
    }

    private long notice() {
        return socket ? SOCKET_NOTICE_NS + exponential(SOCKET_NOTICE_NS_PER_BYTE * busyBytes()) : 0;
    }

    private long postLag() {
        return socket ? 200 + exponential(SOCKET_NOTICE_NS_PER_BYTE * busyBytes()) : 0;
    }

    private long beginLag(final boolean send) {
        if (!socket) {
            return IB_PROXY_NS;
        }
        if (send) {
            return exponential(SOCKET_BEGIN_NS_PER_BYTE * busyBytes());
        }
        return 1_000
                + (random.nextDouble() < SOCKET_RECV_BEGIN_LATE
                        ? exponential(SOCKET_BEGIN_NS_PER_BYTE * busyBytes())
                        : 0);
    }

    /**
     * The receive flush of step s (11 → 12). Over sockets the proxy hands a slice to the GPU late while it still
     * has the loop's other slices to receive: the first slice of a loop waits longest, its last one hardly at all
     * (real 4 MiB: 157, 70, 79, 17 µs at the median for slices 0..3).
     */
    private long flush(final int s) {
        if (!socket) {
            return IB_FLUSH_NS;
        }
        final int pos = period > 1 ? s % period : 1;
        final double weight = period > 1 && pos == period - 1 ? SOCKET_FLUSH_LAST : 1.0;
        return random.nextDouble() < SOCKET_FLUSH_FAST
                ? 1_000
                : exponential(SOCKET_FLUSH_NS_PER_BYTE * Math.min(stepBytes, SOCKET_FLUSH_CAP_BYTES) * weight);
    }

    /** Slow network noise: a log-normal rate factor per link and epoch (deterministic in seed, link and time). */
    private double netNoise(final int src, final int dst, final long t) {
        final double sigma = scenario.netNoise();
        if (sigma <= 0) {
            return 1;
        }
        final long link = mix(scenario.seed() * 0x9E37L + ((long) src << 32 | dst));
        final long epoch = (t + Math.floorMod(link, NET_EPOCH_NS)) / NET_EPOCH_NS;
        final long h = mix(link ^ epoch * 0x632BE59BD9B4E019L);
        // a standard normal from two uniforms of the hash (Box-Muller)
        final double u1 = ((h >>> 11) + 1.0) / (1L << 53);
        final double u2 = (mix(h) >>> 11) / (double) (1L << 53);
        final double z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
        return Math.exp(sigma * z);
    }

    private int idx(final int c, final int e, final int s, final int edges) {
        return (c * edges + e) * steps + s;
    }

    private void emit(final String algo, final int edges, final long size) {
        final long[] collKeys = collStarts(algo, call, size, generated, COLL_HOST_NS);
        final long bytes = stepBytes;
        for (int c = 0; c < channels; c++) {
            for (int e = 0; e < edges; e++) {
                final int src = edgeSrc[e];
                final int dst = edgeDst[e];
                final int srcNode = scenario.nodeOf(src);
                final int dstNode = scenario.nodeOf(dst);
                final long opSrc = add(call[src], OP_POST_NS);
                final long opDst = add(call[dst], OP_POST_NS);
                final long sendOp = opStarts(c, src, dst, opSrc, opDst);
                final long recvOp = sendOp + 1;
                long lastSend = opSrc;
                long lastRecv = opDst;
                for (int s = 0; s < steps; s++) {
                    final int i = idx(c, e, s, edges);
                    // Sender side.
                    final long p8 = post8[i];
                    if (p8 < NEVER) {
                        final long key = keys++;
                        buffer.stepStart(p8, srcNode, key, sendOp, s);
                        buffer.stepState(p8, srcNode, key, 8, 0);
                        if (at20[i] < NEVER) {
                            buffer.stepState(at20[i], srcNode, key, 20, 0);
                        }
                        if (at9[i] < NEVER) {
                            buffer.stepState(at9[i], srcNode, key, 9, bytes);
                            if (!socket) {
                                emitSendWr(c, e, src, dst, srcNode, at9[i], sendStop[i], bytes);
                            }
                            buffer.key(sendStop[i], EventBuffer.STEP_STOP, srcNode, key);
                        }
                    }
                    lastSend = Math.max(lastSend, p8 < NEVER && at9[i] < NEVER ? sendStop[i] : NEVER);
                    // Receiver side.
                    final long p10 = post10[i];
                    if (p10 < NEVER) {
                        final long key = keys++;
                        buffer.stepStart(p10, dstNode, key, recvOp, s);
                        buffer.stepState(p10, dstNode, key, 10, 0);
                        final long arr = arrive[i];
                        if (!socket) {
                            final long wr = keys++;
                            final int dev = device(dst, p10);
                            buffer.qpStart(p10, dstNode, wr, dev, qpNum(e, c, dev, true), -1, 0);
                            if (arr < NEVER) {
                                buffer.key(arr, EventBuffer.QP_STOP, dstNode, wr);
                            }
                        }
                        if (at11[i] < NEVER) {
                            buffer.stepState(at11[i], dstNode, key, 11, bytes);
                            buffer.stepState(at12[i], dstNode, key, 12, 0);
                            if (recvStop[i] < NEVER) {
                                buffer.key(recvStop[i], EventBuffer.STEP_STOP, dstNode, key);
                            }
                        }
                    }
                    lastRecv = Math.max(lastRecv, p10 < NEVER && at11[i] < NEVER ? recvStop[i] : NEVER);
                }
                final long sendOpStop = lastSend < NEVER ? lastSend + OP_STOP_NS : NEVER;
                final long recvOpStop = lastRecv < NEVER ? lastRecv + OP_STOP_NS : NEVER;
                if (sendOpStop < NEVER) {
                    buffer.key(sendOpStop, EventBuffer.OP_STOP, srcNode, sendOp);
                }
                if (recvOpStop < NEVER) {
                    buffer.key(recvOpStop, EventBuffer.OP_STOP, dstNode, recvOp);
                }
                connFree.put(sendConn(src, dst, c), sendOpStop);
                connFree.put(recvConn(src, dst, c), recvOpStop);
            }
        }
        // Kernel channels, GPU-timed, seen by the host after a poll lag.
        for (int r = 0; r < ranks; r++) {
            final long st = kernel[r];
            if (st >= NEVER || call[r] >= NEVER) {
                continue;
            }
            for (int c = 0; c < channels; c++) {
                final long gpuStart = st + 5_000;
                final long end = cursor[r * channels + c];
                kernelChannel(r, c, collKeys[r], gpuStart, end < NEVER ? Math.max(gpuStart, end) : NEVER);
            }
        }
    }
}
