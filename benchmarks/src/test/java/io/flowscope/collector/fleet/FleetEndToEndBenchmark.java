package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.collector.CollectorService;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.pipeline.Announcements;
import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.sink.SinkCounters;
import io.flowscope.sink.influx.InfluxSink;
import io.flowscope.sink.testing.InfluxServer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opt-in ({@code -Dflowscope.bench=true}): the whole fleet path timed in one run, as deploy/local-cluster.sh deploys
 * it. A real Kafka broker ({@link KafkaBroker}) and a real influxd ({@link InfluxServer}); an aggregator (as
 * {@code run --role aggregator}: {@code CollectorService} around an {@link Aggregator}, its InfluxDB sink on, database {@code fs_fleet}) is
 * up and owns the partitions before the clock starts; then an agent (as {@code simulate --role agent}: the service
 * simulating the demo 2x4 cluster at full speed, journaling it, its InfluxDB sink on, database {@code fs_agent}, and
 * its {@link AgentPublisher} following the journal to Kafka) is started at t0. Timed from t0 to: the last summary
 * point queryable in influxd (counted by queries, once the sink has nothing queued: every point the sink exported is
 * there), the aggregator having consumed every summary, and the last of its anomaly points queryable in influxd.
 * Checked at the end: the counts (InfluxDB points = exported, drops as the sink counts them; the publisher's outputs
 * = those of a replay of the journal; the aggregator's records = the summaries; its anomaly points = its anomaly
 * events). Also reported: CPU seconds per thread group of the test JVM and of influxd and the broker.
 * {@code -Dflowscope.bench.seconds=N} (simulated seconds, default 5), {@code -Dflowscope.bench.periodMs=N} (the
 * agent's window period, default 1 ms as deployed). {@code -Dflowscope.bench.jfr=FILE} records a JFR profile of the test JVM over the timed part. The figures are in
 * docs/benchmarks.md section 8.
 */
@EnabledIfSystemProperty(named = "flowscope.bench", matches = "true")
class FleetEndToEndBenchmark {
    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    @TempDir
    Path dir;

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Map<Long, String> threadNames = new HashMap<>();
    private final Map<Long, Long> threadCpu = new HashMap<>();

    @Test
    void shouldMeasureTheAgentToKafkaToAggregatorToInfluxDbPathEndToEnd() throws Exception {
        final long seconds = Long.getLong("flowscope.bench.seconds", 5);
        final long timeoutNs = Long.getLong("flowscope.bench.timeoutSeconds", 900) * 1_000_000_000L;
        try (InfluxServer influx = new InfluxServer().start()) {
            final FleetConfig aggFleet = fleet("aggregator", "bench-aggregator");
            final FleetConfig agentFleet = fleet("agent", "bench-agent");
            Topics.ensure(agentFleet);
            final Map<String, String> ao = new LinkedHashMap<>();
            ao.put("http.port", "0");
            ao.put("journal.enabled", "false");
            ao.put("sinks.influxdb.enabled", "true");
            ao.put("sinks.influxdb.url", influx.url().toString());
            ao.put("sinks.influxdb.database", "fs_fleet");
            final AtomicLong fleetEvents = new AtomicLong();
            final Announcements announced = new Announcements();
            final Aggregator agg = new Aggregator(aggFleet, "bench", announced);
            try (CollectorService served = CollectorService.start(
                    CollectorConfig.load(null, Map.of(), ao), agg, announced, e -> fleetEvents.incrementAndGet())) {
                final InfluxSink aggSink = influxOf(served.sinks());
                waitFor(() -> agg.assigned().size() == agentFleet.partitions(), 120, "aggregator owns the partitions");

                final Map<String, String> o = new LinkedHashMap<>();
                o.put("http.port", "0");
                o.put("ring.dir", dir.resolve("rings").toString());
                o.put("journal.dir", dir.resolve("journal").toString());
                o.put("simulate.scenario", "default");
                o.put("simulate.durationSeconds", Long.toString(seconds));
                o.put("simulate.speed", "1000");
                o.put("window.periodMs", Long.toString(Long.getLong("flowscope.bench.periodMs", 1)));
                o.put("sinks.influxdb.enabled", "true");
                o.put("sinks.influxdb.url", influx.url().toString());
                o.put("sinks.influxdb.database", "fs_agent");
                final CollectorConfig config = CollectorConfig.load(null, Map.of(), o);
                final AtomicLong agentEvents = new AtomicLong();

                final Recording jfr = startJfr();
                final long influxPid = influx.pid();
                final long brokerPid = brokerPid();
                final double influxCpu0 = cpuSeconds(influxPid);
                final double brokerCpu0 = cpuSeconds(brokerPid);
                sampleThreads();
                final Map<Long, Long> threadCpu0 = new HashMap<>(threadCpu);

                final long t0 = System.nanoTime();
                long tDrain = 0;
                long tAgentInflux = 0;
                long tAggregated = 0;
                long tFleetInflux = 0;
                long tPublished = 0;
                long lastPublished = -1;
                long lastRecords = -1;
                long tRecords = 0;
                long lastFleetPoints = 0;
                long tFleetPoints = 0;
                long summaries = -1;
                try (CollectorService s = CollectorService.start(config, e -> agentEvents.incrementAndGet());
                        AgentPublisher publisher = Agents.start(s, config, agentFleet)) {
                    final InfluxSink agentSink = influxOf(s.sinks());
                    while (tAgentInflux == 0 || tFleetInflux == 0) {
                        Thread.sleep(100);
                        final long now = System.nanoTime();
                        sampleThreads();
                        assertThat(now - t0).as("timed out").isLessThan(timeoutNs);
                        assertThat(s.failure()).isNull();
                        assertThat(agg.failed()).isNull();
                        if (publisher.publishedUpTo() != lastPublished) {
                            lastPublished = publisher.publishedUpTo();
                            tPublished = now;
                        }
                        if (agg.records() != lastRecords) {
                            lastRecords = agg.records();
                            tRecords = now;
                        }
                        // the aggregator's anomaly points (few): the time the last of them was first seen queryable
                        final long fleetPoints = influx.count("fs_fleet", "SELECT count(\"summary\") FROM \"anomaly\"");
                        if (fleetPoints != lastFleetPoints) {
                            lastFleetPoints = fleetPoints;
                            tFleetPoints = System.nanoTime();
                        }
                        if (tDrain == 0 && s.finished()) {
                            tDrain = now;
                        }
                        if (tDrain == 0) {
                            continue;
                        }
                        final SinkCounters flows = flowCounters(agentSink);
                        summaries = flows.offered() + agentSink.counters().refused();
                        if (tAgentInflux == 0
                                && settled(flows)
                                && settled(agentSink.anomalyCounters())
                                && points(influx, "fs_agent") == flows.exported()
                                && influx.count("fs_agent", "SELECT count(\"summary\") FROM \"anomaly\"")
                                        == agentSink.anomalyCounters().exported()) {
                            tAgentInflux = System.nanoTime();
                        }
                        // the publisher follows the journal and does not close the last period (the service's drain
                        // does, at the source's end): it is done when it has published all it produced, and the
                        // aggregator when it has no lag and its count no longer moves (time: its last change)
                        if (tAggregated == 0
                                && publisher.publishedUpTo() == publisher.produced()
                                && publisher.produced() > 0
                                && agg.lag() == 0
                                && now - tRecords > 1_000_000_000L
                                && now - tPublished > 1_000_000_000L) {
                            tAggregated = tRecords;
                        }
                        final SinkCounters fa = aggSink.anomalyCounters();
                        if (tAggregated != 0
                                && tFleetInflux == 0
                                && settled(fa)
                                && fa.offered() == fleetEvents.get()
                                && fleetPoints == fa.exported()) {
                            tFleetInflux = tFleetPoints;
                        }
                    }
                    final long tEnd = Math.max(Math.max(tAgentInflux, tFleetInflux), tAggregated);
                    final Path jfrFile = stopJfr(jfr);
                    final double influxCpu = cpuSeconds(influxPid) - influxCpu0;
                    final double brokerCpu = cpuSeconds(brokerPid) - brokerCpu0;
                    sampleThreads();

                    // what the service's pipeline did, and the sinks' final counters
                    final long events = s.snapshot().stats().eventsTotal();
                    final SinkCounters flows = flowCounters(agentSink);
                    final SinkCounters agentAnoms = agentSink.anomalyCounters();
                    final SinkCounters fleetAnoms = aggSink.anomalyCounters();
                    final long flowPoints = influx.count("fs_agent", "SELECT count(\"bytes\") FROM \"flow\"");
                    final long collPoints = influx.count("fs_agent", "SELECT count(\"bytes\") FROM \"collective\"");
                    final long agentAnomPoints = influx.count("fs_agent", "SELECT count(\"summary\") FROM \"anomaly\"");
                    final long fleetAnomPoints = influx.count("fs_fleet", "SELECT count(\"summary\") FROM \"anomaly\"");

                    // the reference (untimed): the journal replayed through the engines, as the publisher does
                    final long[] ref = replay(config);
                    final double total = (tEnd - t0) / 1e9;
                    System.out.printf(
                            "FLEET E2E: %d simulated s; %d engine input events (service), %d summaries "
                                    + "(flow + collective; the publisher: %d), %d agent anomaly events, %d aggregator anomaly "
                                    + "events%n",
                            seconds, events, summaries, ref[0], agentEvents.get(), fleetEvents.get());
                    System.out.printf(
                            "FLEET E2E: agent drain (simulate + journal + engines + sink encode) done at "
                                    + "%.2f s; summary points all queryable in influxd at %.2f s; publisher's last mark at %.2f s; "
                                    + "aggregator consumed all summaries at %.2f s; its anomaly points all queryable at %.2f s%n",
                            sec(tDrain - t0),
                            sec(tAgentInflux - t0),
                            sec(tPublished - t0),
                            sec(tAggregated - t0),
                            sec(tFleetInflux - t0));
                    System.out.printf(
                            "FLEET E2E: end to end %.2f s: %.0f events/s, %.0f summaries/s, %.0f points/s "
                                    + "(%d flow + %d collective + %d anomaly points in fs_agent, %d anomaly points in fs_fleet)%n",
                            total,
                            events / total,
                            summaries / total,
                            (flowPoints + collPoints + agentAnomPoints + fleetAnomPoints) / total,
                            flowPoints,
                            collPoints,
                            agentAnomPoints,
                            fleetAnomPoints);
                    System.out.printf(
                            "FLEET E2E: agent influx sink: summaries %s; anomalies %s; aggregator influx "
                                    + "sink anomalies %s; series %d%n",
                            flows, agentAnoms, fleetAnoms, agentSink.series());
                    System.out.printf(
                            "FLEET E2E: publisher: publishedUpTo %d (replay: %d outputs, %d summaries, "
                                    + "%d events), sent %d, sessions %d, failures %d; aggregator: records %d, duplicates %d, "
                                    + "transactions %d, anomalies %d%n",
                            publisher.publishedUpTo(),
                            ref[1],
                            ref[0],
                            ref[2],
                            publisher.sent(),
                            publisher.sessions(),
                            publisher.failures(),
                            agg.records(),
                            agg.duplicates(),
                            agg.transactions(),
                            agg.anomalies().size());
                    System.out.printf(
                            "FLEET E2E: CPU seconds over the timed %.2f s: influxd %.1f, Kafka broker "
                                    + "%.1f, test JVM threads %s%n",
                            total, influxCpu, brokerCpu, cpuByGroup(threadCpu0));
                    if (jfrFile != null) {
                        System.out.println("FLEET E2E: JFR recording " + jfrFile);
                    }

                    // correctness: every point the sinks exported is queryable; nothing refused or lost unseen
                    assertThat(flowPoints + collPoints)
                            .as("summary points in influxd")
                            .isEqualTo(flows.exported());
                    assertThat(flows.offered())
                            .isEqualTo(flows.exported()
                                    + flows.droppedQueueFull()
                                    + flows.droppedAfterRetries()
                                    + flows.rejected());
                    assertThat(agentAnomPoints).isEqualTo(agentAnoms.exported());
                    assertThat(agentAnoms.offered()).isEqualTo(agentEvents.get());
                    assertThat(fleetAnomPoints).isEqualTo(fleetAnoms.exported());
                    assertThat(fleetAnoms.offered()).isEqualTo(fleetEvents.get());
                    assertThat(fleetAnoms.exported())
                            .as("fleet anomaly points, none dropped")
                            .isEqualTo(fleetEvents.get());
                    // the service's pipeline and a replay of its journal agree (the last period too: the journal's
                    // end marker tells the publisher where the live run ended it); Kafka got every output once
                    assertThat(summaries).isEqualTo(ref[0]);
                    assertThat(publisher.publishedUpTo()).isEqualTo(ref[1]);
                    assertThat(agg.records() - agg.duplicates()).isEqualTo(ref[0]);
                    assertThat(agg.anomalies()).isNotEmpty();
                    assertThat(fleetEvents.get()).isPositive();
                }
            }
        }
    }

    private FleetConfig fleet(final String role, final String id) {
        return CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                "fleet.bootstrap",
                                BROKER.bootstrap(),
                                "fleet.topicPrefix",
                                "e2e",
                                "fleet.agentId",
                                id,
                                "fleet.eventSampleEvery",
                                "1000",
                                "fleet.group",
                                "e2e-group",
                                "fleet.role",
                                role,
                                // every summary, as the figures in docs/benchmarks.md were taken
                                "fleet.publish",
                                "all"))
                .fleet();
    }

    private static double sec(final long ns) {
        return ns / 1e9;
    }

    private static long points(final InfluxServer influx, final String db) {
        return influx.count(db, "SELECT count(\"bytes\") FROM \"flow\"")
                + influx.count(db, "SELECT count(\"bytes\") FROM \"collective\"");
    }

    /** Nothing queued or in flight: every offered item exported or dropped (as counted). */
    private static boolean settled(final SinkCounters c) {
        return c.queued() == 0
                && c.offered() == c.exported() + c.droppedQueueFull() + c.droppedAfterRetries() + c.rejected();
    }

    /** The summaries' queue alone: both queues' counters less the anomaly queue's. */
    private static SinkCounters flowCounters(final InfluxSink sink) {
        final SinkCounters all = sink.counters();
        final SinkCounters a = sink.anomalyCounters();
        return new SinkCounters(
                all.offered() - a.offered(),
                all.exported() - a.exported(),
                all.droppedQueueFull() - a.droppedQueueFull(),
                all.droppedAfterRetries() - a.droppedAfterRetries(),
                all.rejected() - a.rejected(),
                all.retries() - a.retries(),
                all.batches() - a.batches(),
                all.queued() - a.queued(),
                all.refused());
    }

    private static InfluxSink influxOf(final ServiceSinks sinks) throws ReflectiveOperationException {
        final Field f = ServiceSinks.class.getDeclaredField("influx");
        f.setAccessible(true);
        return (InfluxSink) f.get(sinks);
    }

    /** {summaries, outputs (summaries + anomaly events + sampled events), sampled events} of a journal replay. */
    private static long[] replay(final CollectorConfig config) {
        final JournalCounts c = JournalCounts.of(config, 1000);
        return new long[] {c.summaries(), c.outputs(), c.sampled()};
    }

    private void sampleThreads() {
        for (final ThreadInfo t : threads.dumpAllThreads(false, false, 0)) {
            final long cpu = threads.getThreadCpuTime(t.getThreadId());
            if (cpu > 0) {
                threadNames.put(t.getThreadId(), t.getThreadName());
                threadCpu.merge(t.getThreadId(), cpu, Math::max);
            }
        }
    }

    /** CPU seconds per thread-name group (digits stripped) since {@code before}, largest first. */
    private String cpuByGroup(final Map<Long, Long> before) {
        final Map<String, Double> g = new TreeMap<>();
        threadCpu.forEach((id, cpu) -> g.merge(
                threadNames.get(id).replaceAll("[0-9]+", "N"), (cpu - before.getOrDefault(id, 0L)) / 1e9, Double::sum));
        final StringBuilder b = new StringBuilder();
        g.entrySet().stream()
                .filter(e -> e.getValue() >= 0.05)
                .sorted((x, y) -> Double.compare(y.getValue(), x.getValue()))
                .forEach(e -> b.append(String.format("%n  %6.1f  %s", e.getValue(), e.getKey())));
        return b.toString();
    }

    /** utime + stime of a process, in seconds (0 when it cannot be read). */
    private static double cpuSeconds(final long pid) {
        try {
            final String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            final String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
        } catch (final Exception e) {
            return 0;
        }
    }

    /** The broker's PID: the Java process whose command line names the extension's state directory. */
    private static long brokerPid() throws ReflectiveOperationException {
        final Field f = KafkaBroker.class.getDeclaredField("dir");
        f.setAccessible(true);
        final String d = f.get(BROKER).toString();
        return ProcessHandle.allProcesses()
                .filter(p -> p.info()
                        .commandLine()
                        .map(c -> c.contains(d) && c.contains("java"))
                        .orElse(false))
                .mapToLong(ProcessHandle::pid)
                .findFirst()
                .orElse(-1);
    }

    private static Recording startJfr() throws Exception {
        final String file = System.getProperty("flowscope.bench.jfr", "");
        if (file.isEmpty()) {
            return null;
        }
        final Recording r = new Recording(Configuration.getConfiguration("profile"));
        r.setDestination(Path.of(file));
        r.start();
        return r;
    }

    private static Path stopJfr(final Recording r) throws Exception {
        if (r == null) {
            return null;
        }
        r.stop();
        final Path p = r.getDestination();
        r.close();
        return p;
    }

    private static void waitFor(final java.util.function.BooleanSupplier c, final int seconds, final String what)
            throws InterruptedException {
        final long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!c.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(100);
        }
    }
}
