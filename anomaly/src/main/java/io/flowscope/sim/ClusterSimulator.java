package io.flowscope.sim;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.input.HostIds;
import io.flowscope.api.input.TelemetryListener;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A deterministic cluster simulator: N nodes × G GPUs (one communicator of all ranks, node-major) running ring
 * AllReduce, tree AllReduce and pairwise send/recv over several channels, emitting the events a flowscope ring
 * would carry (Coll, ProxyOp / ProxyStep with NCCL's states, IB QP work requests, KernelCh with GPU timestamps)
 * through a {@link TelemetryListener}, each node as its own host (clock domain).
 * <p>
 * Two models ({@link Scenario#model()}):
 * <ul>
 * <li>{@code classic} ({@link ClassicModel}, the default): collectives one at a time with a barrier between, an op's
 * steps posted one by one, sends waiting for the receiver's credit. The labelled suite and the detectors' tuning
 * rest on it.</li>
 * <li>{@code nccl} ({@link NcclModel}): calibrated on real NCCL 2.28.9 traces (docs/simulator-calibration.md):
 * NCCL's steps per op and step sizes, CPU / GPU / proxy timelines that meet only through data (ops posted
 * collectives ahead, up to 4 steps posted at once, op k + 1 of a connection after op k), the socket transport's
 * proxy delays, the first-step waits a late GPU or CPU causes.</li>
 * </ul>
 * Faults (both models): a slow link scales one direction's bandwidth; a slow GPU stretches its rank's compute gap
 * and GPU work by 1 / fraction (nccl: and keeps it busy {@code delay} before each collective); a late CPU (nccl)
 * calls each collective {@code delay} after its GPU finished the previous one; congestion scales the bandwidth of
 * the links out of one NIC with a 2 ms ramp in and out; a NIC going down stalls the transfers through it for
 * {@code failover} and moves its QPs to the next device; a hang makes every GPU action of one rank after the onset
 * never happen.
 */
public final class ClusterSimulator {
    /** A time that never comes (a hung rank's). */
    static final long NEVER = SimModel.NEVER;

    private static final long COMM_SALT = 0x5eed_c0ffee_1234L;

    private final Scenario scenario;
    private final long commHash;
    private final long[] hostIds;
    private final long[] hostOffset;
    private final List<GroundTruth> truth;
    private final SimModel model;

    public ClusterSimulator(final Scenario scenario) {
        this.scenario = scenario;
        commHash = mix(scenario.seed() ^ COMM_SALT) | 1;
        final int nodes = scenario.nodes();
        hostIds = new long[nodes];
        hostOffset = new long[nodes];
        final long[] gpuOffset = new long[nodes];
        final SplittableRandom clocks = new SplittableRandom(scenario.seed() * 31 + 7);
        for (int n = 0; n < nodes; n++) {
            hostIds[n] = mix(hostSalt(scenario.hosts()) * 1_000_003L + n);
            hostOffset[n] = scenario.epochNs()
                    + (scenario.clockOffsets() ? 1_000_000_000L + clocks.nextLong(500_000_000_000L) : 0);
            gpuOffset[n] = 3_000_000_000L + clocks.nextLong(1_000_000_000_000L);
        }
        model = Scenario.MODEL_NCCL.equals(scenario.model())
                ? new NcclModel(scenario, commHash, hostIds, hostOffset, gpuOffset)
                : new ClassicModel(scenario, commHash, hostIds, hostOffset, gpuOffset);
        truth = Collections.unmodifiableList(labels());
    }

    public Scenario scenario() {
        return scenario;
    }

    /** Simulated time reached by {@link #advanceTo} (events before it were emitted). */
    public long nowNs() {
        return model.nowNs;
    }

    /** The communicator hash of the simulated job (one communicator of all ranks). */
    public long commHash() {
        return commHash;
    }

    /** The host id (clock domain) of a node. */
    public long hostId(final int node) {
        return hostIds[node];
    }

    /** A simulated node's host name: {@code <hosts>-node-<n>}. */
    public String hostName(final int node) {
        return scenario.hosts() + "-node-" + node;
    }

    private static long hostSalt(final String hosts) {
        // the default keeps the ids every scenario had before host prefixes; another prefix hashes as ring
        // hostnames do
        return Scenario.DEFAULT_HOSTS.equals(hosts) ? 0x4057L : HostIds.of(hosts);
    }

    /** Host clock − simulated time of a node (0 unless the scenario asks for clock offsets). */
    public long clockOffsetNs(final int node) {
        return hostOffset[node];
    }

    /** The node whose host id this is, or -1. */
    public int nodeOfHost(final long hostId) {
        for (int n = 0; n < hostIds.length; n++) {
            if (hostIds[n] == hostId) {
                return n;
            }
        }
        return -1;
    }

    /** Ground-truth labels of the injected faults. */
    public List<GroundTruth> groundTruth() {
        return truth;
    }

    /** Events emitted so far. */
    public long eventsEmitted() {
        return model.eventsEmitted;
    }

    /** True once a hang stopped every rank (no collective can start any more). */
    public boolean stalled() {
        return model.stalled;
    }

    /**
     * Emits every event with simulated time below {@code eventTimeNs} (and below the scenario's duration), in
     * time order, calling {@link TelemetryListener#onHost} whenever the node changes.
     */
    public void advanceTo(final long eventTimeNs, final TelemetryListener out) {
        model.advanceTo(eventTimeNs, out);
    }

    private List<GroundTruth> labels() {
        final List<GroundTruth> out = new ArrayList<>();
        for (final Fault f : scenario.faults()) {
            final int node = f.node() >= 0 ? f.node() : scenario.nodeOf(f.rank());
            final long off = hostOffset[node];
            final long end = f.durationNs() < 0 ? Long.MAX_VALUE : f.endNs() + off;
            final boolean nic = f.kind() == AnomalyKind.CONGESTION || f.kind() == AnomalyKind.NIC_STALL;
            out.add(new GroundTruth(
                    f.kind(),
                    hostIds[node],
                    nic ? -1 : f.rank(),
                    f.kind() == AnomalyKind.SLOW_LINK ? f.peer() : -1,
                    nic ? f.device() : -1,
                    f.atNs() + off,
                    end));
        }
        return out;
    }

    private static long mix(final long v) {
        return SimModel.mix(v);
    }
}
