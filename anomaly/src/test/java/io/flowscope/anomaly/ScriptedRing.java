package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.List;

/**
 * A small, fully explicit ring for the hang and NIC-stall detectors' unit tests: {@code ranks} ranks, each on a
 * host of its own, one channel; every op (every {@link #OP_NS}) each rank receives two steps from its left and
 * sends two to its right, every send also as one RDMA work request on its host's NIC {@code device} (QP
 * 0x100 + rank). Faults, by op number:
 * <ul>
 * <li>{@link #stop}: a rank records nothing from an op on (it stopped calling NCCL); its right neighbour posts its
 * receives and waits, and every rank behind it waits in turn (a blocked rank sends nothing).</li>
 * <li>{@link #nicDown}: a rank's NIC stops completing: its work requests and send steps are posted and never
 * finish, its receiver waits; after {@code failoverOps} the stuck work requests are flushed (as a QP in error
 * state completes them) and its traffic resumes on device 1, a new QP.</li>
 * </ul>
 * Every host's time is told each 1 ms, as the service's idle clock does for a drained host: the window engine
 * ends its period (an idle tick), the anomaly stage ages its stalls.
 */
final class ScriptedRing {
    static final long COMM = 0xfeed_0001L;
    static final long OP_NS = 2_000_000;
    static final long T0 = 1_000_000_000L;
    static final long STEP_BYTES = 256 * 1024;

    final int ranks;
    /** The first op's start on every host's clock. */
    long t0 = T0;

    int stoppedRank = -1;
    int stopFromOp = Integer.MAX_VALUE;
    int stopToOp = Integer.MAX_VALUE;
    int idleFromOp = Integer.MAX_VALUE;
    int idleToOp = Integer.MAX_VALUE;
    /**
     * The ops on either side of an idle gap: the last before it completes its receives in its second period (the
     * host's last before the gap), the first after it waits for its data into its second period (the ranks
     * resume one after another).
     */
    static final long BEFORE_IDLE_DELAY_NS = 500_000L;

    static final long RESUME_DELAY_NS = 1_500_000L;
    int nicRank = -1;
    int nicDownFromOp = Integer.MAX_VALUE;
    int failoverOps = Integer.MAX_VALUE;

    final List<Anomaly> opened = new ArrayList<>();
    final List<Anomaly> updated = new ArrayList<>();
    final List<Anomaly> resolved = new ArrayList<>();
    private long key = 1;
    /** The work requests and send steps a NIC that went down holds: flushed at the failover. */
    private final List<long[]> stuck = new ArrayList<>();

    ScriptedRing(final int ranks) {
        this.ranks = ranks;
    }

    static long hostOf(final int rank) {
        return 0x4057_0000L + rank;
    }

    /** Rank {@code rank} records nothing from op {@code from} until op {@code to} (exclusive). */
    ScriptedRing stop(final int rank, final int from, final int to) {
        stoppedRank = rank;
        stopFromOp = from;
        stopToOp = to;
        return this;
    }

    /** No rank calls NCCL from op {@code from} until op {@code to} (a job pausing: a checkpoint), time goes on. */
    ScriptedRing idle(final int from, final int to) {
        idleFromOp = from;
        idleToOp = to;
        return this;
    }

    /** Rank {@code rank}'s NIC stops completing at op {@code from}; traffic moves to the next NIC after some ops. */
    ScriptedRing nicDown(final int rank, final int from, final int failoverAfterOps) {
        nicRank = rank;
        nicDownFromOp = from;
        failoverOps = failoverAfterOps;
        return this;
    }

    /** Runs {@code ops} operations through a window engine into an anomaly engine with {@code config}. */
    ScriptedRing run(final int ops, final AnomalyConfig config) {
        final AnomalyEngine stage = new AnomalyEngine(config, AnomalySink.of((type, a) -> {
            switch (type) {
                case AnomalySink.OPENED -> opened.add(a);
                case AnomalySink.UPDATED -> updated.add(a);
                default -> resolved.add(a);
            }
        }));
        return feed(ops, stage);
    }

