package io.flowscope.collector.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.sim.Scenario;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Opt-in ({@code -Dflowscope.bench=true}): what the aggregators name when the fleet stream's period is 10 ms, against
 * what the node's service names at its 1 ms (docs/fleet-wire.md, "Period": the 10 ms fleet stream is a quarter of the
 * records, and becomes a choice only if it names the same culprits). For each of the simulator's built-in scenarios
 * whose faults the aggregators judge (slow links, slow GPUs, hangs, and the fault-free ones), stretched to a 2 s fault
 * in a 3 s run: the anomalies the service's pipeline opens at 1 ms, and those an aggregator opens from the central
 * subset of a 10 ms pipeline (and, as a check of the path, of the 1 ms one). Writes target/fleet-period.md.
 */
@EnabledIfSystemProperty(named = "flowscope.bench", matches = "true")
class FleetPeriodComparison {
    private static final String STRETCH = ",at=500ms,for=2s,duration=3s";

    @Test
    void tenMillisecondFleetPeriodAgainstTheServicesOne() throws IOException {
        final List<String> rows = new ArrayList<>();
        rows.add(
                "| scenario | service, 1 ms | aggregator, central subset at 1 ms | aggregator, central subset at 10 ms |");
        rows.add("|---|---|---|---|");
        int same1 = 0;
        int same10 = 0;
        int n = 0;
        // -Dflowscope.period.scenarios=spec;spec: these, as given, instead of the built-ins
        final String given = System.getProperty("flowscope.period.scenarios", "");
        final List<String> names = given.isEmpty() ? Scenario.builtInNames() : List.of(given.split(";"));
        for (final String name : names) {
            if (given.isEmpty()
                    && !(name.startsWith("slow-") || name.startsWith("hang-") || name.startsWith("clean-"))) {
                continue; // NIC faults are the node's to judge (docs/fleet-wire.md, "NICs")
            }
            final String scenario =
                    !given.isEmpty() ? name : name + (name.startsWith("clean-") ? ",duration=3s" : STRETCH);
            final Run one = run(scenario, 1);
            final Run ten = run(scenario, 10);
            final String service = String.join("; ", one.service);
            final String central1 = String.join("; ", one.central);
            final String central10 = String.join("; ", ten.central);
            same1 += service.equals(central1) ? 1 : 0;
            same10 += service.equals(central10) ? 1 : 0;
            n++;
            rows.add("| " + name + " | " + or(service) + " | " + or(central1) + " | " + or(central10) + " |");
            System.out.println("fleet period: " + rows.get(rows.size() - 1));
        }
        rows.add("");
        rows.add(String.format(
                "%d scenarios: the aggregators name what the service names (kinds and culprits) in %d at 1 ms, %d at"
                        + " 10 ms%n",
                n, same1, same10));
        Files.createDirectories(Path.of("target"));
        Files.write(Path.of("target/fleet-period.md"), rows);
        System.out.println(String.join("\n", rows));
    }

    private static String or(final String s) {
        return s.isEmpty() ? "nothing" : s;
    }

    private record Run(List<String> service, List<String> central) {}

    /** The scenario through a pipeline at {@code periodMs}: what it opens, and what an aggregator opens from it. */
    private static Run run(final String scenario, final int periodMs) throws IOException {
        final CollectorConfig config =
                CollectorConfig.load(null, Map.of(), Map.of("window.periodMs", Integer.toString(periodMs)));
        final TreeSet<String> service = new TreeSet<>();
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> {
            if (e.type().equals("opened")) {
                service.add(culprit(e.anomaly()));
                if (Boolean.getBoolean("flowscope.period.times")) {
                    System.out.printf(
                            "service %d ms: %s start %d detected %d%n",
                            periodMs,
                            culprit(e.anomaly()),
                            e.anomaly().startNs() / 1_000_000,
                            e.anomaly().detectedNs() / 1_000_000);
                }
            }
        });
        final FleetWireEncoder wire = new FleetWireEncoder("agent-1");
        final List<byte[]> central = new ArrayList<>();
        final long[] seq = {0};
        p.tap(
                s -> {
                    final long q = ++seq[0];
                    if (Boolean.getBoolean("flowscope.period.all") || FleetWire.judgedCentrally(s)) {
                        central.add(wire.flow(q, s, "node"));
                    }
                },
                c -> central.add(wire.collective(++seq[0], c)));
        final SimulatorSource sim = new SimulatorSource(scenario, 1e12, 0);
        while (!sim.finished()) {
            sim.poll(p);
            p.endBatch(0);
        }
        p.finish();
        final TreeSet<String> named = new TreeSet<>();
        for (final String e : new Aggregator(config.fleet(), "period", x -> {}).applyOffline(central)) {
            final String[] parts = e.split(" ", 3);
            if (parts[1].equals("opened")) {
                final JsonNode a = FleetCodec.MAPPER.readTree(parts[2]);
                final JsonNode c = a.path("culprit");
                final String who = culprit(
                        a.path("kind").asText(),
                        c.path("rank").asInt(),
                        c.path("peer").asInt());
                named.add(who);
                if (Boolean.getBoolean("flowscope.period.times")) {
                    System.out.printf(
                            "aggregator %d ms: %s start %d detected %d%n",
                            periodMs,
                            who,
                            a.path("startNs").asLong() / 1_000_000,
                            a.path("detectedNs").asLong() / 1_000_000);
                }
            }
        }
        return new Run(List.copyOf(service), List.copyOf(named));
    }

    private static String culprit(final Anomaly a) {
        return culprit(a.kind().name(), a.culprit().rank(), a.culprit().peer());
    }

    private static String culprit(final String kind, final int rank, final int peer) {
        return kind + " rank " + rank + (kind.equals("SLOW_LINK") ? " → " + peer : "");
    }
}
