package io.flowscope.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.fleet.FleetCodec;
import io.flowscope.collector.fleet.wire.FleetWireDecoder;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.fleet.wire.WireSchema;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The fleet's record encodings on one thread, in summaries/s: the JSON of {@code FleetCodec} (the baseline, what
 * the fleet sends today) against the binary records of {@code fleet.wire}, over the summaries the window engine
 * derives from a simulated cluster ({@link FleetSummaryStream}: 2 × 8 GPUs, NCCL's model, a slow link).
 * <ul>
 * <li>{@code encode}: one summary to the record value the producer takes (a fresh {@code byte[]} each, as the
 * agent's {@code ByteArraySerializer} needs), with the agent id, seq and host name the agent adds.</li>
 * <li>{@code encodeInPlace} (binary only): into a reused buffer, nothing allocated.</li>
 * <li>{@code decode}: a record value to the aggregator's reused summary, with agent and seq (what
 * {@code Aggregator.apply} reads before its stage).</li>
 * <li>{@code produceBatch}: {@value #BATCH} records (key as the agent's, value) appended to one Kafka record batch
 * by kafka-clients' own {@code MemoryRecordsBuilder} (what the producer's accumulator runs) with
 * {@code compression} none, lz4 or zstd, and closed (compressed): encode + batch + compress per summary.</li>
 * <li>{@code consumeBatch}: such a batch read back as a consumer does (decompress, iterate) and each value
 * decoded.</li>
 * </ul>
 * Sizes (bytes per summary, raw and compressed, per GPU per second) are not rates: {@link FleetWireSizes}.
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar FleetWireBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "-Xms1g", "-Xmx1g", "-XX:+UseG1GC"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Thread)
public class FleetWireBenchmark {
    static final int BATCH = 128;
    static final String AGENT = "gpu-node-0017-7f3a9c21";

    @Param({"json", "binary"})
    public String codec;

    @Param({"none", "lz4", "zstd"})
    public String compression;

