package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.WebhookReceiver;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.sink.webhook.WebhookConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The fleet against a real broker (deploy/kafka/kafka.sh): agents, aggregators, a broker restart. */
class FleetIT {
    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    @TempDir
    Path dir;

    private CollectorConfig config(final Path journal, final long seconds, final double speed) {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("http.port", "0");
        o.put("ring.dir", dir.resolve("rings").toString());
        o.put("journal.dir", journal.toString());
        o.put("publish.intervalMs", "50");
        o.put("simulate.scenario", "default");
        o.put("simulate.durationSeconds", Long.toString(seconds));
        o.put("simulate.speed", Double.toString(speed));
        o.put("window.periodMs", "10"); // ten times fewer summaries than the default: a shorter test
        return CollectorConfig.load(null, Map.of(), o);
    }

    private static FleetConfig fleet(final String prefix, final String agentId, final long sampleEvery) {
        return fleet(prefix, agentId, sampleEvery, "central");
    }

    /** {@code publish}: {@code fleet.publish}, all or central (the default). */
    private static FleetConfig fleet(
            final String prefix, final String agentId, final long sampleEvery, final String publish) {
        return CollectorConfig.load(
                        null,
                        Map.of(),
                        Map.of(
                                "fleet.publish",
                                publish,
                                "fleet.bootstrap",
                                BROKER.bootstrap(),
                                "fleet.topicPrefix",
                                prefix,
                                "fleet.agentId",
                                agentId,
                                "fleet.eventSampleEvery",
                                Long.toString(sampleEvery),
                                "fleet.group",
                                prefix + "-group",
                                "fleet.partitions",
                                "4"))
                .fleet();
    }

    /** How many outputs (summaries, collectives, anomaly events, sampled events) the journal yields: computed here. */
    private static long outputsOf(final CollectorConfig config, final long sampleEvery) {
        return JournalCounts.of(config, sampleEvery).outputs();
    }

