package io.flowscope.collector.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.fleet.wire.FleetWireDecoder;
import io.flowscope.collector.fleet.wire.WireSchema;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Detector;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.sink.influx.InfluxSchema;
import java.nio.file.Files;
import java.nio.file.Path;
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
import java.util.function.Function;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.TransactionAbortableException;
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
 * The group uses the cooperative-sticky assignor: a member joining or leaving moves only the partitions that must
 * move, so an aggregator rebuilds only the partitions it newly takes (the eager protocol would revoke and rebuild
 * every partition of every member on each rebalance).
 */
public final class Aggregator implements Detector {
    private static final Logger LOG = LoggerFactory.getLogger(Aggregator.class);

    private final FleetConfig fleet;
    private final String instance;
    private final Consumer<AnomalyEvent> listener;
    private final Function<AnomalySink, AnomalyStage> stageFactory;
    /**
     * A stage that throws on one record must not end the aggregator (its partitions would stall, its group would
     * rebalance them onto another aggregator that throws on the same record): counted, logged, the next record read.
     */
    private final IngestFailures failures = new IngestFailures();

    private volatile IngestFailures.Counts failureCounts = IngestFailures.Counts.NONE;
    private final Map<TopicPartition, PartitionState> states = new HashMap<>();
    /** Reads the binary summary records (fleet.wire = binary); JSON ones go through FleetCodec. */
    private final FleetWireDecoder wire = new FleetWireDecoder();

    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread thread;
    private final Path holdFile;
    /** Hosts by name as the agents named them (read by the sinks' threads). */
    private final Map<Long, String> hostNames = new ConcurrentHashMap<>();

    private volatile boolean running = true;
    private volatile long records;
    private volatile long replayed;
    private volatile long skipped;
    private volatile long duplicates;
    private volatile long transactions;
    private volatile long abortedTransactions;
    private volatile long eventsWritten;
    private volatile long partitionsTaken;
    private volatile long lastRebuildRecords;
    private volatile long lastRebuildMs;
    private volatile long lag;
    private volatile Set<TopicPartition> assigned = Set.of();
    private volatile Throwable failed;
    private final AtomicReference<List<Anomaly>> list = new AtomicReference<>(List.of());

    /** Per partition owned: its stage, the agents' high-water marks, where output starts, its anomalies. */
    private static final class PartitionState {
        final AnomalyStage stage;
        final Map<String, Long> lastSeq = new HashMap<>();
        final List<Object[]> pending = new ArrayList<>();
        final Map<Long, Anomaly> anomalies = new LinkedHashMap<>();
        final long outputFrom;
        final long takenNs = System.nanoTime();
        long offset = -1;
        boolean rebuilt;

        PartitionState(final AnomalyStage stage, final long outputFrom) {
            this.stage = stage;
            this.outputFrom = outputFrom;
            this.rebuilt = outputFrom == 0;
        }
    }

    public Aggregator(final FleetConfig fleet, final String instance, final Consumer<AnomalyEvent> listener) {
        this(fleet, instance, listener, AnomalyStages::create);
    }

    /** With another anomaly stage than the service's: tests inject a stage that fails. */
    Aggregator(
            final FleetConfig fleet,
            final String instance,
            final Consumer<AnomalyEvent> listener,
            final Function<AnomalySink, AnomalyStage> stageFactory) {
        this.stageFactory = stageFactory;
        this.fleet = fleet;
        this.instance = instance;
        this.listener = listener;
        this.thread = new Thread(this::run, "flowscope-fleet-aggregator-" + instance);
        this.thread.setDaemon(true);
        final String hold = System.getProperty(HOLD_PROPERTY, "");
        this.holdFile = hold.isEmpty() ? null : Path.of(hold);
    }

    /**
     * Fault injection for the failover test, off unless this system property names a file: once that file exists,
     * the next transaction that carries anomaly events is left open (its events sent and flushed, its offsets sent)
     * and the thread stops there, while the consumer's heartbeat keeps the partitions, until the process is killed.
     */
    static final String HOLD_PROPERTY = "flowscope.fleet.test.holdFile";

    public Aggregator start() throws Exception {
        Topics.ensure(fleet);
        thread.start();
        return this;
    }

    /** As {@link #start()}: an aggregator makes no flow or collective summaries for the sinks. */
    @Override
    public void start(final ServiceSinks summaries) throws Exception {
        start();
    }

