package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.AnomalyStages;
import io.flowscope.collector.CollectorConfig;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.Pipeline;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.window.TelemetryListener;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The fleet against a real broker (deploy/kafka/kafka.sh): agents, aggregators, a broker restart. */
class FleetTest
{
    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker();

    @TempDir
    Path dir;

    private CollectorConfig config(final Path journal, final long seconds, final double speed)
    {
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

    private static FleetConfig fleet(final String prefix, final String agentId, final long sampleEvery)
    {
        return FleetConfig.load(null, Map.of(), Map.of("fleet.bootstrap", BROKER.bootstrap(), "fleet.topicPrefix",
            prefix, "fleet.agentId", agentId, "fleet.eventSampleEvery", Long.toString(sampleEvery), "fleet.group",
            prefix + "-group", "fleet.partitions", "4"));
    }

    /** How many outputs (summaries, collectives, anomaly events, sampled events) the journal yields: computed here. */
    private static long outputsOf(final CollectorConfig config, final long sampleEvery)
    {
        final AtomicLong n = new AtomicLong();
        final Pipeline p = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, e -> n.incrementAndGet());
        p.tap(s -> n.incrementAndGet(), c -> n.incrementAndGet());
        final TelemetryListener in = sampleEvery > 0 ?
            new AgentPublisher.EventSampler(p, sampleEvery, (h, call, args) -> n.incrementAndGet()) : p;
        try (JournalReader r = new JournalReader(config.journalDir()))
        {
            while (r.read(in, new JournalReader.Meta()
            {
            }, 1) > 0)
            {
                p.endBatch(0);
            }
        }
        return n.get();
    }

