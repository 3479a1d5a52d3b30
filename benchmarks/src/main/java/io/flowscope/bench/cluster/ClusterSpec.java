package io.flowscope.bench.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The simulated cluster of the fleet scale benchmark: {@code nodes} nodes of {@code gpus} GPUs, split into
 * data-parallel groups of {@code groupNodes} nodes (one communicator each, a ring over all the group's GPUs) and one
 * tensor-parallel communicator per node (its GPUs); summaries at {@code periodMs}; injected faults.
 *
 * <p>Spec: comma-separated {@code key=value}: nodes, gpus, group (nodes per data-parallel group), channels, period
 * (ms), seed, template (ms of simulated time each communicator shape is simulated for and then replayed), every (the
 * agents' {@code fleet.collectiveEvery}: one collective in N travels; default 1), faults ({@code ;}-separated
 * {@code kind:group:rank[:peer]@seconds}, kind one of slow-link, slow-gpu, hang).
 *
 * <pre>
 *   nodes=16,gpus=8,group=2,channels=2,period=10,seed=1,faults=slow-link:1:3:4@6;slow-gpu:3:5@6;hang:5:2@6
 * </pre>
 */
public record ClusterSpec(
        int nodes,
        int gpus,
        int groupNodes,
        int channels,
        int periodMs,
        long seed,
        long templateMs,
        int collectiveEvery,
        List<FaultSpec> faults) {

    /** One injected fault: on data-parallel group {@code group}'s communicator, its rank (and peer), from a time. */
    public record FaultSpec(String kind, int group, int rank, int peer, double atSeconds) {
        /** The anomaly kind the single-process service names for it. */
        public String anomalyKind() {
            return switch (kind) {
                case "slow-link" -> "SLOW_LINK";
                case "slow-gpu" -> "SLOW_NODE";
                case "hang" -> "HANG";
                default -> throw new IllegalArgumentException(kind);
            };
        }

        /** The simulator's fault clause, its onset {@code atMs} into the template. */
        String scenarioClause(final long atMs) {
            return switch (kind) {
                case "slow-link" ->
                    ",fault=slow-link,rank=" + rank + ",peer=" + peer + ",fraction=0.4,at=" + atMs + "ms";
                case "slow-gpu" -> ",fault=slow-gpu,rank=" + rank + ",fraction=0.5,at=" + atMs + "ms";
                case "hang" -> ",fault=hang,rank=" + rank + ",at=" + atMs + "ms";
                default -> throw new IllegalArgumentException(kind);
            };
        }

        @Override
        public String toString() {
            return kind + ":" + group + ":" + rank + (peer >= 0 ? ":" + peer : "") + "@" + atSeconds;
        }
    }

    public ClusterSpec {
        if (nodes < 1 || gpus < 2 || groupNodes < 1 || nodes % groupNodes != 0) {
            throw new IllegalArgumentException("cluster: need nodes >= 1, gpus >= 2 and nodes a multiple of group: "
                    + "nodes=" + nodes + ", gpus=" + gpus + ", group=" + groupNodes);
        }
        if (collectiveEvery < 1) {
            throw new IllegalArgumentException("cluster: need every >= 1: every=" + collectiveEvery);
        }
        if (periodMs < 1 || templateMs < 20L * periodMs) {
            throw new IllegalArgumentException("cluster: need period >= 1 ms and template >= 20 periods: period="
                    + periodMs + ", template=" + templateMs);
        }
        for (final FaultSpec f : faults) {
            final int ranks = groupNodes * gpus;
            if (f.group() < 0 || f.group() >= nodes / groupNodes || f.rank() < 0 || f.rank() >= ranks) {
                throw new IllegalArgumentException("cluster: fault " + f + " needs a group 0.."
                        + (nodes / groupNodes - 1) + " and a rank 0.." + (ranks - 1));
            }
            if (f.kind().equals("slow-link") && (f.peer() < 0 || f.peer() >= ranks || f.peer() == f.rank())) {
                throw new IllegalArgumentException("cluster: slow-link fault " + f + " needs another rank as peer");
            }
        }
        faults = List.copyOf(faults);
    }

    public int groups() {
        return nodes / groupNodes;
    }

    public int totalGpus() {
        return nodes * gpus;
    }

    public long periodNs() {
        return periodMs * 1_000_000L;
    }

    /** The fault of a data-parallel group, or null (one per group). */
    public FaultSpec faultOf(final int group) {
        for (final FaultSpec f : faults) {
            if (f.group() == group) {
                return f;
            }
        }
        return null;
    }

    public static ClusterSpec parse(final String spec) {
        int nodes = 16;
        int gpus = 8;
        int group = 2;
        int channels = 2;
        int period = 10;
        long seed = 1;
        long template = 4_000;
        int every = 1;
        final List<FaultSpec> faults = new ArrayList<>();
        for (final String kv : spec.split(",")) {
            if (kv.isBlank()) {
                continue;
            }
            final int eq = kv.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("cluster spec: '" + kv + "' is not key=value");
            }
            final String k = kv.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            final String v = kv.substring(eq + 1).trim();
            switch (k) {
                case "nodes" -> nodes = Integer.parseInt(v);
                case "gpus" -> gpus = Integer.parseInt(v);
                case "group" -> group = Integer.parseInt(v);
                case "channels" -> channels = Integer.parseInt(v);
                case "period" -> period = Integer.parseInt(v);
                case "seed" -> seed = Long.parseLong(v);
                case "template" -> template = Long.parseLong(v);
                case "every" -> every = Integer.parseInt(v);
                case "faults" -> {
                    for (final String f : v.split(";")) {
                        if (!f.isBlank()) {
                            faults.add(fault(f.trim()));
                        }
                    }
                }
                default ->
                    throw new IllegalArgumentException("cluster spec: unknown key '" + k + "' (nodes, gpus, "
                            + "group, channels, period, seed, template, every, faults)");
            }
        }
        return new ClusterSpec(nodes, gpus, group, channels, period, seed, template, every, faults);
    }

    private static FaultSpec fault(final String f) {
        final int at = f.indexOf('@');
        if (at < 0) {
            throw new IllegalArgumentException("cluster spec: fault '" + f + "' is not kind:group:rank[:peer]@seconds");
        }
        final String[] p = f.substring(0, at).split(":");
        final String kind = p[0];
        if (!List.of("slow-link", "slow-gpu", "hang").contains(kind)) {
            throw new IllegalArgumentException("cluster spec: fault kind '" + kind + "' (slow-link, slow-gpu, hang)");
        }
        if (p.length < 3 || (kind.equals("slow-link") != (p.length == 4))) {
            throw new IllegalArgumentException("cluster spec: fault '" + f + "' is not kind:group:rank[:peer]@seconds "
                    + "(a peer for slow-link only)");
        }
        return new FaultSpec(
                kind,
                Integer.parseInt(p[1]),
                Integer.parseInt(p[2]),
                p.length == 4 ? Integer.parseInt(p[3]) : -1,
                Double.parseDouble(f.substring(at + 1)));
    }

    /** The spec back as text (parse of it gives an equal spec). */
    public String text() {
        final StringBuilder b = new StringBuilder();
        b.append("nodes=")
                .append(nodes)
                .append(",gpus=")
                .append(gpus)
                .append(",group=")
                .append(groupNodes);
        b.append(",channels=")
                .append(channels)
                .append(",period=")
                .append(periodMs)
                .append(",seed=")
                .append(seed);
        b.append(",template=").append(templateMs);
        if (collectiveEvery != 1) {
            b.append(",every=").append(collectiveEvery);
        }
        if (!faults.isEmpty()) {
            b.append(",faults=");
            for (int i = 0; i < faults.size(); i++) {
                b.append(i > 0 ? ";" : "").append(faults.get(i));
            }
        }
        return b.toString();
    }
}