    /** What the HTTP side serves: the anomalies (latest state) and the record counts; no flows. */
    @Override
    public Snapshot snapshot() {
        final List<Anomaly> all = anomalies();
        final long open = all.stream().filter(Anomaly::isOpen).count();
        final long n = records;
        final Stats s = new Stats(n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, 0, n, open, describe(), failures());
        return new Snapshot(
                System.currentTimeMillis(),
                Long.MIN_VALUE,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                all,
                s);
    }

    @Override
    public String describe() {
        return "fleet aggregator " + instance + " on " + fleet.summariesTopic();
    }

    @Override
    public Throwable failure() {
        return failed;
    }

    /** Never: it reads its topics until closed. */
    @Override
    public boolean finished() {
        return false;
    }

    /** Every anomaly seen (latest state), rebuilt ones included. */
    public List<Anomaly> anomalies() {
        return list.get();
    }

    public long records() {
        return records;
    }

    /** Records re-read below a taken partition's committed offset to rebuild its stage (no output). */
    public long replayed() {
        return replayed;
    }

    /** Records summed over the partitions owned that are not consumed yet (end offset minus position). */
    public long lag() {
        return lag;
    }

    public long partitionsTaken() {
        return partitionsTaken;
    }

    public long duplicates() {
        return duplicates;
    }

    public long transactions() {
        return transactions;
    }

    public long eventsWritten() {
        return eventsWritten;
    }

    public Set<TopicPartition> assigned() {
        return assigned;
    }

    public Throwable failed() {
        return failed;
    }

    public String instance() {
        return instance;
    }

    /** A host id's name as an agent sent it with the host's summaries, else the id in hex (as the sinks tag it). */
    @Override
    public String hostName(final long hostId) {
        final String name = hostNames.get(hostId);
        return name != null ? name : InfluxSchema.hexHost(hostId);
    }

