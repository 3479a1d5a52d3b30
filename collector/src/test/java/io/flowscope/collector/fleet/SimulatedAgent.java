package io.flowscope.collector.fleet;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A simulated run through the service's pipeline, as one agent publishes it: the binary records of every flow and
 * collective summary ({@code fleet.publish = all}), the central subset of them with the same seqs (the gaps a
 * filtering agent leaves: {@link CentralSelection}, with the configuration's {@code fleet.collectiveEvery}), and the anomaly events the service's own stage
 * published for the run: what the fleet tests hold an aggregator's verdicts against.
 *
 * @param flowsByKind the run's flow summaries by {@code FlowSummary} kind
 */
record SimulatedAgent(List<byte[]> all, List<byte[]> central, List<AnomalyEvent> service, long[] flowsByKind) {
    /** With the service's default configuration, agent {@code agent-1} on host {@code node-a}. */
    static SimulatedAgent run(final String scenario) {
        return run(scenario, CollectorConfig.load(null, Map.of(), Map.of()), "agent-1", "node-a");
    }

    static SimulatedAgent run(
            final String scenario, final CollectorConfig config, final String agent, final String hostName) {
        final List<AnomalyEvent> service = new ArrayList<>();
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, service::add);
        final FleetWireEncoder wire = new FleetWireEncoder(agent);
        final List<byte[]> all = new ArrayList<>();
        final List<byte[]> central = new ArrayList<>();
        final long[] seq = {0};
        final long[] byKind = new long[8];
        final CentralSelection selection =
                new CentralSelection(false, config.fleet().collectiveEvery());
        p.tap(
                s -> {
                    final byte[] r = wire.flow(++seq[0], s, hostName);
                    all.add(r);
                    byKind[s.kind()]++;
                    if (selection.flow(s)) {
                        central.add(r);
                    }
                },
                c -> {
                    final byte[] r = wire.collective(++seq[0], c);
                    all.add(r);
                    if (selection.collective(c)) {
                        central.add(r);
                    }
                });
        final SimulatorSource sim = new SimulatorSource(scenario, 1e12, 0);
        while (!sim.finished()) {
            sim.poll(p);
            p.endBatch(0);
        }
        p.finish();
        return new SimulatedAgent(all, central, service, byKind);
    }
}