    /** Every record of a topic, by partition, from the start to the end offsets of now. */
    private static Map<Integer, List<ConsumerRecord<String, byte[]>>> readAll(final String topic,
        final boolean readCommitted)
    {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        final Map<Integer, List<ConsumerRecord<String, byte[]>>> out = new TreeMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(),
            new ByteArrayDeserializer()))
        {
            final List<TopicPartition> parts = new ArrayList<>();
            for (final PartitionInfo pi : c.partitionsFor(topic))
            {
                parts.add(new TopicPartition(topic, pi.partition()));
                out.put(pi.partition(), new ArrayList<>());
            }
            c.assign(parts);
            c.seekToBeginning(parts);
            final Map<TopicPartition, Long> end = c.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp)))
            {
                c.poll(Duration.ofMillis(200)).forEach(r -> out.get(r.partition()).add(r));
            }
        }
        return out;
    }

    @Test
    void shouldKeepTheAgentRunningWhileTheBrokerIsDownAndBackfillEveryOutputExactlyOnceByAgentAndSeq()
        throws Exception
    {
        final FleetConfig fleet = fleet("restart", "agent-r", 1000);
        final CollectorConfig config = config(dir.resolve("journal"), 6, 1.0);
        try (AgentPublisher agent = new AgentPublisher(config, fleet))
        {
            try (CollectorService service = CollectorService.start(config, e -> { }))
            {
                agent.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> agent.publishedUpTo() > 0);
                BROKER.stop();
                final long eventsAtStop = service.drain().snapshot().stats().eventsTotal();
                // the service keeps draining and journaling while Kafka is unreachable
                await().atMost(Duration.ofSeconds(30)).until(() ->
                    service.drain().snapshot().stats().eventsTotal() > eventsAtStop + 10_000);
                // down longer than the producer's delivery timeout: the session fails, the next one re-reads the
                // journal (the spool) from the start and sends what is above the mark
                await().atMost(Duration.ofSeconds(90)).until(() -> agent.failures() >= 1);
                BROKER.start();
                await().atMost(Duration.ofSeconds(120)).until(() -> service.drain().finished());
            }
            final long expected = outputsOf(config, 1000);
            assertThat(expected).isGreaterThan(1000);
            await().atMost(Duration.ofSeconds(120)).until(() -> agent.publishedUpTo() == expected);
            assertThat(agent.sessions()).isGreaterThanOrEqualTo(2);
        }

        final Set<Long> seqs = new HashSet<>();
        long records = 0;
        boolean slowLinkOpened = false;
        for (final String topic : List.of(fleet.summariesTopic(), fleet.anomaliesTopic(), fleet.eventsTopic()))
        {
            final Map<String, Long> lastPerKey = new HashMap<>();
            for (final List<ConsumerRecord<String, byte[]>> part : readAll(topic, false).values())
            {
                for (final ConsumerRecord<String, byte[]> r : part)
                {
                    records++;
                    final JsonNode n = FleetCodec.read(r.value());
                    assertThat(n.path("agent").asText()).isEqualTo("agent-r");
                    final long seq = n.path("seq").asLong();
                    if (!seqs.add(seq))
                    {
                        continue; // a resend: dropped by (agent, seq)
                    }
                    final Long last = lastPerKey.put(r.key(), seq);
                    assertThat(last == null || last < seq).as("order of key %s in %s", r.key(), topic).isTrue();
                    if (n.path("type").asText().equals("anomaly") && n.path("event").asText().equals("opened") &&
                        n.path("anomaly").path("kind").asText().equals("SLOW_LINK"))
                    {
                        slowLinkOpened = true;
                    }
                }
            }
        }
        assertThat(seqs).hasSize((int)outputsOf(config, 1000));
        assertThat(seqs.stream().mapToLong(Long::longValue).max().orElse(0)).isEqualTo(seqs.size());
        assertThat(slowLinkOpened).isTrue();
        System.out.printf("fleet restart test: %d outputs, %d records in Kafka (%d resent and dropped)%n",
            seqs.size(), records, records - seqs.size());
    }

    @Test
    void shouldWriteEveryAnomalyOnceWhenOneOfTwoAggregatorsSharingThePartitionsDiesMidTransaction()
        throws Exception
    {
        final FleetConfig fleet = fleet("takeover", "agent-t", 0);
        Topics.ensure(fleet);
        final AtomicInteger budget = new AtomicInteger(3);
        final Aggregator a = new Aggregator(fleet, "a", e -> { });
        final Aggregator b = new Aggregator(fleet, "b", e -> { });
        a.crashWhenBudgetSpent(budget);
        b.crashWhenBudgetSpent(budget);
        try (a; b)
        {
            a.start();
            b.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> !a.assigned().isEmpty() && !b.assigned().isEmpty() &&
                a.assigned().size() + b.assigned().size() == 4);

            final CollectorConfig config = config(dir.resolve("journal-t"), 3, 2.0);
            final long expected;
            try (AgentPublisher agent = new AgentPublisher(config, fleet))
            {
                try (CollectorService service = CollectorService.start(config, e -> { }))
                {
                    agent.start();
                    await().atMost(Duration.ofSeconds(120)).until(() -> service.drain().finished());
                }
                expected = outputsOf(config, 0);
                await().atMost(Duration.ofSeconds(120)).until(() -> agent.publishedUpTo() == expected);
            }

            await().atMost(Duration.ofSeconds(60)).until(() -> a.awaitStopped(0, TimeUnit.SECONDS) ||
                b.awaitStopped(0, TimeUnit.SECONDS));
            final Aggregator dead = a.awaitStopped(0, TimeUnit.SECONDS) ? a : b;
            final Aggregator survivor = dead == a ? b : a;
            assertThat(budget.get()).isLessThanOrEqualTo(0);
            await().atMost(Duration.ofSeconds(60)).until(() -> survivor.assigned().size() == 4);

            final Map<Integer, List<String>> reference = new TreeMap<>();
            int opened = 0;
            for (final Map.Entry<Integer, List<ConsumerRecord<String, byte[]>>> e :
                readAll(fleet.summariesTopic(), false).entrySet())
            {
                final List<byte[]> values = e.getValue().stream().map(ConsumerRecord::value).toList();
                reference.put(e.getKey(), Aggregator.reference(fleet, values));
                opened += (int)reference.get(e.getKey()).stream().filter(s -> s.startsWith("opened ")).count();
            }
            assertThat(opened).as("anomalies the reference finds").isGreaterThan(0);

            // the survivor caught up (group offsets at the end) and the dead one's open transaction was aborted
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).until(() ->
                caughtUp(fleet) && written(fleet).equals(reference));
            assertThat(written(fleet)).isEqualTo(reference);
            assertThat(survivor.failed()).isNull();
            System.out.printf("fleet takeover test: %s died after %d transactions; %s wrote the rest; %d anomaly " +
                "events, %d opened%n", dead.instance(), dead.transactions(), survivor.instance(),
                reference.values().stream().mapToInt(List::size).sum(), opened);
        }
    }

    @Test
    void shouldRunAnAgentAndAnAggregatorFromTheCommandLineAndServeTheSlowLinkOverHttp() throws Exception
    {
        final int port;
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            port = ss.getLocalPort();
        }
        final List<String> common = List.of("--set", "fleet.bootstrap=" + BROKER.bootstrap(), "--set",
            "fleet.topicPrefix=cli", "--set", "fleet.group=cli-group", "--quiet");
        final java.io.ByteArrayOutputStream aggOut = new java.io.ByteArrayOutputStream();
        final int[] aggRc = {-1};
        final List<String> aggArgs = new ArrayList<>(List.of("run", "--role", "aggregator", "--no-journal", "--port",
            Integer.toString(port), "--duration", "30", "--set", "fleet.agentId=cli-aggregator"));
        aggArgs.addAll(common);
        final Thread aggregator = new Thread(() -> aggRc[0] = io.flowscope.collector.Main.run(
            new java.io.PrintStream(aggOut, true), System.err, aggArgs.toArray(new String[0])), "cli-aggregator");
        aggregator.start();

        final java.io.ByteArrayOutputStream agentOut = new java.io.ByteArrayOutputStream();
        final List<String> agentArgs = new ArrayList<>(List.of("simulate", "--role", "agent", "--port", "0",
            "--journal-dir", dir.resolve("journal-cli").toString(), "--set", "simulate.durationSeconds=2", "--set",
            "window.periodMs=10", "--set", "fleet.agentId=cli-agent", "--set", "fleet.eventSampleEvery=0"));
        agentArgs.addAll(common);
        final int agentRc = io.flowscope.collector.Main.run(new java.io.PrintStream(agentOut, true), System.err,
            agentArgs.toArray(new String[0]));
        assertThat(agentRc).isZero();
        assertThat(agentOut.toString()).contains("fleet agent cli-agent publishing to " + BROKER.bootstrap());

        final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        final java.net.URI uri = java.net.URI.create("http://127.0.0.1:" + port + "/api/anomalies?state=open");
        await().atMost(Duration.ofSeconds(25)).ignoreExceptions().until(() ->
        {
            final JsonNode r = FleetCodec.MAPPER.readTree(http.send(java.net.http.HttpRequest.newBuilder(uri).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body());
            for (final JsonNode a : r.path("items"))
            {
                if (a.path("kind").asText().equals("SLOW_LINK") && a.path("culprit").path("rank").asInt() == 3 &&
                    a.path("culprit").path("peer").asInt() == 4)
                {
                    return true;
                }
            }
            return false;
        });
        aggregator.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(aggregator.isAlive()).isFalse();
        assertThat(aggRc[0]).isZero();
        assertThat(aggOut.toString()).contains("fleet aggregator cli-aggregator (group cli-group");
    }

    private static Map<Integer, List<String>> written(final FleetConfig fleet)
    {
        final Map<Integer, List<String>> out = new TreeMap<>();
        readAll(fleet.fleetAnomaliesTopic(), true).forEach((p, rs) ->
            out.put(p, rs.stream().map(r -> Aggregator.describe(FleetCodec.read(r.value()))).toList()));
        return out;
    }

    private static boolean caughtUp(final FleetConfig fleet) throws Exception
    {
        final Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        try (Admin admin = Admin.create(p); KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap()), new StringDeserializer(),
            new ByteArrayDeserializer()))
        {
            final Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(fleet.group())
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            final List<TopicPartition> parts = c.partitionsFor(fleet.summariesTopic()).stream()
                .map(pi -> new TopicPartition(pi.topic(), pi.partition())).toList();
            final Map<TopicPartition, Long> end = c.endOffsets(parts);
            for (final TopicPartition tp : parts)
            {
                final OffsetAndMetadata om = committed.get(tp);
                if (end.get(tp) > 0 && (om == null || om.offset() < end.get(tp)))
                {
                    return false;
                }
            }
            return true;
        }
    }
}