    /** Every record of a topic, by partition, from the start to the end offsets of now. */
    private static Map<Integer, List<ConsumerRecord<String, byte[]>>> readAll(
            final String topic, final boolean readCommitted) {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        final Map<Integer, List<ConsumerRecord<String, byte[]>>> out = new TreeMap<>();
        try (KafkaConsumer<String, byte[]> c =
                new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            final List<TopicPartition> parts = new ArrayList<>();
            for (final PartitionInfo pi : c.partitionsFor(topic)) {
                parts.add(new TopicPartition(topic, pi.partition()));
                out.put(pi.partition(), new ArrayList<>());
            }
            c.assign(parts);
            c.seekToBeginning(parts);
            final Map<TopicPartition, Long> end = c.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                c.poll(Duration.ofMillis(200))
                        .forEach(r -> out.get(r.partition()).add(r));
            }
        }
        return out;
    }

    @Test
    void shouldKeepTheAgentRunningWhileTheBrokerIsDownAndBackfillEveryOutputExactlyOnceByAgentAndSeq()
            throws Exception {
        final FleetConfig fleet = fleet("restart", "agent-r", 1000);
        // a quarter of real time: the simulation (6 s of events) still runs when the broker goes down, even when a
        // slow machine takes tens of seconds to the first acknowledged publish
        final CollectorConfig config = config(dir.resolve("journal"), 6, 0.25);
        AgentPublisher started = null;
        boolean brokerDown = false;
        try {
            try (CollectorService service = CollectorService.start(config, e -> {})) {
                // as `run --role agent` does: the publisher's counters join the service's /metrics and /api/health
                started = Agents.start(
                        service,
                        config,
                        CollectorConfig.load(
                                        null,
                                        Map.of(),
                                        Map.of(
                                                "fleet.role",
                                                "agent",
                                                "fleet.bootstrap",
                                                BROKER.bootstrap(),
                                                "fleet.topicPrefix",
                                                "restart",
                                                "fleet.agentId",
                                                "agent-r",
                                                "fleet.eventSampleEvery",
                                                "1000",
                                                "fleet.partitions",
                                                "4"))
                                .fleet());
                final AgentPublisher agent = started;
                await().atMost(Duration.ofSeconds(90)).until(() -> agent.publishedUpTo() > 0);
                BROKER.stop();
                brokerDown = true;
                final long eventsAtStop = service.snapshot().stats().eventsTotal();
                // the service keeps draining and journaling while Kafka is unreachable
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> service.snapshot().stats().eventsTotal() > eventsAtStop + 10_000);
                // down longer than the producer's delivery timeout: the session fails, the next one re-reads the
                // journal (the spool) from the start and sends what is above the mark
                await().atMost(Duration.ofSeconds(90)).until(() -> agent.failures() >= 1);
                // a session that began while the broker was still shutting down got its metadata and reads as
                // connected until its own delivery timeout: /metrics must come to show the agent disconnected
                await().atMost(Duration.ofSeconds(90)).ignoreExceptions().until(() -> {
                    final String down = http(service.url() + "metrics");
                    return down.contains("flowscope_fleet_agent_connected{agent=\"agent-r\"} 0.0")
                            && metric(down, "flowscope_fleet_agent_errors_total") >= 1;
                });
                BROKER.start();
                brokerDown = false;
                // back: the spool is sent (backfilled) and the service's /metrics shows it
                await().atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> {
                    final String m = http(service.url() + "metrics");
                    return metric(m, "flowscope_fleet_agent_backfilled_total") > 0
                            && metric(m, "flowscope_fleet_agent_sessions_total") >= 2
                            && metric(m, "flowscope_fleet_agent_published_total") > agent.failures();
                });
                final JsonNode health = FleetCodec.MAPPER.readTree(http(service.url() + "api/health"));
                assertThat(health.path("fleet").path("agentId").asText()).isEqualTo("agent-r");
                assertThat(health.path("fleet").path("failures").asLong()).isGreaterThanOrEqualTo(1);
                await().atMost(Duration.ofSeconds(120)).until(() -> service.finished());
            }
            final AgentPublisher agent = started;
            final long expected = outputsOf(config, 1000);
            assertThat(expected).isGreaterThan(1000);
            await().atMost(Duration.ofSeconds(120)).until(() -> agent.publishedUpTo() == expected);
            assertThat(agent.sessions()).isGreaterThanOrEqualTo(2);
            assertThat(agent.backfilled()).isPositive();
        } finally {
            if (brokerDown) {
                BROKER.start(); // a failure while it was down must not fail the other tests of the class too
            }
            if (started != null) {
                started.close();
            }
        }

        // read as the aggregators read (read_committed) and drop as they drop (a per-partition high-water mark of
        // the agent's seq): a resend landing after a higher seq of its partition would be dropped though never
        // seen before, a loss the final count finds
        final Set<Long> seqs = new HashSet<>();
        long records = 0;
        long dropped = 0;
        boolean slowLinkOpened = false;
        for (final String topic : List.of(fleet.summariesTopic(), fleet.anomaliesTopic(), fleet.eventsTopic())) {
            final Map<String, Long> lastPerKey = new HashMap<>();
            for (final List<ConsumerRecord<String, byte[]>> part :
                    readAll(topic, true).values()) {
                long highWater = 0;
                for (final ConsumerRecord<String, byte[]> r : part) {
                    for (final byte[] value : FleetWire.records(r.value())) { // a frame's records, in order
                        records++;
                        final JsonNode n = FleetWire.readAny(value);
                        assertThat(n.path("agent").asText()).isEqualTo("agent-r");
                        final long seq = n.path("seq").asLong();
                        if (seq <= highWater) {
                            dropped++;
                            continue; // what the aggregators drop as a resend
                        }
                        highWater = seq;
                        assertThat(seqs.add(seq)).as("seq %d kept twice", seq).isTrue();
                        if (n.path("type").asText().equals("flow")) {
                            assertThat(n.path("hostName").asText()).matches("sim-node-[01]");
                        }
                        final Long last = lastPerKey.put(r.key(), seq);
                        assertThat(last == null || last < seq)
                                .as("order of key %s in %s", r.key(), topic)
                                .isTrue();
                        if (n.path("type").asText().equals("anomaly")
                                && n.path("event").asText().equals("opened")
                                && n.path("anomaly").path("kind").asText().equals("SLOW_LINK")) {
                            slowLinkOpened = true;
                        }
                    }
                }
            }
        }
        // fleet.publish = central (the default): every seq sent once, and the flows the aggregators do not read
        // are the gaps
        assertThat(fleet.publishAll()).isFalse();
        final JournalCounts counts = JournalCounts.of(config, 1000, false);
        final java.util.BitSet kept = new java.util.BitSet();
        seqs.forEach(q -> kept.set(Math.toIntExact(q)));
        assertThat(kept).isEqualTo(counts.sent());
        assertThat(kept.cardinality()).isLessThan((int) counts.outputs());
        assertThat(slowLinkOpened).isTrue();
        System.out.printf(
                "fleet restart test: %d outputs, %d sent (central), %d committed records in Kafka (%d resent and "
                        + "dropped)%n",
                counts.outputs(), seqs.size(), records, dropped);
    }

    /** Copies the next {@code docs} documents of {@code from} into {@code to}, one document per batch. */
    private static void copyDocuments(final JournalReader from, final JournalWriter to, final int docs) {
        for (int i = 0; i < docs && from.read(to, new JournalReader.Meta() {}, 1) > 0; i++) {
            to.flush(System.currentTimeMillis() * 1_000_000L);
        }
    }

    /**
     * Retention deletes the journal's oldest cycle files while the agent runs; a later session (here: a restarted
     * agent) must go on numbering where the mark left off, not from the remaining start (which numbered outputs
     * lower, skipped unpublished ones as published and reused seqs the consumers drop).
     */
    @Test
    void shouldPublishEveryOutputAfterTheMarkWhenRetentionDeletedTheJournalsOldestCycle() throws Exception {
        final CollectorConfig source = config(dir.resolve("journal-src"), 3, 4.0);
        try (CollectorService service = CollectorService.start(source, e -> {})) {
            await().atMost(Duration.ofSeconds(120)).until(() -> service.finished());
        }
        long total = 0;
        try (JournalReader r = new JournalReader(source.journalDir())) {
            final Pipeline sink = new Pipeline(Pipeline.windowConfig(source), AnomalyStages::create, e -> {});
            while (r.read(sink, new JournalReader.Meta() {}, 1000) > 0) {
                // count
            }
            total = r.documents();
        }
        // the agent's journal: the same documents in one-second cycles, 40 % + 30 % now, 30 % after the deletion
        final CollectorConfig config = config(dir.resolve("journal-cycles"), 3, 4.0);
        // every output sent: the count below is of every seq after the mark
        final FleetConfig fleet = fleet("retention", "agent-c", 0, "all");
        final int first = (int) (total * 4 / 10);
        final int second = (int) (total * 3 / 10);
        try (JournalReader from = new JournalReader(source.journalDir())) {
            try (JournalWriter w = new JournalWriter(config.journalDir(), TestRollCycles.TEST_SECONDLY, 0, 0)) {
                copyDocuments(from, w, first);
                final long cycle = System.currentTimeMillis() / 1000;
                await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() / 1000 > cycle);
                copyDocuments(from, w, second);
            }
            assertThat(JournalWriter.cycleFiles(config.journalDir())).hasSizeGreaterThanOrEqualTo(2);
            final long published;
            try (AgentPublisher agent = new AgentPublisher(config, fleet).start()) {
                final long outputs = outputsOf(config, 0);
                await().atMost(Duration.ofSeconds(120)).until(() -> agent.publishedUpTo() == outputs);
                published = agent.publishedUpTo();
            }
            final String[] mark = Files.readString(Path.of(config.journalDir() + ".fleet-published"))
                    .trim()
                    .split(" ");
            assertThat(mark).hasSize(3);
            assertThat(Long.parseLong(mark[0])).isEqualTo(published);
            // what retention does (JournalWriter.housekeeping): the oldest cycle file deleted
            Files.delete(JournalWriter.cycleFiles(config.journalDir()).get(0));
            try (JournalWriter w = new JournalWriter(config.journalDir(), TestRollCycles.TEST_SECONDLY, 0, 0)) {
                final long cycle = System.currentTimeMillis() / 1000;
                await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() / 1000 > cycle);
                copyDocuments(from, w, Integer.MAX_VALUE);
            }
            // expected: the mark's seq + the outputs after the mark's (document, ordinal) in the remaining journal
            final long markDoc = Long.parseLong(mark[1]);
            final long markOrdinal = Long.parseLong(mark[2]);
            final long[] after = {0, -1, 0}; // outputs after the mark, current document, ordinal in it
            final Pipeline p = new Pipeline(
                    Pipeline.windowConfig(config), AnomalyStages::create, e -> count(after, markDoc, markOrdinal));
            p.tap(x -> count(after, markDoc, markOrdinal), x -> count(after, markDoc, markOrdinal));
            try (JournalReader r = new JournalReader(config.journalDir())) {
                final JournalReader.Meta meta = new JournalReader.Meta() {
                    @Override
                    public void onBatch(final long wallNs) {
                        after[1] = r.index();
                        after[2] = 0;
                    }
                };
                while (r.read(p, meta, 1) > 0) {
                    p.endBatch(0);
                }
            }
            assertThat(after[0]).as("outputs after the mark").isPositive();
            final long expected = published + after[0];
            try (AgentPublisher agent = new AgentPublisher(config, fleet).start()) {
                await().atMost(Duration.ofSeconds(120)).until(() -> agent.publishedUpTo() == expected);
                assertThat(agent.spoolLost()).isZero();
            }
            final Set<Long> seqs = new HashSet<>();
            for (final String topic : List.of(fleet.summariesTopic(), fleet.anomaliesTopic())) {
                readAll(topic, true)
                        .values()
                        .forEach(rs -> rs.forEach(r -> FleetWire.records(r.value())
                                .forEach(v -> seqs.add(
                                        FleetWire.readAny(v).path("seq").asLong()))));
            }
            assertThat(seqs).hasSize((int) expected);
            assertThat(seqs.stream().mapToLong(Long::longValue).max().orElse(0)).isEqualTo(expected);
            System.out.printf(
                    "fleet retention test: %d documents, %d outputs published before the oldest cycle "
                            + "was deleted, %d after%n",
                    total, published, after[0]);
        }
    }

    private static void count(final long[] after, final long markDoc, final long markOrdinal) {
        after[2]++;
        if (after[1] > markDoc || after[1] == markDoc && after[2] > markOrdinal) {
            after[0]++;
        }
    }

    /** Agents of the failover test: one built-in fault each, its communicator on its own partition of four. */
    private static final List<String> FAILOVER_SCENARIOS = List.of(
            "slow-gpu-ring-2x4-50,at=500ms,for=700ms", // seed 121: partition 0
            "slow-link-ring-2x4-70,at=500ms,for=700ms", // seed 111: partition 1
            "slow-gpu-tree-2x4-50,at=600ms,for=600ms", // seed 123: partition 2
            "slow-link-ring-2x4-50,at=500ms,for=700ms"); // seed 12 (the demo): partition 3

    /**
     * Two aggregator JVMs share the four partitions; the agents' output is fed in three phases; one aggregator is
     * SIGKILLed while it holds an open transaction carrying anomaly events (after it committed some); the other
     * takes its partitions over. Reference: what one aggregator that never failed writes for each partition's
     * records (the output contract: per partition a deterministic function of its input), computed here by the
     * same stage code over the records read back. Not the agents' own detections: an agent's stage sees all of
     * its own summaries, a partition's stage sees every agent's summaries of the communicators (and QP hosts)
     * hashed to it, so their events differ legitimately.
     */
    @Test
    void shouldWriteEveryAnomalyExactlyOnceWhenOneOfTwoAggregatorProcessesIsKilledWithATransactionOpen()
            throws Exception {
        // 1. the agents' output, staged: real agents (service + publisher) publish to the topics of prefix
        // "stage"; the test then relays each partition's records, same key and value, in phases it controls
        final FleetConfig stage = fleet("stage", "unused", 0);
        for (int i = 0; i < FAILOVER_SCENARIOS.size(); i++) {
            final Map<String, String> o = new LinkedHashMap<>();
            o.put("http.port", "0");
            o.put("ring.dir", dir.resolve("rings").toString());
            o.put("journal.dir", dir.resolve("journal-f" + i).toString());
            o.put("simulate.scenario", FAILOVER_SCENARIOS.get(i));
            o.put("simulate.durationSeconds", "2");
            o.put("simulate.speed", "2.0");
            o.put("window.periodMs", "10");
            final CollectorConfig config = CollectorConfig.load(null, Map.of(), o);
            final FleetConfig agentFleet = fleet("stage", "node-" + i, 0);
            try (AgentPublisher agent = new AgentPublisher(config, agentFleet)) {
                try (CollectorService service = CollectorService.start(config, e -> {})) {
                    agent.start();
                    await().atMost(Duration.ofSeconds(120)).until(() -> service.finished());
                }
                final long outputs = outputsOf(config, 0);
                await().atMost(Duration.ofSeconds(120)).until(() -> agent.publishedUpTo() == outputs);
            }
        }
        final Map<Integer, List<ConsumerRecord<String, byte[]>>> input = readAll(stage.summariesTopic(), true);
        final Map<Integer, List<String>> reference = new TreeMap<>();
        final Map<Integer, List<Long>> eventOffsets = new TreeMap<>();
        int opened = 0;
        for (final Map.Entry<Integer, List<ConsumerRecord<String, byte[]>>> e : input.entrySet()) {
            final List<String> ref = Aggregator.reference(
                    stage, e.getValue().stream().map(ConsumerRecord::value).toList());
            reference.put(e.getKey(), ref);
            eventOffsets.put(
                    e.getKey(),
                    ref.stream()
                            .map(x -> Long.parseLong(x.substring(0, x.indexOf(' '))))
                            .distinct()
                            .toList());
            opened += (int) ref.stream().filter(x -> x.contains(" opened ")).count();
        }
        final long partitionsWithEvents =
                eventOffsets.values().stream().filter(l -> !l.isEmpty()).count();
        assertThat(partitionsWithEvents)
                .as("partitions with anomaly events: %s", eventOffsets)
                .isGreaterThanOrEqualTo(3);
        assertThat(opened)
                .as(
                        "anomalies opened in the reference: %s",
                        reference.values().stream()
                                .flatMap(List::stream)
                                .filter(x -> x.contains(" opened "))
                                .map(x ->
                                        x.replaceAll(".*\"kind\":\"([A-Z_]+)\".*\"summary\":\"([^\"]*)\".*", "$1: $2"))
                                .toList())
                // At least the three slow links; the slow GPUs of these 2 s live runs at 10 ms periods may go
                // unnamed (3 opened before the aggregator's period fix, 4 after it in CI). With fleet.publish = all
                // the reference also opened 41 HANGs of rank 5 of one communicator. Our reading: the four simulated
                // agents' QP flows share host ids and, keyed by host, reach partitions beside other agents'
                // communicators, whose host clocks they move on; `central` sends no QP flows.
                .isGreaterThanOrEqualTo(3);

        final FleetConfig fleet = fleet("failover", "unused", 0);
        Topics.ensure(fleet);
        final Path holdA = dir.resolve("hold-agg-a");
        final Path holdB = dir.resolve("hold-agg-b");
        final AggregatorProcess[] procs = new AggregatorProcess[2];
        try (KafkaProducer<String, byte[]> relay = new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        BROKER.bootstrap(),
                        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                        true,
                        ProducerConfig.ACKS_CONFIG,
                        "all"),
                new StringSerializer(),
                new ByteArraySerializer())) {
            procs[0] = AggregatorProcess.start("agg-a", fleet, holdA);
            procs[1] = AggregatorProcess.start("agg-b", fleet, holdB);
            final AggregatorProcess a = procs[0];
            final AggregatorProcess b = procs[1];
            AggregatorProcess.awaitTwoPartitionsEach(a, b);

            // 2. phase A: each partition up to and including the record of its first anomaly event; both commit it
            final Map<Integer, Integer> sent = new TreeMap<>();
            input.keySet().forEach(p -> sent.put(p, 0));
            final Map<Integer, Integer> cutA = new TreeMap<>();
            input.forEach((p, rs) -> cutA.put(
                    p,
                    eventOffsets.get(p).isEmpty()
                            ? rs.size() / 2
                            : (int) (long) eventOffsets.get(p).get(0) + 1));
            relayUpTo(relay, fleet, input, sent, cutA);
            await("phase A committed")
                    .atMost(Duration.ofSeconds(180))
                    .pollInterval(Duration.ofMillis(500))
                    .failFast(() -> !a.isAlive() || !b.isAlive())
                    .until(() -> BROKER.committed(fleet).equals(asLongs(cutA)));
            final Map<Integer, List<String>> beforeKill = written(fleet);

            // the victim: the one owning a partition with a second anomaly event (the most events if both do)
            final List<Integer> partsA = a.partitions();
            final List<Integer> partsB = b.partitions();
            assertThat(partsA).doesNotContainAnyElementsOf(partsB);
            final AggregatorProcess victim = events(eventOffsets, partsA) >= events(eventOffsets, partsB) ? a : b;
            final AggregatorProcess survivor = victim == a ? b : a;
            final List<Integer> victimParts = victim == a ? partsA : partsB;
            final List<Integer> held = victimParts.stream()
                    .filter(p -> eventOffsets.get(p).size() >= 2)
                    .toList();
            assertThat(held)
                    .as("a partition of %s with two anomaly events (%s)", victimParts, eventOffsets)
                    .isNotEmpty();
            assertThat(victimParts.stream()
                            .mapToInt(p -> beforeKill.get(p).size())
                            .sum())
                    .as("anomaly events the victim committed before it is killed")
                    .isPositive();

            // 3. phase B: arm the victim; its partitions up to their second anomaly event: it sends the events in
            // a transaction, sends the offsets, flushes, and holds the transaction open
            Files.createFile(victim == a ? holdA : holdB);
            final Map<Integer, Integer> cutB = new TreeMap<>(cutA);
            held.forEach(p -> cutB.put(p, (int) (long) eventOffsets.get(p).get(1) + 1));
            relayUpTo(relay, fleet, input, sent, cutB);
            await("the victim holds an open transaction")
                    .atMost(Duration.ofSeconds(120))
                    .failFast(() -> !victim.isAlive())
                    .until(() -> victim.lines().stream().anyMatch(l -> l.startsWith("flowscope: test hold:")));
            final int exit = victim.kill();
            assertThat(exit).as("exit status of SIGKILL").isEqualTo(137);
            final String holdLine = victim.lines().stream()
                    .filter(l -> l.startsWith("flowscope: test hold:"))
                    .findFirst()
                    .orElseThrow();

            // 4. phase C: the rest of the stream; the survivor takes the dead one's partitions over
            final Map<Integer, Integer> all = new TreeMap<>();
            input.forEach((p, rs) -> all.put(p, rs.size()));
            relayUpTo(relay, fleet, input, sent, all);
            await("the survivor owns every partition and committed everything")
                    .atMost(Duration.ofSeconds(240))
                    .pollInterval(Duration.ofSeconds(1))
                    .ignoreExceptions()
                    .failFast(() -> !survivor.isAlive())
                    .until(() -> survivor.partitions().size() == 4
                            && BROKER.committed(fleet).equals(asLongs(all)));

            // the relayed topic holds exactly the staged records, so the reference applies to it
            final Map<Integer, List<ConsumerRecord<String, byte[]>>> relayed = readAll(fleet.summariesTopic(), false);
            input.forEach((p, rs) -> assertThat(relayed.get(p).stream()
                            .map(r -> new String(r.value(), StandardCharsets.UTF_8))
                            .toList())
                    .isEqualTo(rs.stream()
                            .map(r -> new String(r.value(), StandardCharsets.UTF_8))
                            .toList()));

            // exactly once: per partition, in order, the committed output is the reference: nothing lost, nothing
            // twice; the held transaction's events are in the log but aborted (read_uncommitted sees them)
            // the victim's held transaction holds no offsets (Kafka Streams sends them at commit), so the survivor
            // commits before the broker aborts it, and until then read_committed readers of the fleet-anomalies
            // partition it wrote to stop at its first event: the output is complete once it is aborted
            await("the victim's transaction aborted: the survivor's output visible")
                    .atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> assertThat(written(fleet)).isEqualTo(reference));
            final Map<Integer, List<String>> committedOut = written(fleet);
            // the held transaction's events: in the log (read_uncommitted), aborted (not read_committed), and
            // written again, once, by the survivor
            final Map<Integer, List<ConsumerRecord<String, byte[]>>> raw = readAll(fleet.fleetAnomaliesTopic(), false);
            final Map<Integer, List<ConsumerRecord<String, byte[]>>> visible =
                    readAll(fleet.fleetAnomaliesTopic(), true);
            final List<String> aborted = new ArrayList<>();
            raw.forEach((p, rs) -> {
                final Set<Long> seen = new HashSet<>();
                visible.get(p).forEach(r -> seen.add(r.offset()));
                rs.stream()
                        .filter(r -> !seen.contains(r.offset()))
                        .forEach(r -> aborted.add(p + " " + Aggregator.describe(FleetCodec.read(r.value()))));
            });
            final Matcher hold = Pattern.compile("with (\\d+) anomaly events").matcher(holdLine);
            assertThat(hold.find()).isTrue();
            // (the survivor may abort a transaction too, when the group's generation changes under a batch: it
            // redoes the batch, so its aborted events are also committed once)
            assertThat(aborted.stream()
                            .filter(ev -> victimParts.contains(Integer.parseInt(ev.substring(0, ev.indexOf(' '))))))
                    .as("aborted events on the victim's partitions: %s", aborted)
                    .hasSizeGreaterThanOrEqualTo(Integer.parseInt(hold.group(1)));
            for (final String ev : aborted) {
                final int p = Integer.parseInt(ev.substring(0, ev.indexOf(' ')));
                final String text = ev.substring(ev.indexOf(' ') + 1);
                assertThat(committedOut.get(p).stream().filter(text::equals).count())
                        .as("committed: %s", text)
                        .isEqualTo(1);
            }
            final JsonNode health = survivor.health();
            // the taken partitions restored from their state changelogs (checkpoint + tail), not re-read from 0:
            // the tail replayed is at most what the victim committed past its last checkpoint
            assertThat(health.path("restoredChangelogRecords").asLong())
                    .as("state changelog records the survivor restored")
                    .isPositive();
            assertThat(health.path("replayedRecords").asLong())
                    .as("tail records the survivor replayed")
                    .isLessThanOrEqualTo(
                            victimParts.stream().mapToLong(p -> cutB.get(p)).sum());
            final String metrics = survivor.metrics();
            assertThat(metrics)
                    .contains("flowscope_fleet_aggregator_partitions{group=\"failover-group\",instance=\""
                            + survivor.name() + "\"} 4.0");
            assertThat(metric(metrics, "flowscope_fleet_aggregator_restored_changelog_records_total"))
                    .isPositive();
            assertThat(metric(metrics, "flowscope_fleet_aggregator_transactions_total"))
                    .isPositive();
            System.out.printf(
                    "fleet failover test: %d summary records on 4 partitions, %d anomaly events (%d "
                            + "opened) on %d partitions; %s (pid %d, partitions %s) committed %d events, then was SIGKILLed "
                            + "(exit %d) holding \"%s\"; %s took over (%d tail records replayed) and wrote the rest; %d aborted "
                            + "events in the log%n",
                    input.values().stream().mapToInt(List::size).sum(),
                    reference.values().stream().mapToInt(List::size).sum(),
                    opened,
                    partitionsWithEvents,
                    victim.name(),
                    victim.pid(),
                    victimParts,
                    victimParts.stream().mapToInt(p -> beforeKill.get(p).size()).sum(),
                    exit,
                    holdLine,
                    survivor.name(),
                    health.path("replayedRecords").asLong(),
                    aborted.size());
        } catch (final Throwable t) {
            for (final AggregatorProcess p : procs) {
                if (p != null) {
                    t.addSuppressed(new AssertionError("output of " + p.tail()));
                }
            }
            throw t;
        } finally {
            for (final AggregatorProcess p : procs) {
                if (p != null) {
                    p.close();
                }
            }
        }
    }

    private static String http(final String url) throws Exception {
        return java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private static int events(final Map<Integer, List<Long>> eventOffsets, final List<Integer> parts) {
        return parts.stream().mapToInt(p -> eventOffsets.get(p).size()).sum();
    }

    private static Map<Integer, Long> asLongs(final Map<Integer, Integer> m) {
        final Map<Integer, Long> out = new TreeMap<>();
        m.forEach((k, v) -> out.put(k, (long) v));
        return out;
    }

    private static long metric(final String text, final String name) {
        return text.lines()
                .filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    /** Sends each partition's staged records from what was sent up to {@code to} (exclusive), acknowledged. */
    private static void relayUpTo(
            final KafkaProducer<String, byte[]> relay,
            final FleetConfig fleet,
            final Map<Integer, List<ConsumerRecord<String, byte[]>>> input,
            final Map<Integer, Integer> sent,
            final Map<Integer, Integer> to)
            throws Exception {
        for (final Map.Entry<Integer, List<ConsumerRecord<String, byte[]>>> e : input.entrySet()) {
            final int p = e.getKey();
            for (int i = sent.get(p); i < to.get(p); i++) {
                final ConsumerRecord<String, byte[]> r = e.getValue().get(i);
                relay.send(new ProducerRecord<>(fleet.summariesTopic(), p, r.key(), r.value()));
            }
            sent.put(p, Math.max(sent.get(p), to.get(p)));
        }
        relay.flush();
    }

    @Test
    void shouldRunAnAgentAndAnAggregatorFromTheCommandLineAndServeTheSlowLinkOverHttp() throws Exception {
        final int port;
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = ss.getLocalPort();
        }
        final List<String> common = List.of(
                "--set",
                "fleet.bootstrap=" + BROKER.bootstrap(),
                "--set",
                "fleet.topicPrefix=cli",
                "--set",
                "fleet.group=cli-group",
                "--quiet");
        final java.io.ByteArrayOutputStream aggOut = new java.io.ByteArrayOutputStream();
        final int[] aggRc = {-1};
        // the aggregator pages a real receiver: its alerts must name hosts as the agent named them, not by id
        try (WebhookReceiver receiver = new WebhookReceiver(WebhookConfig.DEFAULT_SIGNATURE_HEADER)) {
            final List<String> aggArgs = new ArrayList<>(List.of(
                    "run",
                    "--role",
                    "aggregator",
                    "--no-journal",
                    "--port",
                    Integer.toString(port),
                    "--duration",
                    "75",
                    "--set",
                    "fleet.agentId=cli-aggregator",
                    "--set",
                    "sinks.webhooks.0.url=" + receiver.url(),
                    "--set",
                    "sinks.webhooks.0.format=alertmanager"));
            aggArgs.addAll(common);
            final Thread aggregator = new Thread(
                    () -> aggRc[0] = io.flowscope.collector.Main.run(
                            new java.io.PrintStream(aggOut, true), System.err, aggArgs.toArray(new String[0])),
                    "cli-aggregator");
            aggregator.start();

            final java.io.ByteArrayOutputStream agentOut = new java.io.ByteArrayOutputStream();
            final List<String> agentArgs = new ArrayList<>(List.of(
                    "simulate",
                    "--role",
                    "agent",
                    "--port",
                    "0",
                    "--journal-dir",
                    dir.resolve("journal-cli").toString(),
                    "--set",
                    "simulate.durationSeconds=2",
                    "--set",
                    "window.periodMs=10",
                    "--set",
                    "fleet.agentId=cli-agent",
                    "--set",
                    "fleet.eventSampleEvery=0"));
            agentArgs.addAll(common);
            final int agentRc = io.flowscope.collector.Main.run(
                    new java.io.PrintStream(agentOut, true), System.err, agentArgs.toArray(new String[0]));
            assertThat(agentRc).isZero();
            assertThat(agentOut.toString()).contains("fleet agent cli-agent publishing to " + BROKER.bootstrap());

            final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            final java.net.URI uri = java.net.URI.create("http://127.0.0.1:" + port + "/api/anomalies?state=open");
            // the aggregator serves for 75 s from its start: enough for the agent's run on a loaded machine
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
                final JsonNode r = FleetCodec.MAPPER.readTree(http.send(
                                java.net.http.HttpRequest.newBuilder(uri).build(),
                                java.net.http.HttpResponse.BodyHandlers.ofString())
                        .body());
                for (final JsonNode a : r.path("items")) {
                    if (a.path("kind").asText().equals("SLOW_LINK")
                            && a.path("culprit").path("rank").asInt() == 3
                            && a.path("culprit").path("peer").asInt() == 4) {
                        return true;
                    }
                }
                return false;
            });
            final String metrics = http("http://127.0.0.1:" + port + "/metrics");
            assertThat(metric(metrics, "flowscope_fleet_aggregator_records_total"))
                    .isPositive();
            assertThat(metrics)
                    .contains("flowscope_fleet_aggregator_up{group=\"cli-group\",instance=\"cli-aggregator\"} 1.0");
            aggregator.join(TimeUnit.SECONDS.toMillis(120));
            assertThat(aggregator.isAlive()).isFalse();
            assertThat(aggRc[0]).isZero();
            assertThat(aggOut.toString()).contains("fleet aggregator cli-aggregator (group cli-group");
            final List<JsonNode> slowLinkAlerts = new ArrayList<>();
            for (final WebhookReceiver.Post p : receiver.posts) {
                for (final JsonNode alert : FleetCodec.MAPPER.readTree(p.body())) {
                    if (alert.path("labels").path("alertname").asText().equals("FlowscopeSlowLink")) {
                        slowLinkAlerts.add(alert);
                    }
                }
            }
            assertThat(slowLinkAlerts).isNotEmpty().allSatisfy(a -> assertThat(
                            a.path("labels").path("host").asText())
                    .matches("sim-node-[01]"));
        }
    }

    private static Map<Integer, List<String>> written(final FleetConfig fleet) {
        final Map<Integer, List<String>> out = new TreeMap<>();
        readAll(fleet.fleetAnomaliesTopic(), true)
                .forEach((p, rs) -> out.put(
                        p,
                        rs.stream()
                                .map(r -> Aggregator.describe(FleetCodec.read(r.value())))
                                .toList()));
        return out;
    }
}
