package io.flowscope.bench;

import com.sun.net.httpserver.HttpServer;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.sink.BackPressure;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.SinkCounters;
import io.flowscope.sink.influx.InfluxConfig;
import io.flowscope.sink.influx.InfluxSchema;
import io.flowscope.sink.influx.InfluxSink;
import io.flowscope.sink.influx.LineProtocol;
import io.flowscope.sink.testing.Anomalies;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.testing.Summaries;
import io.flowscope.sink.webhook.HmacSigner;
import io.flowscope.sink.webhook.WebhookAlertSink;
import io.flowscope.sink.webhook.WebhookConfig;
import io.flowscope.sink.webhook.WebhookFormat;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Throughput of the sinks on this machine, end to end against real servers (docs/benchmarks.md section 7; run by benchmarks/sink-throughput.sh):
 * <ol>
 * <li>InfluxDB: step-flow summaries (22 fields each) through {@link InfluxSink} into a real influxd, the
 *     producer held back by block-with-timeout so nothing is dropped; points/s = exported / (first offer →
 *     flush done); checked: the server's count equals what was offered;</li>
 * <li>the caller's cost alone: encoding only, then encode + series cap + offer with a full queue (drop-oldest,
 *     server stopped, worker asleep in back-off);</li>
 * <li>webhooks: distinct anomalies through {@link WebhookAlertSink} to a local JDK HTTP receiver, one alert per
 *     POST (sends/s) and 64 per POST (alerts/s); checked: every alert arrived and every signature verifies.</li>
 * </ol>
 * Arguments: [points per run, default 300000] [webhook alerts per run, default 5000] [runs, default 3].
 * With {@code names [points] [rounds]}: only the encoding cost of a step-flow point with hex host tags and no rank
 * names (as before issue #18 item 5) against host names and every rank's GPU known (the {@code gpu} tag looked up
 * per point), alternating in one run.
 */
public final class SinkThroughput {
    private static final long T0 = System.currentTimeMillis() * 1_000_000L - 3_600_000_000_000L;

    private SinkThroughput() {}

    public static void main(final String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("names")) {
            encodeWithNames(
                    args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000,
                    args.length > 2 ? Integer.parseInt(args[2]) : 5);
            return;
        }
        final int points = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
        final int alerts = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        final int runs = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        System.out.printf(
                "java %s, %d CPUs%n",
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
        try (InfluxServer server = new InfluxServer().start()) {
            influx(server, "warmup", points / 3, 0);
            for (int run = 1; run <= runs; run++) {
                influx(server, "run" + run, points, run);
            }
            callerCost(server, points);
        }
        webhook("warmup", alerts / 5, 1, 0);
        for (int run = 1; run <= runs; run++) {
            webhook("1 alert/POST run" + run, alerts, 1, run * 1_000_000L);
        }
        for (int run = 1; run <= runs; run++) {
            webhook("64 alerts/POST run" + run, alerts * 4, 64, 100_000_000L + run * 1_000_000L);
        }
    }

    private static FlowSummary summary(final int i, final int run) {
        // 64 flows (8 ranks x 2 channels x 2 directions x 2 comms) x periods of 1 ms
        final int flow = i % 64;
        final long start = T0 + (long) (i / 64) * 1_000_000L + run * 100_000_000_000L;
        final FlowSummary s = Summaries.flow(
                FlowSummary.KIND_STEP,
                1 + flow / 32,
                0xa11ce5L + (flow / 32),
                flow % 8,
                (flow % 8 + 1) % 8,
                (flow / 8) % 2,
                (flow / 16) % 2 == 0,
                start,
                start + 1_000_000L,
                200,
                200L << 19,
                4,
                4L << 19);
        Summaries.phase(s, Phase.GPU_WAIT, 200, 600_000, 9_000);
        Summaries.phase(s, Phase.PEER_WAIT, 200, 1_000_000, 80_000);
        Summaries.phase(s, Phase.NETWORK, 200, 4_000_000, 60_000);
        return s;
    }

