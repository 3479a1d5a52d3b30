package io.flowscope.bench.cluster;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.pipeline.AnomalyStages;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The single-process service's verdict on the cluster's stream: the summaries of the chosen nodes fed in-process to
 * one {@link AnomalyStages#create} stage, as the aggregator applies a record (a flow, then its host advanced to the
 * flow's period start; a collective), period after period and node after node. Nodes are independent in the stage
 * (state per communicator and host), so the faulty groups' nodes and a few healthy ones stand for the whole
 * cluster when it is too large to replay in one process.
 */
public final class ClusterReference {
    /** An anomaly as both sides name it: kind and culprit (host, communicator, rank, peer), and its times. */
    public record Named(String kind, long host, long comm, int rank, int peer, long startNs, long detectedNs) {
        /** What must agree between the reference and the aggregators. */
        public String identity() {
            return String.format(Locale.ROOT, "%s host=%x comm=%x rank=%d peer=%d", kind, host, comm, rank, peer);
        }

        static Named of(final Anomaly a) {
            return new Named(
                    a.kind().name(),
                    a.culprit().hostId(),
                    a.culprit().commHash(),
                    a.culprit().rank(),
                    a.culprit().peer(),
                    a.startNs(),
                    a.detectedNs());
        }
    }

    private ClusterReference() {}

    /** The anomalies the stage opens over {@code periods} periods of these nodes (in order). */
    public static List<Named> opened(final ClusterStream stream, final int[] nodes, final long periods) {
        final List<Named> out = new ArrayList<>();
        final AnomalyStage stage = AnomalyStages.create(AnomalySink.of((type, a) -> {
            if (type.equals(AnomalySink.OPENED)) {
                out.add(Named.of(a));
            }
        }));
        final ClusterStream.Out feed = new ClusterStream.Out() {
            @Override
            public void flow(final FlowSummary s) {
                stage.onSummary(s);
                stage.advanceTo(s.hostId(), s.periodStartNs());
            }

            @Override
            public void collective(final CollectiveSummary s) {
                stage.onCollective(s);
            }
        };
        for (long k = 0; k < periods; k++) {
            for (final int n : nodes) {
                stream.node(n, k, feed);
            }
        }
        return out;
    }

    /** The nodes the reference replays: every node of the faulty groups and of group 0 (or all, if few). */
    public static int[] nodes(final ClusterSpec spec, final int allUpTo) {
        if (spec.nodes() <= allUpTo) {
            final int[] all = new int[spec.nodes()];
            for (int n = 0; n < all.length; n++) {
                all[n] = n;
            }
            return all;
        }
        final java.util.TreeSet<Integer> groups = new java.util.TreeSet<>();
        groups.add(0);
        spec.faults().forEach(f -> groups.add(f.group()));
        final List<Integer> out = new ArrayList<>();
        for (final int g : groups) {
            for (int j = 0; j < spec.groupNodes(); j++) {
                out.add(g * spec.groupNodes() + j);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The anomaly of {@code named} that names this injected fault (kind, communicator, rank, peer), or null. */
    public static Named naming(final ClusterStream stream, final ClusterSpec.FaultSpec f, final List<Named> named) {
        final long comm = stream.groupComm(f.group());
        for (final Named a : named) {
            if (a.kind().equals(f.anomalyKind())
                    && a.comm() == comm
                    && a.rank() == f.rank()
                    && (!f.kind().equals("slow-link") || a.peer() == f.peer())) {
                return a;
            }
        }
        return null;
    }
}