    private Properties consumerProperties() {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, fleet.bootstrap());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, fleet.group());
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "flowscope-aggregator-" + instance);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        // one transaction per poll, ~19 ms each on the build VM: 500 records a poll held the aggregator at ~25 k
        // summaries/s whatever the encoding; 5,000 gave 193 k/s binary, 74 k/s JSON (docs/benchmarks.md section 8).
        // Caught up, a poll returns what arrived, so this only sizes catch-up and rebuild transactions.
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        return fleet.withKafka(p);
    }

    private Properties producerProperties() {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, fleet.bootstrap());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, fleet.group() + "-" + instance);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 10_000);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "flowscope-aggregator-" + instance);
        return fleet.withKafka(p);
    }

    private void run() {
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(
                        consumerProperties(), new StringDeserializer(), new ByteArrayDeserializer());
                KafkaProducer<String, byte[]> producer =
                        new KafkaProducer<>(producerProperties(), new StringSerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            consumer.subscribe(List.of(fleet.summariesTopic()), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(final Collection<TopicPartition> parts) {
                    parts.forEach(states::remove);
                    assigned = Set.copyOf(states.keySet());
                }

                @Override
                public void onPartitionsAssigned(final Collection<TopicPartition> parts) {
                    if (parts.isEmpty()) {
                        return; // cooperative rebalancing calls this with nothing new
                    }
                    // a dead owner's open transaction holds its offsets pending until the broker aborts it (up to
                    // the transaction timeout plus the broker's abort check): read_committed waits for that
                    final Map<TopicPartition, OffsetAndMetadata> committed =
                            consumer.committed(Set.copyOf(parts), Duration.ofMinutes(2));
                    for (final TopicPartition tp : parts) {
                        final OffsetAndMetadata om = committed.get(tp);
                        final long from = om == null ? 0 : om.offset();
                        final PartitionState[] ref = new PartitionState[1];
                        ref[0] = new PartitionState(stageFactory.apply(sink(tp, ref)), from);
                        states.put(tp, ref[0]);
                        partitionsTaken++;
                        LOG.info(
                                "aggregator {}: took {} (output from offset {}; state rebuilt from the start)",
                                instance,
                                tp,
                                from);
                    }
                    consumer.seekToBeginning(parts);
                    assigned = Set.copyOf(states.keySet());
                }
            });
            final FlowSummary flow = new FlowSummary();
            final CollectiveSummary coll = new CollectiveSummary();
            while (running) {
                final ConsumerRecords<String, byte[]> batch = consumer.poll(Duration.ofMillis(100));
                lag = lagOf(consumer);
                if (batch.isEmpty()) {
                    continue;
                }
                final Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                final List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
                for (final TopicPartition tp : batch.partitions()) {
                    final PartitionState st = states.get(tp);
                    if (st == null) {
                        continue;
                    }
                    for (final ConsumerRecord<String, byte[]> r : batch.records(tp)) {
                        records++;
                        st.offset = r.offset();
                        apply(st, r.value(), flow, coll);
                        if (r.offset() < st.outputFrom) {
                            replayed++;
                        } else {
                            rebuilt(tp, st);
                            for (final Object[] e : st.pending) {
                                final Anomaly a = (Anomaly) e[1];
                                out.add(new ProducerRecord<>(
                                        fleet.fleetAnomaliesTopic(),
                                        tp.partition(),
                                        Long.toHexString(a.id()),
                                        FleetCodec.anomaly("aggregator", r.offset(), (String) e[0], a)));
                            }
                            offsets.put(tp, new OffsetAndMetadata(r.offset() + 1));
                        }
                        st.pending.clear();
                    }
                }
                publishList();
                if (offsets.isEmpty()) {
                    continue;
                }
                try {
                    producer.beginTransaction();
                    for (final ProducerRecord<String, byte[]> r : out) {
                        producer.send(r);
                    }
                    producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                    if (holdFile != null && !out.isEmpty() && Files.exists(holdFile)) {
                        hold(producer, out, offsets);
                    }
                    producer.commitTransaction();
                    transactions++;
                    eventsWritten += out.size();
                } catch (final CommitFailedException | RebalanceInProgressException | TransactionAbortableException e) {
                    // the group moved to a new generation while this batch was processed (a member left or
                    // joined): its offsets may not be committed in the old one. Abort (nothing of it becomes
                    // visible) and rebuild every partition still owned from its start up to its committed offset,
                    // exactly as after a takeover; the batch is then read and written again
                    producer.abortTransaction();
                    abortedTransactions++;
                    LOG.warn(
                            "aggregator {}: transaction aborted ({}); rebuilding {} from the committed offsets",
                            instance,
                            e.toString(),
                            states.keySet());
                    rewind(consumer);
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final Throwable t) {
            final KafkaRefusal refused = KafkaRefusal.explain(t, fleet);
            failed = refused != null ? refused : t;
            if (refused != null) {
                LOG.error("aggregator {} failed: {}", instance, refused.getMessage()); // a setting: no stack trace
            } else {
                LOG.error("aggregator {} failed", instance, t);
            }
        } finally {
            stopped.countDown();
        }
    }

    /** Every partition owned: a fresh stage, output from its committed offset, replayed from offset 0. */
    private void rewind(final KafkaConsumer<String, byte[]> consumer) {
        if (states.isEmpty()) {
            return;
        }
        final Set<TopicPartition> parts = Set.copyOf(states.keySet());
        final Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(parts, Duration.ofMinutes(2));
        for (final TopicPartition tp : parts) {
            final OffsetAndMetadata om = committed.get(tp);
            final PartitionState[] ref = new PartitionState[1];
            ref[0] = new PartitionState(stageFactory.apply(sink(tp, ref)), om == null ? 0 : om.offset());
            states.put(tp, ref[0]);
        }
        consumer.seekToBeginning(parts);
    }

    private AnomalySink sink(final TopicPartition tp, final PartitionState[] ref) {
        return AnomalySink.of((type, a) -> {
            final PartitionState st = ref[0];
            st.pending.add(new Object[] {type, a});
            st.anomalies.put(a.id(), a);
            if (st.offset >= st.outputFrom) {
                listener.accept(new AnomalyEvent(type, a, System.currentTimeMillis(), System.nanoTime(), false));
            }
        });
    }

    private void apply(
            final PartitionState st, final byte[] value, final FlowSummary flow, final CollectiveSummary coll) {
        final String agent;
        final long seq;
        final int type;
        JsonNode json = null;
        try {
            if (FleetWire.isJson(value)) {
                json = FleetCodec.read(value);
                agent = json.path("agent").asText();
                seq = json.path("seq").asLong();
                type = switch (json.path("type").asText()) {
                    case "flow" -> WireSchema.FLOW_TEMPLATE_ID;
                    case "coll" -> WireSchema.COLLECTIVE_TEMPLATE_ID;
                    default -> 0; // not for the stage
                };
            } else {
                type = wire.wrap(value); // every other value: a foreign one is named by its schema id
                agent = wire.agent();
                seq = wire.seq();
            }
        } catch (final IllegalArgumentException e) {
            skipped++;
            // one line: Jackson's messages carry the location on a second one
            LOG.warn(
                    "aggregator {}: skipped a record: {}",
                    instance,
                    String.valueOf(e.getMessage()).replace('\n', ' '));
            return;
        }
        final Long last = st.lastSeq.get(agent);
        if (last != null && seq <= last) {
            duplicates++;
            return;
        }
        st.lastSeq.put(agent, seq);
        switch (type) {
            case WireSchema.FLOW_TEMPLATE_ID -> {
                if (json != null) {
                    FleetCodec.flowInto(json.path("s"), flow);
                    final JsonNode hostName = json.get("hostName");
                    if (hostName != null && !hostNames.containsKey(flow.hostId())) {
                        hostNames.put(flow.hostId(), hostName.asText());
                    }
                } else {
                    wire.flowInto(flow);
                    if (!hostNames.containsKey(flow.hostId())) {
                        final String hostName = wire.hostName();
                        if (hostName != null) {
                            hostNames.put(flow.hostId(), hostName);
                        }
                    }
                }
                try {
                    st.stage.onSummary(flow);
                } catch (final RuntimeException e) {
                    stageFailed("flow summary", e);
                }
                try {
                    st.stage.advanceTo(flow.hostId(), flow.periodEndNs());
                } catch (final RuntimeException e) {
                    stageFailed("advanceTo", e);
                }
            }
            case WireSchema.COLLECTIVE_TEMPLATE_ID -> {
                if (json != null) {
                    FleetCodec.collectiveInto(json.path("s"), coll);
                } else {
                    wire.collectiveInto(coll);
                }
                try {
                    st.stage.onCollective(coll);
                } catch (final RuntimeException e) {
                    stageFailed("collective summary", e);
                }
            }
            default -> {
                // other types are not for the stage
            }
        }
    }

    private void stageFailed(final String what, final RuntimeException e) {
        failures.record(IngestFailures.Stage.ANOMALY, what, e);
        failureCounts = failures.counts();
    }

    /** Exceptions the anomaly stage threw on records, counted and skipped (any thread). */
    public IngestFailures.Counts failures() {
        return failureCounts;
    }

    /** The first record at or above the committed offset: the partition's state is rebuilt; logged once. */
    private void rebuilt(final TopicPartition tp, final PartitionState st) {
        if (!st.rebuilt) {
            st.rebuilt = true;
            lastRebuildRecords = st.outputFrom;
            lastRebuildMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - st.takenNs);
            LOG.info("aggregator {}: {} rebuilt from {} records in {} ms", instance, tp, st.outputFrom, lastRebuildMs);
        }
    }

    private void publishList() {
        final Map<Long, Anomaly> all = new LinkedHashMap<>();
        states.values().forEach(st -> all.putAll(st.anomalies));
        list.set(List.copyOf(all.values()));
    }

    private long lagOf(final KafkaConsumer<String, byte[]> consumer) {
        long sum = 0;
        for (final TopicPartition tp : states.keySet()) {
            sum += consumer.currentLag(tp).orElse(0);
        }
        return sum;
    }

    /** The fault injection of {@link #HOLD_PROPERTY}: never returns (the test kills the process). */
    private void hold(
            final KafkaProducer<String, byte[]> producer,
            final List<ProducerRecord<String, byte[]>> out,
            final Map<TopicPartition, OffsetAndMetadata> offsets)
            throws InterruptedException {
        producer.flush();
        final String line = "flowscope: test hold: aggregator " + instance + " holds an open transaction with "
                + out.size()
                + " anomaly events, offsets "
                + new java.util.TreeMap<>(offsets.entrySet().stream()
                        .collect(java.util.stream.Collectors.toMap(
                                e -> e.getKey().partition(), e -> e.getValue().offset())));
        LOG.warn(line);
        System.out.println(line);
        System.out.flush();
        while (true) {
            Thread.sleep(1_000);
        }
    }

    /**
     * What one aggregator owning the partition from the start writes for these records (their values, in offset
     * order, from offset 0): one {@code "<input offset> <event> <anomaly JSON>"} per anomaly event (see
     * {@link #describe}). The reference the tests compare with.
     */
    static List<String> reference(final FleetConfig fleet, final List<byte[]> values) {
        return new Aggregator(fleet, "reference", e -> {}).applyOffline(values);
    }

    /** {@link #reference} with this aggregator's stage factory and counters: every record through one partition. */
    List<String> applyOffline(final List<byte[]> values) {
        final Aggregator a = this;
        final PartitionState[] ref = new PartitionState[1];
        ref[0] = new PartitionState(stageFactory.apply(a.sink(new TopicPartition("reference", 0), ref)), 0);
        final List<String> out = new ArrayList<>();
        final FlowSummary flow = new FlowSummary();
        final CollectiveSummary coll = new CollectiveSummary();
        long offset = 0;
        for (final byte[] v : values) {
            ref[0].offset = offset++;
            a.apply(ref[0], v, flow, coll);
            for (final Object[] e : ref[0].pending) {
                out.add(describe(FleetCodec.read(
                        FleetCodec.anomaly("aggregator", ref[0].offset, (String) e[0], (Anomaly) e[1]))));
            }
            ref[0].pending.clear();
        }
        return out;
    }

    /**
     * {@code "<seq> <event> <anomaly JSON>"} of an anomaly record; an aggregator's record carries as seq the offset
     * of the summary record that produced the event.
     */
    static String describe(final JsonNode record) {
        return record.path("seq").asLong() + " " + record.path("event").asText() + " " + record.path("anomaly");
    }

    public boolean awaitStopped(final long timeout, final TimeUnit unit) throws InterruptedException {
        return stopped.await(timeout, unit);
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(TimeUnit.SECONDS.toMillis(30));
    }

    /** The anomaly events, latest state per anomaly, as the HTTP side serves them. */
    @Override
    public Map<String, Object> health() {
        final Map<String, Object> h = new LinkedHashMap<>();
        final IngestFailures.Counts f = failureCounts;
        final long now = System.currentTimeMillis();
        h.put("status", failed != null ? "DOWN" : f.recent(now) ? "DEGRADED" : "UP");
        h.put("ready", true);
        h.put(
                "source",
                "fleet aggregator " + instance + " of group " + fleet.group() + " on " + fleet.summariesTopic());
        h.put(
                "partitions",
                assigned.stream().map(TopicPartition::toString).sorted().toList());
        h.put("recordsTotal", records);
        h.put("replayedRecords", replayed);
        h.put("skippedRecords", skipped);
        h.put("duplicatesDropped", duplicates);
        h.put("transactions", transactions);
        h.put("abortedTransactions", abortedTransactions);
        h.put("anomalyEventsWritten", eventsWritten);
        h.put("lagRecords", lag);
        h.put("partitionsTaken", partitionsTaken);
        h.put("lastRebuild", Map.of("records", lastRebuildRecords, "ms", lastRebuildMs));
        h.put("failures", f.toHealth(now));
        if (failed != null) {
            h.put("error", failed.toString());
        }
        return h;
    }

    /** Prometheus text of the aggregator's counters (appended to its {@code /metrics}). */
    @Override
    public String metrics() {
        final StringBuilder b = new StringBuilder(1024);
        final String l = "{group=\"" + FleetMetrics.label(fleet.group()) + "\",instance=\""
                + FleetMetrics.label(instance) + "\"}";
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_records_total",
                "Summary records consumed, replayed ones included",
                l,
                records);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_replayed_records_total",
                "Records re-read below a taken partition's committed offset to rebuild its state",
                l,
                replayed);
        FleetMetrics.counter(
                b, "flowscope_fleet_aggregator_skipped_records_total", "Undecodable records skipped", l, skipped);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_duplicates_total",
                "Agents' resends dropped by (agent, seq)",
                l,
                duplicates);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_transactions_total",
                "Transactions committed (anomaly events and offsets)",
                l,
                transactions);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_aborted_transactions_total",
                "Transactions aborted because the group's generation changed meanwhile (the batch is redone)",
                l,
                abortedTransactions);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_anomaly_events_written_total",
                "Anomaly events committed to the fleet-anomalies topic",
                l,
                eventsWritten);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_partitions_taken_total",
                "Partitions taken (each rebuilt from its start)",
                l,
                partitionsTaken);
        FleetMetrics.gauge(b, "flowscope_fleet_aggregator_partitions", "Partitions owned now", l, assigned.size());
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_lag_records",
                "Records not consumed yet on the partitions owned",
                l,
                lag);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_last_rebuild_records",
                "Records replayed by the last partition rebuild",
                l,
                lastRebuildRecords);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_last_rebuild_seconds",
                "Time from taking a partition to its first output-side record, last rebuild",
                l,
                lastRebuildMs / 1000.0);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_up",
                "1 while the aggregator runs without error",
                l,
                failed == null && thread.isAlive() ? 1 : 0);
        return b.toString();
    }
}
