package io.flowscope.bench;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.Scenario;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.List;

/**
 * What a fleet agent publishes: every flow and collective summary the window engine derives from a simulated
 * cluster, copied, in the engine's output order (the order the agent numbers and sends them). The fleet wire
 * benchmarks encode and decode these, so field values, phases present and names are the real engine's.
 */
final class FleetSummaryStream {
    /** The fleet benchmarks' cluster: one 8-GPU node's share of a 2-node job, 4 channels, NCCL's calibrated model. */
    static final String SCENARIO = "nodes=2,gpus=8,channels=4,model=nccl,duration=200ms,fault=slow-link,rank=3,"
            + "peer=11,fraction=0.5,at=50ms";

    /** One output: exactly one of the two is set. */
    record Output(FlowSummary flow, CollectiveSummary collective) {}

    final List<Output> outputs = new ArrayList<>();
    final Scenario scenario;
    final long periodNs;

    FleetSummaryStream(final String spec, final long periodNs) {
        this.scenario = Scenario.parse(spec);
        this.periodNs = periodNs;
        final ClusterSimulator sim = new ClusterSimulator(scenario);
        final int flows = Math.max(4096, scenario.ranks() * scenario.channels() * 8);
        final WindowEngine window = new WindowEngine(
                new WindowConfig()
                        .periodNs(periodNs)
                        .maxFlows(flows)
                        .maxOps(flows * 2)
                        .maxSteps(Math.max(65_536, scenario.ranks() * scenario.channels() * 8192))
                        .maxHosts(256),
                s -> {
                    final FlowSummary c = new FlowSummary();
                    c.copyFrom(s);
                    outputs.add(new Output(c, null));
                },
                s -> {
                    final CollectiveSummary c = new CollectiveSummary();
                    c.copyFrom(s);
                    outputs.add(new Output(null, c));
                });
        for (long t = 1_000_000; t <= scenario.durationNs(); t += 1_000_000) {
            sim.advanceTo(t, window);
        }
        window.flush();
        if (outputs.isEmpty()) {
            throw new IllegalStateException("fleet summary stream: the simulated run produced no summary");
        }
    }

    int gpus() {
        return scenario.ranks();
    }

    double simulatedSeconds() {
        return scenario.durationNs() / 1e9;
    }
}
