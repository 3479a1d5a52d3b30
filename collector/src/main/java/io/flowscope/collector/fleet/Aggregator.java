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
import io.flowscope.collector.fleet.wire.FleetWireFrame;
import io.flowscope.collector.fleet.wire.WireFormatException;
import io.flowscope.collector.fleet.wire.WireSchema;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Detector;
import io.flowscope.collector.pipeline.IngestFailures;
import io.flowscope.collector.pipeline.ServiceSinks;
import io.flowscope.collector.pipeline.Snapshot;
import io.flowscope.collector.pipeline.Stats;
import io.flowscope.sink.influx.InfluxSchema;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An aggregator: one Kafka Streams instance (application id {@code fleet.group}) whose topology reads the summaries
 * topic, runs the anomaly stage over the summaries of every agent (cross-node detection; all ranks of a
 * communicator are on one partition) and writes the anomaly events to {@code <prefix>.fleet-anomalies}, on the
 * partition of the summary that produced them. One task per partition, one stage per task.
 *
 * <p><b>State = checkpoint + tail.</b> Each task keeps in-memory stores backed by compacted changelog topics:
 * {@code checkpoint} ({@code <group>-checkpoint-changelog}) holds the partition's state as of one input offset C:
 * the stage's {@link AnomalyStage#checkpoint}, the agents' {@code (agent, seq)} high-water marks, the host names
 * learned, and C. Every {@code fleet.checkpoint.records} records, or every {@code fleet.checkpoint.ms} of wall-clock
 * time with records since, a new checkpoint is written at the offset of the last record. The records after C are
 * the tail. With {@code fleet.checkpoint.tail = store} they are also kept in {@code tail}
 * ({@code <group>-tail-changelog}), in chunks (slots 0, 1, 2...: a chunk every 1,000 records, 128 KiB or 50 ms, one
 * changelog record each; per-record writes cost the aggregator two thirds of its rate), restarting at slot 0 after
 * each checkpoint (older slots hold offsets at or below C: ignored, overwritten, compacted away); with
 * {@code topic} (the default) they are only in the summaries topic, which is not written a second time.
 *
 * <p><b>Why a takeover resumes exactly.</b> {@code processing.guarantee = exactly_once_v2}: the anomaly events sent
 * for a stretch of records, the changelog writes of the stores and the input offsets are committed in one Kafka
 * transaction, or none of them is. So after the last commit of a partition's dead owner, at input offset O, the
 * changelogs as a read_committed restore reads them hold a checkpoint at C &lt; O and, in {@code store} mode, tail
 * chunks with the records (C, T], T &lt; O, all processed before that commit; the records (T, O) (all of (C, O) in
 * {@code topic} mode) are in the summaries topic, read_committed, exactly as the dead owner got them. The next owner
 * restores the stores from the changelogs, then {@code init} restores a fresh stage from the checkpoint, replays
 * the chunks and then (T, O) from the topic into it with their output discarded (the dead owner committed those
 * events, in the same transactions as the offsets), and Kafka Streams goes on from O. The stage is a deterministic
 * function of its input, so its state is the one the dead owner had at its last commit: nothing is written twice,
 * nothing is lost, and the records re-read are the tail (at most {@code fleet.checkpoint.records}), not the
 * partition from offset 0. A stage that cannot write a checkpoint ({@link UnsupportedOperationException}) keeps no
 * tail either: its takeover re-reads the partition from offset 0 (the same path with C = -1; still exact). Agents'
 * resends are dropped by {@code (agent, seq)}. A stage that throws on one record is counted and the record skipped,
 * as a node's drain loop does.
 */
public final class Aggregator implements Detector {
    private static final Logger LOG = LoggerFactory.getLogger(Aggregator.class);

    static final String CHECKPOINT_STORE = "checkpoint";
    static final String TAIL_STORE = "tail";
    /** The checkpoint store's keys: the number of chunks, then chunk 0, 1...: no record near Kafka's size limit. */
    private static final String CHUNKS_KEY = "chunks";

    private static final int CHUNK_BYTES = 256 * 1024;
    /**
     * The tail is written in chunks of records, one changelog record each: per-record writes held the aggregator
     * at ~80 k summaries/s against ~375 k without (FleetBenchmark, binary, build VM). A chunk is written when it
     * holds this many records or bytes, and every {@link #TAIL_FLUSH_MS}.
     */
    private static final int TAIL_CHUNK_RECORDS = 1_000;