    private static void influx(final InfluxServer server, final String label, final int points, final int run) {
        final String db = "bench_" + label;
        final InfluxConfig config = InfluxConfig.builder(server.url(), db)
                .clock(EventClock.epoch())
                .processor(ProcessorConfig.builder()
                        .name("bench-influx")
                        .backPressure(BackPressure.BLOCK_WITH_TIMEOUT)
                        .blockTimeout(Duration.ofSeconds(30))
                        .build())
                .build();
        final long started;
        final long elapsed;
        final SinkCounters c;
        try (InfluxSink sink = new InfluxSink(config)) {
            started = System.nanoTime();
            for (int i = 0; i < points; i++) {
                sink.onSummary(summary(i, run));
            }
            if (!sink.flush(Duration.ofMinutes(5))) {
                throw new IllegalStateException("flush did not finish: " + sink.counters());
            }
            elapsed = System.nanoTime() - started;
            c = sink.counters();
        }
        final long stored = server.count(db, "SELECT count(bytes) FROM flow");
        if (c.exported() != points || stored != points || c.lost() != 0) {
            throw new IllegalStateException(
                    label + ": offered " + points + ", exported " + c.exported() + ", stored " + stored + ", " + c);
        }
        System.out.printf(
                "influx %-7s %,9d points in %6.2f s = %,9.0f points/s (batches %d, retries %d, lost %d)%n",
                label, points, elapsed / 1e9, points * 1e9 / elapsed, c.batches(), c.retries(), c.lost());
    }

    private record RankKey(long hostId, long commHash, int rank) {}

    /**
     * Encoding alone, per point: hex host tags and no rank names (the baseline) against host names and a rank-name
     * lookup per point as the collector wires it (a concurrent map keyed by host, comm and rank behind
     * {@link RankNames}; every rank known, so every point gets a {@code gpu} tag). Alternating rounds, same JVM.
     */
    private static void encodeWithNames(final int points, final int rounds) {
        final java.util.Map<RankKey, RankNames.Name> ranks = new java.util.concurrent.ConcurrentHashMap<>();
        final FlowSummary[] summaries = new FlowSummary[64];
        for (int i = 0; i < summaries.length; i++) {
            summaries[i] = summary(i, 7);
            ranks.put(
                    new RankKey(summaries[i].hostId(), summaries[i].commHash(), summaries[i].rank()),
                    new RankNames.Name(
                            40_000 + summaries[i].rank(),
                            summaries[i].rank(),
                            "0000:19:00.0",
                            "GPU-f5ca0000-0000-4000-8000-000000000000"));
        }
        final InfluxSchema hex = new InfluxSchema(InfluxSchema::hexHost, EventClock.epoch());
        final InfluxSchema named = new InfluxSchema(
                id -> "gpu-node-" + id, (h, c, r) -> ranks.get(new RankKey(h, c, r)), EventClock.epoch());
        final StringBuilder out = new StringBuilder(512);
        final LineProtocol line = new LineProtocol(out);
        long checksum = 0;
        for (int round = 0; round < rounds; round++) {
            for (final boolean withNames : new boolean[] {false, true}) {
                final InfluxSchema schema = withNames ? named : hex;
                final long started = System.nanoTime();
                for (int i = 0; i < points; i++) {
                    out.setLength(0);
                    schema.flow(summaries[i & 63], line);
                    checksum += out.length();
                }
                final long elapsed = System.nanoTime() - started;
                System.out.printf(
                        "names   round%d  %,9d summaries encoded, %-32s %5.0f ns each (%d B a line)%n",
                        round,
                        points,
                        withNames ? "host names + gpu tag lookup:" : "hex hosts, no rank names:",
                        (double) elapsed / points,
                        out.length());
            }
        }
        System.out.println("(checksum " + checksum + ")");
    }

