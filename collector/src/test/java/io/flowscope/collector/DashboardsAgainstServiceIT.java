package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.flowscope.dashboards.FlowscopeDashboards;
import io.flowscope.dashboards.GrafanaQueries;
import io.flowscope.dashboards.model.Dashboard;
import io.flowscope.sink.testing.InfluxServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #6 point 4's acceptance: the dashboards against what the service itself writes. A real influxd; the
 * service started as a user starts it, in its own JVM: {@code flowscope run --simulate <spec> --config <file>}, the
 * InfluxDB sink configured in the YAML file; a simulated 2 × 4 ring with a slow link, a congested NIC and a NIC
 * that goes down, each healing. Once every flow kind and the collectives are in influxd and the service has
 * announced the last resolution, it is stopped by its PID with SIGTERM, as systemd or Kubernetes stop it; then
 * every variable, annotation and panel query of every dashboard (each variable on its first value, then on All)
 * is sent as Grafana sends it, over the dashboard's own default time range (now-15m .. now), and must return
 * rows. Failures are reported together, each with its query.
 */
class DashboardsAgainstServiceIT {
    private static final String DB = "flowscope";

    /** The faults heal in turn, so each kind is opened and resolved; the first kind in order must be critical. */
    private static final String SCENARIO = "nodes=2,gpus=4,nics=2,channels=2,size=4M,seed=7,algo=ring,"
            + "fault=slow-link,rank=3,peer=4,fraction=0.3,at=300ms,for=600ms,"
            + "fault=congestion,node=1,device=0,fraction=0.5,at=1200ms,for=300ms,"
            + "fault=nic-down,node=0,device=1,at=1800ms,for=200ms,failover=300ms";

    private static final List<String> KINDS = List.of("congestion", "nic_stall", "slow_link");

    @TempDir
    Path dir;

    @Test
    void everyQueryOfEveryDashboardReturnsRowsFromWhatTheServiceWrote() throws Exception {
        try (InfluxServer influx = new InfluxServer().start()) {
            final Path config = dir.resolve("flowscope.yaml");
            Files.writeString(config, """
                http:
                  port: 0
                journal:
                  dir: %s
                sinks:
                  influxdb:
                    enabled: true
                    url: %s
                    database: %s
                """.formatted(dir.resolve("journal"), influx.url(), DB));
            final Path log = dir.resolve("service.log");
            final long t0 = System.nanoTime();
            final Process service = new ProcessBuilder(
                            serviceCommand("run", "--simulate", SCENARIO, "--config", config.toString()))
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            try {
                // the flows are waited for in influxd; the anomalies only on the console: the points of the last
                // ones are still queued in the sink when SIGTERM comes, and a clean stop must write them
                try {
                    await().atMost(Duration.ofSeconds(180))
                            .pollInterval(Duration.ofMillis(200))
                            .until(() -> {
                                if (!service.isAlive()) {
                                    throw new AssertionError(
                                            "the service exited with " + service.exitValue() + ":\n" + tail(read(log)));
                                }
                                final String out = read(log);
                                return out.contains("RESOLVED SLOW_LINK")
                                        && out.contains("RESOLVED CONGESTION")
                                        && out.contains("RESOLVED NIC_STALL")
                                        && everyFlowKindAndCollectives(influx);
                            });
                } catch (final ConditionTimeoutException e) {
                    throw new AssertionError(
                            "no resolution of every fault, or not every flow kind in influxd, "
                                    + "within 180 s; service log:\n" + tail(read(log)),
                            e);
                }
                final long stopping = System.nanoTime();
                service.toHandle().destroy();
                assertThat(service.waitFor(90, TimeUnit.SECONDS))
                        .as("stopped within 90 s after SIGTERM")
                        .isTrue();
                System.out.printf(
                        "service: %.1f s to the last resolution, %.1f s to stop (exit %d)%n",
                        (stopping - t0) / 1e9, (System.nanoTime() - stopping) / 1e9, service.exitValue());
                assertThat(read(log)).as("service log").contains("flowscope: stopping");
            } finally {
                if (service.isAlive()) {
                    service.toHandle().destroyForcibly();
                    service.waitFor(30, TimeUnit.SECONDS);
                }
            }

            final long now = System.currentTimeMillis();
            final List<String> failures = new ArrayList<>();
            // every fault's anomaly, also the last one, which was still queued in the sink at SIGTERM
            final List<String> kinds = tagValues(influx, "SHOW TAG VALUES FROM \"anomaly\" WITH KEY = \"kind\"");
            if (!kinds.equals(KINDS)) {
                failures.add("anomaly kinds in influxd: " + kinds + ", expected " + KINDS);
            }
            // one point per anomaly event the service announced: none lost to the stop or to the flows' backlog
            final long announced = read(log)
                    .lines()
                    .filter(l -> l.matches("^(OPENED|UPDATED|RESOLVED) .*"))
                    .count();
            final long written = influx.count(DB, "SELECT count(\"summary\") FROM \"anomaly\"");
            if (written != announced) {
                failures.add(written + " anomaly points in influxd for " + announced + " events on the console");
            }
            int queries = 0;
            for (final GrafanaQueries.Selection selection : GrafanaQueries.Selection.values()) {
                for (final Dashboard d : FlowscopeDashboards.all()) {
                    for (final GrafanaQueries.Query q : GrafanaQueries.of(
                            d, GrafanaQueries.timeFilter(d.time(), now), "1s", selection, v -> tagValues(influx, v))) {
                        queries++;
                        try {
                            if (influx.rows(DB, q.text()).isEmpty()) {
                                failures.add(selection + " " + q);
                            }
                        } catch (final RuntimeException e) {
                            failures.add(selection + " " + q + " -> " + e.getMessage());
                        }
                    }
                }
            }
            assertThat(queries).as("queries of the five dashboards, twice").isGreaterThanOrEqualTo(2 * 50);
            assertThat(failures)
                    .as(
                            "%d of %d queries returned no rows; service log:%n%s",
                            failures.size(), queries, tail(read(log)))
                    .isEmpty();
        }
    }

    /** The service's JVM: the test's classpath and the JVM flags Chronicle Queue needs (./flowscope's). */
    private static List<String> serviceCommand(final String... args) {
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("-Dchronicle.")) {
                cmd.add(a);
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    private static boolean everyFlowKindAndCollectives(final InfluxServer influx) {
        try {
            return tagValues(influx, "SHOW TAG VALUES FROM \"flow\" WITH KEY = \"kind\"")
                            .containsAll(List.of("comm", "link", "qp", "rank", "step"))
                    && influx.count(DB, "SELECT count(\"duration_ns\") FROM \"collective\"") > 0;
        } catch (final IllegalStateException e) {
            // before the sink's first write creates the database
            if (e.getMessage().contains("database not found")) {
                return false;
            }
            throw e;
        }
    }

    private static List<String> tagValues(final InfluxServer influx, final String query) {
        return influx.rows(DB, query).stream().map(r -> r.path(1).asText()).toList();
    }

    private static String read(final Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file) : "";
    }

    private static String tail(final String text) {
        return text.length() <= 8000 ? text : "..." + text.substring(text.length() - 8000);
    }
}
