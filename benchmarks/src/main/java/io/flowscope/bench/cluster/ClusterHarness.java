package io.flowscope.bench.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.Main;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.FleetCodec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The fleet at cluster scale, every part its own process: {@code agents} {@link ClusterAgent} JVMs publishing their
 * shares of a simulated cluster ({@link ClusterStream}) in real time into one real broker (given: its address and
 * PID), a summaries topic of {@code partitions} partitions, and {@code aggregators} processes of
 * {@code flowscope run --role aggregator} consuming it. Every second it samples, from the broker (Admin API) and
 * {@code /proc}: the summaries topic's end offsets and the group's committed offsets (lag in records, and in seconds:
 * how long ago the oldest record not yet consumed was written), the topic's bytes on the broker's disk, and the CPU
 * time of every agent, aggregator and the broker. At the end it reads the aggregators' {@code fleet-anomalies} topic
 * and compares the anomalies opened there with those of {@link ClusterReference} over the same stream.
 *
 * <p>Command line ({@code deploy/gpu/fleet-scale.sh}): {@code ClusterHarness <spec> <agents> <aggregators>
 * <partitions> <seconds> <bootstrap> <brokerPidFile> <outDir>}.
 */
public final class ClusterHarness {
    /** What one run is: the cluster, how many of each process, the topic's partitions, how long. */
    public record Params(
            ClusterSpec spec,
            int agents,
            int aggregators,
            int partitions,
            long seconds,
            String bootstrap,
            long brokerPid) {
        public long gpus() {
            return spec.totalGpus();
        }
    }

    /** A run's figures; {@code aggregated} and {@code reference}: the anomalies opened (reference nodes only). */
    public record Result(
            Params params,
            List<String> lines,
            Map<String, Double> figures,
            List<ClusterReference.Named> reference,
            List<ClusterReference.Named> aggregated,
            Map<String, String> faults) {}

    /** Lag is also reported from this second on: the JVMs' first seconds (JIT compilation) put everyone behind. */
    static final double WARMUP_S = 10;

    private final Params params;
    private final Path out;
    private final List<String> report = new ArrayList<>();
    private final List<Child> children = new ArrayList<>();

    public ClusterHarness(final Params params, final Path out) {
        this.params = params;
        this.out = out;
    }

    public static void main(final String[] args) throws Exception {
        if (args.length != 8) {
            System.err.println("usage: ClusterHarness <spec> <agents> <aggregators> <partitions> <seconds> <bootstrap> "
                    + "<brokerPidFile> <outDir>");
            System.exit(2);
        }
        final Params p = new Params(
                ClusterSpec.parse(args[0]),
                Integer.parseInt(args[1]),
                Integer.parseInt(args[2]),
                Integer.parseInt(args[3]),
                Long.parseLong(args[4]),
                args[5],
                Long.parseLong(Files.readString(Path.of(args[6])).trim()));
        final Path outDir = Path.of(args[7]);
        Files.createDirectories(outDir);
        final Result r = new ClusterHarness(p, outDir).run();
        System.exit(r.faults().values().stream().allMatch(v -> v.startsWith("named")) ? 0 : 1);
    }

    private void say(final String line) {
        System.out.println(line);
        System.out.flush();
        report.add(line);
    }