    private static final int TAIL_CHUNK_BYTES = 128 * 1024;
    private static final long TAIL_FLUSH_MS = 50;
    private static final int CHECKPOINT_MAGIC = 0x46534350; // "FSCP"
    private static final int CHECKPOINT_VERSION = 1;

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
    /** The partitions' states, by partition number (written by the stream thread, read by the HTTP side). */
    private final Map<Integer, PartitionState> states = new ConcurrentHashMap<>();
    /** Reads the binary summary records (fleet.wire = binary); JSON ones go through FleetCodec. */
    private final FleetWireDecoder wire = new FleetWireDecoder();

    private final FleetWireFrame.Reader frames = new FleetWireFrame.Reader();

    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Path holdFile;
    /** Hosts by name as the agents named them (read by the sinks' threads). */
    private final Map<Long, String> hostNames = new ConcurrentHashMap<>();
    /** When the restoration of a partition's changelogs began (the restore listener's thread), by partition. */
    private final Map<Integer, Long> restoreStartNs = new ConcurrentHashMap<>();

    private final AtomicLong restoredChangelogRecords = new AtomicLong();
    private volatile KafkaStreams streams;
    /** See {@link #gapReader()}; created on first use by the stream thread, closed after it stopped. */
    private KafkaConsumer<byte[], byte[]> gapReader;

    private volatile Path stateDir;
    private volatile long records;
    private volatile long replayed;
    private volatile long replayedFromTopic;
    private volatile long tailChunks;
    private volatile long skipped;
    private volatile long duplicates;
    private volatile long eventsWritten;
    private volatile long partitionsTaken;
    private volatile long reopened;
    private volatile long checkpoints;
    private volatile long lastCheckpointBytes;
    private volatile long lastRebuildRecords;
    private volatile long lastRebuildMs;
    private volatile Set<String> assigned = Set.of();
    private volatile Throwable failed;
    private final AtomicReference<List<Anomaly>> list = new AtomicReference<>(List.of());
    /** Partitions this instance has owned (a task opened again for one of them was closed dirty: aborted). */
    private final Set<Integer> ownedBefore = ConcurrentHashMap.newKeySet();

    /** Per partition owned: its stage, the agents' high-water marks, the host names learned, its anomalies. */
    static final class PartitionState {
        final AnomalyStage stage;
        final Map<String, Long> lastSeq = new HashMap<>();
        final Map<Long, String> hostNames = new HashMap<>();
        final List<Object[]> pending = new ArrayList<>();
        final Map<Long, Anomaly> anomalies = new LinkedHashMap<>();
        /** The offset of the record being applied. */
        long offset = -1;
        /** The offset of the last record the checkpoint holds (-1: none). */
        long checkpointOffset = -1;
        /** False while the tail is replayed: its events were written by the previous owner. */
        boolean live;

        PartitionState(final AnomalyStage stage, final boolean live) {
            this.stage = stage;
            this.live = live;
        }

        /** The checkpoint of this state at {@link #offset}; the stage's may throw UnsupportedOperationException. */
        byte[] checkpoint() {
            final byte[] stageBytes = stage.checkpoint();
            final ByteArrayOutputStream bytes = new ByteArrayOutputStream(stageBytes.length + 256);
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeInt(CHECKPOINT_MAGIC);
                out.writeInt(CHECKPOINT_VERSION);
                out.writeLong(offset);
                out.writeInt(lastSeq.size());
                for (final Map.Entry<String, Long> e : lastSeq.entrySet()) {
                    out.writeUTF(e.getKey());
                    out.writeLong(e.getValue());
                }
                out.writeInt(hostNames.size());
                for (final Map.Entry<Long, String> e : hostNames.entrySet()) {
                    out.writeLong(e.getKey());
                    out.writeUTF(e.getValue());
                }
                out.writeInt(stageBytes.length);
                out.write(stageBytes);
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
            return bytes.toByteArray();
        }

