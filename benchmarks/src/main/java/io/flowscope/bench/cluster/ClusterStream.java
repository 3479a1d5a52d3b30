package io.flowscope.bench.cluster;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.Scenario;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the agents of a large simulated cluster publish with {@code fleet.publish = central}: receive STEP flows,
 * LINK aggregates and collective summaries, per node and period, generated deterministically at the summary level
 * (the event simulator cannot make 16,384 GPUs' events; the window engine's cost per node is measured apart).
 *
 * <p>How: each communicator shape is simulated once for {@link ClusterSpec#templateMs()} by the event simulator
 * ({@link ClusterSimulator}, the classic model the detection tests use) through the service's own {@link Pipeline}
 * (window engine at the spec's period, journaled-style 1 ms idle ticks for every host), keeping the central subset:
 * a healthy data-parallel group of {@code group × gpus} ranks, a tensor-parallel node of {@code gpus} ranks, and one
 * run per injected fault (the same seed as the healthy group, the fault a quarter into the run, so it is identical
 * to the healthy run until the onset). Every group and node replays its template with its own host ids, host names
 * and communicator hash, in loops shifted in time (and collective sequence numbers) by the template's length. A
 * faulty group replays the healthy template until the loop where its fault falls, then the fault's run, then the
 * fault run's second half over and over (a slow link stays slow, a hung rank stays hung). Same spec, same stream.
 */
public final class ClusterStream {
    /** Receives one node's summaries of one period, in the agent's order; the instances are reused. */
    public interface Out {
        void flow(FlowSummary s);

        void collective(CollectiveSummary s);
    }

    /** One communicator shape simulated once: the central subset by period and node. */
    static final class Template {
        final int periods;
        final List<List<List<FlowSummary>>> flows = new ArrayList<>();
        final List<List<List<CollectiveSummary>>> collectives = new ArrayList<>();
        long seqMin = Long.MAX_VALUE;
        long seqMax = Long.MIN_VALUE;
        /** Sequence numbers of the second half's collectives (the part a fault's run repeats). */
        long tailSeqMin = Long.MAX_VALUE;

        long tailSeqMax = Long.MIN_VALUE;
        long summaries;

        Template(final String scenario, final int nodes, final int periodMs, final long durationMs) {
            periods = (int) (durationMs / periodMs);
            for (int p = 0; p < periods; p++) {
                final List<List<FlowSummary>> f = new ArrayList<>();
                final List<List<CollectiveSummary>> c = new ArrayList<>();
                for (int n = 0; n < nodes; n++) {
                    f.add(new ArrayList<>());
                    c.add(new ArrayList<>());
                }
                flows.add(f);
                collectives.add(c);
            }
            final Scenario s = Scenario.parse(scenario + ",duration=" + (durationMs + 2L * periodMs) + "ms");
            final ClusterSimulator sim = new ClusterSimulator(s);
            final Map<Long, Integer> nodeOf = new HashMap<>();
            for (int n = 0; n < nodes; n++) {
                nodeOf.put(sim.hostId(n), n);
                if (sim.clockOffsetNs(n) != 0) {
                    throw new IllegalStateException("cluster: templates need host clocks at 0: " + scenario);
                }
            }
            final long periodNs = periodMs * 1_000_000L;
            final CollectorConfig config =
                    CollectorConfig.load(null, Map.of(), Map.of("window.periodMs", Integer.toString(periodMs)));
            final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {});
            p.tap(
                    f -> {
                        final int period = (int) (f.periodStartNs() / periodNs);
                        if (FleetWire.judgedCentrally(f) && period < periods) {
                            final FlowSummary copy = new FlowSummary();
                            copy.copyFrom(f);
                            flows.get(period).get(nodeOf.get(f.hostId())).add(copy);
                            summaries++;
                        }
                    },
                    c -> {
                        final long t = Math.max(c.hostStartNs(), c.hostStopNs());
                        final int period = (int) Math.min(periods - 1, Math.max(0, t / periodNs));
                        if (t / periodNs >= periods) {
                            return;
                        }
                        final CollectiveSummary copy = new CollectiveSummary();
                        copy.copyFrom(c);
                        collectives.get(period).get(nodeOf.get(c.hostId())).add(copy);
                        summaries++;
                        seqMin = Math.min(seqMin, c.seqNumber());
                        seqMax = Math.max(seqMax, c.seqNumber());
                        if (period >= periods / 2) {
                            tailSeqMin = Math.min(tailSeqMin, c.seqNumber());
                            tailSeqMax = Math.max(tailSeqMax, c.seqNumber());
                        }
                    });
            final long end = (durationMs + periodMs) * 1_000_000L;
            for (long t = 1_000_000L; t <= end; t += 1_000_000L) {
                sim.advanceTo(t, p);
                for (int n = 0; n < nodes; n++) {
                    p.advanceTo(sim.hostId(n), t);
                }
                p.endBatch(0);
            }
            if (summaries == 0) {
                throw new IllegalStateException("cluster: the simulated template produced no summary: " + scenario);
            }
        }

        long seqSpan() {
            return seqMax < seqMin ? 0 : seqMax - seqMin + 1;
        }

        long tailSeqSpan() {
            return tailSeqMax < tailSeqMin ? 0 : tailSeqMax - tailSeqMin + 1;
        }
    }

    private final ClusterSpec spec;
    private final Template healthy;
    private final Template tensor;
    /** Per data-parallel group: its fault's run, or null. */
    private final Template[] faulty;
    /** Per group: the template loop its fault's run replaces (-1: none). */
    private final long[] faultLoop;

    private final long[] hostIds;
    private final String[] hostNames;
    private final long[] groupComms;
    private final long[] nodeComms;
    private final FlowSummary flow = new FlowSummary();
    private final CollectiveSummary collective = new CollectiveSummary();

    public ClusterStream(final ClusterSpec spec) {
        this.spec = spec;
        final String group = "nodes=" + spec.groupNodes() + ",gpus=" + spec.gpus() + ",channels=" + spec.channels()
                + ",size=8M,seed=" + spec.seed();
        healthy = new Template(group, spec.groupNodes(), spec.periodMs(), spec.templateMs());
        final String node = "nodes=1,gpus=" + spec.gpus() + ",channels=" + spec.channels() + ",size=2M,seed="
                + (spec.seed() + 1_000);
        tensor = new Template(node, 1, spec.periodMs(), spec.templateMs());
        faulty = new Template[spec.groups()];
        faultLoop = new long[spec.groups()];
        java.util.Arrays.fill(faultLoop, -1);
        final Map<String, Template> runs = new HashMap<>();
        for (final ClusterSpec.FaultSpec f : spec.faults()) {
            final String scenario = group + f.scenarioClause(onsetInTemplateMs());
            faulty[f.group()] = runs.computeIfAbsent(
                    scenario, s -> new Template(s, spec.groupNodes(), spec.periodMs(), spec.templateMs()));
            faultLoop[f.group()] = (long) Math.floor(f.atSeconds() * 1000.0 / spec.templateMs());
        }
        hostIds = new long[spec.nodes()];
        hostNames = new String[spec.nodes()];
        nodeComms = new long[spec.nodes()];
        for (int n = 0; n < spec.nodes(); n++) {
            hostIds[n] = mix(spec.seed() * 0x100000001B3L + n + 1) | 1L << 62;
            hostNames[n] = String.format("cluster-node-%05d", n);
            nodeComms[n] = mix(spec.seed() ^ 0x7e45_0000_0000L ^ n) | 1;
        }
        groupComms = new long[spec.groups()];
        for (int g = 0; g < spec.groups(); g++) {
            groupComms[g] = mix(spec.seed() ^ 0xd0a7_0000_0000L ^ g) | 1;
        }
    }

    private long onsetInTemplateMs() {
        return spec.templateMs() / 4;
    }

    public ClusterSpec spec() {
        return spec;
    }

    public long hostId(final int node) {
        return hostIds[node];
    }

    public String hostName(final int node) {
        return hostNames[node];
    }

    /** The communicator hash of a data-parallel group. */
    public long groupComm(final int group) {
        return groupComms[group];
    }

    /** The communicator hash of a node's tensor-parallel communicator. */
    public long nodeComm(final int node) {
        return nodeComms[node];
    }

    /** Receives a rank a node holds: rank {@code rank} of {@code nranks} of communicator {@code comm}. */
    public interface RankOut {
        void rank(long comm, int rank, int nranks);
    }

    /**
     * The ranks node {@code node} holds, as its rings' communicator entries tell its agent: its share of its
     * data-parallel group's ranks and every rank of its tensor-parallel communicator.
     */
    public void ranks(final int node, final RankOut out) {
        final int g = node / spec.groupNodes();
        final int j = node % spec.groupNodes();
        final int groupRanks = spec.groupNodes() * spec.gpus();
        for (int i = 0; i < spec.gpus(); i++) {
            out.rank(groupComms[g], j * spec.gpus() + i, groupRanks);
            out.rank(nodeComms[node], i, spec.gpus());
        }
    }

    /** The node (0..nodes-1) of a rank of a data-parallel group. */
    public int nodeOfRank(final int group, final int rank) {
        return group * spec.groupNodes() + rank / spec.gpus();
    }

    /** When a fault of a group starts, in the stream's time (ns): its loop's start plus the onset in the run. */
    public long faultOnsetNs(final ClusterSpec.FaultSpec f) {
        return (faultLoop[f.group()] * spec.templateMs() + onsetInTemplateMs()) * 1_000_000L;
    }

    /** Central summaries per period of the whole cluster, healthy (templates' average). */
    public double summariesPerPeriod() {
        return spec.groups() * (double) healthy.summaries / healthy.periods
                + spec.nodes() * (double) tensor.summaries / tensor.periods;
    }

    /**
     * Hands one node's summaries of one period (period {@code k} covers {@code [k, k+1) × period}) to {@code out}:
     * its data-parallel group's first, then its tensor-parallel communicator's; each flows then collectives.
     */
    public void node(final int node, final long k, final Out out) {
        node(node, k, out, comm -> true);
    }

    /**
     * The same, of the communicators {@code made} accepts only (an agent that keeps a communicator on the node need
     * not make its summaries to drop them); returns how many summaries the others had this period.
     */
    public int node(final int node, final long k, final Out out, final java.util.function.LongPredicate made) {
        final int g = node / spec.groupNodes();
        final int j = node % spec.groupNodes();
        final long periodNs = spec.periodNs();
        final Template f = faulty[g];
        final long fl = faultLoop[g];
        final int n = healthy.periods;
        final Template t;
        final int tp;
        final long seqShift;
        if (f == null || k < fl * n) {
            t = healthy;
            tp = (int) (k % n);
            seqShift = (k / n) * healthy.seqSpan();
        } else if (k < (fl + 1) * n) {
            t = f;
            tp = (int) (k - fl * n);
            seqShift = fl * healthy.seqSpan();
        } else {
            final int m = n - n / 2;
            final long rep = (k - (fl + 1) * n) / m + 1;
            t = f;
            tp = n / 2 + (int) ((k - (fl + 1) * n) % m);
            seqShift = fl * healthy.seqSpan() + rep * f.tailSeqSpan();
        }
        int skipped = 0;
        if (made.test(groupComms[g])) {
            emit(t, tp, j, node, groupComms[g], (k - tp) * periodNs, seqShift, out);
        } else {
            skipped +=
                    t.flows.get(tp).get(j).size() + t.collectives.get(tp).get(j).size();
        }
        final int tn = tensor.periods;
        final int ttp = (int) (k % tn);
        if (made.test(nodeComms[node])) {
            emit(tensor, ttp, 0, node, nodeComms[node], (k - ttp) * periodNs, (k / tn) * tensor.seqSpan(), out);
        } else {
            skipped += tensor.flows.get(ttp).get(0).size()
                    + tensor.collectives.get(ttp).get(0).size();
        }
        return skipped;
    }

    private void emit(
            final Template t,
            final int tp,
            final int templateNode,
            final int node,
            final long comm,
            final long shiftNs,
            final long seqShift,
            final Out out) {
        final long host = hostIds[node];
        for (final FlowSummary s : t.flows.get(tp).get(templateNode)) {
            flow.copyFrom(s);
            FlowSummary.into(flow)
                    .periodStartNs(s.periodStartNs() + shiftNs)
                    .periodEndNs(s.periodEndNs() + shiftNs)
                    .hostId(host)
                    .commHash(comm)
                    .flowKey(mix(s.flowKey() ^ comm));
            out.flow(flow);
        }
        for (final CollectiveSummary s : t.collectives.get(tp).get(templateNode)) {
            collective.copyFrom(s);
            CollectiveSummary.into(collective)
                    .hostId(host)
                    .commHash(comm)
                    .collKey(mix(s.collKey() ^ comm ^ seqShift * 0x9E3779B97F4A7C15L))
                    .seqNumber(s.seqNumber() + seqShift)
                    .hostStartNs(shift(s.hostStartNs(), shiftNs))
                    .hostStopNs(shift(s.hostStopNs(), shiftNs))
                    .gpuStartNs(shift(s.gpuStartNs(), shiftNs))
                    .gpuEndNs(shift(s.gpuEndNs(), shiftNs))
                    .gpuStartHostNs(shift(s.gpuStartHostNs(), shiftNs));
            out.collective(collective);
        }
    }

    /** A time moved by the replay's shift; 0 and negative values mean "not known" and stay. */
    private static long shift(final long t, final long shiftNs) {
        return t > 0 ? t + shiftNs : t;
    }

    /** SplitMix64's finalizer: ids that look random and never repeat for distinct inputs. */
    static long mix(final long v) {
        long z = v + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