    private List<FleetSummaryStream.Output> outputs;
    private byte[][] keys;
    private byte[][] values;
    private MemoryRecords[] batches;
    private int next;
    private long seq;
    private FleetWireEncoder encoder;
    private final FleetWireDecoder decoder = new FleetWireDecoder();
    private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[4096]);
    private final FlowSummary flow = new FlowSummary();
    private final CollectiveSummary coll = new CollectiveSummary();
    private Compression kafkaCompression;
    private ByteBuffer batchBuffer;

    @Setup
    public void setUp() {
        outputs = new FleetSummaryStream(FleetSummaryStream.SCENARIO, 1_000_000).outputs;
        encoder = new FleetWireEncoder(AGENT);
        keys = new byte[outputs.size()][];
        values = new byte[outputs.size()][];
        for (int i = 0; i < outputs.size(); i++) {
            final FleetSummaryStream.Output o = outputs.get(i);
            keys[i] = key(o);
            values[i] = encode(o, i + 1);
        }
        kafkaCompression = compressionOf(compression);
        batchBuffer = ByteBuffer.allocate(4 << 20);
        batches = new MemoryRecords[64];
        for (int b = 0; b < batches.length; b++) {
            final MemoryRecords built = buildBatch(b * BATCH);
            final ByteBuffer copy = ByteBuffer.allocate(built.sizeInBytes());
            copy.put(built.buffer().duplicate()).flip();
            batches[b] = MemoryRecords.readableRecords(copy);
        }
        // a wrong decoder fails the run here rather than reporting a fast wrong rate
        for (int i = 0; i < values.length; i++) {
            if (decodeOne(values[i]) != i + 1) {
                throw new IllegalStateException("fleet wire benchmark: record " + i + " decoded a wrong seq");
            }
        }
    }

    static Compression compressionOf(final String name) {
        return switch (name) {
            case "none" -> Compression.NONE;
            case "lz4" -> Compression.lz4().build();
            case "zstd" -> Compression.zstd().build();
            default -> throw new IllegalArgumentException("compression none, lz4 or zstd, not " + name);
        };
    }

    static byte[] key(final FleetSummaryStream.Output o) {
        return (o.flow() != null ? FleetCodec.key(o.flow()) : FleetCodec.key(o.collective()))
                .getBytes(StandardCharsets.UTF_8);
    }

    static String hostName(final long hostId) {
        return "gpu-node-" + (hostId & 0xF); // one name per host, as the agent's map returns it
    }

    private final String[] hostNames = new String[16];

    private String hostNameOf(final long hostId) {
        final int slot = (int) (hostId & 0xF);
        final String n = hostNames[slot];
        return n != null ? n : (hostNames[slot] = hostName(hostId));
    }

    private byte[] encode(final FleetSummaryStream.Output o, final long seq) {
        final boolean json = "json".equals(codec);
        if (o.flow() != null) {
            final String host = hostNameOf(o.flow().hostId());
            return json ? FleetCodec.flow(AGENT, seq, o.flow(), host) : encoder.flow(seq, o.flow(), host);
        }
        return json ? FleetCodec.collective(AGENT, seq, o.collective()) : encoder.collective(seq, o.collective());
    }

    /** Decodes one value as the aggregator does; returns its seq (and keeps the stage's input live). */
    private long decodeOne(final byte[] value) {
        if ("json".equals(codec)) {
            final JsonNode n = FleetCodec.read(value);
            final String agent = n.path("agent").asText();
            final long s = n.path("seq").asLong();
            if ("flow".equals(n.path("type").asText())) {
                FleetCodec.flowInto(n.path("s"), flow);
                return s + (agent.length() == 0 ? 1 : 0) + (flow.kind() < 0 ? 1 : 0);
            }
            FleetCodec.collectiveInto(n.path("s"), coll);
            return s + (agent.length() == 0 ? 1 : 0) + (coll.rank() == Integer.MIN_VALUE ? 1 : 0);
        }
        final int template = decoder.wrap(value);
        final String agent = decoder.agent();
        final long s = decoder.seq();
        if (template == WireSchema.FLOW_TEMPLATE_ID) {
            decoder.flowInto(flow);
            return s + (agent.length() == 0 ? 1 : 0) + (flow.kind() < 0 ? 1 : 0);
        }
        decoder.collectiveInto(coll);
        return s + (agent.length() == 0 ? 1 : 0) + (coll.rank() == Integer.MIN_VALUE ? 1 : 0);
    }

    private int nextIndex() {
        final int i = next;
        next = i + 1 == outputs.size() ? 0 : i + 1;
        return i;
    }

    @Benchmark
    public byte[] encode() {
        return encode(outputs.get(nextIndex()), ++seq);
    }

    @Benchmark
    public int encodeInPlace() {
        if (!"binary".equals(codec)) {
            return 0; // JSON has no in-place form: Jackson builds a tree and a byte[]
        }
        final FleetSummaryStream.Output o = outputs.get(nextIndex());
        return o.flow() != null
                ? encoder.encodeFlow(
                        scratch, 0, ++seq, o.flow(), hostNameOf(o.flow().hostId()))
                : encoder.encodeCollective(scratch, 0, ++seq, o.collective());
    }

    @Benchmark
    public long decode() {
        return decodeOne(values[nextIndex()]);
    }

    private MemoryRecords buildBatch(final int from) {
        batchBuffer.clear();
        final MemoryRecordsBuilder b = MemoryRecords.builder(
                batchBuffer, RecordBatch.CURRENT_MAGIC_VALUE, kafkaCompression, TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < BATCH; i++) {
            final int at = (from + i) % outputs.size();
            b.append(1_700_000_000_000L + i, keys[at], encode(outputs.get(at), ++seq));
        }
        b.close();
        return b.build();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int produceBatch() {
        final int from = next;
        next = (next + BATCH) % outputs.size();
        return buildBatch(from).sizeInBytes();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long consumeBatch() {
        final MemoryRecords records = batches[nextIndex() & (batches.length - 1)];
        long sum = 0;
        for (final RecordBatch batch : records.batches()) {
            for (final Record r : batch) {
                final ByteBuffer v = r.value();
                final byte[] value = new byte[v.remaining()]; // the consumer's ByteArrayDeserializer copies too
                v.get(value);
                sum += decodeOne(value);
            }
        }
        return sum;
    }
}
