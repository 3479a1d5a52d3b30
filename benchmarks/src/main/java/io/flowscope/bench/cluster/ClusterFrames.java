package io.flowscope.bench.cluster;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.fleet.CentralSelection;
import io.flowscope.collector.fleet.FleetCodec;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.fleet.wire.FleetWireFrame;
import java.util.function.LongPredicate;

/**
 * What the agents of a block of the simulated cluster's nodes send, period by period, as {@code AgentPublisher}
 * sends it: every summary numbered per node (the node's host name is its agent id, as a node's agent has its own id
 * and seqs), those the agent's {@link CentralSelection} keeps (a node's own communicator stays on the node and is not
 * even made here: a real agent's engines make it, this cost is the publishing; one collective in the spec's
 * {@code every}), partitioned by communicator ({@link FleetCodec#partition}), in binary frames, one per node,
 * partition and period. {@link ClusterAgent} hands the frames to a Kafka producer; tests hand them to aggregators.
 */
public final class ClusterFrames {
    /** Receives one frame of {@code summaries} summaries for a partition. */
    public interface Sink {
        void frame(int partition, int summaries, byte[] frame);
    }

    private final ClusterStream stream;
    private final int from;
    private final int to;
    private final int partitions;
    private final CentralSelection selection;
    private final FleetWireFrame[] frames;
    private final int[] framePartition;
    private final long[] seqs;
    /** Per node: whether the agent makes a communicator's summaries (it keeps node-local ones on the node). */
    private final LongPredicate[] made;

    private final long[] kinds = new long[3];
    private long keptOnNode;
    private int node;
    private Sink sink;

    private final ClusterStream.Out out = new ClusterStream.Out() {
        @Override
        public void flow(final FlowSummary s) {
            final int i = node - from;
            ++seqs[i]; // numbered as the agent numbers its outputs: one left out is a gap
            if (selection.flow(s)) {
                kinds[s.kind() == FlowSummary.KIND_LINK ? 1 : 0]++;
                frames[frameFor(i, FleetCodec.partition(s, partitions))].addFlow(seqs[i], s, stream.hostName(node));
            }
        }

        @Override
        public void collective(final CollectiveSummary s) {
            final int i = node - from;
            ++seqs[i];
            if (selection.collective(s)) {
                kinds[2]++;
                frames[frameFor(i, FleetCodec.partition(s, partitions))].addCollective(seqs[i], s);
            }
        }
    };

    /** Nodes {@code from} to {@code to - 1} of the stream, on a summaries topic of {@code partitions}. */
    public ClusterFrames(final ClusterStream stream, final int from, final int to, final int partitions) {
        this.stream = stream;
        this.from = from;
        this.to = to;
        this.partitions = partitions;
        this.selection = new CentralSelection(false, stream.spec().collectiveEvery());
        this.frames = new FleetWireFrame[to - from];
        this.framePartition = new int[to - from];
        this.seqs = new long[to - from];
        this.made = new LongPredicate[to - from];
        for (int n = from; n < to; n++) {
            frames[n - from] = new FleetWireFrame(new FleetWireEncoder(stream.hostName(n)));
            final long host = stream.hostId(n);
            stream.ranks(n, (comm, rank, nranks) -> selection.onRank(host, comm, rank, nranks));
            made[n - from] = comm -> !selection.keptOnNode(host, comm);
        }
    }

    /** Every node's summaries of period {@code k}, node after node, into {@code sink}. */
    public void period(final long k, final Sink sink) {
        this.sink = sink;
        for (int n = from; n < to; n++) {
            node = n;
            final int kept = stream.node(n, k, out, made[n - from]);
            seqs[n - from] += kept; // numbered all the same: gaps
            keptOnNode += kept;
            flush(n - from);
        }
    }

    /** Receive STEP flows, LINK aggregates and collectives sent so far. */
    public long[] kinds() {
        return kinds.clone();
    }

    /** Summaries of the nodes' own communicators, kept on the nodes so far. */
    public long keptOnNode() {
        return keptOnNode;
    }

    /** Collectives the sampling left out so far. */
    public long sampledOut() {
        return selection.sampledOut();
    }

    /** Node {@code i}'s frame for {@code partition}: the frame it holds for another partition is sent first. */
    private int frameFor(final int i, final int partition) {
        if (frames[i].count() > 0 && framePartition[i] != partition) {
            flush(i);
        }
        framePartition[i] = partition;
        return i;
    }

    private void flush(final int i) {
        if (frames[i].count() > 0) {
            final int summaries = frames[i].count();
            sink.frame(framePartition[i], summaries, frames[i].take());
        }
    }
}
