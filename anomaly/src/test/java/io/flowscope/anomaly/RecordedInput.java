package io.flowscope.anomaly;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.Scenario;
import io.flowscope.sim.SimulatedRun;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything a stage was fed, in order, copied (the window engine hands on records it reuses): flow summaries,
 * collective summaries and {@code advanceTo} calls, so that one simulated run can be fed to several stages, or to
 * one stage from any point on.
 */
final class RecordedInput implements AnomalyStage {
    record Advance(long hostId, long timeNs) {}

    private final List<Object> inputs = new ArrayList<>();

    /** The scenario as {@link SimulatedRun} runs it: simulator → window engine (1 ms periods) → here. */
    static RecordedInput of(final Scenario scenario) {
        final RecordedInput in = new RecordedInput();
        final ClusterSimulator simulator = new ClusterSimulator(scenario);
        final WindowEngine window = new WindowEngine(SimulatedRun.windowConfig(scenario), in, in);
        final int nodes = scenario.nodes();
        for (long t = SimulatedRun.STEP_NS; t <= scenario.durationNs(); t += SimulatedRun.STEP_NS) {
            simulator.advanceTo(t, window);
            for (int n = 0; n < nodes; n++) {
                final long hostTime = t + simulator.clockOffsetNs(n);
                window.advanceTo(simulator.hostId(n), hostTime);
                in.advanceTo(simulator.hostId(n), hostTime);
            }
        }
        return in;
    }

    /** This input without anything of host {@code hostId} from input {@code from} on (a host that went away). */
    RecordedInput withoutHost(final long hostId, final int from) {
        final RecordedInput in = new RecordedInput();
        for (int i = 0; i < inputs.size(); i++) {
            final Object o = inputs.get(i);
            final long host = o instanceof FlowSummary s
                    ? s.hostId()
                    : o instanceof CollectiveSummary c ? c.hostId() : ((Advance) o).hostId();
            if (i < from || host != hostId) {
                in.inputs.add(o);
            }
        }
        return in;
    }

    int size() {
        return inputs.size();
    }

    /** Inputs {@code from} … {@code to} − 1 into {@code stage}. */
    void feed(final AnomalyStage stage, final int from, final int to) {
        for (int i = from; i < to; i++) {
            final Object o = inputs.get(i);
            if (o instanceof FlowSummary s) {
                stage.onSummary(s);
            } else if (o instanceof CollectiveSummary c) {
                stage.onCollective(c);
            } else {
                final Advance a = (Advance) o;
                stage.advanceTo(a.hostId(), a.timeNs());
            }
        }
    }

    @Override
    public void onSummary(final FlowSummary s) {
        final FlowSummary copy = FlowSummary.builder().build();
        copy.copyFrom(s);
        inputs.add(copy);
    }

    @Override
    public void onCollective(final CollectiveSummary cs) {
        final CollectiveSummary copy = CollectiveSummary.builder().build();
        copy.copyFrom(cs);
        inputs.add(copy);
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        inputs.add(new Advance(hostId, timeNs));
    }

    @Override
    public List<Anomaly> openAnomalies() {
        return List.of();
    }
}