    /** Runs {@code ops} operations through a window engine into {@code stage}. */
    ScriptedRing feed(final int ops, final AnomalyStage stage) {
        final WindowEngine engine = new WindowEngine(new WindowConfig().periodNs(1_000_000), stage, stage);
        for (int op = 0; op < ops; op++) {
            final long start = t0 + op * OP_NS;
            // A rank blocks when its left neighbour sent nothing this op (stopped, or blocked itself).
            final boolean[] blocked = new boolean[ranks];
            if (stopped(op)) {
                for (int k = 1; k < ranks; k++) {
                    blocked[(stoppedRank + k) % ranks] = true;
                }
            }
            for (int r = 0; r < ranks && !(op >= idleFromOp && op < idleToOp); r++) {
                if (r == stoppedRank && stopped(op)) {
                    continue;
                }
                engine.onHost(hostOf(r));
                emitOp(engine, op, r, start, blocked[r]);
            }
            for (int ms = 0; ms < OP_NS / 1_000_000; ms++) {
                for (int r = 0; r < ranks; r++) {
                    // As the service's idle clock does for a drained host: the window engine ends its periods, the
                    // anomaly stage ages its stalls.
                    final long t = start + (ms + 1) * 1_000_000L;
                    engine.onHost(hostOf(r));
                    engine.advanceTo(hostOf(r), t);
                    stage.advanceTo(hostOf(r), t);
                }
            }
        }
        return this;
    }

    private boolean stopped(final int op) {
        return op >= stopFromOp && op < stopToOp;
    }

    private void emitOp(final WindowEngine e, final int op, final int r, final long start, final boolean blocked) {
        final int left = (r + ranks - 1) % ranks;
        final int right = (r + 1) % ranks;
        final long recvOp = key++;
        e.onProxyOpStart(recvOp, COMM, r, left, 0, false, start);
        // The data of the receive comes when its sender's send completes: a NIC that went down holds it.
        final boolean leftNicDown = left == nicRank && nicDown(op);
        for (int s = 0; s < 2; s++) {
            final long step = key++;
            e.onProxyStepStart(step, recvOp, s, start + 10_000);
            e.onProxyStepState(step, 10, 0, start + 11_000);
            if (!blocked && !leftNicDown) {
                final long arrive = start
                        + 300_000
                        + s * 200_000L
                        + (op == idleToOp ? RESUME_DELAY_NS : op == idleFromOp - 1 ? BEFORE_IDLE_DELAY_NS : 0);
                e.onProxyStepState(step, 11, STEP_BYTES, arrive);
                e.onProxyStepState(step, 12, STEP_BYTES, arrive + 5_000);
                e.onProxyStepStop(step, arrive + 50_000);
            }
        }
        if (!blocked && !leftNicDown) {
            e.onProxyOpStop(recvOp, start + 1_500_000);
        }
        if (blocked) {
            return;
        }
        final long sendOp = key++;
        e.onProxyOpStart(sendOp, COMM, r, right, 0, true, start);
        final boolean down = r == nicRank && nicDown(op);
        final boolean failedOver = r == nicRank && op >= nicDownFromOp + failoverOps;
        if (r == nicRank && op == nicDownFromOp + failoverOps) {
            for (final long[] held : stuck) {
                e.onQpStop(held[0], start);
                e.onProxyStepStop(held[1], start);
            }
            stuck.clear();
        }
        final int device = failedOver ? 1 : 0;
        final long qp = failedOver ? 0x200 + r : 0x100 + r;
        for (int s = 0; s < 2; s++) {
            final long step = key++;
            final long wr = key++;
            final long posted = start + 100_000 + s * 200_000L;
            e.onProxyStepStart(step, sendOp, s, start + 10_000);
            e.onProxyStepState(step, 8, 0, start + 11_000);
            e.onProxyStepState(step, 9, STEP_BYTES, posted);
            e.onQpStart(wr, device, qp, 0, STEP_BYTES, posted + 1_000);
            if (!down) {
                e.onQpStop(wr, posted + 150_000);
                e.onProxyStepStop(step, posted + 160_000);
            } else {
                stuck.add(new long[] {wr, step});
            }
        }
        if (!down) {
            e.onProxyOpStop(sendOp, start + 1_500_000);
        }
    }

    private boolean nicDown(final int op) {
        return op >= nicDownFromOp && op < nicDownFromOp + failoverOps;
    }

    /** The opened anomalies of one kind. */
    List<Anomaly> opened(final AnomalyKind kind) {
        return opened.stream().filter(a -> a.kind() == kind).toList();
    }
}
