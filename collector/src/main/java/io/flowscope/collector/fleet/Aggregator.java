package io.flowscope.collector.fleet;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.anomaly.Anomaly;
import io.flowscope.anomaly.AnomalySink;
import io.flowscope.anomaly.AnomalyStage;
import io.flowscope.collector.AnomalyEvent;
import io.flowscope.collector.AnomalyStages;
import io.flowscope.window.CollectiveSummary;
import io.flowscope.window.FlowSummary;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An aggregator: a member of the consumer group {@code fleet.group} on the summaries topic, running the anomaly
 * stage over the summaries of every agent (cross-node detection; all ranks of a communicator are on one
 * partition). One stage per partition owned. Exactly-once output: the anomaly events derived from a poll and
 * the consumed offsets are written in one Kafka transaction (read_committed readers of
 * {@code <prefix>.fleet-anomalies} see both or neither). A partition taken over (rebalance, a member died) is
 * re-read from its beginning to rebuild the stage's state; events derived from records below the group's
 * committed offset were already written by the previous owner and are dropped, so nothing is written twice and
 * nothing is lost. Agents' resends are dropped by {@code (agent, seq)} (a per-partition high-water mark per agent).
 */
public final class Aggregator implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Aggregator.class);

    private final FleetConfig fleet;
    private final String instance;
    private final Consumer<AnomalyEvent> listener;
    private final Map<Long, Anomaly> anomalies = new ConcurrentHashMap<>();
    private final Map<TopicPartition, PartitionState> states = new HashMap<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile java.util.concurrent.atomic.AtomicInteger crashBudget;
    private volatile long records;
    private volatile long duplicates;
    private volatile long transactions;
    private volatile long eventsWritten;
    private volatile Set<TopicPartition> assigned = Set.of();
    private volatile Throwable failed;
    private final AtomicReference<List<Anomaly>> list = new AtomicReference<>(List.of());

    /** Per partition owned: its stage, the agents' high-water marks, where output starts. */
    private static final class PartitionState
    {
        final AnomalyStage stage;
        final Map<String, Long> lastSeq = new HashMap<>();
        final List<Object[]> pending = new ArrayList<>();
        final long outputFrom;
        long offset;

        PartitionState(final AnomalySink sink, final long outputFrom)
        {
            this.stage = AnomalyStages.create(sink);
            this.outputFrom = outputFrom;
        }
    }

    public Aggregator(final FleetConfig fleet, final String instance, final Consumer<AnomalyEvent> listener)
    {
        this.fleet = fleet;
        this.instance = instance;
        this.listener = listener;
        this.thread = new Thread(this::run, "flowscope-fleet-aggregator-" + instance);
        this.thread.setDaemon(true);
    }

    public Aggregator start() throws Exception
    {
        Topics.ensure(fleet);
        thread.start();
        return this;
    }

    /** Every anomaly seen (latest state), rebuilt ones included. */
    public List<Anomaly> anomalies()
    {
        return list.get();
    }

    public long records()
    {
        return records;
    }

    public long duplicates()
    {
        return duplicates;
    }

    public long transactions()
    {
        return transactions;
    }

    public long eventsWritten()
    {
        return eventsWritten;
    }

    public Set<TopicPartition> assigned()
    {
        return assigned;
    }

    public Throwable failed()
    {
        return failed;
    }

    public String instance()
    {
        return instance;
    }

    private Properties consumerProperties()
    {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, fleet.bootstrap());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, fleet.group());
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "flowscope-aggregator-" + instance);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
        return p;
    }

    private Properties producerProperties()
    {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, fleet.bootstrap());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, fleet.group() + "-" + instance);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 10_000);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "flowscope-aggregator-" + instance);
        return p;
    }

    private void run()
    {
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerProperties(),
            new StringDeserializer(), new ByteArrayDeserializer());
            KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerProperties(), new StringSerializer(),
                new ByteArraySerializer()))
        {
            producer.initTransactions();
            consumer.subscribe(List.of(fleet.summariesTopic()), new ConsumerRebalanceListener()
            {
                @Override
                public void onPartitionsRevoked(final Collection<TopicPartition> parts)
                {
                    parts.forEach(states::remove);
                    assigned = Set.copyOf(states.keySet());
                }

                @Override
                public void onPartitionsAssigned(final Collection<TopicPartition> parts)
                {
                    final Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.copyOf(parts));
                    for (final TopicPartition tp : parts)
                    {
                        final OffsetAndMetadata om = committed.get(tp);
                        final long from = om == null ? 0 : om.offset();
                        final PartitionState[] ref = new PartitionState[1];
                        ref[0] = new PartitionState(sink(tp, ref), from);
                        states.put(tp, ref[0]);
                        LOG.info("aggregator {}: took {} (output from offset {}; state rebuilt from the start)",
                            instance, tp, from);
                    }
                    consumer.seekToBeginning(parts);
                    assigned = Set.copyOf(states.keySet());
                }
            });
            final FlowSummary flow = new FlowSummary();
            final CollectiveSummary coll = new CollectiveSummary();
            while (running)
            {
                final ConsumerRecords<String, byte[]> batch = consumer.poll(Duration.ofMillis(100));
                if (batch.isEmpty())
                {
                    continue;
                }
                final Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                final List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
                for (final TopicPartition tp : batch.partitions())
                {
                    final PartitionState st = states.get(tp);
                    if (st == null)
                    {
                        continue;
                    }
                    for (final ConsumerRecord<String, byte[]> r : batch.records(tp))
                    {
                        records++;
                        st.offset = r.offset();
                        apply(st, r.value(), flow, coll);
                        if (r.offset() >= st.outputFrom)
                        {
                            for (final Object[] e : st.pending)
                            {
                                final Anomaly a = (Anomaly)e[1];
                                out.add(new ProducerRecord<>(fleet.fleetAnomaliesTopic(), tp.partition(),
                                    Long.toHexString(a.id()),
                                    FleetCodec.anomaly("aggregator", r.offset(), (String)e[0], a)));
                            }
                            offsets.put(tp, new OffsetAndMetadata(r.offset() + 1));
                        }
                        st.pending.clear();
                    }
                }
                list.set(List.copyOf(anomalies.values()));
                if (offsets.isEmpty())
                {
                    continue;
                }
                producer.beginTransaction();
                for (final ProducerRecord<String, byte[]> r : out)
                {
                    producer.send(r);
                }
                final java.util.concurrent.atomic.AtomicInteger budget = crashBudget;
                if (budget != null && budget.decrementAndGet() == 0)
                {
                    // a crash in the middle of a transaction: nothing committed, nothing aborted by us
                    producer.close(Duration.ZERO);
                    LOG.warn("aggregator {}: crashed on purpose mid-transaction", instance);
                    return;
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
                transactions++;
                eventsWritten += out.size();
            }
        }
        catch (final Throwable t)
        {
            failed = t;
            LOG.error("aggregator {} failed", instance, t);
        }
        finally
        {
            stopped.countDown();
        }
    }

    private AnomalySink sink(final TopicPartition tp, final PartitionState[] ref)
    {
        return new AnomalySink()
        {
            @Override
            public void onOpened(final Anomaly a)
            {
                on("opened", a);
            }

            @Override
            public void onUpdated(final Anomaly a)
            {
                on("updated", a);
            }

            @Override
            public void onResolved(final Anomaly a)
            {
                on("resolved", a);
            }

            private void on(final String type, final Anomaly a)
            {
                final PartitionState st = ref[0];
                st.pending.add(new Object[] {type, a});
                anomalies.put(a.id(), a);
                if (st.offset >= st.outputFrom)
                {
                    listener.accept(new AnomalyEvent(type, a, System.currentTimeMillis(), System.nanoTime(), false));
                }
            }
        };
    }

    private void apply(final PartitionState st, final byte[] value, final FlowSummary flow,
        final CollectiveSummary coll)
    {
        final JsonNode n;
        try
        {
            n = FleetCodec.read(value);
        }
        catch (final IllegalArgumentException e)
        {
            LOG.warn("aggregator {}: skipped a record: {}", instance, e.getMessage());
            return;
        }
        final String agent = n.path("agent").asText();
        final long seq = n.path("seq").asLong();
        final Long last = st.lastSeq.get(agent);
        if (last != null && seq <= last)
        {
            duplicates++;
            return;
        }
        st.lastSeq.put(agent, seq);
        switch (n.path("type").asText())
        {
            case "flow" ->
            {
                FleetCodec.flowInto(n.path("s"), flow);
                st.stage.onSummary(flow);
                st.stage.advanceTo(flow.hostId(), flow.periodEndNs());
            }
            case "coll" ->
            {
                FleetCodec.collectiveInto(n.path("s"), coll);
                st.stage.onCollective(coll);
            }
            default ->
            {
                // other types are not for the stage
            }
        }
    }

    /**
     * Test hook: every transaction takes one from {@code budget}; the one that takes the last is left open (its
     * records sent, its offsets not) and the producer and consumer dropped, as if the process died there.
     */
    void crashWhenBudgetSpent(final java.util.concurrent.atomic.AtomicInteger budget)
    {
        crashBudget = budget;
    }

    /**
     * What one aggregator owning the partition from the start writes for these records (their values, in offset
     * order): one {@code "<event> <anomaly JSON>"} per anomaly event. The reference the tests compare with.
     */
    static List<String> reference(final FleetConfig fleet, final List<byte[]> values)
    {
        final Aggregator a = new Aggregator(fleet, "reference", e -> { });
        final PartitionState[] ref = new PartitionState[1];
        ref[0] = new PartitionState(a.sink(new TopicPartition("reference", 0), ref), 0);
        final List<String> out = new ArrayList<>();
        final FlowSummary flow = new FlowSummary();
        final CollectiveSummary coll = new CollectiveSummary();
        long offset = 0;
        for (final byte[] v : values)
        {
            ref[0].offset = offset++;
            a.apply(ref[0], v, flow, coll);
            for (final Object[] e : ref[0].pending)
            {
                out.add(describe(FleetCodec.read(FleetCodec.anomaly("aggregator", 0, (String)e[0], (Anomaly)e[1]))));
            }
            ref[0].pending.clear();
        }
        return out;
    }

    /** {@code "<event> <anomaly JSON>"} of an anomaly record. */
    static String describe(final JsonNode record)
    {
        return record.path("event").asText() + " " + record.path("anomaly");
    }

    public boolean awaitStopped(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        return stopped.await(timeout, unit);
    }

    @Override
    public void close() throws InterruptedException
    {
        running = false;
        thread.join(TimeUnit.SECONDS.toMillis(30));
    }

    /** The anomaly events, latest state per anomaly, as the HTTP side serves them. */
    public Map<String, Object> health()
    {
        final Map<String, Object> h = new LinkedHashMap<>();
        h.put("status", failed == null ? "UP" : "DOWN");
        h.put("ready", true);
        h.put("source", "fleet aggregator " + instance + " of group " + fleet.group() + " on " +
            fleet.summariesTopic());
        h.put("partitions", assigned.stream().map(TopicPartition::toString).sorted().toList());
        h.put("recordsTotal", records);
        h.put("duplicatesDropped", duplicates);
        h.put("transactions", transactions);
        h.put("anomalyEventsWritten", eventsWritten);
        return h;
    }
}
