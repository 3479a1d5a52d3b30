package io.flowscope.bench.cluster;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.AgentPublisher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One agent process of the fleet scale benchmark: publishes, in real time, what the agents of its share of the
 * simulated cluster's nodes (a contiguous block) publish with {@code fleet.publish = central}: {@link ClusterFrames}
 * (each node's summaries of a period once the period has ended, numbered, selected and framed as
 * {@code AgentPublisher} does, where {@code AgentPublisher} sends a frame per partition and journal document),
 * through a producer configured as {@code AgentPublisher}'s (idempotent, transactional with a commit every 200 ms,
 * zstd, linger 5 ms; tuning from {@code -Dflowscope.cluster.agentKafka}). One producer serves all its nodes, where
 * real nodes have one each: Kafka's per-request costs are shared here.
 *
 * <p>Arguments: {@code <spec> <agent> <agents> <bootstrap> <topicPrefix> <partitions> <seconds> <startFile>}.
 * It builds its stream, prints {@code READY}, waits for {@code startFile} (the wall time in ms, written by the
 * harness, common to all agents), then publishes period k at start + (k + 1) × period. It prints a status line
 * every 5 s and {@code DONE ...} with its figures at the end.
 */
public final class ClusterAgent {
    static final long CHECKPOINT_MS = 200;

    private ClusterAgent() {}

    public static void main(final String[] args) throws Exception {
        if (args.length != 8) {
            System.err.println("usage: ClusterAgent <spec> <agent> <agents> <bootstrap> <topicPrefix> <partitions> "
                    + "<seconds> <startFile>");
            System.exit(2);
        }
        final ClusterSpec spec = ClusterSpec.parse(args[0]);
        final int agent = Integer.parseInt(args[1]);
        final int agents = Integer.parseInt(args[2]);
        final String bootstrap = args[3];
        final String topicPrefix = args[4];
        final int partitions = Integer.parseInt(args[5]);
        final long seconds = Long.parseLong(args[6]);
        final Path startFile = Path.of(args[7]);
        final int from = (int) ((long) agent * spec.nodes() / agents);
        final int to = (int) ((long) (agent + 1) * spec.nodes() / agents);

        final ClusterFrames frames = new ClusterFrames(new ClusterStream(spec), from, to, partitions);
        // AgentPublisher's producer: idempotent, transactional, zstd, linger 5 ms; a larger buffer for many nodes
        // -Dflowscope.cluster.agentKafka=linger.ms=20;...: tuning as a deployment passes it (fleet.kafka.*)
        final Map<String, String> settings =
                new java.util.HashMap<>(ClusterHarness.kafkaTuning("flowscope.cluster.agentKafka"));
        settings.putAll(Map.of(
                "fleet.bootstrap",
                bootstrap,
                "fleet.topicPrefix",
                topicPrefix,
                "fleet.bufferBytes",
                Long.toString(256L << 20)));
        final FleetConfig fleet = CollectorConfig.load(null, Map.of(), settings).fleet();
        final String topic = fleet.summariesTopic();
        final Properties p = AgentPublisher.producerProperties(fleet, "cluster-agent-" + agent);
        final AtomicReference<Exception> failure = new AtomicReference<>();
        final long[] sent = new long[3]; // summaries, value bytes, Kafka records (frames)
        try (KafkaProducer<String, byte[]> producer =
                new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            System.out.println("READY agent " + agent + " nodes " + from + ".." + (to - 1));
            System.out.flush();
            while (!Files.exists(startFile)) {
                Thread.sleep(20);
            }
            Thread.sleep(50); // the harness writes it whole: a partial number is not read
            final long startMs = Long.parseLong(Files.readString(startFile).trim());
            final long cpu0 = cpuNs();
            final long periods = seconds * 1000 / spec.periodMs();
            final ClusterFrames.Sink send = (partition, summaries, frame) -> {
                sent[0] += summaries;
                sent[1] += frame.length;
                sent[2]++;
                producer.send(new ProducerRecord<>(topic, partition, null, frame), (md, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            };
            long lastCommit = System.currentTimeMillis();
            long lastStatus = lastCommit;
            long maxBehindMs = 0;
            long latePeriods = 0;
            boolean open = false;
            for (long k = 0; k < periods; k++) {
                final long due = startMs + (k + 1) * spec.periodMs();
                long now = System.currentTimeMillis();
                if (now < due) {
                    Thread.sleep(due - now);
                    now = System.currentTimeMillis();
                } else if (now - due > spec.periodMs()) {
                    latePeriods++;
                }
                maxBehindMs = Math.max(maxBehindMs, now - due);
                if (!open) {
                    producer.beginTransaction();
                    open = true;
                }
                frames.period(k, send);
                if (failure.get() != null) {
                    throw failure.get();
                }
                now = System.currentTimeMillis();
                if (now - lastCommit >= CHECKPOINT_MS) {
                    producer.commitTransaction();
                    open = false;
                    lastCommit = now;
                }
                if (now - lastStatus >= 5_000) {
                    lastStatus = now;
                    System.out.printf(
                            Locale.ROOT,
                            "STATUS agent %d period %d/%d records %d bytes %d behindMs %d%n",
                            agent,
                            k,
                            periods,
                            sent[0],
                            sent[1],
                            now - due);
                    System.out.flush();
                }
            }
            if (open) {
                producer.commitTransaction();
            }
            if (failure.get() != null) {
                throw failure.get();
            }
            final long[] kinds = frames.kinds();
            System.out.printf(
                    Locale.ROOT,
                    "DONE agent %d nodes %d records %d valueBytes %d maxBehindMs %d latePeriods %d cpuNs %d "
                            + "stepRecv %d link %d collectives %d keptOnNode %d sampledOut %d frames %d%n",
                    agent,
                    to - from,
                    sent[0],
                    sent[1],
                    maxBehindMs,
                    latePeriods,
                    cpuNs() - cpu0,
                    kinds[0],
                    kinds[1],
                    kinds[2],
                    frames.keptOnNode(),
                    frames.sampledOut(),
                    sent[2]);
            System.out.flush();
        }
    }

    /** This process's CPU time (all threads: the producer's sender and compression included). */
    private static long cpuNs() {
        return ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
