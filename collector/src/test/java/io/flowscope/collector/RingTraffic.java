package io.flowscope.collector;

import static io.flowscope.ring.EventKind.PROXY_OP;
import static io.flowscope.ring.EventKind.PROXY_STEP;

import io.flowscope.ring.NcclState;
import io.flowscope.ring.TestRingWriter;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Writes real ring records (through the profiler module's {@link TestRingWriter}) of one rank of one
 * communicator: ProxyOp / ProxyStep send lifecycles to a peer, with event times chosen by the test.
 */
final class RingTraffic implements AutoCloseable {
    final TestRingWriter writer;
    private final int comm;
    private final TestRingWriter.Draft d = new TestRingWriter.Draft();
    private long serial = 1;

    RingTraffic(
            final Path ring, final int pid, final String host, final long commHash, final int rank, final int nranks)
            throws IOException {
        this(TestRingWriter.builder(ring), pid, host, commHash, rank, nranks);
    }

    private RingTraffic(
            final TestRingWriter.Builder b,
            final int pid,
            final String host,
            final long commHash,
            final int rank,
            final int nranks)
            throws IOException {
        this.writer = b.capacity(1 << 16).pid(pid).hostname(host).create();
        this.comm = writer.comm(commHash, rank, nranks, 1, "world");
    }

    /**
     * A ring stamped with this machine's CLOCK_MONOTONIC, as the plugin's are (its anchors read this process's
     * clocks; event times should then be near {@link System#nanoTime()}).
     */
    static RingTraffic onThisMachine(
            final Path ring, final int pid, final String host, final long commHash, final int rank, final int nranks)
            throws IOException {
        final long mono = System.nanoTime();
        return new RingTraffic(
                TestRingWriter.builder(ring).anchors(System.currentTimeMillis() * 1_000_000L, mono),
                pid,
                host,
                commHash,
                rank,
                nranks);
    }

    private long id(final int kind) {
        return (long) kind << 60 | (long) comm << 48 | serial++;
    }

    /** One ProxyOp of {@code steps} send steps of {@code bytes} each to {@code peer}, one step every stepNs. */
    long sendOp(final int peer, final int channel, final int steps, final int bytes, final long t0, final long stepNs) {
        final long op = id(PROXY_OP.code());
        writer.append(d.start(PROXY_OP, 0, t0, op, 0).proxyOp(1234, peer, steps, bytes, channel, true));
        long t = t0;
        for (int s = 0; s < steps; s++) {
            final long step = id(PROXY_STEP.code());
            t = t0 + 1_000 + s * stepNs;
            writer.append(d.start(PROXY_STEP, 0, t, step, op).proxyStep(s));
            writer.append(d.state(PROXY_STEP, 0, t + 100, step, NcclState.PROXY_STEP_SEND_GPU_WAIT, 0));
            writer.append(d.state(PROXY_STEP, 0, t + 200, step, NcclState.PROXY_STEP_SEND_PEER_WAIT, bytes));
            writer.append(d.state(PROXY_STEP, 0, t + 300, step, NcclState.PROXY_STEP_SEND_WAIT, bytes));
            writer.append(d.stop(PROXY_STEP, 0, t + stepNs - 100, step));
        }
        writer.append(d.stop(PROXY_OP, 0, t + stepNs, op));
        return t + stepNs;
    }

    /**
     * One ProxyOp of {@code steps} receive steps from {@code peer}, one every stepNs; with {@code lastOpen} the
     * last step posts its receive and then waits forever (a peer that stopped sending).
     */
    long recvOp(
            final int peer,
            final int channel,
            final int steps,
            final int bytes,
            final long t0,
            final long stepNs,
            final boolean lastOpen) {
        final long op = id(PROXY_OP.code());
        writer.append(d.start(PROXY_OP, 0, t0, op, 0).proxyOp(1234, peer, steps, bytes, channel, false));
        long t = t0;
        for (int s = 0; s < steps; s++) {
            final long step = id(PROXY_STEP.code());
            t = t0 + 1_000 + s * stepNs;
            writer.append(d.start(PROXY_STEP, 0, t, step, op).proxyStep(s));
            writer.append(d.state(PROXY_STEP, 0, t + 100, step, NcclState.PROXY_STEP_RECV_WAIT, 0));
            if (lastOpen && s == steps - 1) {
                return t;
            }
            writer.append(d.state(PROXY_STEP, 0, t + stepNs / 2, step, NcclState.PROXY_STEP_RECV_FLUSH_WAIT, bytes));
            writer.append(d.state(PROXY_STEP, 0, t + stepNs / 2 + 100, step, NcclState.PROXY_STEP_RECV_GPU_WAIT, 0));
            writer.append(d.stop(PROXY_STEP, 0, t + stepNs - 100, step));
        }
        writer.append(d.stop(PROXY_OP, 0, t + stepNs, op));
        return t + stepNs;
    }

    /** Claims a slot and never publishes it: a producer that died in the middle of a write. */
    void abandonClaim() {
        final long pos = writer.tryClaim(0);
        writer.buffer().putLong(writer.slotOffset(0, pos) + 16, 0xDEADL);
    }

    @Override
    public void close() {
        writer.close();
    }
}
