package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.ingest.SimulatorSource;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.SimulatedRun;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #18 item 2 against the real Prometheus server and promtool that Debian packages ({@code prometheus} 2.42;
 * .ci/run installs it): the service runs on a simulated cluster; {@code promtool check metrics} finds no problem in
 * a scrape of {@code /metrics}; a Prometheus on 127.0.0.1 scraping it every second answers
 * {@code sum(rate(flowscope_link_bytes_total{direction="send"}[5s]))} with the simulated traffic.
 * <p>
 * <b>The simulated traffic</b> is computed here independently of the service: the same scenario run through its own
 * {@link ClusterSimulator}, summing the bytes every send step posts (state 9's size) over {@link #TRUTH_SECONDS}
 * simulated seconds. The service's simulator follows the wall clock (speed 1), so bytes per simulated second are
 * bytes per second of the scrape's clock. <b>Tolerance 15 %</b>: the counters move once per publish interval (100
 * ms here) and Prometheus samples them once a second, so the counter delta seen over the 5 s window is off by up
 * to a publish interval at each end (±2 × 0.1 s / 4 s ≈ ±5 %, rate() extrapolating the first and last sample to the
 * window's edges); the ring allreduce moves its bytes in bursts a collective long (a few ms) with gaps, which over
 * 5 s averages out to well under 1 %; and a loaded 2-core CI machine may delay a drain iteration or a scrape by
 * tens of ms (a few % more). A counter that counted each step twice, or the recv side too, or only the latest
 * 1 ms period, would be off by 100 % or more.
 */
class PrometheusScrapeIT {
    private static final String SCENARIO = "nodes=2,gpus=2,channels=2,size=4M,seed=7,algo=ring,bw=2e9";
    private static final int TRUTH_SECONDS = 5;
    private static final double TOLERANCE = 0.15;
    private static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
    private static final Path PROMTOOL = Path.of("/usr/bin/promtool");

    @TempDir
    Path dir;

    /** Bytes per simulated second the scenario's send steps post (state 9's transSize), over its first seconds. */
    static double simulatedSendBytesPerSecond(final String scenario, final int seconds) {
        // the scenario as the service's source runs it (its duration: the service's, not the spec's default)
        final ClusterSimulator sim = new ClusterSimulator(new SimulatorSource(scenario, 1.0, 120).scenario());
        final long[] bytes = new long[1];
        final NoopListener count = new NoopListener() {
            @Override
            public void onProxyStepState(final long stepKey, final int state, final long transSize, final long t) {
                if (state == 9) {
                    bytes[0] += transSize;
                }
            }
        };
        // in the source's 1 ms steps (SimulatorSource.poll)
        for (long t = SimulatedRun.STEP_NS; t <= seconds * 1_000_000_000L; t += SimulatedRun.STEP_NS) {
            sim.advanceTo(t, count);
        }
        return bytes[0] / (double) seconds;
    }

    @Test
    void promtoolFindsNoProblemAndPrometheusRatesTheSimulatedTraffic() throws Exception {
        assertThat(Files.isExecutable(PROMETHEUS) && Files.isExecutable(PROMTOOL))
                .as(
                        "the real Prometheus server and promtool are needed: apt-get install prometheus (.ci/run installs it)")
                .isTrue();
        final double expected = simulatedSendBytesPerSecond(SCENARIO, TRUTH_SECONDS);
        assertThat(expected).isGreaterThan(1e8);

        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("journal.enabled", "false");
        o.put("publish.intervalMs", "100");
        o.put("simulate.scenario", SCENARIO);
        o.put("simulate.durationSeconds", "120");
        try (CollectorService s = CollectorService.start(CollectorConfig.load(null, Map.of(), o), e -> {})) {
            final int port = freePort();
            final Path config = dir.resolve("prometheus.yml");
            Files.writeString(
                    config,
                    "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                            + "scrape_configs:\n  - job_name: flowscope\n    scrape_interval: 1s\n    scrape_timeout: 900ms\n"
                            + "    static_configs:\n      - targets: ['"
                            + URI.create(s.url()).getAuthority() + "']\n");
            final Process prometheus = new ProcessBuilder(
                            PROMETHEUS.toString(),
                            "--config.file=" + config,
                            "--storage.tsdb.path=" + dir.resolve("data"),
                            "--web.listen-address=127.0.0.1:" + port,
                            "--log.level=warn")
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("prometheus.log").toFile())
                    .start();
            try {
                final String api = "http://127.0.0.1:" + port;
                // promtool on what the service serves to a client that asks for nothing in particular (text 0.0.4)
                final String scrape = Http.get(s.url() + "metrics").body();
                final Process promtool = new ProcessBuilder(PROMTOOL.toString(), "check", "metrics")
                        .redirectErrorStream(true)
                        .start();
                promtool.getOutputStream().write(scrape.getBytes(StandardCharsets.UTF_8));
                promtool.getOutputStream().close();
                final String problems = new String(promtool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(promtool.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(problems)
                        .as("promtool check metrics on:%n%s", scrape)
                        .isEmpty();
                assertThat(promtool.exitValue()).isZero();

                // the target is up, and has been scraped for a whole rate window and more
                final long upDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!"1".equals(value(api, "up{job=\"flowscope\"}")) && System.nanoTime() < upDeadline) {
                    Thread.sleep(200);
                }
                assertThat(value(api, "up{job=\"flowscope\"}"))
                        .as("target up; %s", log())
                        .isEqualTo("1");
                Thread.sleep(7_000);
                assertThat(String.valueOf(s.health().get("reasons")))
                        .as("the service's simulator keeps up with " + "the wall clock")
                        .doesNotContain("falls behind");
                final String rate = value(api, "sum(rate(flowscope_link_bytes_total{direction=\"send\"}[5s]))");
                assertThat(rate).as("PromQL answered; %s", log()).isNotNull();
                System.out.printf(
                        "PrometheusScrapeIT: Prometheus rates %s send B/s, the simulated run posts %.6g%n",
                        rate, expected);
                assertThat(Double.parseDouble(rate))
                        .as("send bytes/s Prometheus rates vs the simulated %.4g", expected)
                        .isBetween(expected * (1 - TOLERANCE), expected * (1 + TOLERANCE));
                // the Prometheus scrape itself (OpenMetrics, negotiated) is clean in Prometheus' own eyes
                assertThat(value(api, "scrape_samples_scraped{job=\"flowscope\"}"))
                        .isNotNull();
            } finally {
                prometheus.destroy(); // SIGTERM to this PID
                if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                    prometheus.destroyForcibly();
                }
            }
        }
    }

    private String log() {
        try {
            return "prometheus log: " + Files.readString(dir.resolve("prometheus.log"));
        } catch (final IOException e) {
            return "no prometheus log";
        }
    }

    /** The value of an instant query's single result, or null when there is none. */
    private static String value(final String api, final String promql) throws Exception {
        final HttpResponse<String> r;
        try {
            r = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(api + "/api/v1/query?query="
                                            + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
        } catch (final java.net.ConnectException e) {
            return null; // not listening yet
        }
        if (r.statusCode() != 200) {
            return null;
        }
        final JsonNode result =
                new ObjectMapper().readTree(r.body()).path("data").path("result");
        return result.size() == 1 ? result.get(0).path("value").get(1).asText() : null;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