    public Result run() throws Exception {
        final ClusterSpec spec = params.spec();
        final String prefix = "cluster" + Long.toHexString(System.nanoTime() & 0xffffff);
        final FleetConfig fleet = CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                "fleet.bootstrap",
                                params.bootstrap(),
                                "fleet.topicPrefix",
                                prefix,
                                "fleet.partitions",
                                Integer.toString(params.partitions()),
                                "fleet.group",
                                prefix + "-aggregators"))
                .fleet();
        say("CLUSTER " + spec.text() + "; " + spec.totalGpus() + " GPUs, " + spec.groups()
                + " data-parallel communicators + " + spec.nodes() + " tensor-parallel; agents " + params.agents()
                + ", aggregators " + params.aggregators() + ", partitions " + params.partitions() + ", "
                + params.seconds() + " s; topic " + fleet.summariesTopic());
        final Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, params.bootstrap());
        try (Admin admin = Admin.create(ap)) {
            final List<NewTopic> topics = new ArrayList<>();
            for (final String t : List.of(
                    fleet.summariesTopic(), fleet.anomaliesTopic(), fleet.eventsTopic(), fleet.fleetAnomaliesTopic())) {
                topics.add(new NewTopic(t, Optional.of(params.partitions()), Optional.empty()));
            }
            // a long run at a large cluster's rate outgrows the disk: the summaries topic alone may delete as it
            // goes (the aggregators' outputs and state are read at the end, and a broker-wide retention deleted
            // them: the first 16,384-GPU run lost 3 of its 6 faults' anomalies that way)
            final String retention = System.getProperty("flowscope.cluster.summariesRetentionMs", "");
            if (!retention.isEmpty()) {
                topics.get(0).configs(Map.of("retention.ms", retention, "segment.bytes", Integer.toString(128 << 20)));
            }
            admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
            final int brokerId =
                    admin.describeCluster().nodes().get().iterator().next().id();
            try {
                return measure(admin, brokerId, fleet);
            } finally {
                for (final Child c : children) {
                    c.close();
                }
            }
        }
    }

    private Result measure(final Admin admin, final int brokerId, final FleetConfig fleet) throws Exception {
        final ClusterSpec spec = params.spec();
        // the aggregators first: they own the partitions before the first record is written
        final List<Child> aggs = new ArrayList<>();
        for (int i = 0; i < params.aggregators(); i++) {
            final List<String> cmd = java(System.getProperty("flowscope.cluster.aggregatorHeap", "1g"));
            cmd.addAll(List.of(
                    Main.class.getName(),
                    "run",
                    "--role",
                    "aggregator",
                    "--no-journal",
                    "--port",
                    Integer.toString(freePort()),
                    "--set",
                    "fleet.bootstrap=" + params.bootstrap(),
                    "--set",
                    "fleet.topicPrefix=" + fleet.topicPrefix(),
                    "--set",
                    "fleet.group=" + fleet.group(),
                    "--set",
                    "fleet.partitions=" + params.partitions(),
                    "--set",
                    "fleet.agentId=aggregator-" + i,
                    "--quiet"));
            for (final Map.Entry<String, String> k :
                    kafkaTuning("flowscope.cluster.aggregatorKafka").entrySet()) {
                cmd.addAll(cmd.size() - 1, List.of("--set", k.getKey() + "=" + k.getValue()));
            }
            aggs.add(start("aggregator-" + i, cmd));
        }
        waitForGroup(admin, fleet.group(), params.aggregators(), aggs);
        final Path startFile = out.resolve("start-" + fleet.topicPrefix());
        final List<Child> agents = new ArrayList<>();
        for (int a = 0; a < params.agents(); a++) {
            final List<String> cmd = java(System.getProperty("flowscope.cluster.agentHeap", "512m"));
            cmd.addAll(List.of(
                    ClusterAgent.class.getName(),
                    spec.text(),
                    Integer.toString(a),
                    Integer.toString(params.agents()),
                    params.bootstrap(),
                    fleet.topicPrefix(),
                    Integer.toString(params.partitions()),
                    Long.toString(params.seconds()),
                    startFile.toString()));
            agents.add(start("agent-" + a, cmd));
        }
        for (final Child a : agents) {
            a.await("READY", 600);
        }
        final List<TopicPartition> parts = new ArrayList<>();
        for (int p = 0; p < params.partitions(); p++) {
            parts.add(new TopicPartition(fleet.summariesTopic(), p));
        }
        final double[] cpu0 = cpu(agents, aggs);
        final long bytes0 = logBytes(admin, brokerId, fleet.summariesTopic());
        final long t0 = System.currentTimeMillis() + 500;
        Files.writeString(out.resolve(startFile.getFileName() + ".tmp"), Long.toString(t0));
        Files.move(out.resolve(startFile.getFileName() + ".tmp"), startFile);

        final List<long[]> ends = new ArrayList<>(); // {ms, end offsets}
        final Map<String, Double> f = new LinkedHashMap<>();
        double maxLagS = 0;
        long maxLagRecords = 0;
        double lastThirdMaxLagS = 0;
        double warmMaxLagS = 0;
        long warmMaxLagRecords = 0;
        double lagAtEndS = 0;
        long lagAtEndRecords = 0;
        long committedAtEnd = 0;
        long publishEndMs = 0;
        double[] cpuAtPublishEnd = null;
        long bytesAtPublishEnd = 0;
        // bytes on the broker's disk: measured until retention first deletes a segment (a long run at a large
        // cluster's rate outgrows the disk unless the broker deletes as it goes: fleet-scale.sh FLEET_RETENTION_MS)
        long bytesSeen = 0;
        long bytesSeenMs = 0;
        long bytesSeenRecords = 0;
        boolean retentionDeleted = false;
        long endAtPublishEnd = 0;
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("cluster-timeseries.csv")))) {
            csv.println("second,endOffsets,committed,lagRecords,lagSeconds,topicBytes,agentCores,aggregatorCores,"
                    + "brokerCores");
            double[] prevCpu = cpu0;
            long prevMs = t0;
            long drainSince = 0;
            while (true) {
                Thread.sleep(Math.max(1, 1000 - (System.currentTimeMillis() - t0) % 1000));
                final long now = System.currentTimeMillis();
                final long end = admin
                        .listOffsets(parts.stream()
                                .collect(
                                        HashMap<TopicPartition, OffsetSpec>::new,
                                        (m, tp) -> m.put(tp, OffsetSpec.latest()),
                                        Map::putAll))
                        .all()
                        .get()
                        .values()
                        .stream()
                        .mapToLong(i -> i.offset())
                        .sum();
                final Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(fleet.group())
                        .partitionsToOffsetAndMetadata()
                        .get();
                long done = 0;
                for (final TopicPartition tp : parts) {
                    final OffsetAndMetadata om = committed.get(tp);
                    done += om == null ? 0 : om.offset();
                }
                ends.add(new long[] {now, end});
                // seconds behind: since the last sample whose records were all consumed by now
                final double lagS = secondsBehind(ends, done, now, t0);
                final long lagR = Math.max(0, end - done);
                final double[] c = cpu(agents, aggs);
                final double dt = (now - prevMs) / 1000.0;
                final long bytes = logBytes(admin, brokerId, fleet.summariesTopic());
                if (bytes < bytesSeen) {
                    retentionDeleted = true;
                } else if (!retentionDeleted) {
                    bytesSeen = bytes;
                    bytesSeenMs = now;
                    bytesSeenRecords = end;
                }
                final double s = (now - t0) / 1000.0;
                csv.printf(
                        Locale.ROOT,
                        "%.1f,%d,%d,%d,%.2f,%d,%.3f,%.3f,%.3f%n",
                        s,
                        end,
                        done,
                        lagR,
                        lagS,
                        bytes - bytes0,
                        Math.max(0, c[0] - prevCpu[0]) / dt,
                        (c[1] - prevCpu[1]) / dt,
                        (c[2] - prevCpu[2]) / dt);
                csv.flush();
                System.out.printf(
                        Locale.ROOT,
                        "t=%5.1f s  written %,d  consumed %,d  lag %,d Kafka records (frames) %.1f s  agents %.2f cores  "
                                + "aggregators %.2f cores  broker %.2f cores%n",
                        s,
                        end,
                        done,
                        lagR,
                        lagS,
                        Math.max(0, c[0] - prevCpu[0]) / dt,
                        (c[1] - prevCpu[1]) / dt,
                        (c[2] - prevCpu[2]) / dt);
                prevCpu = c;
                prevMs = now;
                final boolean publishing = agents.stream().anyMatch(a -> a.find("DONE") == null);
                if (publishing) {
                    maxLagS = Math.max(maxLagS, lagS);
                    maxLagRecords = Math.max(maxLagRecords, lagR);
                    if (s >= WARMUP_S) {
                        warmMaxLagS = Math.max(warmMaxLagS, lagS);
                        warmMaxLagRecords = Math.max(warmMaxLagRecords, lagR);
                    }
                    if (s >= params.seconds() * 2.0 / 3) {
                        lastThirdMaxLagS = Math.max(lastThirdMaxLagS, lagS);
                    }
                    lagAtEndS = lagS;
                    lagAtEndRecords = lagR;
                    for (final Child a : agents) {
                        if (!a.process.isAlive()) {
                            throw new IllegalStateException("agent died:\n" + a.tail());
                        }
                    }
                } else if (publishEndMs == 0) {
                    publishEndMs = now;
                    cpuAtPublishEnd = c;
                    bytesAtPublishEnd = bytes;
                    endAtPublishEnd = end;
                    committedAtEnd = done;
                    drainSince = now;
                }
                for (final Child a : aggs) {
                    if (!a.process.isAlive()) {
                        throw new IllegalStateException("aggregator died:\n" + a.tail());
                    }
                }
                // drained: the end offsets count one commit marker per transaction, never consumed as records
                if (publishEndMs > 0
                        && (lagR <= 2L * params.partitions() * params.agents() || now - drainSince > 180_000)) {
                    f.put("drainSeconds", (now - publishEndMs) / 1000.0);
                    f.put("lagRecordsAfterDrain", (double) lagR);
                    break;
                }
            }
        }
        final double wall = (publishEndMs - t0) / 1000.0;
        long records = 0;
        long valueBytes = 0;
        long maxBehindMs = 0;
        long latePeriods = 0;
        long agentCpuNs = 0;
        // travelling: step, link, collective; kept on the node; sampled out; Kafka records (frames)
        final long[] kinds = new long[6];
        for (final Child a : agents) {
            final String[] d = a.find("DONE").split(" ");
            records += Long.parseLong(d[6]);
            valueBytes += Long.parseLong(d[8]);
            maxBehindMs = Math.max(maxBehindMs, Long.parseLong(d[10]));
            latePeriods += Long.parseLong(d[12]);
            agentCpuNs += Long.parseLong(d[14]);
            for (int k = 0; k < kinds.length; k++) {
                kinds[k] += Long.parseLong(d[16 + 2 * k]);
            }
        }
        final double gpus = params.gpus();
        // the agents' own count: they have exited by now, so /proc no longer has them
        final double agentCores = agentCpuNs / 1e9 / wall;
        f.put("stepRecvPerGpuSecond", kinds[0] / wall / gpus);
        f.put("linkPerGpuSecond", kinds[1] / wall / gpus);
        f.put("collectivesPerGpuSecond", kinds[2] / wall / gpus);
        f.put("keptOnNodePerGpuSecond", kinds[3] / wall / gpus);
        f.put("sampledOutPerGpuSecond", kinds[4] / wall / gpus);
        f.put("summariesPerFrame", records / (double) Math.max(1, kinds[5]));
        final double aggCores = (cpuAtPublishEnd[1] - cpu0[1]) / wall;
        final double brokerCores = (cpuAtPublishEnd[2] - cpu0[2]) / wall;
        f.put("gpus", gpus);
        f.put("seconds", wall);
        f.put("summariesPerSecond", records / wall);
        f.put("summariesPerGpuSecond", records / wall / gpus);
        f.put("valueBytesPerGpuSecond", valueBytes / wall / gpus);
        if (retentionDeleted) {
            f.put("bytesMeasuredSeconds", (bytesSeenMs - t0) / 1000.0);
            f.put("kafkaBytesPerGpuSecond", (bytesSeen - bytes0) / ((bytesSeenMs - t0) / 1000.0) / gpus);
            // the end offsets count frames (and transactions' markers): in summaries, about summariesPerFrame each
            f.put(
                    "kafkaBytesPerSummary",
                    (bytesSeen - bytes0) / Math.max(1, bytesSeenRecords * f.get("summariesPerFrame")));
        } else {
            f.put("bytesMeasuredSeconds", wall);
            f.put("kafkaBytesPerGpuSecond", (bytesAtPublishEnd - bytes0) / wall / gpus);
            f.put("kafkaBytesPerSummary", (bytesAtPublishEnd - bytes0) / (double) records);
        }
        f.put("agentCores", agentCores);
        f.put("agentCoresPerNode", agentCores / params.spec().nodes());
        f.put("agentMicrosPerSummary", agentCores * 1e6 / (records / wall));
        f.put("agentMaxBehindMs", (double) maxBehindMs);
        f.put("agentLatePeriods", (double) latePeriods);
        f.put("aggregatorCores", aggCores);
        // the offsets count Kafka records: frames of summariesPerFrame summaries (and transactions' markers)
        f.put("aggregatorSummariesPerCoreSecond", committedAtEnd * f.get("summariesPerFrame") / wall / aggCores);
        f.put("brokerCores", brokerCores);
        f.put("maxLagSeconds", maxLagS);
        f.put("maxLagRecords", (double) maxLagRecords);
        f.put("lastThirdMaxLagSeconds", lastThirdMaxLagS);
        f.put("maxLagSecondsAfterWarmup", warmMaxLagS);
        f.put("maxLagRecordsAfterWarmup", (double) warmMaxLagRecords);
        f.put("lagSecondsAtPublishEnd", lagAtEndS);
        f.put("lagRecordsAtPublishEnd", (double) lagAtEndRecords);
        f.put("writtenAtPublishEnd", (double) endAtPublishEnd);
        Thread.sleep(3_000); // the last transactions of anomaly events
        final List<ClusterReference.Named> aggregated = fleetAnomalies(fleet);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("cluster-anomalies.txt")))) {
            for (final ClusterReference.Named a : aggregated) {
                w.printf(
                        Locale.ROOT,
                        "%s start %.3f s detected %.3f s%n",
                        a.identity(),
                        a.startNs() / 1e9,
                        a.detectedNs() / 1e9);
            }
        }

        final ClusterStream stream = new ClusterStream(params.spec());
        final int[] refNodes =
                ClusterReference.nodes(params.spec(), Integer.getInteger("flowscope.cluster.referenceAll", 64));
        // the reference replays up to 30 s past the last fault's onset (all of a short run): a long run's whole
        // stream would take the reference longer than the run; anomalies later than that are not compared
        double lastOnsetS = 0;
        for (final ClusterSpec.FaultSpec fault : params.spec().faults()) {
            lastOnsetS = Math.max(lastOnsetS, stream.faultOnsetNs(fault) / 1e9);
        }
        final long horizonS =
                Math.min(params.seconds(), Long.getLong("flowscope.cluster.referenceSeconds", (long) lastOnsetS + 30));
        final long periods = horizonS * 1000 / params.spec().periodMs();
        final long horizonNs = periods * params.spec().periodNs();
        final List<ClusterReference.Named> reference = ClusterReference.opened(stream, refNodes, periods);
        final Set<Long> refHosts = new HashSet<>();
        for (final int n : refNodes) {
            refHosts.add(stream.hostId(n));
        }
        final List<ClusterReference.Named> aggRef = aggregated.stream()
                .filter(a -> refHosts.contains(a.host()) && a.detectedNs() < horizonNs)
                .toList();
        final Map<String, String> faults = new LinkedHashMap<>();
        for (final ClusterSpec.FaultSpec fault : params.spec().faults()) {
            final ClusterReference.Named r = ClusterReference.naming(stream, fault, reference);
            final ClusterReference.Named a = ClusterReference.naming(stream, fault, aggregated);
            final String verdict;
            if (r == null) {
                verdict = "NOT NAMED by the reference";
            } else if (a == null) {
                verdict = "NOT NAMED by the aggregators (reference: " + r.identity() + ")";
            } else if (!a.identity().equals(r.identity())) {
                verdict = "OTHER CULPRIT: aggregators " + a.identity() + ", reference " + r.identity();
            } else {
                verdict = String.format(
                        Locale.ROOT,
                        "named %s, onset %.2f s, detected %.2f s (reference %.2f s)",
                        a.identity(),
                        stream.faultOnsetNs(fault) / 1e9,
                        a.detectedNs() / 1e9,
                        r.detectedNs() / 1e9);
            }
            faults.put(fault.toString(), verdict);
        }
        final TreeSet<String> refIds = new TreeSet<>();
        reference.forEach(a -> refIds.add(a.identity()));
        final TreeSet<String> aggIds = new TreeSet<>();
        aggRef.forEach(a -> aggIds.add(a.identity()));
        f.put("referenceAnomalies", (double) refIds.size());
        f.put("aggregatorAnomaliesOnReferenceNodes", (double) aggIds.size());
        f.put("aggregatorAnomaliesAll", (double) aggregated.size());

        say(String.format(
                Locale.ROOT,
                "CLUSTER published %.1f s: %,.0f summaries/s (%.0f per GPU per s), %.0f B/GPU/s on Kafka "
                        + "(%.1f B per summary, over the first %.0f s; %.0f B/GPU/s of record values before zstd)",
                wall,
                records / wall,
                records / wall / gpus,
                f.get("kafkaBytesPerGpuSecond"),
                f.get("kafkaBytesPerSummary"),
                f.get("bytesMeasuredSeconds"),
                f.get("valueBytesPerGpuSecond")));
        say(String.format(
                Locale.ROOT,
                "CLUSTER per GPU per s: %.0f receive STEP flows, %.0f LINK aggregates, %.0f collectives travel; "
                        + "%.0f of node-local communicators kept on the node, %.0f collectives sampled out; "
                        + "%.1f summaries a frame",
                f.get("stepRecvPerGpuSecond"),
                f.get("linkPerGpuSecond"),
                f.get("collectivesPerGpuSecond"),
                f.get("keptOnNodePerGpuSecond"),
                f.get("sampledOutPerGpuSecond"),
                f.get("summariesPerFrame")));
        say(String.format(
                Locale.ROOT,
                "CLUSTER agents: %.2f cores for %d nodes = %.4f cores per node (%.2f us per summary); at most %d ms "
                        + "behind their periods, %d periods late",
                agentCores,
                params.spec().nodes(),
                agentCores / params.spec().nodes(),
                f.get("agentMicrosPerSummary"),
                maxBehindMs,
                latePeriods));
        say(String.format(
                Locale.ROOT,
                "CLUSTER aggregators: %.2f cores, %,.0f summaries per core-second; broker %.2f cores",
                aggCores,
                f.get("aggregatorSummariesPerCoreSecond"),
                brokerCores));
        say(String.format(
                Locale.ROOT,
                "CLUSTER lag while publishing: max %.2f s (%,d frames); after the first %.0f s max %.2f s (%,d "
                        + "frames); last third max %.2f s; at the end %.2f s (%,d frames); drained %.1f s after",
                maxLagS,
                maxLagRecords,
                WARMUP_S,
                warmMaxLagS,
                warmMaxLagRecords,
                lastThirdMaxLagS,
                lagAtEndS,
                lagAtEndRecords,
                f.get("drainSeconds")));
        faults.forEach((k, v) -> say("CLUSTER fault " + k + ": " + v));
        say("CLUSTER anomalies detected in the first " + horizonS + " s on the reference's " + refNodes.length
                + " nodes: reference " + refIds.size()
                + ", aggregators " + aggIds.size() + (refIds.equals(aggIds) ? " (the same)" : ""));
        final TreeSet<String> onlyRef = new TreeSet<>(refIds);
        onlyRef.removeAll(aggIds);
        final TreeSet<String> onlyAgg = new TreeSet<>(aggIds);
        onlyAgg.removeAll(refIds);
        onlyRef.forEach(s -> say("CLUSTER   reference only: " + s));
        onlyAgg.forEach(s -> say("CLUSTER   aggregators only: " + s));
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("cluster-summary.txt")))) {
            report.forEach(w::println);
            f.forEach((k, v) -> w.printf(Locale.ROOT, "%s=%.6g%n", k, v));
        }
        return new Result(params, List.copyOf(report), f, reference, aggRef, faults);
    }

    /**
     * How long ago the oldest record not consumed yet was written: the time the end offsets passed {@code done},
     * interpolated between the samples around it (the writers' rate is steady within a second); 0 when all is read.
     */
    static double secondsBehind(final List<long[]> ends, final long done, final long now, final long t0) {
        long[] before = {t0, 0};
        for (final long[] e : ends) {
            if (e[1] > done) {
                final double frac = (done - before[1]) / (double) Math.max(1, e[1] - before[1]);
                return Math.max(0, (now - (before[0] + frac * (e[0] - before[0]))) / 1000.0);
            }
            before = e;
        }
        return 0;
    }

    /** The anomalies the aggregators opened: their fleet-anomalies topic read to its end (read_committed). */
    private List<ClusterReference.Named> fleetAnomalies(final FleetConfig fleet) {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, params.bootstrap());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        final List<ClusterReference.Named> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c =
                new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            final List<TopicPartition> parts = new ArrayList<>();
            for (int i = 0; i < params.partitions(); i++) {
                parts.add(new TopicPartition(fleet.fleetAnomaliesTopic(), i));
            }
            c.assign(parts);
            c.seekToBeginning(parts);
            final Map<TopicPartition, Long> ends = c.endOffsets(parts);
            final long deadline = System.currentTimeMillis() + 60_000;
            while (parts.stream().anyMatch(tp -> c.position(tp) < ends.get(tp))
                    && System.currentTimeMillis() < deadline) {
                for (final ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    final JsonNode j = FleetCodec.read(r.value());
                    if (!j.path("event").asText().equals("opened")) {
                        continue;
                    }
                    final JsonNode a = j.path("anomaly");
                    final JsonNode cu = a.path("culprit");
                    out.add(new ClusterReference.Named(
                            a.path("kind").asText(),
                            hex(cu.path("host").asText()),
                            hex(cu.path("comm").asText()),
                            cu.path("rank").asInt(),
                            cu.path("peer").asInt(),
                            a.path("startNs").asLong(),
                            a.path("detectedNs").asLong()));
                }
            }
        }
        return out;
    }

    private static long hex(final String s) {
        return Long.parseUnsignedLong(s.startsWith("0x") ? s.substring(2) : s, 16);
    }

    private static long logBytes(final Admin admin, final int brokerId, final String topic) throws Exception {
        long sum = 0;
        final Map<String, LogDirDescription> dirs =
                admin.describeLogDirs(List.of(brokerId)).allDescriptions().get().get(brokerId);
        for (final LogDirDescription d : dirs.values()) {
            for (final Map.Entry<TopicPartition, ReplicaInfo> e :
                    d.replicaInfos().entrySet()) {
                if (e.getKey().topic().equals(topic)) {
                    sum += e.getValue().size();
                }
            }
        }
        return sum;
    }

    /** CPU seconds so far: {agents, aggregators, broker}. */
    private double[] cpu(final List<Child> agents, final List<Child> aggs) {
        double a = 0;
        for (final Child c : agents) {
            a += cpuSeconds(c.process.pid());
        }
        double g = 0;
        for (final Child c : aggs) {
            g += cpuSeconds(c.process.pid());
        }
        return new double[] {a, g, cpuSeconds(params.brokerPid())};
    }

    /** utime + stime of a process from /proc (clock ticks of 1/100 s); 0 when it is gone. */
    static double cpuSeconds(final long pid) {
        try {
            final String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            final String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
        } catch (final IOException | RuntimeException e) {
            return 0;
        }
    }

    private static void waitForGroup(
            final Admin admin, final String group, final int members, final List<Child> aggregators) throws Exception {
        final long deadline = System.currentTimeMillis() + 180_000;
        while (System.currentTimeMillis() < deadline) {
            for (final Child a : aggregators) {
                if (!a.process.isAlive()) {
                    // an aggregator that failed to start (a missing jar on the GPU host) is not waited for
                    // a copy: the output thread may still be appending the dead process's last lines
                    final List<String> lines = List.copyOf(a.lines);
                    final List<String> tail = lines.subList(Math.max(0, lines.size() - 5), lines.size());
                    throw new IllegalStateException(a.name + " exited with " + a.process.exitValue() + " before group "
                            + group + " formed: " + String.join(" | ", tail));
                }
            }
            try {
                final var d =
                        admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                if (d.members().size() == members && d.state().toString().equalsIgnoreCase("stable")) {
                    Thread.sleep(2_000);
                    return;
                }
            } catch (final java.util.concurrent.ExecutionException e) {
                // not there yet: no member has joined
            }
            Thread.sleep(500);
        }
        throw new IllegalStateException("the aggregators did not form group " + group + " in 180 s");
    }

    /**
     * Kafka client settings for the agents or the aggregators, from a system property {@code k=v;k=v} (e.g.
     * {@code linger.ms=20}), as {@code fleet.kafka.<k>} configuration keys: the pass-through a deployment uses.
     */
    static Map<String, String> kafkaTuning(final String property) {
        final Map<String, String> out = new LinkedHashMap<>();
        for (final String kv : System.getProperty(property, "").split(";")) {
            final int eq = kv.indexOf('=');
            if (eq > 0) {
                out.put(
                        FleetConfig.KAFKA_PREFIX + kv.substring(0, eq).trim(),
                        kv.substring(eq + 1).trim());
            }
        }
        return out;
    }

    private static List<String> java(final String heap) {
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + heap);
        for (final String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            // the module flags, Chronicle's, the harness's own settings for its children, JVM tuning (GC and
            // compiler threads: forty JVMs on one host each sized for all its cores contend)
            if (a.startsWith("--add-")
                    || a.startsWith("-Dchronicle.")
                    || a.startsWith("-Dflowscope.cluster.")
                    || a.startsWith("-XX:")) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        return cmd;
    }

    private Child start(final String name, final List<String> cmd) throws IOException {
        final Child c = new Child(
                name, new ProcessBuilder(cmd).redirectErrorStream(true).start(), out.resolve(name + ".log"));
        children.add(c);
        return c;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A child JVM: its output kept (and written to its log file); stopped by its PID. */
    private static final class Child implements AutoCloseable {
        final String name;
        final Process process;
        final List<String> lines = new CopyOnWriteArrayList<>();
        final Thread reader;

        Child(final String name, final Process process, final Path log) {
            this.name = name;
            this.process = process;
            this.reader = new Thread(
                    () -> {
                        try (BufferedReader r = new BufferedReader(
                                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                                PrintWriter w = new PrintWriter(Files.newBufferedWriter(log))) {
                            String line;
                            while ((line = r.readLine()) != null) {
                                lines.add(line);
                                w.println(line);
                                w.flush();
                            }
                        } catch (final IOException ignored) {
                            // the process is gone
                        }
                    },
                    "cluster-output-" + name);
            reader.setDaemon(true);
            reader.start();
        }

        String find(final String prefix) {
            for (final String l : lines) {
                if (l.startsWith(prefix)) {
                    return l;
                }
            }
            return null;
        }

        void await(final String prefix, final long seconds) throws InterruptedException {
            final long deadline = System.currentTimeMillis() + seconds * 1000;
            while (find(prefix) == null) {
                if (!process.isAlive() || System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(name + " did not print " + prefix + ":\n" + tail());
                }
                Thread.sleep(50);
            }
        }

        String tail() {
            final List<String> l = List.copyOf(lines);
            return name + " (pid " + process.pid() + "):\n  "
                    + String.join("\n  ", l.subList(Math.max(0, l.size() - 40), l.size()));
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(30, TimeUnit.SECONDS);
                }
            }
            reader.join(5_000);
        }
    }
}