        /**
         * Takes a {@link #checkpoint} (on a fresh state): the stage restored, the marks and host names, the open
         * anomalies for the API. One that cannot be read throws IllegalArgumentException.
         */
        void restore(final byte[] checkpoint) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(checkpoint))) {
                final int magic = in.readInt();
                final int version = in.readInt();
                if (magic != CHECKPOINT_MAGIC || version != CHECKPOINT_VERSION) {
                    throw new IllegalArgumentException("not an aggregator checkpoint of version " + CHECKPOINT_VERSION
                            + " (magic " + Integer.toHexString(magic) + ", version " + version + ")");
                }
                checkpointOffset = in.readLong();
                offset = checkpointOffset;
                for (int i = in.readInt(); i > 0; i--) {
                    lastSeq.put(in.readUTF(), in.readLong());
                }
                for (int i = in.readInt(); i > 0; i--) {
                    hostNames.put(in.readLong(), in.readUTF());
                }
                final byte[] stageBytes = new byte[in.readInt()];
                in.readFully(stageBytes);
                stage.restore(stageBytes);
            } catch (final IOException e) {
                throw new IllegalArgumentException("truncated aggregator checkpoint: " + e, e);
            }
            for (final Anomaly a : stage.openAnomalies()) {
                anomalies.put(a.id(), a);
            }
        }
    }

    /** An anomaly event on its way to the fleet-anomalies topic: the record value and its partition (the input's). */
    record Event(int partition, byte[] value) {}

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
        final String hold = System.getProperty(HOLD_PROPERTY, "");
        this.holdFile = hold.isEmpty() ? null : Path.of(hold);
    }

    /**
     * Fault injection for the failover test, off unless this system property names a file: once that file exists,
     * the next record that makes anomaly events has them sent (in the task's open transaction, with its tail and
     * checkpoint writes) and the stream thread stops there, while the consumer's heartbeat keeps the partitions,
     * until the process is killed.
     */
    static final String HOLD_PROPERTY = "flowscope.fleet.test.holdFile";

    public Aggregator start() throws Exception {
        Topics.ensure(fleet);
        stateDir = Files.createTempDirectory("flowscope-aggregator-");
        final KafkaStreams s = new KafkaStreams(topology(), streamsProperties(stateDir));
        s.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(
                    final TopicPartition tp, final String store, final long startOffset, final long endOffset) {
                restoreStartNs.putIfAbsent(tp.partition(), System.nanoTime());
            }

            @Override
            public void onBatchRestored(
                    final TopicPartition tp, final String store, final long batchEndOffset, final long n) {
                restoredChangelogRecords.addAndGet(n);
            }

            @Override
            public void onRestoreEnd(final TopicPartition tp, final String store, final long total) {
                // counted batch by batch
            }
        });
        s.setUncaughtExceptionHandler(t -> {
            final KafkaRefusal refused = KafkaRefusal.explain(t, fleet);
            failed = refused != null ? refused : t;
            if (refused != null) {
                LOG.error("aggregator {} failed: {}", instance, refused.getMessage()); // a setting: no stack trace
            } else {
                LOG.error("aggregator {} failed", instance, t);
            }
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        s.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
                stopped.countDown();
            }
        });
        streams = s;
        s.start();
        return this;
    }

    /** Source (the summaries) → judge (one per task, with its two stores) → sink (the fleet-anomalies topic). */
    private Topology topology() {
        final Map<String, String> changelog = Map.of(
                // small segments (the broker's least), rolled within a minute and cleaned soon: a restore reads
                // the compacted changelog (a tail's slots are overwritten round after round), not every version
                "segment.bytes", Integer.toString(1 << 20),
                "segment.ms", "60000",
                "min.cleanable.dirty.ratio", "0.1");
        final Serializer<Event> events = (topic, e) -> e == null ? null : e.value();
        return new Topology()
                .addSource(
                        "summaries", new ByteArrayDeserializer(), new ByteArrayDeserializer(), fleet.summariesTopic())
                .addProcessor("judge", Judge::new, "summaries")
                .addStateStore(
                        Stores.keyValueStoreBuilder(
                                        Stores.inMemoryKeyValueStore(CHECKPOINT_STORE),
                                        Serdes.String(),
                                        Serdes.ByteArray())
                                .withCachingDisabled()
                                .withLoggingEnabled(changelog),
                        "judge")
                .addStateStore(
                        Stores.keyValueStoreBuilder(
                                        Stores.inMemoryKeyValueStore(TAIL_STORE), Serdes.Long(), Serdes.ByteArray())
                                .withCachingDisabled()
                                .withLoggingEnabled(changelog),
                        "judge")
                .addSink(
                        "fleet-anomalies",
                        fleet.fleetAnomaliesTopic(),
                        new StringSerializer(),
                        events,
                        (topic, key, e, n) -> Optional.of(Set.of(e.partition())),
                        "judge");
    }

    /**
     * The consumer that reads a taken partition's last records (after its tail's last chunk, below the group's
     * committed offset) again: assigned, never subscribed, never committing; the stream thread's only.
     */
    private KafkaConsumer<byte[], byte[]> gapReader() {
        if (gapReader == null) {
            final Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, fleet.bootstrap());
            p.put(ConsumerConfig.GROUP_ID_CONFIG, fleet.group()); // for committed(): it joins nothing
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "flowscope-aggregator-" + instance + "-tail");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
            p.put(CommonClientConfigs.ENABLE_METRICS_PUSH_CONFIG, false);
            gapReader =
                    new KafkaConsumer<>(fleet.withKafka(p), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        return gapReader;
    }

    /**
     * Kafka Streams' settings; the clients' own at the top level (not {@code consumer.}/{@code producer.}-prefixed,
     * which would win), so that {@code fleet.kafka.*}, applied last, overrides them as it does elsewhere.
     */
    private Properties streamsProperties(final Path dir) {
        final Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, fleet.group());
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, fleet.bootstrap());
        p.put(StreamsConfig.CLIENT_ID_CONFIG, "flowscope-aggregator-" + instance);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.toString());
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        // no global stores here: said only to keep one of Kafka Streams' start-up warnings about them away
        p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        // EOS' default: a transaction (events, changelogs, offsets) every 100 ms
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        // a dead member is noticed after the session timeout: failover time is this plus the transaction
        // timeout of its open transaction (below); lower is faster but a GC pause that long reads as a death
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
        // as the hand-written aggregator had it: 5,000 records a poll
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 10_000);
        // store mode's tail chunks repeat the summaries: lz4 keeps the changelog's bytes near the input's
        // (FleetBenchmark, binary records: ~130 k summaries/s uncompressed, ~230 k with lz4, ~170 k with zstd)
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // nothing leaves for anyone but the broker: no client metrics pushed to it either
        p.put(CommonClientConfigs.ENABLE_METRICS_PUSH_CONFIG, false);
        return fleet.withKafka(p);
    }

    /**
     * The task's processor: restores its partition's state from the two stores at init, then per record appends
     * it to the tail, applies it, forwards the anomaly events, and writes a checkpoint when one is due.
     */
    private final class Judge implements Processor<byte[], byte[], String, Event> {
        private final FlowSummary flow = new FlowSummary();
        private final CollectiveSummary coll = new CollectiveSummary();
        private ProcessorContext<String, Event> context;
        private KeyValueStore<String, byte[]> checkpointStore;
        private KeyValueStore<Long, byte[]> tail;
        private PartitionState state;
        private int partition;
        /** Records since the checkpoint (stored in chunks or still buffered). */
        private long tailLength;
        /** The next chunk's slot in the tail store (0 after each checkpoint). */
        private long chunkSlot;
        /** The records not in a chunk yet: [offset 8][length 4][value] each. */
        private byte[] buffer = new byte[TAIL_CHUNK_BYTES + 4096];

        private int buffered;
        private int bufferedBytes;
        private boolean checkpointing = true;

        @Override
        public void init(final ProcessorContext<String, Event> context) {
            this.context = context;
            this.partition = context.taskId().partition();
            this.checkpointStore = context.getStateStore(CHECKPOINT_STORE);
            this.tail = context.getStateStore(TAIL_STORE);
            final long t0 =
                    Optional.ofNullable(restoreStartNs.remove(partition)).orElse(System.nanoTime());
            final PartitionState[] ref = new PartitionState[1];
            ref[0] = new PartitionState(stageFactory.apply(sink(ref)), false);
            state = ref[0];
            final byte[] checkpoint = readCheckpoint();
            if (checkpoint != null) {
                state.restore(checkpoint);
                hostNames.putAll(state.hostNames);
            } else {
                try {
                    state.stage.checkpoint();
                } catch (final UnsupportedOperationException e) {
                    // no tail either: it would hold the whole partition (memory, changelog); a takeover re-reads
                    // the partition from offset 0 instead, as replayUpToCommitted does for any gap
                    checkpointing = false;
                    LOG.warn(
                            "aggregator {}: {}: a takeover of partition {} re-reads it from offset 0",
                            instance,
                            e.getMessage(),
                            partition);
                }
            }
            // the tail's chunks: slots 0..m-1 hold the records after the checkpoint; older slots, offsets at or
            // below it (a chunk is all after or all before: a checkpoint discards what was not flushed)
            final List<KeyValue<Long, byte[]>> chunks = new ArrayList<>();
            try (KeyValueIterator<Long, byte[]> it = tail.all()) {
                while (it.hasNext()) {
                    final KeyValue<Long, byte[]> kv = it.next();
                    if (ByteBuffer.wrap(kv.value).getLong(0) > state.checkpointOffset) {
                        chunks.add(kv);
                    }
                }
            }
            chunks.sort(Comparator.comparingLong(kv -> kv.key));
            long fromTail = 0;
            for (int i = 0; i < chunks.size(); i++) {
                if (chunks.get(i).key != i) {
                    throw new IllegalStateException("aggregator " + instance + ": partition " + partition
                            + "'s tail has chunk " + chunks.get(i).key + " where chunk " + i + " was expected");
                }
                final ByteBuffer chunk = ByteBuffer.wrap(chunks.get(i).value);
                while (chunk.hasRemaining()) {
                    final long offset = chunk.getLong();
                    final byte[] value = new byte[chunk.getInt()];
                    chunk.get(value);
                    replay(offset, value);
                    fromTail++;
                }
            }
            chunkSlot = chunks.size();
            // a task reopened after an aborted transaction gets this processor again: what it buffered then is gone
            buffered = 0;
            bufferedBytes = 0;
            // the records after the last chunk up to the committed offset (the previous owner's last few ms,
            // less than a chunk): read again from the summaries topic
            final long fromTopic = replayUpToCommitted();
            tailLength = fromTail + fromTopic;
            replayed += tailLength;
            replayedFromTopic += fromTopic;
            state.live = true;
            states.put(partition, state);
            assigned = partitionNames();
            partitionsTaken++;
            if (!ownedBefore.add(partition)) {
                reopened++;
            }
            lastRebuildRecords = tailLength;
            lastRebuildMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            publishList();
            LOG.info(
                    "aggregator {}: took {}-{}: checkpoint at offset {}, {} tail records replayed ({} from its chunks, "
                            + "{} from the topic), ready in {} ms",
                    instance,
                    fleet.summariesTopic(),
                    partition,
                    state.checkpointOffset,
                    tailLength,
                    fromTail,
                    fromTopic,
                    lastRebuildMs);
            context.schedule(Duration.ofMillis(TAIL_FLUSH_MS), PunctuationType.WALL_CLOCK_TIME, now -> flushTail());
            context.schedule(Duration.ofMillis(fleet.checkpointMs()), PunctuationType.WALL_CLOCK_TIME, now -> {
                if (tailLength > 0) {
                    checkpoint();
                }
            });
        }

        /** One record of the tail through the stage, its events discarded (the previous owner committed them). */
        private void replay(final long offset, final byte[] value) {
            state.offset = offset;
            apply(state, value, flow, coll);
            state.pending.clear();
        }

        /** Replays the summaries after {@code state.offset} below the group's committed offset; how many. */
        private long replayUpToCommitted() {
            final TopicPartition tp = new TopicPartition(fleet.summariesTopic(), partition);
            final KafkaConsumer<byte[], byte[]> c = gapReader();
            final OffsetAndMetadata committed =
                    c.committed(Set.of(tp), Duration.ofMinutes(2)).get(tp);
            if (committed == null || committed.offset() <= state.offset + 1) {
                return 0;
            }
            final long end = committed.offset();
            c.assign(List.of(tp));
            c.seek(tp, state.offset + 1);
            long n = 0;
            long idleSince = System.nanoTime();
            while (c.position(tp) < end) {
                final ConsumerRecords<byte[], byte[]> batch = c.poll(Duration.ofMillis(200));
                if (!batch.isEmpty()) {
                    idleSince = System.nanoTime();
                } else if (System.nanoTime() - idleSince > TimeUnit.MINUTES.toNanos(2)) {
                    throw new IllegalStateException("aggregator " + instance + ": " + tp + " gave no record in 2 min"
                            + " below its committed offset " + end + " (at " + c.position(tp) + ")");
                }
                for (final ConsumerRecord<byte[], byte[]> r : batch) {
                    if (r.offset() < end) {
                        replay(r.offset(), r.value() == null ? new byte[0] : r.value());
                        n++;
                    }
                }
            }
            c.unsubscribe();
            return n;
        }

        @Override
        public void process(final Record<byte[], byte[]> r) {
            final long offset =
                    context.recordMetadata().map(RecordMetadata::offset).orElse(state.offset + 1);
            final byte[] value = r.value() == null ? new byte[0] : r.value();
            records++;
            if (checkpointing) {
                if (fleet.tailInStore()) {
                    append(offset, value);
                } else {
                    tailLength++; // the tail is the summaries topic after the checkpoint
                }
            }
            state.offset = offset;
            apply(state, value, flow, coll);
            if (!state.pending.isEmpty()) {
                for (final Object[] e : state.pending) {
                    final Anomaly a = (Anomaly) e[1];
                    context.forward(new Record<>(
                            Long.toHexString(a.id()),
                            new Event(partition, FleetCodec.anomaly("aggregator", offset, (String) e[0], a)),
                            r.timestamp()));
                }
                final int n = state.pending.size();
                eventsWritten += n;
                state.pending.clear();
                publishList();
                if (holdFile != null && Files.exists(holdFile)) {
                    hold(n, offset);
                }
            }
            if (tailLength >= fleet.checkpointRecords()) {
                checkpoint();
            }
        }

        private void checkpoint() {
            if (!checkpointing) {
                return;
            }
            final byte[] b;
            try {
                b = state.checkpoint();
            } catch (final UnsupportedOperationException e) {
                // a stage that wrote checkpoints and no longer can: its tail keeps growing; still exact
                checkpointing = false;
                LOG.warn("aggregator {}: {}: partition {} keeps no checkpoint", instance, e.getMessage(), partition);
                return;
            }
            final int chunks = Math.max(1, (b.length + CHUNK_BYTES - 1) / CHUNK_BYTES);
            for (int i = 0; i < chunks; i++) {
                checkpointStore.put(
                        Integer.toString(i),
                        java.util.Arrays.copyOfRange(b, i * CHUNK_BYTES, Math.min(b.length, (i + 1) * CHUNK_BYTES)));
            }
            checkpointStore.put(
                    CHUNKS_KEY, ByteBuffer.allocate(4).putInt(chunks).array());
            state.checkpointOffset = state.offset;
            tailLength = 0;
            chunkSlot = 0;
            buffered = 0; // covered by the checkpoint
            bufferedBytes = 0;
            checkpoints++;
            lastCheckpointBytes = b.length;
        }

        /** Appends a record to the tail: to the buffer, a chunk when it is full. */
        private void append(final long offset, final byte[] value) {
            final int need = bufferedBytes + 12 + value.length;
            if (need > buffer.length) {
                buffer = java.util.Arrays.copyOf(buffer, Math.max(need, 2 * buffer.length));
            }
            ByteBuffer.wrap(buffer, bufferedBytes, 12).putLong(offset).putInt(value.length);
            System.arraycopy(value, 0, buffer, bufferedBytes + 12, value.length);
            bufferedBytes = need;
            buffered++;
            tailLength++;
            if (buffered >= TAIL_CHUNK_RECORDS || bufferedBytes >= TAIL_CHUNK_BYTES) {
                flushTail();
            }
        }

        /** The buffered records as the tail's next chunk (one changelog record). */
        private void flushTail() {
            if (buffered == 0) {
                return;
            }
            tail.put(chunkSlot++, java.util.Arrays.copyOf(buffer, bufferedBytes));
            buffered = 0;
            bufferedBytes = 0;
            tailChunks++;
        }

        private byte[] readCheckpoint() {
            final byte[] n = checkpointStore.get(CHUNKS_KEY);
            if (n == null) {
                return null;
            }
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int i = 0; i < ByteBuffer.wrap(n).getInt(); i++) {
                out.writeBytes(checkpointStore.get(Integer.toString(i)));
            }
            return out.toByteArray();
        }

        @Override
        public void close() {
            states.remove(partition, state);
            assigned = partitionNames();
            publishList();
        }

        /** The fault injection of {@link #HOLD_PROPERTY}: never returns (the test kills the process). */
        private void hold(final int events, final long offset) {
            try {
                // the producer sends the events on its own thread after its linger (100 ms): give it that time,
                // so that the aborted transaction leaves them in the log, as the test checks
                Thread.sleep(3_000);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            final String line = "flowscope: test hold: aggregator " + instance + " holds an open transaction with "
                    + events + " anomaly events, partition " + partition + " offset " + offset;
            LOG.warn(line);
            System.out.println(line);
            System.out.flush();
            while (true) {
                try {
                    Thread.sleep(1_000);
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private Set<String> partitionNames() {
        final Set<String> out = new TreeSet<>();
        states.keySet().forEach(p -> out.add(fleet.summariesTopic() + "-" + p));
        return Set.copyOf(out);
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

    /**
     * The anomalies of the partitions owned (latest state): those seen since each was taken, and those open in
     * its restored checkpoint.
     */
    public List<Anomaly> anomalies() {
        return list.get();
    }

    /** Summary records consumed from the summaries topic (tail replays not included: {@link #replayed}). */
    public long records() {
        return records;
    }

    /** Records replayed from taken partitions' tails (those since their checkpoints) to restore their stages. */
    public long replayed() {
        return replayed;
    }

    /** Records summed over the partitions owned that are not consumed yet (the consumer's records-lag). */
    public long lag() {
        return (long) sumMetric("records-lag", fleet.summariesTopic());
    }

    public long partitionsTaken() {
        return partitionsTaken;
    }

    public long duplicates() {
        return duplicates;
    }

    /** Transactions committed by the stream thread (Kafka Streams' commit-total). */
    public long transactions() {
        return (long) sumMetric("commit-total", null);
    }

    public long eventsWritten() {
        return eventsWritten;
    }

    public long checkpoints() {
        return checkpoints;
    }

    /** Partitions owned now, as {@code <topic>-<partition>}. */
    public Set<String> assigned() {
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

    /** The sum of a Kafka Streams client metric (its clients' included) over all its tags, or of one topic's. */
    private double sumMetric(final String name, final String topic) {
        final KafkaStreams s = streams;
        if (s == null) {
            return 0;
        }
        double sum = 0;
        for (final Map.Entry<MetricName, ? extends Metric> e : s.metrics().entrySet()) {
            final MetricName m = e.getKey();
            if (m.name().equals(name)
                    && (topic == null || topic.equals(m.tags().get("topic")))
                    && (topic == null || m.tags().containsKey("partition"))
                    && e.getValue().metricValue() instanceof Number v
                    && !Double.isNaN(v.doubleValue())) {
                sum += v.doubleValue();
            }
        }
        return sum;
    }

    private AnomalySink sink(final PartitionState[] ref) {
        return AnomalySink.of((type, a) -> {
            final PartitionState st = ref[0];
            st.pending.add(new Object[] {type, a});
            st.anomalies.put(a.id(), a);
            if (st.live) {
                listener.accept(new AnomalyEvent(type, a, System.currentTimeMillis(), System.nanoTime(), false));
            }
        });
    }

    private void apply(
            final PartitionState st, final byte[] value, final FlowSummary flow, final CollectiveSummary coll) {
        if (WireSchema.isFrame(value)) {
            applyFrame(st, value, flow, coll);
            return;
        }
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
            skip(e);
            return;
        }
        applyDecoded(st, json, type, agent, seq, flow, coll);
    }

    private void skip(final IllegalArgumentException e) {
        skipped++;
        // one line: Jackson's messages carry the location on a second one
        LOG.warn(
                "aggregator {}: skipped a record: {}",
                instance,
                String.valueOf(e.getMessage()).replace('\n', ' '));
    }

    /**
     * A frame's records one by one, as if each had come alone; a damaged entry skips the frame's rest (its lengths
     * can no longer be trusted), the records before it stay applied.
     */
    private void applyFrame(
            final PartitionState st, final byte[] value, final FlowSummary flow, final CollectiveSummary coll) {
        try {
            frames.wrap(value);
            while (frames.next()) {
                final int type = wire.wrap(frames.buffer(), frames.offset(), frames.length());
                applyDecoded(st, null, type, wire.agent(), wire.seq(), flow, coll);
            }
        } catch (final WireFormatException e) {
            skip(e);
        }
    }

    /** A decoded record (a JSON one's tree in {@code json}, else the binary one {@link #wire} holds). */
    private void applyDecoded(
            final PartitionState st,
            final JsonNode json,
            final int type,
            final String agent,
            final long seq,
            final FlowSummary flow,
            final CollectiveSummary coll) {
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
                    if (hostName != null && !st.hostNames.containsKey(flow.hostId())) {
                        st.hostNames.put(flow.hostId(), hostName.asText());
                        hostNames.put(flow.hostId(), hostName.asText());
                    }
                } else {
                    wire.flowInto(flow);
                    if (!st.hostNames.containsKey(flow.hostId())) {
                        final String hostName = wire.hostName();
                        if (hostName != null) {
                            st.hostNames.put(flow.hostId(), hostName);
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
                    // To the period's start, not its end: the host's other flows of this period follow this one
                    // (an agent publishes a period whole, in order), and a stage told the period's end would judge
                    // it now, after one flow (a period per flow: other hang culprits, other link windows than the
                    // service's; CentralSubsetTest). The first flow of the next period ends it, as in the service.
                    st.stage.advanceTo(flow.hostId(), flow.periodStartNs());
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

    private void publishList() {
        final Map<Long, Anomaly> all = new LinkedHashMap<>();
        new java.util.TreeMap<>(states).values().forEach(st -> all.putAll(st.anomalies));
        list.set(List.copyOf(all.values()));
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
        final PartitionState[] ref = new PartitionState[1];
        ref[0] = new PartitionState(stageFactory.apply(sink(ref)), true);
        return applyOffline(ref[0], values, 0);
    }

    /**
     * Applies {@code values} to {@code st} as offsets {@code from, from + 1...} and returns the events they made,
     * as {@link #applyOffline(List)}: the tests' way to a state that they checkpoint and restore.
     */
    List<String> applyOffline(final PartitionState st, final List<byte[]> values, final long from) {
        final List<String> out = new ArrayList<>();
        final FlowSummary flow = new FlowSummary();
        final CollectiveSummary coll = new CollectiveSummary();
        long offset = from;
        for (final byte[] v : values) {
            st.offset = offset++;
            apply(st, v, flow, coll);
            for (final Object[] e : st.pending) {
                out.add(describe(
                        FleetCodec.read(FleetCodec.anomaly("aggregator", st.offset, (String) e[0], (Anomaly) e[1]))));
            }
            st.pending.clear();
        }
        return out;
    }

    /** A fresh partition state with this aggregator's stage, for the tests ({@code live}: its events announced). */
    PartitionState newState(final boolean live) {
        final PartitionState[] ref = new PartitionState[1];
        ref[0] = new PartitionState(stageFactory.apply(sink(ref)), live);
        return ref[0];
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
        final KafkaStreams s = streams;
        if (s != null) {
            s.close(Duration.ofSeconds(30));
        }
        if (gapReader != null) {
            gapReader.close(Duration.ofSeconds(5));
        }
        stopped.countDown();
        final Path dir = stateDir;
        if (dir != null) {
            try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (final IOException e) {
                LOG.warn("aggregator {}: could not remove {}: {}", instance, dir, e.toString());
            }
        }
    }

    private boolean running() {
        final KafkaStreams s = streams;
        return s != null && s.state().isRunningOrRebalancing();
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
        h.put("partitions", List.copyOf(new TreeSet<>(assigned)));
        h.put("recordsTotal", records);
        h.put("replayedRecords", replayed);
        h.put("skippedRecords", skipped);
        h.put("duplicatesDropped", duplicates);
        h.put("transactions", transactions());
        h.put("abortedTransactions", reopened);
        h.put("anomalyEventsWritten", eventsWritten);
        h.put("lagRecords", lag());
        h.put("partitionsTaken", partitionsTaken);
        h.put("checkpoints", checkpoints);
        h.put("lastCheckpointBytes", lastCheckpointBytes);
        h.put("restoredChangelogRecords", restoredChangelogRecords.get());
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
                "Summary records consumed (tail replays not included)",
                l,
                records);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_replayed_records_total",
                "Records replayed from taken partitions' tails (the records since their checkpoints)",
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
                "Transactions committed (anomaly events, state changelogs and offsets)",
                l,
                transactions());
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_aborted_transactions_total",
                "Partitions opened again by this instance (their open transaction aborted, state restored)",
                l,
                reopened);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_anomaly_events_written_total",
                "Anomaly events sent to the fleet-anomalies topic in transactions",
                l,
                eventsWritten);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_partitions_taken_total",
                "Partitions taken (each restored from its checkpoint and tail)",
                l,
                partitionsTaken);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_checkpoints_total",
                "Partition checkpoints written (stage state, agents' marks; the tail restarts)",
                l,
                checkpoints);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_aggregator_restored_changelog_records_total",
                "State changelog records read to restore taken partitions",
                l,
                restoredChangelogRecords.get());
        FleetMetrics.gauge(b, "flowscope_fleet_aggregator_partitions", "Partitions owned now", l, assigned.size());
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_lag_records",
                "Records not consumed yet on the partitions owned",
                l,
                lag());
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_last_checkpoint_bytes",
                "Size of the last partition checkpoint written",
                l,
                lastCheckpointBytes);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_last_rebuild_records",
                "Tail records replayed by the last partition restore (those after its checkpoint)",
                l,
                lastRebuildRecords);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_last_rebuild_seconds",
                "Time from the start of the last partition's changelog restore to its stage ready",
                l,
                lastRebuildMs / 1000.0);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_aggregator_up",
                "1 while the aggregator runs without error",
                l,
                failed == null && running() ? 1 : 0);
        return b.toString();
    }
}
