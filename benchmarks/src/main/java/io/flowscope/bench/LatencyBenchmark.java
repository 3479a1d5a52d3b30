package io.flowscope.bench;

import static io.flowscope.ring.EventKind.PROXY_OP;
import static io.flowscope.ring.EventKind.PROXY_STEP;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.TestRingWriter;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * End-to-end latency, ring record → anomaly event on the live stream (SSE), through the whole service: one real
 * ring (this process, 8 ranks of one communicator in a ring pattern, one 64 KiB send step per link every 200 µs,
 * written in real time with CLOCK_MONOTONIC = System.nanoTime() stamps), the link 3 → 4 made 5x slower for 300 ms
 * out of every 600 ms. Each opened (resolved) anomaly was decided at the event time of a ring record
 * ({@code detectedNs} / {@code resolvedNs}); latency = the SSE client's receive time − that time. Prints one
 * line of figures; fails (exit 1) if no anomaly event arrived.
 * <pre>
 * benchmarks/run-main.sh LatencyBenchmark [seconds, default 30]
 * </pre>
 */
public final class LatencyBenchmark {
    private LatencyBenchmark() {}

    public static void main(final String[] args) throws Exception {
        final Path dir = Files.createTempDirectory("flowscope-latency-");
        final int events;
        try {
            events = measure(dir, args.length > 0 ? Long.parseLong(args[0]) : 30);
        } finally {
            BenchFiles.removeTree(dir);
        }
        if (events == 0) {
            System.err.println("latency benchmark: no anomaly event arrived on the live stream");
            System.exit(1);
        }
    }

    /** Runs the service and the ring writer, prints the figures; returns the anomaly events measured. */
    private static int measure(final Path dir, final long seconds) throws Exception {
        Files.createDirectories(dir.resolve("rings"));
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.dir", dir.resolve("journal").toString());
        final List<long[]> samples = Collections.synchronizedList(new ArrayList<>());
        final AtomicBoolean stop = new AtomicBoolean();
        final int pid = (int) ProcessHandle.current().pid();
        try (CollectorService s = CollectorService.start(CollectorConfig.load(null, Map.of(), o), e -> {});
                TestRingWriter w = TestRingWriter.builder(dir.resolve("rings/flowscope-" + pid + "-0.ring"))
                        .capacity(1 << 20)
                        .pid(pid)
                        .hostname(io.flowscope.ring.RingDirectory.localHostname())
                        .create()) {
            final HttpClient client = HttpClient.newHttpClient();
            final HttpResponse<InputStream> stream = client.send(
                    HttpRequest.newBuilder(URI.create(s.url() + "api/stream")).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            final Thread reader = new Thread(() -> readStream(stream.body(), samples, stop), "sse-reader");
            reader.setDaemon(true);
            reader.start();

            final int ranks = 8;
            final int[] comm = new int[ranks];
            for (int r = 0; r < ranks; r++) {
                comm[r] = w.comm(0xBE7CL, r, ranks, 1, "bench");
            }
            final TestRingWriter.Draft d = new TestRingWriter.Draft();
            final long[] op = new long[ranks];
            final long[] next = new long[ranks];
            long serial = 1;
            final long start = System.nanoTime();
            final long end = start + seconds * 1_000_000_000L;
            int stepOfOp = 0;
            long written = 0;
            while (System.nanoTime() < end) {
                final long now = System.nanoTime();
                final boolean slow = ((now - start) / 300_000_000L) % 2 == 1;
                for (int r = 0; r < ranks; r++) {
                    if (now < next[r]) {
                        continue;
                    }
                    next[r] = now + 200_000;
                    final long base = (long) comm[r] << 48;
                    if (op[r] == 0 || stepOfOp >= 64 * ranks) {
                        if (op[r] != 0) {
                            w.append(d.stop(PROXY_OP, r, now, op[r]));
                        }
                        op[r] = (long) PROXY_OP.code() << 60 | base | serial++;
                        w.append(d.start(PROXY_OP, r, now, op[r], 0)
                                .proxyOp(pid, (r + 1) % ranks, 1 << 20, 65536, 0, true));
                    }
                    final long step = (long) PROXY_STEP.code() << 60 | base | serial++;
                    final long net = slow && r == 3 ? 25_000 : 5_000;
                    final long t = System.nanoTime();
                    w.append(d.start(PROXY_STEP, r, t, step, op[r]).proxyStep(stepOfOp));
                    w.append(d.state(PROXY_STEP, r, t, step, NcclState.PROXY_STEP_SEND_GPU_WAIT, 0));
                    w.append(d.state(PROXY_STEP, r, t, step, NcclState.PROXY_STEP_SEND_PEER_WAIT, 65536));
                    w.append(d.state(PROXY_STEP, r, t, step, NcclState.PROXY_STEP_SEND_WAIT, 65536));
                    w.append(d.stop(PROXY_STEP, r, t + net, step));
                    written += 5;
                }
                stepOfOp = stepOfOp >= 64 * ranks ? 0 : stepOfOp + 1;
                Thread.onSpinWait();
            }
            Thread.sleep(500);
            stop.set(true);
            // the first 3 s are warm-up (JIT, first journal cycle file): reported apart
            final long warm = start + 3_000_000_000L;
            final List<long[]> steady =
                    samples.stream().filter(x -> x[3] >= warm).toList();
            final long[] all = samples.stream().mapToLong(x -> x[0]).sorted().toArray();
            final long[] lat = steady.stream().mapToLong(x -> x[0]).sorted().toArray();
            final long opened = steady.stream().filter(x -> x[1] == 1).count();
            final long[] pipe = steady.stream().mapToLong(x -> x[2]).sorted().toArray();
            final String report = String.format(
                    "records written %d in %d s (%.0f/s); anomaly events on the stream %d "
                            + "(%d opened) after a 3 s warm-up; ring record -> SSE receive: p50 %.3f ms, p99 %.3f ms, max %.3f ms; ring record -> "
                            + "stage publish: p50 %.3f ms, p99 %.3f ms; including warm-up (%d events): max %.3f ms%n",
                    written,
                    seconds,
                    written / (double) seconds,
                    lat.length,
                    opened,
                    pct(lat, 50) / 1e6,
                    pct(lat, 99) / 1e6,
                    lat.length == 0 ? 0 : lat[lat.length - 1] / 1e6,
                    pct(pipe, 50) / 1e6,
                    pct(pipe, 99) / 1e6,
                    all.length,
                    all.length == 0 ? 0 : all[all.length - 1] / 1e6);
            System.out.print(report);
            return lat.length;
        }
    }

    private static double pct(final long[] sorted, final int p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    private static void readStream(final InputStream in, final List<long[]> samples, final AtomicBoolean stop) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String event = null;
            String line;
            while (!stop.get() && (line = r.readLine()) != null) {
                final long recv = System.nanoTime();
                if (line.startsWith("event: ")) {
                    event = line.substring(7);
                } else if (line.startsWith("data: ") && "anomaly".equals(event)) {
                    final JsonNode e = Json.MAPPER.readTree(line.substring(6));
                    final JsonNode a = e.get("anomaly");
                    final boolean opened = "opened".equals(e.get("type").asText());
                    final boolean resolved = "resolved".equals(e.get("type").asText());
                    if (opened || resolved) {
                        final long at = opened
                                ? a.get("detectedNs").asLong()
                                : a.get("resolvedNs").asLong();
                        samples.add(new long[] {
                            recv - at, opened ? 1 : 0, e.get("publishedMonoNs").asLong() - at, recv
                        });
                    }
                }
            }
        } catch (final Exception e) {
            // the service stopped
        }
    }
}
