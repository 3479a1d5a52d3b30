package io.flowscope.bench;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.fleet.FleetCodec;
import io.flowscope.collector.fleet.wire.FleetWire;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * Not a rate: what the fleet's records weigh. Over the summaries of {@link FleetSummaryStream} (at a 1 ms and a
 * 10 ms window period), prints Markdown tables of
 * <ol>
 * <li>summaries per GPU per second by kind, and which of them the aggregator's anomaly stage reads;</li>
 * <li>bytes per summary on the wire for JSON and binary: the value alone, and in Kafka record batches of 128
 * and 1,024 records (key and value as the agent sends them; batch and record headers included) built and
 * compressed by kafka-clients' {@code MemoryRecordsBuilder} with none, lz4 and zstd;</li>
 * <li>bytes per GPU per second and for a 2,048 × 8 GPU cluster, for every summary or only what travels.</li>
 * </ol>
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.flowscope.bench.FleetWireSizes [SCENARIO]
 * </pre>
 */
public final class FleetWireSizes {
    private static final String[] COMPRESSIONS = {"none", "lz4", "zstd"};
    private static final int CLUSTER_GPUS = 2048 * 8;

    private FleetWireSizes() {}

    public static void main(final String[] args) {
        Locale.setDefault(Locale.ROOT);
        final String spec = args.length > 0 ? args[0] : FleetSummaryStream.SCENARIO;
        System.out.println("scenario: " + spec);
        for (final long periodNs : new long[] {1_000_000, 10_000_000}) {
            report(new FleetSummaryStream(spec, periodNs));
        }
    }

    /** What travels (docs/fleet-wire.md): a collective, or what {@link FleetWire#judgedCentrally} keeps. */
    static boolean judgedCentrally(final FleetSummaryStream.Output o) {
        return o.flow() == null || FleetWire.judgedCentrally(o.flow());
    }

    private static void report(final FleetSummaryStream s) {
        final double gpuSeconds = s.gpus() * s.simulatedSeconds();
        System.out.printf(
                "%n### window period %d ms (%d GPUs, %.0f ms simulated, %d summaries)%n%n",
                s.periodNs / 1_000_000, s.gpus(), s.simulatedSeconds() * 1e3, s.outputs.size());
        final String[] kinds = {"step send", "step recv", "qp", "rank", "link", "comm", "collective"};
        final long[] counts = new long[kinds.length];
        for (final FleetSummaryStream.Output o : s.outputs) {
            final FlowSummary f = o.flow();
            final int k = f == null
                    ? 6
                    : switch (f.kind()) {
                        case FlowSummary.KIND_STEP -> f.isSend() ? 0 : 1;
                        case FlowSummary.KIND_QP -> 2;
                        case FlowSummary.KIND_RANK -> 3;
                        case FlowSummary.KIND_LINK -> 4;
                        default -> 5;
                    };
            counts[k]++;
        }
        System.out.println("| kind | summaries/GPU/s | share | read by the aggregator's stage |");
        System.out.println("|---|---|---|---|");
        final String[] read = {"no (through its LINK)", "yes (hang rule)", "yes (NIC rules)", "no", "yes", "no", "yes"};
        for (int k = 0; k < kinds.length; k++) {
            System.out.printf(
                    "| %s | %.0f | %.1f %% | %s |%n",
                    kinds[k], counts[k] / gpuSeconds, 100.0 * counts[k] / s.outputs.size(), read[k]);
        }
        final long travelling =
                s.outputs.stream().filter(FleetWireSizes::judgedCentrally).count();
        System.out.printf(
                "| all | %.0f | | central subset (recv step, link, collective): %.0f/GPU/s |%n%n",
                s.outputs.size() / gpuSeconds, travelling / gpuSeconds);

        System.out.println("| codec | value bytes | batch 128: none | lz4 | zstd | batch 1024: none | lz4 | zstd |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        final double[][] perSummary = new double[2][];
        int c = 0;
        for (final String codec : new String[] {"json", "binary"}) {
            final byte[][] keys = new byte[s.outputs.size()][];
            final byte[][] values = new byte[s.outputs.size()][];
            final FleetWireEncoder encoder = new FleetWireEncoder(FleetWireBenchmark.AGENT);
            long valueBytes = 0;
            for (int i = 0; i < values.length; i++) {
                final FleetSummaryStream.Output o = s.outputs.get(i);
                keys[i] = FleetWireBenchmark.key(o);
                values[i] = o.flow() != null
                        ? ("json".equals(codec)
                                ? FleetCodec.flow(
                                        FleetWireBenchmark.AGENT,
                                        i + 1,
                                        o.flow(),
                                        FleetWireBenchmark.hostName(o.flow().hostId()))
                                : encoder.flow(
                                        i + 1,
                                        o.flow(),
                                        FleetWireBenchmark.hostName(o.flow().hostId())))
                        : ("json".equals(codec)
                                ? FleetCodec.collective(FleetWireBenchmark.AGENT, i + 1, o.collective())
                                : encoder.collective(i + 1, o.collective()));
                valueBytes += values[i].length;
            }
            final double[] row = new double[7];
            row[0] = (double) valueBytes / values.length;
            int col = 1;
            for (final int batch : new int[] {128, 1024}) {
                for (final String compression : COMPRESSIONS) {
                    row[col++] = batchedBytesPerRecord(keys, values, batch, compression);
                }
            }
            perSummary[c++] = row;
            System.out.printf(
                    "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |%n",
                    codec, row[0], row[1], row[2], row[3], row[4], row[5], row[6]);
        }

        System.out.println();
        System.out.println("| codec, batches of 1024 | every summary: B/GPU/s | 16,384 GPUs: MB/s | central subset: "
                + "B/GPU/s | 16,384 GPUs: MB/s |");
        System.out.println("|---|---|---|---|---|");
        final double all = s.outputs.size() / gpuSeconds;
        final double central = travelling / gpuSeconds;
        final String[] codecs = {"json", "binary"};
        for (int i = 0; i < 2; i++) {
            for (int k = 0; k < COMPRESSIONS.length; k++) {
                final double b = perSummary[i][4 + k];
                System.out.printf(
                        "| %s, %s | %.0f | %.1f | %.0f | %.1f |%n",
                        codecs[i],
                        COMPRESSIONS[k],
                        all * b,
                        all * b * CLUSTER_GPUS / 1e6,
                        central * b,
                        central * b * CLUSTER_GPUS / 1e6);
            }
        }
    }

    /** Bytes per record of Kafka batches of {@code batch} records, as the producer builds them. */
    static double batchedBytesPerRecord(
            final byte[][] keys, final byte[][] values, final int batch, final String compression) {
        final Compression kafkaCompression = FleetWireBenchmark.compressionOf(compression);
        final ByteBuffer buffer = ByteBuffer.allocate(16 << 20);
        long bytes = 0;
        long records = 0;
        for (int from = 0; from + batch <= values.length; from += batch) {
            buffer.clear();
            final MemoryRecordsBuilder b = MemoryRecords.builder(
                    buffer, RecordBatch.CURRENT_MAGIC_VALUE, kafkaCompression, TimestampType.CREATE_TIME, 0L);
            for (int i = from; i < from + batch; i++) {
                b.append(1_700_000_000_000L + i, keys[i], values[i]);
            }
            b.close();
            bytes += b.build().sizeInBytes();
            records += batch;
        }
        return (double) bytes / records;
    }
}
