package io.flowscope.collector.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyEvent;
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
 * subset of a 10 ms pipeline (and, as a check of the path, of the 1 ms one), and both again with the agent sending
 * one collective in N ({@code fleet.collectiveEvery}). Writes target/fleet-period.md.
 */
@EnabledIfSystemProperty(named = "flowscope.bench", matches = "true")
class FleetPeriodComparison {
    private static final String STRETCH = ",at=500ms,for=2s,duration=3s";

    @Test
    void tenMillisecondFleetPeriodAgainstTheServicesOne() throws IOException {
        // -Dflowscope.period.collectiveEvery=N: the sampled columns send one collective in N (fleet.collectiveEvery)
        final int every = Integer.getInteger("flowscope.period.collectiveEvery", 16);
        final List<String> rows = new ArrayList<>();
        rows.add(
                "| scenario | service, 1 ms | aggregator, central subset at 1 ms | at 10 ms | at 1 ms, collectives 1 in "
                        + every + " | at 10 ms, collectives 1 in " + every + " |");
        rows.add("|---|---|---|---|---|---|");
        final int[] same = new int[4];
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
            final Run one = run(scenario, 1, 1);
            final String service = String.join("; ", one.service);
            final List<String> columns = List.of(
                    String.join("; ", one.central),
                    String.join("; ", run(scenario, 10, 1).central),
                    String.join("; ", run(scenario, 1, every).central),
                    String.join("; ", run(scenario, 10, every).central));
            final StringBuilder row = new StringBuilder("| " + name + " | " + or(service) + " |");
            for (int i = 0; i < columns.size(); i++) {
                same[i] += service.equals(columns.get(i)) ? 1 : 0;
                row.append(' ').append(or(columns.get(i))).append(" |");
            }
            n++;
            rows.add(row.toString());
            System.out.println("fleet period: " + row);
        }
        rows.add("");
        rows.add(String.format(
                "%d scenarios: the aggregators name what the service names (kinds and culprits) in %d at 1 ms, %d at"
                        + " 10 ms; with one collective in %d: %d at 1 ms, %d at 10 ms%n",
                n, same[0], same[1], every, same[2], same[3]));
        Files.createDirectories(Path.of("target"));
        Files.write(Path.of("target/fleet-period.md"), rows);
        System.out.println(String.join("\n", rows));
    }

    private static String or(final String s) {
        return s.isEmpty() ? "nothing" : s;
    }

    private record Run(List<String> service, List<String> central) {}

    /**
     * The scenario through a pipeline at {@code periodMs}: what it opens, and what an aggregator opens from it, the
     * agent sending one collective in {@code collectiveEvery}.
     */
    private static Run run(final String scenario, final int periodMs, final int collectiveEvery) throws IOException {
        final CollectorConfig config = CollectorConfig.load(
                null,
                Map.of(),
                Map.of(
                        "window.periodMs",
                        Integer.toString(periodMs),
                        "fleet.collectiveEvery",
                        Integer.toString(collectiveEvery)));
        final SimulatedAgent agent = SimulatedAgent.run(scenario, config, "agent-1", "node");
        final TreeSet<String> service = new TreeSet<>();
        for (final AnomalyEvent e : agent.service()) {
            if (e.type().equals("opened")) {
                final Anomaly a = e.anomaly();
                named(service, "service", periodMs, culprit(a), a.startNs(), a.detectedNs());
            }
        }
        // -Dflowscope.period.all=true: the aggregator fed every summary instead of the central subset
        final List<byte[]> records = Boolean.getBoolean("flowscope.period.all") ? agent.all() : agent.central();
        final TreeSet<String> aggregator = new TreeSet<>();
        for (final String e : new Aggregator(config.fleet(), "period", x -> {}).applyOffline(records)) {
            final String[] parts = e.split(" ", 3);
            if (parts[1].equals("opened")) {
                final JsonNode a = FleetCodec.MAPPER.readTree(parts[2]);
                final JsonNode c = a.path("culprit");
                final String who = culprit(
                        a.path("kind").asText(),
                        c.path("rank").asInt(),
                        c.path("peer").asInt());
                named(
                        aggregator,
                        "aggregator",
                        periodMs,
                        who,
                        a.path("startNs").asLong(),
                        a.path("detectedNs").asLong());
            }
        }
        return new Run(List.copyOf(service), List.copyOf(aggregator));
    }

    /** Adds {@code who} to {@code into}; with -Dflowscope.period.times=true also prints when it was named. */
    private static void named(
            final TreeSet<String> into,
            final String side,
            final int periodMs,
            final String who,
            final long startNs,
            final long detectedNs) {
        into.add(who);
        if (Boolean.getBoolean("flowscope.period.times")) {
            System.out.printf(
                    "%s %d ms: %s start %d detected %d%n",
                    side, periodMs, who, startNs / 1_000_000, detectedNs / 1_000_000);
        }
    }

    private static String culprit(final Anomaly a) {
        return culprit(a.kind().name(), a.culprit().rank(), a.culprit().peer());
    }

    private static String culprit(final String kind, final int rank, final int peer) {
        return kind + " rank " + rank + (kind.equals("SLOW_LINK") ? " → " + peer : "");
    }
}
