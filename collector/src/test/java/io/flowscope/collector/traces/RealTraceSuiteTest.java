package io.flowscope.collector.traces;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.replay.Replay;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Real NCCL recordings with injected faults ({@code ../shared/traces}, {@code testdata/traces}) replayed through
 * the service's engines, one test each: the fault is named with its kind and culprit rank within
 * {@link #DETECT_WITHIN_NS} of its onset (a hang within the service's threshold plus that), and nothing else is
 * raised, before, during or after it; a fault-free recording raises nothing. Once named, the fault stays named: one
 * anomaly, open until the fault ends (an alert that resolves and re-opens during one fault pages twice, one that
 * resolves early tells the operator a fault is over that is not). The table of results goes to
 * {@code target/real-traces.md} (docs/detection.md opens with it).
 */
class RealTraceSuiteTest {
    static final long DETECT_WITHIN_NS = 250_000_000L;

    /** Trace folders: every directory under the roots holding an events.jsonl.gz and a truth.json. */
    static List<Path> traces() throws IOException {
        final Path module = Path.of("").toAbsolutePath();
        final Path repo = Files.isDirectory(module.resolve("collector")) ? module : module.getParent();
        final List<Path> found = new ArrayList<>();
        for (final Path root : List.of(
                repo.resolveSibling("shared").resolve("traces"),
                repo.resolve("testdata").resolve("traces"))) {
            if (!Files.isDirectory(root)) {
                continue;
            }
            try (Stream<Path> dirs = Files.list(root)) {
                dirs.filter(d -> Files.isRegularFile(d.resolve("events.jsonl.gz"))
                                && Files.isRegularFile(d.resolve("truth.json")))
                        .sorted()
                        .forEach(found::add);
            }
        }
        return found;
    }

    @TestFactory
    Stream<DynamicTest> everyRealTraceNamesItsFaultAndNothingElse() throws IOException {
        final List<Path> traces = traces();
        assertThat(traces)
                .as("real traces in ../shared/traces or testdata/traces")
                .isNotEmpty();
        final StringBuilder table = new StringBuilder("| trace | workload | fault | slowdown | named (kind, culprit) "
                + "| time to detect | open (anomalies; resolved after the fault's end) | false alarms |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        return traces.stream()
                .map(dir -> DynamicTest.dynamicTest(dir.getFileName().toString(), () -> {
                    final GroundTruth truth = GroundTruth.read(dir.resolve("truth.json"));
                    final Replay.Result r = Replay.run(
                            dir.resolve("events.jsonl.gz"),
                            CollectorConfig.load(null, Map.of(), Map.of()),
                            Long.MIN_VALUE,
                            Long.MAX_VALUE,
                            null,
                            null,
                            d -> {});
                    final Map<Long, Anomaly> byId = new LinkedHashMap<>();
                    r.events().forEach(e -> byId.put(e.anomaly().id(), e.anomaly()));
                    final List<Anomaly> hits = new ArrayList<>();
                    final List<Anomaly> falseAlarms = new ArrayList<>();
                    for (final Anomaly a : byId.values()) {
                        (matches(truth, a) ? hits : falseAlarms).add(a);
                    }
                    final Anomaly first = hits.isEmpty() ? null : hits.get(0);
                    final double detectMs =
                            first == null ? Double.NaN : (first.detectedNs() - truth.faultStartNs()) / 1e6;
                    final long openUntilNs = first == null ? -1 : openUntil(hits.get(hits.size() - 1), r);
                    synchronized (table) {
                        table.append(String.format(
                                "| %s | %s | %s | %s | %s | %s | %s | %d%s |%n",
                                dir.getFileName(),
                                truth.workload(),
                                truth.fault(),
                                truth.expect() == GroundTruth.Expect.NOTHING ? "—" : truth.slowdownText(),
                                first == null
                                        ? "—"
                                        : first.kind() + " rank "
                                                + first.culprit().rank()
                                                + (first.kind() == AnomalyKind.SLOW_LINK
                                                        ? " → "
                                                                + first.culprit()
                                                                        .peer()
                                                        : ""),
                                first == null ? "—" : String.format("%.0f ms", detectMs),
                                first == null ? "—" : openText(hits, truth),
                                falseAlarms.size(),
                                falseAlarms.isEmpty()
                                        ? ""
                                        : " (" + falseAlarms.get(0).summary() + ")"));
                        write(table);
                    }
                    assertThat(r.corruptDocuments()).as("corrupt lines").isZero();
                    assertThat(falseAlarms)
                            .as("anomalies other than the injected fault")
                            .isEmpty();
                    if (truth.expect() == GroundTruth.Expect.NOTHING) {
                        return;
                    }
                    assertThat(hits).as("the fault named: " + truth).isNotEmpty();
                    final long limit = truth.expect() == GroundTruth.Expect.HANG
                            ? AnomalyStages.HANG_THRESHOLD_NS + DETECT_WITHIN_NS
                            : DETECT_WITHIN_NS;
                    assertThat(first.detectedNs() - truth.faultStartNs())
                            .as("time to detect, ns")
                            .isLessThanOrEqualTo(limit);
                    assertThat(hits)
                            .as("one anomaly for the fault, not resolved and re-opened: " + hits)
                            .hasSize(1);
                    assertThat(openUntilNs)
                            .as("the fault's anomaly open until the fault ends (ns, on the rings' clock)")
                            .isGreaterThanOrEqualTo(truth.faultEndNs() - DETECT_WITHIN_NS);
                }));
    }

    /** When the anomaly resolved, or the recording's last event while it is still open. */
    private static long openUntil(final Anomaly a, final Replay.Result r) {
        return a.isOpen() ? r.lastEventNs() : a.resolvedNs();
    }

    /** "1; +96 ms": one anomaly, the last resolved 96 ms after the fault's end (or "open at the end"). */
    private static String openText(final List<Anomaly> hits, final GroundTruth truth) {
        final Anomaly last = hits.get(hits.size() - 1);
        final String until = last.isOpen()
                ? "open at the end"
                : String.format("%+.0f ms", (last.resolvedNs() - truth.faultEndNs()) / 1e6);
        return hits.size() + "; " + until;
    }

    /** Whether an anomaly is the injected fault: its kind, its culprit rank, during (or just after) the fault. */
    private static boolean matches(final GroundTruth t, final Anomaly a) {
        final AnomalyKind want =
                switch (t.expect()) {
                    case SLOW_NODE -> AnomalyKind.SLOW_NODE;
                    case SLOW_LINK -> AnomalyKind.SLOW_LINK;
                    case HANG -> AnomalyKind.HANG;
                    case NOTHING -> null;
                };
        return want != null
                && a.kind() == want
                && a.culprit().rank() == t.rank()
                && a.startNs() >= t.faultStartNs() - DETECT_WITHIN_NS
                && a.detectedNs() <= t.faultEndNs() + DETECT_WITHIN_NS;
    }

    private static void write(final StringBuilder table) {
        try {
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target", "real-traces.md"), table);
        } catch (final IOException e) {
            // the table is a report; the assertions are the test
        }
    }
}
