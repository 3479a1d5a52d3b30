package io.flowscope.collector.traces;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.flowscope.anomaly.Anomaly;
import io.flowscope.collector.CollectorConfig;
import io.flowscope.collector.Replay;

/** Exploration: replays every trace folder under the given roots and prints what the stage raised. */
public final class TraceProbe
{
    public static void main(final String[] args) throws Exception
    {
        for (final String root : args)
        {
            try (Stream<Path> dirs = Files.list(Path.of(root)))
            {
                for (final Path d : dirs.sorted().toList())
                {
                    final Path events = d.resolve("events.jsonl.gz");
                    if (!Files.isRegularFile(events))
                    {
                        continue;
                    }
                    final GroundTruth truth = GroundTruth.read(d.resolve("truth.json"));
                    final CollectorConfig cfg = CollectorConfig.load(null, Map.of(), Map.of());
                    final Replay.Result r = Replay.run(events, cfg, Long.MIN_VALUE, Long.MAX_VALUE, null, null, x -> { });
                    System.out.printf("== %s (%s) %d batches %d entries, %d corrupt, %.1f s%n", d.getFileName(), truth,
                        r.documents(), r.entries(), r.corruptDocuments(), r.seconds());
                    final Map<Long, Anomaly> last = new java.util.LinkedHashMap<>();
                    r.events().forEach(e -> last.put(e.anomaly().id(), e.anomaly()));
                    for (final Anomaly a : last.values())
                    {
                        System.out.printf("  %s %s %s rank=%d peer=%d start=%+.1fms detect=%+.1fms end=%s  %s%n",
                            a.kind(), a.severity(), Long.toHexString(a.culprit().hostId()), a.culprit().rank(),
                            a.culprit().peer(), (a.startNs() - truth.faultStartNs()) / 1e6,
                            (a.detectedNs() - truth.faultStartNs()) / 1e6,
                            a.resolvedNs() > 0 ? String.format("%+.1fms", (a.resolvedNs() - truth.faultEndNs()) / 1e6) : "open",
                            a.summary());
                    }
                }
            }
        }
    }
}
