package io.flowscope.collector.fleet;

import io.flowscope.api.input.TelemetryListener;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.fleet.wire.FleetWireFrame;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.AnomalyStages;
import io.flowscope.collector.pipeline.Pipeline;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongFunction;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An agent's publisher: follows the service's journal on its own thread, runs the same window engine and anomaly
 * stage over it (deterministic: same journal, same outputs, same order) and sends every output with a sequence
 * number above the persisted "published up to" mark to Kafka. The drain thread never waits for Kafka: it only
 * writes the journal, which is the spool (bounded by {@code journal.maxBytes}). Every {@value #CHECKPOINT_MS} ms
 * the producer's open transaction is committed and, when it committed, the mark advances and is written
 * (atomically) to {@code <journal.dir>.fleet-published}. Any failure (broker gone, timeouts) ends the session: the
 * producer is dropped with its transaction and a new session (its {@code initTransactions} fences the old producer
 * and aborts what it left open) re-reads the journal from its start, skipping outputs up to the mark.
 *
 * <p>Why transactions and not only an idempotent producer: when the broker is away longer than the delivery
 * timeout, the batches that expire fail while later batches of the same partition, still within their timeout, are
 * delivered once the broker is back (the producer bumps its epoch and goes on). A later session resends the expired
 * outputs, which then land after higher seqs of their partition, and the aggregators' per-partition high-water mark
 * on {@code (agent, seq)} would drop them: a loss. In a transaction the expired batch makes the commit fail, so
 * everything sent since the last checkpoint is aborted and invisible to {@code read_committed} readers (the
 * aggregators), and the resend is the first committed copy, in order. A commit that timed out but did complete
 * (state unknown to the agent) only yields records at or below seqs already committed, which the high-water mark
 * drops as the duplicates they are. So each output reaches a read_committed reader exactly once and in seq order per
 * partition; readers of the agent topics must use {@code isolation.level=read_committed}.
 */
public final class AgentPublisher implements AutoCloseable {
    static final long CHECKPOINT_MS = 200;
    /** A frame is sent once it holds this many bytes, whatever the journal document (about 700 summaries). */
    static final int FRAME_BYTES = 256 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(AgentPublisher.class);

    private final FleetConfig fleet;
    private final CollectorConfig config;
    private final String agentId;
    private final Path markFile;
    private volatile boolean running = true;
    private volatile boolean closing;
    private volatile long publishedUpTo;
    /** Where the output {@link #publishedUpTo} came from: the journal document's index and its ordinal there. */
    private long markDoc = -1;

    private long markOrdinal;
    private volatile long spoolLost;
    private volatile long produced;
    private volatile long sent;
    private volatile long sessions;
    private volatile long failures;
    private volatile String lastError;
    private volatile long documents;
    private volatile long resent;
    private volatile long backfilled;
    private volatile boolean catchingUp;
    private volatile boolean connected;
    /** The highest seq handed to a producer by any session of this process: a seq at or below it is a resend. */
    private long highestSent;

    private final Thread thread;
    private final LongFunction<String> sourceHostNames;
    /** Host names the journal recorded (ring attachments), by host id: deterministic over re-reads. */
    private final Map<Long, String> journalHostNames = new HashMap<>();

    public AgentPublisher(final CollectorConfig config, final FleetConfig fleet) {
        this(config, fleet, id -> null);
    }

    /**
     * {@code hostNames}: a host id's name as the service's source knows it (null where unknown); names the journal
     * records (a ring's hostname when it was attached) come first.
     */
    public AgentPublisher(final CollectorConfig config, final FleetConfig fleet, final LongFunction<String> hostNames) {
        this.sourceHostNames = hostNames;
        if (!config.journalEnabled()) {
            throw new CollectorConfig.ConfigException("config: fleet.role = agent needs journal.enabled = true "
                    + "(the journal is the agent's spool while Kafka is unreachable)");
        }
        this.fleet = fleet;
        this.config = config;
        this.agentId = fleet.agentIdFor(config.journalDir());
        this.markFile = Path.of(config.journalDir().toString() + ".fleet-published");
        final long[] mark = readMark(markFile);
        this.publishedUpTo = mark[0];
        this.markDoc = mark[1];
        this.markOrdinal = mark[2];
        this.thread = new Thread(this::run, "flowscope-fleet-agent");
        this.thread.setDaemon(true);
    }

    public AgentPublisher start() {
        LOG.info(
                "fleet agent {}: publishing to {} (topics {}.*), published up to seq {} ({})",
                agentId,
                fleet.bootstrap(),
                fleet.topicPrefix(),
                publishedUpTo,
                markFile);
        thread.start();
        return this;
    }

    public String agentId() {
        return agentId;
    }

    /** Outputs acknowledged by Kafka and marked (the highest seq). */
    public long publishedUpTo() {
        return publishedUpTo;
    }

    /** Outputs the engines derived from the journal in the current session (the highest seq so far). */
    public long produced() {
        return produced;
    }

    /** Records handed to the producer (resends included). */
    public long sent() {
        return sent;
    }

    public long sessions() {
        return sessions;
    }

    public long failures() {
        return failures;
    }

    public String lastError() {
        return lastError;
    }

    /** Journal documents read in the current session. */
    public long documents() {
        return documents;
    }

    /** Records sent again by a later session (sent before a failure, not marked): consumers drop them. */
    public long resent() {
        return resent;
    }

    /** Outputs published while a session was catching up with the journal (the spool) from its start. */
    public long backfilled() {
        return backfilled;
    }

    /** Prometheus text of the publisher's counters (appended to the service's {@code /metrics}). */
    public String metrics() {
        final StringBuilder b = new StringBuilder(1024);
        final String l = "{agent=\"" + FleetMetrics.label(agentId) + "\"}";
        FleetMetrics.counter(
                b,
                "flowscope_fleet_agent_published_total",
                "Outputs Kafka acknowledged and marked (the published-up-to seq)",
                l,
                publishedUpTo);
        FleetMetrics.counter(
                b, "flowscope_fleet_agent_sent_total", "Records handed to the producer, resends included", l, sent);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_agent_resent_total",
                "Records sent again after a failed session (same agent and seq: dropped by consumers)",
                l,
                resent);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_agent_backfilled_total",
                "Outputs sent while a session caught up with the journal (spool) from its start",
                l,
                backfilled);
        FleetMetrics.counter(b, "flowscope_fleet_agent_sessions_total", "Producer sessions started", l, sessions);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_agent_errors_total",
                "Sessions ended by an error (broker unreachable, delivery timeout)",
                l,
                failures);
        FleetMetrics.counter(
                b,
                "flowscope_fleet_agent_spool_lost_total",
                "Sessions that found the published mark's journal document deleted by retention (outputs lost)",
                l,
                spoolLost);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_agent_spooled_outputs",
                "Outputs derived from the journal and not acknowledged yet (current session)",
                l,
                Math.max(0, produced - publishedUpTo));
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_agent_catching_up",
                "1 while the session re-reads the journal (spool) toward its end",
                l,
                catchingUp ? 1 : 0);
        FleetMetrics.gauge(
                b,
                "flowscope_fleet_agent_connected",
                "1 while a producer session is open with no error",
                l,
                connected ? 1 : 0);
        return b.toString();
    }

    /** The publisher's counters for the service's {@code /api/health}. */
    public Map<String, Object> health() {
        final Map<String, Object> h = new LinkedHashMap<>();
        h.put("agentId", agentId);
        h.put("bootstrap", fleet.bootstrap());
        h.put("connected", connected);
        h.put("catchingUp", catchingUp);
        h.put("publishedUpTo", publishedUpTo);
        h.put("produced", produced);
        h.put("sent", sent);
        h.put("resent", resent);
        h.put("backfilled", backfilled);
        h.put("sessions", sessions);
        h.put("failures", failures);
        h.put("spoolLost", spoolLost);
        h.put("lastError", lastError);
        return h;
    }

    /**
     * The mark: {@code "<seq> <document index> <ordinal>"} ({seq, -1, 0} for a mark written before documents were
     * recorded, or none).
     */
    private static long[] readMark(final Path f) {
        try {
            if (!Files.exists(f)) {
                return new long[] {0, -1, 0};
            }
            final String[] t = Files.readString(f).trim().split("\\s+");
            return t.length >= 3
                    ? new long[] {Long.parseLong(t[0]), Long.parseLong(t[1]), Long.parseLong(t[2])}
                    : new long[] {Long.parseLong(t[0]), -1, 0};
        } catch (final IOException | NumberFormatException e) {
            LOG.warn("fleet agent: unreadable mark {} ({}); publishing from the start", f, e.toString());
            return new long[] {0, -1, 0};
        }
    }

    private void writeMark(final long seq, final long doc, final long ordinal) throws IOException {
        final Path tmp = Path.of(markFile + ".tmp");
        Files.writeString(tmp, seq + " " + doc + " " + ordinal, StandardCharsets.UTF_8);
        Files.move(tmp, markFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Sessions that found the mark's journal document deleted (retention) before it was published past. */
    public long spoolLost() {
        return spoolLost;
    }

    private void run() {
        long backoffMs = 250;
        while (running) {
            try {
                session();
                connected = false;
                if (closing) {
                    return;
                }
            } catch (final Exception e) {
                connected = false;
                catchingUp = false;
                failures++;
                final KafkaRefusal refusal = KafkaRefusal.explain(e, fleet);
                lastError = refusal != null ? refusal.getMessage() : e.toString();
                if (closing && refusal != null && refusal.refused()) {
                    // refused credentials do not change within close()'s 30 s: stop now; the journal keeps the rest
                    LOG.warn(
                            "fleet agent {}: stopping ({}); published up to seq {}", agentId, lastError, publishedUpTo);
                    return;
                }
                LOG.warn(
                        "fleet agent {}: session ended ({}); published up to seq {}; retrying in {} ms",
                        agentId,
                        lastError,
                        publishedUpTo,
                        backoffMs);
                sleep(backoffMs);
                backoffMs = Math.min(5_000, backoffMs * 2);
            }
        }
    }

    private static void sleep(final long ms) {
        try {
            Thread.sleep(ms);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Properties producerProperties() {
        return producerProperties(fleet, agentId);
    }

    /**
     * The producer settings of agent {@code agentId} publishing to {@code fleet}'s topics. Public for the cluster
     * benchmark's agents ({@code io.flowscope.bench.cluster.ClusterAgent}), which publish as an agent does.
     */
    public static Properties producerProperties(final FleetConfig fleet, final String agentId) {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, fleet.bootstrap());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // one id per agent and topic set: a new session (or a restarted agent) fences the previous producer
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, fleet.topicPrefix() + "-agent-" + agentId);
        // an agent that died with a transaction open holds back read_committed readers of its partitions (the
        // aggregators) until the coordinator aborts it: keep that short (a checkpoint commits every 200 ms)
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 10_000);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, fleet.bufferBytes());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        // zstd: 8.5x fewer bytes than the binary records alone for ~1 us of CPU per summary (docs/fleet-wire.md)
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 15_000);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1_000);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "flowscope-agent-" + agentId);
        return fleet.withKafka(p); // TLS, SASL and tuning from fleet.kafka.*, over the settings above
    }

    private void session() throws Exception {
        sessions++;
        while (running && JournalWriter.cycleFiles(config.journalDir()).isEmpty()) {
            sleep(50);
        }
        if (!running) {
            return;
        }
        Topics.ensure(fleet);
        final AtomicReference<Exception> sendFailure = new AtomicReference<>();
        try (KafkaProducer<String, byte[]> producer =
                        new KafkaProducer<>(producerProperties(), new StringSerializer(), new ByteArraySerializer());
                JournalReader reader = new JournalReader(config.journalDir())) {
            producer.initTransactions();
            final int summaryPartitions =
                    producer.partitionsFor(fleet.summariesTopic()).size();
            final int anomalyPartitions =
                    producer.partitionsFor(fleet.anomaliesTopic()).size();
            final Out out = new Out(producer, sendFailure, summaryPartitions, anomalyPartitions);
            connected = true;
            catchingUp = true;
            final Pipeline pipeline = new Pipeline(Pipeline.windowConfig(config), AnomalyStages::create, out::anomaly);
            pipeline.tap(out::flow, out::collective);
            final JournalReader.Meta meta = new JournalReader.Meta() {
                @Override
                public void onBatch(final long wallNs) {
                    out.document(reader.index());
                }

                @Override
                public void onRingAttached(final long hostId, final int pid, final String hostname, final String path) {
                    journalHostNames.put(hostId, hostname);
                }

                @Override
                public void onEnd() {
                    pipeline.finish(); // the live run's last period: published like any other
                }
            };
            final TelemetryListener in =
                    new EventSampler(pipeline, fleet.eventSampleEvery(), out::event, out.selection);
            documents = 0;
            long nextCheckpoint = System.nanoTime();
            try {
                while (running) {
                    final int n = reader.read(in, meta, 1);
                    if (n > 0) {
                        documents++;
                        pipeline.endBatch(0);
                        out.flushFrames();
                    }
                    final long now = System.nanoTime();
                    if (n == 0 || now - nextCheckpoint >= 0) {
                        checkpoint(producer, sendFailure, out);
                        nextCheckpoint = now + TimeUnit.MILLISECONDS.toNanos(CHECKPOINT_MS);
                    }
                    if (n == 0) {
                        catchingUp = false;
                        if (closing) {
                            break; // closing and at the end of the journal: everything read is published
                        }
                        sleep(20);
                    }
                }
                checkpoint(producer, sendFailure, out);
            } catch (final Exception e) {
                producer.close(Duration.ZERO);
                throw e;
            }
        }
    }

    private String hostName(final long hostId) {
        final String journaled = journalHostNames.get(hostId);
        return journaled != null ? journaled : sourceHostNames.apply(hostId);
    }

    private void checkpoint(
            final KafkaProducer<String, byte[]> producer, final AtomicReference<Exception> failure, final Out out)
            throws Exception {
        out.flushFrames();
        if (!out.anchored || out.seq <= publishedUpTo) {
            return;
        }
        final Exception e = failure.get();
        if (e != null) {
            throw e;
        }
        if (out.inTransaction) {
            out.inTransaction = false;
            producer.commitTransaction(); // flushes; throws if a send of the transaction failed
        }
        writeMark(out.seq, out.lastDoc, out.lastOrdinal);
        markDoc = out.lastDoc;
        markOrdinal = out.lastOrdinal;
        publishedUpTo = out.seq;
    }

    @Override
    public void close() throws InterruptedException {
        // publish what the journal holds first (up to 30 s), then stop
        closing = true;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        running = false;
        thread.join(TimeUnit.SECONDS.toMillis(10));
        LOG.info(
                "fleet agent {}: stopped; published up to seq {} ({} records sent, {} sessions, {} failures)",
                agentId,
                publishedUpTo,
                sent,
                sessions,
                failures);
    }

    /**
     * The outputs of one session, numbered; those at or below the mark are skipped (not even encoded). The numbers
     * are anchored at the mark's journal document, not at the journal's start: retention deletes old cycle files
     * while the agent runs, and a session that counted from the remaining start would number its outputs lower than
     * before, skip unpublished ones as published and reuse seqs the consumers already dropped up to. So outputs
     * before the mark's document are skipped whatever their count; at that document the count is set to where the
     * mark left it; if that document is gone (the spool outgrew journal.retentionHours while Kafka was away), the
     * first later one continues after the mark, and what was deleted is lost (logged, counted).
     */
    private final class Out {
        private final KafkaProducer<String, byte[]> producer;
        private final AtomicReference<Exception> failure;
        private final int summaryPartitions;
        private final int anomalyPartitions;
        /** Summaries in the binary records of {@code fleet.wire}; null: JSON ({@code fleet.wire = json}). */
        private final FleetWireEncoder wire;
        /** What travels: decided anew each session from the journal it re-reads. */
        final CentralSelection selection = CentralSelection.of(fleet);
        /**
         * Binary summaries wait here, per partition, until the journal document that made them is read
         * ({@link #flushFrames}): one Kafka record per partition and document (docs/fleet-wire.md, "Frames").
         * Null with JSON.
         */
        private final FleetWireFrame[] frames;

        long seq;
        private long doc = -1;
        private long ordinal;
        long lastDoc = -1;
        long lastOrdinal;
        /** A transaction is open: begun by the first send after a checkpoint, committed by the next one. */
        boolean inTransaction;
        /** Numbering anchored: the mark's document reached (or no anchor: a fresh or an old-format mark). */
        private boolean anchored = markDoc < 0;

        Out(
                final KafkaProducer<String, byte[]> producer,
                final AtomicReference<Exception> failure,
                final int summaryPartitions,
                final int anomalyPartitions) {
            this.producer = producer;
            this.failure = failure;
            this.summaryPartitions = summaryPartitions;
            this.anomalyPartitions = anomalyPartitions;
            this.wire = fleet.wire() == FleetConfig.Encoding.BINARY ? new FleetWireEncoder(agentId) : null;
            this.frames = wire != null ? new FleetWireFrame[summaryPartitions] : null;
            for (int p = 0; frames != null && p < summaryPartitions; p++) {
                frames[p] = new FleetWireFrame(wire);
            }
        }

        void document(final long index) {
            doc = index;
            ordinal = 0;
            if (!anchored && index >= markDoc) {
                anchored = true;
                if (index == markDoc) {
                    seq = publishedUpTo - markOrdinal;
                } else {
                    seq = publishedUpTo;
                    spoolLost++;
                    LOG.warn(
                            "fleet agent {}: the journal document of the published mark (index {}) was deleted "
                                    + "before this session read it (retention); continuing after seq {} from document {}: the "
                                    + "outputs of the deleted documents after the mark are lost",
                            agentId,
                            markDoc,
                            publishedUpTo,
                            index);
                }
            }
        }

        private boolean next() {
            seq++;
            ordinal++;
            lastDoc = doc;
            lastOrdinal = ordinal;
            produced = seq;
            return anchored && seq > publishedUpTo;
        }

        private void send(final String topic, final int partition, final String key, final byte[] value) {
            if (failure.get() != null) {
                return;
            }
            count();
            produce(topic, partition, key, value);
        }

        /** The output {@link #seq} counted as sent (the counters of the agent's health). */
        private void count() {
            sent++;
            if (seq <= highestSent) {
                resent++;
            } else {
                highestSent = seq;
            }
            if (catchingUp) {
                backfilled++;
            }
        }

        private void produce(final String topic, final int partition, final String key, final byte[] value) {
            if (!inTransaction) {
                producer.beginTransaction();
                inTransaction = true;
            }
            producer.send(new ProducerRecord<>(topic, partition, key, value), (md, e) -> {
                if (e != null) {
                    failure.compareAndSet(null, e);
                }
            });
        }

        void flow(final FlowSummary s) {
            // numbered before the filter: seqs stay those of every output (a filtered one is a gap, which the
            // consumers' high-water marks pass over), so fleet.publish may change without renumbering the journal
            if (next() && selection.flow(s)) {
                final int p = FleetCodec.partition(s, summaryPartitions);
                if (frames == null) {
                    send(
                            fleet.summariesTopic(),
                            p,
                            FleetCodec.key(s),
                            FleetCodec.flow(agentId, seq, s, hostName(s.hostId())));
                } else if (failure.get() == null) {
                    count();
                    frames[p].addFlow(seq, s, hostName(s.hostId()));
                    flushIfFull(p);
                }
            }
        }

        void collective(final CollectiveSummary s) {
            if (next() && selection.collective(s)) {
                final int p = FleetCodec.partition(s, summaryPartitions);
                if (frames == null) {
                    send(fleet.summariesTopic(), p, FleetCodec.key(s), FleetCodec.collective(agentId, seq, s));
                } else if (failure.get() == null) {
                    count();
                    frames[p].addCollective(seq, s);
                    flushIfFull(p);
                }
            }
        }

        private void flushIfFull(final int p) {
            if (frames[p].length() >= FRAME_BYTES) {
                produce(fleet.summariesTopic(), p, null, frames[p].take());
            }
        }

        /** Sends the frames that hold records: at the end of each journal document and before each commit. */
        void flushFrames() {
            for (int p = 0; frames != null && p < frames.length; p++) {
                if (frames[p].count() > 0) {
                    final byte[] frame = frames[p].take();
                    if (failure.get() == null) {
                        produce(fleet.summariesTopic(), p, null, frame);
                    }
                }
            }
        }

        void anomaly(final AnomalyEvent e) {
            if (next()) {
                send(
                        fleet.anomaliesTopic(),
                        FleetCodec.spread(e.anomaly().id(), anomalyPartitions),
                        Long.toHexString(e.anomaly().id()),
                        FleetCodec.anomaly(agentId, seq, e.type(), e.anomaly()));
            }
        }

        void event(final long hostId, final String call, final Map<String, Object> args) {
            if (next()) {
                send(
                        fleet.eventsTopic(),
                        FleetCodec.spread(hostId, summaryPartitions),
                        Long.toHexString(hostId),
                        FleetCodec.event(agentId, seq, call, args));
            }
        }
    }

    /**
     * The agent's input tap: hands every call to the pipeline, the ranks each host holds (the rings' communicator
     * entries, the collectives' starts) to the selection of what travels too, and every N-th call (by count; 0:
     * none) to the events topic.
     */
    interface EventOut {
        void event(long hostId, String call, Map<String, Object> args);
    }

    static final class EventSampler implements TelemetryListener {
        private final TelemetryListener next;
        private final long every;
        private final EventOut out;
        private long count;
        private long host;

        private final CentralSelection selection;

        EventSampler(
                final TelemetryListener next, final long every, final EventOut out, final CentralSelection selection) {
            this.next = next;
            this.every = every;
            this.out = out;
            this.selection = selection;
        }

        private boolean sample() {
            return every > 0 && ++count % every == 0;
        }

        private void emit(final String call, final Object... kv) {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("host", Long.toHexString(host));
            for (int i = 0; i < kv.length; i += 2) {
                m.put((String) kv[i], kv[i + 1]);
            }
            out.event(host, call, m);
        }

        @Override
        public void onHost(final long hostId) {
            host = hostId;
            next.onHost(hostId);
        }

        @Override
        public void onRingComm(
                final long hostId,
                final String hostname,
                final int pid,
                final long commHash,
                final int rank,
                final int nranks,
                final int cudaDevice,
                final String pciBusId) {
            selection.onRank(hostId, commHash, rank, nranks);
            next.onRingComm(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId);
        }

        @Override
        public void onRingGpuUuid(
                final long hostId, final int pid, final long commHash, final int rank, final String gpuUuid) {
            next.onRingGpuUuid(hostId, pid, commHash, rank, gpuUuid);
        }

        @Override
        public void onProxyOpStart(
                final long opKey,
                final long commHash,
                final int rank,
                final int peer,
                final int channel,
                final boolean isSend,
                final long timeNs) {
            next.onProxyOpStart(opKey, commHash, rank, peer, channel, isSend, timeNs);
            if (sample()) {
                emit(
                        "proxyOpStart",
                        "opKey",
                        opKey,
                        "comm",
                        Long.toHexString(commHash),
                        "rank",
                        rank,
                        "peer",
                        peer,
                        "channel",
                        channel,
                        "isSend",
                        isSend,
                        "t",
                        timeNs);
            }
        }

        /** Not sampled: an idle host's time is not an event. */
        @Override
        public void advanceTo(final long hostId, final long timeNs) {
            next.advanceTo(hostId, timeNs);
        }

        @Override
        public void onProxyOpStop(final long opKey, final long timeNs) {
            next.onProxyOpStop(opKey, timeNs);
            if (sample()) {
                emit("proxyOpStop", "opKey", opKey, "t", timeNs);
            }
        }

        @Override
        public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
            next.onProxyStepStart(stepKey, opKey, step, timeNs);
            if (sample()) {
                emit("proxyStepStart", "stepKey", stepKey, "opKey", opKey, "step", step, "t", timeNs);
            }
        }

        @Override
        public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
            next.onProxyStepState(stepKey, state, transSize, timeNs);
            if (sample()) {
                emit("proxyStepState", "stepKey", stepKey, "state", state, "transSize", transSize, "t", timeNs);
            }
        }

        @Override
        public void onProxyStepStop(final long stepKey, final long timeNs) {
            next.onProxyStepStop(stepKey, timeNs);
            if (sample()) {
                emit("proxyStepStop", "stepKey", stepKey, "t", timeNs);
            }
        }

        @Override
        public void onQpStart(
                final long wrKey,
                final int device,
                final long qpNum,
                final int opcode,
                final long length,
                final long timeNs) {
            next.onQpStart(wrKey, device, qpNum, opcode, length, timeNs);
            if (sample()) {
                emit(
                        "qpStart", "wrKey", wrKey, "device", device, "qpNum", qpNum, "opcode", opcode, "length", length,
                        "t", timeNs);
            }
        }

        @Override
        public void onQpStop(final long wrKey, final long timeNs) {
            next.onQpStop(wrKey, timeNs);
            if (sample()) {
                emit("qpStop", "wrKey", wrKey, "t", timeNs);
            }
        }

        @Override
        public void onCollStart(
                final long collKey,
                final long commHash,
                final int rank,
                final int nranks,
                final int func,
                final int algo,
                final int proto,
                final long count,
                final int datatypeSize,
                final int nChannels,
                final long seqNumber,
                final long timeNs) {
            next.onCollStart(
                    collKey,
                    commHash,
                    rank,
                    nranks,
                    func,
                    algo,
                    proto,
                    count,
                    datatypeSize,
                    nChannels,
                    seqNumber,
                    timeNs);
            selection.onRank(host, commHash, rank, nranks);
            if (sample()) {
                emit(
                        "collStart",
                        "collKey",
                        collKey,
                        "comm",
                        Long.toHexString(commHash),
                        "rank",
                        rank,
                        "nranks",
                        nranks,
                        "func",
                        func,
                        "count",
                        count,
                        "seq",
                        seqNumber,
                        "t",
                        timeNs);
            }
        }

        @Override
        public void onCollStop(final long collKey, final long timeNs) {
            next.onCollStop(collKey, timeNs);
            if (sample()) {
                emit("collStop", "collKey", collKey, "t", timeNs);
            }
        }

        @Override
        public void onKernelChStart(
                final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
            next.onKernelChStart(chKey, collKey, channel, pTimerNs, timeNs);
            if (sample()) {
                emit(
                        "kernelChStart",
                        "chKey",
                        chKey,
                        "collKey",
                        collKey,
                        "channel",
                        channel,
                        "pTimer",
                        pTimerNs,
                        "t",
                        timeNs);
            }
        }

        @Override
        public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
            next.onKernelChStop(chKey, pTimerNs, timeNs);
            if (sample()) {
                emit("kernelChStop", "chKey", chKey, "pTimer", pTimerNs, "t", timeNs);
            }
        }
    }
}
