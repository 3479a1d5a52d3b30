package io.flowscope.sink.influx;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.Collectives;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.testing.Anomalies;
import io.flowscope.sink.testing.Summaries;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The schema table of sinks/README.md names every tag and field the schema writes, in its own measurement's row. */
class SchemaDocumentationTest {
    /** Every rank known by its process and GPU, so that the tags and fields of names are written too. */
    private static final InfluxSchema SCHEMA = new InfluxSchema(
            id -> "h" + id,
            (hostId, commHash, rank) -> new RankNames.Name(100 + rank, rank, "0000:19:00.0", "GPU-0"),
            EventClock.epoch());

    private static List<String> lines() {
        final List<String> lines = new ArrayList<>();
        final StringBuilder out = new StringBuilder();
        final LineProtocol p = new LineProtocol(out);
        for (int kind = 0; kind <= 4; kind++) {
            out.setLength(0);
            final FlowSummary s = kind == FlowSummary.KIND_QP
                    ? Summaries.qp(1, 0, 5, 0, 10, 1, 1, 1)
                    : Summaries.flow(kind, 1, 2, 3, 4, 5, true, 0, 10, 1, 1, 1, 1);
            for (int phase = 0; phase < Phase.COUNT; phase++) {
                Summaries.phase(s, phase, 1, 1, 1);
            }
            SCHEMA.flow(s, p);
            lines.add(out.toString());
        }
        out.setLength(0);
        SCHEMA.collective(
                Summaries.collective(
                        1,
                        2,
                        3,
                        8,
                        1,
                        Collectives.ALL_REDUCE,
                        Collectives.ALGO_RING,
                        Collectives.PROTO_LL,
                        10,
                        4,
                        0,
                        10),
                p);
        lines.add(out.toString());
        final var a = Anomalies.resolved(Anomalies.slowLink(1, 1, 2, 3, 4, Severity.WARNING, 10, -1), 20);
        out.setLength(0);
        SCHEMA.anomaly(a, "resolved", p);
        lines.add(out.toString());
        return lines;
    }

    private static String row(final String readme, final String measurement) {
        return readme.lines()
                .filter(l -> l.startsWith("| `" + measurement + "` |"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no row for " + measurement + " in sinks/README.md"));
    }

    @Test
    void everyTagAndFieldWrittenIsDocumentedInItsMeasurementsRow() throws IOException {
        final String readme = Files.readString(Path.of("README.md"));
        final TreeSet<String> missing = new TreeSet<>();
        for (final String line : lines()) {
            // test values hold no escaped characters: split on plain separators
            final String[] parts = line.split(" ");
            final String[] series = parts[0].split(",");
            final String row = row(readme, series[0]);
            for (int i = 1; i < series.length; i++) {
                final String tag = series[i].substring(0, series[i].indexOf('='));
                if (!row.contains("`" + tag + "`")) {
                    missing.add(series[0] + " tag " + tag);
                }
            }
            for (final String field : parts[1].split(",")) {
                final String key = field.substring(0, field.indexOf('='));
                final boolean documented = key.startsWith("ev_")
                        ? row.contains("`ev_<evidence name>`")
                        : row.contains("`" + key + "`")
                                || (key.matches("(gpu_wait|peer_wait|network|flush|gpu_consume)_(count|sum_ns|max_ns)")
                                        && row.contains("`<p>_"
                                                + key.replaceFirst(
                                                        "^(gpu_wait|peer_wait|network|flush|gpu_consume)_", "")
                                                + "`"));
                if (!documented) {
                    missing.add(series[0] + " field " + key);
                }
            }
        }
        assertThat(missing).as("written but not in the README's schema table").isEmpty();
    }
}