    /**
     * The caller's (engine thread's) cost, two ways: encoding alone into a reused builder; and the whole
     * {@code onSummary} (encode, series cap, copy, offer) with the server stopped and the worker asleep in a
     * 10 s back-off, so the queue is full and every offer evicts the oldest point (the worker takes no CPU).
     */
    private static void callerCost(final InfluxServer server, final int points) {
        final InfluxSchema schema = new InfluxSchema(InfluxSchema::hexHost, EventClock.epoch());
        final StringBuilder out = new StringBuilder(512);
        final LineProtocol line = new LineProtocol(out);
        final FlowSummary[] summaries = new FlowSummary[64];
        for (int i = 0; i < summaries.length; i++) {
            summaries[i] = summary(i, 7);
        }
        long checksum = 0;
        for (int round = 0; round < 3; round++) {
            final long started = System.nanoTime();
            for (int i = 0; i < points; i++) {
                out.setLength(0);
                schema.flow(summaries[i & 63], line);
                checksum += out.length();
            }
            final long elapsed = System.nanoTime() - started;
            System.out.printf(
                    "caller  round%d  %,9d summaries encoded only:                   %5.0f ns each%n",
                    round, points, (double) elapsed / points);
        }
        server.stop();
        final InfluxConfig config = InfluxConfig.builder(server.url(), "down")
                .clock(EventClock.epoch())
                .createDatabase(false)
                .processor(ProcessorConfig.builder()
                        .name("bench-caller")
                        .queueCapacity(65_536)
                        .maxAttempts(1_000)
                        .initialBackoff(Duration.ofSeconds(10))
                        .maxBackoff(Duration.ofSeconds(10))
                        .build())
                .build();
        try (InfluxSink sink = new InfluxSink(config)) {
            for (int round = 0; round < 3; round++) {
                final long started = System.nanoTime();
                for (int i = 0; i < points; i++) {
                    sink.onSummary(summaries[i & 63]);
                }
                final long elapsed = System.nanoTime() - started;
                System.out.printf(
                        "caller  round%d  %,9d onSummary (encode+cap+offer), queue full: %5.0f ns each%n",
                        round, points, (double) elapsed / points);
            }
            System.out.println("caller  counters " + sink.counters() + " (checksum " + checksum + ")");
        }
    }

    private static void webhook(final String label, final int alerts, final int batch, final long idBase)
            throws Exception {
        final byte[] secret = "bench-secret".getBytes(StandardCharsets.UTF_8);
        final AtomicLong received = new AtomicLong();
        final AtomicLong requests = new AtomicLong();
        final AtomicLong badSignatures = new AtomicLong();
        final HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(2));
        receiver.createContext("/api/v2/alerts", ex -> {
            final byte[] body = ex.getRequestBody().readAllBytes();
            if (!HmacSigner.verify(
                    secret, body, ex.getRequestHeaders().getFirst(WebhookConfig.DEFAULT_SIGNATURE_HEADER))) {
                badSignatures.incrementAndGet();
            }
            int n = 0;
            for (int i = 0; i < body.length; i++) {
                n += body[i] == '{' && i + 9 < body.length && body[i + 1] == '"' && body[i + 2] == 'l' ? 1 : 0;
            }
            received.addAndGet(n);
            requests.incrementAndGet();
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        receiver.start();
        try {
            final URI url =
                    URI.create("http://127.0.0.1:" + receiver.getAddress().getPort() + "/api/v2/alerts");
            final WebhookConfig config = WebhookConfig.builder(url)
                    .format(WebhookFormat.ALERTMANAGER)
                    .secret("bench-secret")
                    .clock(EventClock.epoch())
                    .processor(ProcessorConfig.builder()
                            .name("bench-webhook")
                            .maxBatch(batch)
                            .queueCapacity(100_000)
                            .flushInterval(Duration.ofMillis(1))
                            .backPressure(BackPressure.BLOCK_WITH_TIMEOUT)
                            .blockTimeout(Duration.ofSeconds(30))
                            .build())
                    .build();
            final long started;
            final long elapsed;
            final SinkCounters c;
            try (WebhookAlertSink sink = new WebhookAlertSink(config)) {
                started = System.nanoTime();
                for (int i = 0; i < alerts; i++) {
                    sink.onOpened(Anomalies.slowLink(
                            idBase + i, 1, 0xa11ce5L, i % 8, (i + 1) % 8, Severity.WARNING, T0 + i * 1_000_000L, -1));
                }
                if (!sink.flush(Duration.ofMinutes(5))) {
                    throw new IllegalStateException("flush did not finish: " + sink.counters());
                }
                elapsed = System.nanoTime() - started;
                c = sink.counters();
            }
            if (received.get() != alerts || badSignatures.get() != 0 || c.lost() != 0) {
                throw new IllegalStateException(label + ": sent " + alerts + ", received " + received
                        + ", bad signatures " + badSignatures + ", " + c);
            }
            System.out.printf(
                    "webhook %-18s %,7d alerts in %,7d POSTs, %6.2f s = %,8.0f POSTs/s, %,8.0f alerts/s%n",
                    label,
                    alerts,
                    requests.get(),
                    elapsed / 1e9,
                    requests.get() * 1e9 / elapsed,
                    alerts * 1e9 / elapsed);
        } finally {
            receiver.stop(0);
            ((java.util.concurrent.ExecutorService) receiver.getExecutor()).shutdownNow();
        }
    }
}
