package io.flowscope.bench;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.sim.Scenario;
import io.flowscope.sim.SimulatedRun;
import java.util.Locale;

/**
 * Every publication (opened / updated / resolved: culprit, severity, times, evidence, sentence) of every built-in
 * scenario, one line each, so that an engine change meant to be a pure speed-up can be checked line for line
 * against the jar before it (the suite's scores alone would hide a moved time or a changed evidence figure).
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.flowscope.bench.ScenarioPublications &gt; publications.txt
 * </pre>
 */
public final class ScenarioPublications {
    private ScenarioPublications() {}

    public static void main(final String[] args) {
        Locale.setDefault(Locale.ROOT);
        final AnomalyConfig config = new AnomalyConfig();
        for (final String name : Scenario.builtInNames()) {
            final SimulatedRun run = new SimulatedRun(Scenario.builtIn(name), config).run();
            System.out.println("# " + name + ": " + run.engine().summaries() + " summaries");
            for (final SimulatedRun.Event e : run.events()) {
                // The record's own rendering: every component, evidence sorted by name, doubles exact.
                System.out.println(name + " " + e.type() + " " + e.anomaly());
            }
        }
    }
}
