package io.flowscope.sim;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.anomaly.AnomalyEngine;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The whole pipeline on a scenario: {@link ClusterSimulator} → {@link WindowEngine} (1 ms periods) →
 * {@link AnomalyEngine}, advanced 1 ms of simulated time at a time; every host is told the time after each step
 * (a host whose ranks are silent still ends its periods, so a hang is named with no events arriving).
 */
public final class SimulatedRun {
    public static final long STEP_NS = 1_000_000L;

    private final ClusterSimulator simulator;
    private final WindowEngine window;
    private final AnomalyEngine engine;
    private final List<Event> events = new ArrayList<>();

    /** What the sink saw, in order. */
    public record Event(String type, Anomaly anomaly) {}

    public SimulatedRun(final Scenario scenario, final AnomalyConfig config) {
        this(scenario, config, null);
    }

    /** {@code extra}, when not null, also receives every anomaly callback. */
    public SimulatedRun(final Scenario scenario, final AnomalyConfig config, final AnomalySink extra) {
        simulator = new ClusterSimulator(scenario);
        engine = new AnomalyEngine(config, AnomalySink.of((type, a) -> {
            events.add(new Event(type, a));
            if (extra != null) {
                switch (type) {
                    case AnomalySink.OPENED -> extra.onOpened(a);
                    case AnomalySink.UPDATED -> extra.onUpdated(a);
                    default -> extra.onResolved(a);
                }
            }
        }));
        window = new WindowEngine(windowConfig(scenario), engine, engine);
    }

    /** The window engine's configuration for a scenario: 1 ms periods, room for its flows, ops and steps. */
    public static WindowConfig windowConfig(final Scenario scenario) {
        final int flows = Math.max(4096, scenario.ranks() * scenario.channels() * 8);
        // The nccl model's ops carry NCCL's step counts (a 32-rank ring: 124 steps an op at 1 MiB) and post ops
        // collectives ahead: room for the steps of the collectives a 5 ms tombstone window spans.
        final int steps = Scenario.MODEL_NCCL.equals(scenario.model())
                ? Math.max(65_536, scenario.ranks() * scenario.channels() * 8192)
                : Math.max(65_536, flows * 16);
        return new WindowConfig()
                .periodNs(STEP_NS)
                .maxFlows(flows)
                .maxOps(flows * 2)
                .maxSteps(steps)
                .maxHosts(Math.max(256, scenario.nodes() * 2));
    }

    /** Runs to the scenario's end (or {@code untilNs}, whichever is first). */
    public SimulatedRun run() {
        return runTo(simulator.scenario().durationNs());
    }

    public SimulatedRun runTo(final long untilNs) {
        final int nodes = simulator.scenario().nodes();
        for (long t = simulator.nowNs() + STEP_NS; t <= untilNs; t += STEP_NS) {
            simulator.advanceTo(t, window);
            for (int n = 0; n < nodes; n++) {
                final long hostTime = t + simulator.clockOffsetNs(n);
                window.advanceTo(simulator.hostId(n), hostTime);
                engine.advanceTo(simulator.hostId(n), hostTime);
            }
        }
        return this;
    }

    public ClusterSimulator simulator() {
        return simulator;
    }

    public AnomalyEngine engine() {
        return engine;
    }

    public WindowEngine window() {
        return window;
    }

    /** Every callback so far, in order. */
    public List<Event> events() {
        return Collections.unmodifiableList(events);
    }

    /** Every anomaly opened so far (its first publication), in order. */
    public List<Anomaly> opened() {
        final List<Anomaly> out = new ArrayList<>();
        for (final Event e : events) {
            if ("opened".equals(e.type())) {
                out.add(e.anomaly());
            }
        }
        return out;
    }
}
