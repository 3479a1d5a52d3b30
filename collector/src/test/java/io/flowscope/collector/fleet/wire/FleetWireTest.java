package io.flowscope.collector.fleet.wire;

import static io.flowscope.collector.fleet.wire.WireSchema.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.FleetCodec;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.Scenario;
import io.flowscope.sim.SimulatedRun;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FleetWireTest {
    private static final String AGENT = "gpu-node-17-3fa2c1";
    private static final List<FlowSummary> FLOWS = new ArrayList<>();
    private static final List<CollectiveSummary> COLLECTIVES = new ArrayList<>();

    /** Every summary the window engine derives from a simulated 2 × 4 run with a slow link and a NIC down. */
    @BeforeAll
    static void simulate() {
        final Scenario scenario = Scenario.parse("nodes=2,gpus=4,channels=2,duration=60ms,fault=slow-link,rank=3,"
                + "peer=4,fraction=0.5,at=20ms,fault=nic-down,node=1,device=0,at=30ms");
        final ClusterSimulator sim = new ClusterSimulator(scenario);
        final WindowEngine window = new WindowEngine(
                new WindowConfig()
                        .periodNs(SimulatedRun.STEP_NS)
                        .maxFlows(4096)
                        .maxOps(8192)
                        .maxSteps(65_536)
                        .maxHosts(256),
                s -> {
                    final FlowSummary c = new FlowSummary();
                    c.copyFrom(s);
                    FLOWS.add(c);
                },
                s -> {
                    final CollectiveSummary c = new CollectiveSummary();
                    c.copyFrom(s);
                    COLLECTIVES.add(c);
                });
        for (long t = SimulatedRun.STEP_NS; t <= scenario.durationNs(); t += SimulatedRun.STEP_NS) {
            sim.advanceTo(t, window);
        }
        assertThat(FLOWS).hasSizeGreaterThan(1000);
        assertThat(COLLECTIVES).isNotEmpty();
        assertThat(FLOWS.stream().mapToInt(FlowSummary::kind).distinct().count())
                .isEqualTo(5);
    }

    @Test
    void everyFlowSummaryOfASimulatedRunSurvivesTheRoundTrip() {
        final FleetWireEncoder encoder = new FleetWireEncoder(AGENT);
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final FlowSummary into = new FlowSummary();
        long seq = 1;
        for (final FlowSummary s : FLOWS) {
            final String host = seq % 3 == 0 ? null : "sim-node-" + (seq % 2);
            final byte[] record = encoder.flow(seq, s, host);
            assertThat(decoder.wrap(record)).isEqualTo(FLOW_TEMPLATE_ID);
            assertThat(decoder.seq()).isEqualTo(seq);
            assertThat(decoder.agent()).isEqualTo(AGENT);
            assertThat(decoder.hostName()).isEqualTo(host);
            assertThat(describe(decoder.flowInto(into))).isEqualTo(describe(s));
            seq++;
        }
    }

    @Test
    void everyCollectiveSummarySurvivesTheRoundTrip() {
        final FleetWireEncoder encoder = new FleetWireEncoder(AGENT);
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final CollectiveSummary into = new CollectiveSummary();
        long seq = 100;
        for (final CollectiveSummary s : COLLECTIVES) {
            assertThat(decoder.wrap(encoder.collective(seq, s))).isEqualTo(COLLECTIVE_TEMPLATE_ID);
            assertThat(decoder.seq()).isEqualTo(seq++);
            assertThat(decoder.agent()).isEqualTo(AGENT);
            assertThat(decoder.hostName()).isNull();
            assertThat(describe(decoder.collectiveInto(into))).isEqualTo(describe(s));
        }
    }

    @Test
    void arbitraryFieldValuesSurviveTheRoundTrip() {
        final Random random = new Random(7);
        final FleetWireEncoder encoder = new FleetWireEncoder("a");
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final FlowSummary flowInto = new FlowSummary();
        final CollectiveSummary collInto = new CollectiveSummary();
        for (int i = 0; i < 2000; i++) {
            final FlowSummary f = randomFlow(random);
            decoder.wrap(encoder.flow(random.nextLong(), f, "h"));
            assertThat(describe(decoder.flowInto(flowInto))).isEqualTo(describe(f));
            final CollectiveSummary c = randomCollective(random);
            decoder.wrap(encoder.collective(i, c));
            assertThat(describe(decoder.collectiveInto(collInto))).isEqualTo(describe(c));
        }
    }

    @Test
    void aPhaseWithNothingMeasuredIsNotSentAndReadsBackAsAbsent() {
        final FlowSummary s = FLOWS.stream()
                .filter(f -> f.kind() == FlowSummary.KIND_STEP && !f.isSend() && f.phaseCount(Phase.NETWORK) > 0)
                .findFirst()
                .orElseThrow();
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final byte[] record = new FleetWireEncoder(AGENT).flow(1, s, null);
        decoder.wrap(record);
        final int entries = u16(record, HEADER_LENGTH + FLOW_BLOCK_LENGTH_V1 + GROUP_COUNT_OFFSET);
        int measured = 0;
        for (int p = 0; p < Phase.COUNT; p++) {
            measured += s.phaseCount(p) > 0 ? 1 : 0;
        }
        assertThat(entries).isEqualTo(measured).isLessThan(Phase.COUNT);
        final FlowSummary into = new FlowSummary();
        into.copyFrom(randomFlow(new Random(1))); // stale values in every phase: the decoder must clear them
        assertThat(describe(decoder.flowInto(into))).isEqualTo(describe(s));
    }

    /**
     * A version 2 writer appended a field to the root block and to each phase entry, a var-data field after the
     * host name and a phase id this reader does not know: the version 1 reader reads what it knows unchanged.
     */
    @Test
    void aVersion1ReaderReadsVersion2RecordsWithAppendedFields() {
        final FleetWireEncoder encoder = new FleetWireEncoder(AGENT);
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final FlowSummary into = new FlowSummary();
        int checked = 0;
        for (final FlowSummary s : FLOWS.subList(0, 500)) {
            final byte[] v1 = encoder.flow(42, s, "sim-node-0");
            final byte[] v2 = version2(v1, 0x0102030405060708L, true);
            assertThat(decoder.wrap(v2)).isEqualTo(FLOW_TEMPLATE_ID);
            assertThat(decoder.version()).isEqualTo(2);
            assertThat(decoder.blockLength()).isEqualTo(FLOW_BLOCK_LENGTH_V1 + 8);
            assertThat(decoder.seq()).isEqualTo(42);
            assertThat(decoder.agent()).isEqualTo(AGENT);
            assertThat(decoder.hostName()).isEqualTo("sim-node-0");
            assertThat(describe(decoder.flowInto(into))).isEqualTo(describe(s));
            // a version 2 reader's accessor of the appended field, through the decoder's evolution rule
            assertThat(decoder.int64(FLOW_BLOCK_LENGTH_V1, Long.MIN_VALUE)).isEqualTo(0x0102030405060708L);
            checked++;
        }
        assertThat(checked).isEqualTo(500);
    }

    /** A reader of version 2 (which knows the field appended at offset 170) reads a version 1 record: null value. */
    @Test
    void aVersion2ReaderReadsVersion1RecordsWithTheAppendedFieldAsItsNullValue() {
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final byte[] v1 = new FleetWireEncoder(AGENT).flow(9, FLOWS.get(0), null);
        decoder.wrap(v1);
        assertThat(decoder.version()).isEqualTo(1);
        assertThat(decoder.int64(FLOW_BLOCK_LENGTH_V1, Long.MIN_VALUE)).isEqualTo(Long.MIN_VALUE);
        assertThat(decoder.int64(FLOW_COMM_HASH, Long.MIN_VALUE))
                .isEqualTo(FLOWS.get(0).commHash());
    }

    /** The layout of version 1 is frozen: a record written when it was defined is read, and written, the same. */
    @Test
    void theCheckedInVersion1RecordsDecodeAndEncodeUnchanged() throws IOException {
        final FlowSummary flow = goldenFlow();
        final CollectiveSummary coll = goldenCollective();
        final List<String> golden = golden();
        final FleetWireEncoder encoder = new FleetWireEncoder("node-1");
        assertThat(HexFormat.of().formatHex(encoder.flow(7, flow, "gpu-node-17")))
                .isEqualTo(golden.get(0));
        assertThat(HexFormat.of().formatHex(encoder.collective(8, coll))).isEqualTo(golden.get(1));
        final FleetWireDecoder decoder = new FleetWireDecoder();
        decoder.wrap(HexFormat.of().parseHex(golden.get(0)));
        assertThat(decoder.seq()).isEqualTo(7);
        assertThat(decoder.hostName()).isEqualTo("gpu-node-17");
        assertThat(describe(decoder.flowInto(new FlowSummary()))).isEqualTo(describe(flow));
        decoder.wrap(HexFormat.of().parseHex(golden.get(1)));
        assertThat(decoder.agent()).isEqualTo("node-1");
        assertThat(describe(decoder.collectiveInto(new CollectiveSummary()))).isEqualTo(describe(coll));
    }

    @Test
    void everyTruncationIsOneClearErrorNeverAnotherException() {
        final byte[] record = new FleetWireEncoder(AGENT).flow(1, FLOWS.get(FLOWS.size() / 2), "sim-node-1");
        final FleetWireDecoder decoder = new FleetWireDecoder();
        for (int n = 0; n < record.length; n++) {
            final byte[] cut = java.util.Arrays.copyOf(record, n);
            assertThatThrownBy(() -> decoder.wrap(cut))
                    .isInstanceOf(WireFormatException.class)
                    .hasMessageStartingWith("fleet wire: ")
                    .hasMessageMatching("[^\\n]*(truncated|shorter)[^\\n]*");
        }
        final byte[] coll = new FleetWireEncoder(AGENT).collective(1, COLLECTIVES.get(0));
        for (int n = 0; n < coll.length; n++) {
            final byte[] cut = java.util.Arrays.copyOf(coll, n);
            assertThatThrownBy(() -> decoder.wrap(cut)).isInstanceOf(WireFormatException.class);
        }
    }

    @Test
    void corruptHeadersAreNamed() {
        final byte[] record = new FleetWireEncoder(AGENT).flow(1, FLOWS.get(0), null);
        final FleetWireDecoder decoder = new FleetWireDecoder();

        final byte[] otherSchema = record.clone();
        put16(otherSchema, SCHEMA_ID_OFFSET, 0x1234);
        assertThatThrownBy(() -> decoder.wrap(otherSchema))
                .isInstanceOf(WireFormatException.class)
                .hasMessageContaining("unknown schema id 0x1234");

        final byte[] otherTemplate = record.clone();
        put16(otherTemplate, TEMPLATE_ID_OFFSET, 9);
        assertThatThrownBy(() -> decoder.wrap(otherTemplate)).hasMessageContaining("unknown template id 9");

        final byte[] shortBlock = record.clone();
        put16(shortBlock, BLOCK_LENGTH_OFFSET, FLOW_BLOCK_LENGTH_V1 - 8);
        assertThatThrownBy(() -> decoder.wrap(shortBlock)).hasMessageContaining("below version 1's 170");

        final byte[] manyPhases = record.clone();
        put16(manyPhases, HEADER_LENGTH + FLOW_BLOCK_LENGTH_V1 + GROUP_COUNT_OFFSET, 60_000);
        assertThatThrownBy(() -> decoder.wrap(manyPhases)).hasMessageContaining("60000 phase entries");

        final byte[] versionZero = record.clone();
        put16(versionZero, VERSION_OFFSET, 0);
        assertThatThrownBy(() -> decoder.wrap(versionZero)).hasMessageContaining("version 0");

        final byte[] json = FleetCodec.flow(AGENT, 1, FLOWS.get(0), null);
        assertThat(WireSchema.isBinary(json)).isFalse();
        assertThat(WireSchema.isBinary(record)).isTrue();
        assertThatThrownBy(() -> decoder.wrap(json))
                .isInstanceOf(WireFormatException.class)
                .hasMessageContaining("unknown schema id");
        assertThatThrownBy(() -> decoder.wrap((byte[]) null)).isInstanceOf(WireFormatException.class);

        // after every error the same decoder reads the next good record
        assertThat(decoder.wrap(record)).isEqualTo(FLOW_TEMPLATE_ID);
        assertThat(describe(decoder.flowInto(new FlowSummary()))).isEqualTo(describe(FLOWS.get(0)));
    }

    /** Random damage: the decoder either reads a record or throws its one error, never anything else. */
    @Test
    void randomlyDamagedRecordsNeverEscapeAsAnotherException() {
        final Random random = new Random(11);
        final FleetWireEncoder encoder = new FleetWireEncoder(AGENT);
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final FlowSummary into = new FlowSummary();
        int rejected = 0;
        for (int i = 0; i < 20_000; i++) {
            final byte[] r = encoder.flow(i, FLOWS.get(random.nextInt(FLOWS.size())), "sim-node-1");
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                r[random.nextInt(Math.min(r.length, 8 + FLOW_BLOCK_LENGTH_V1 + 8))] ^= (byte) (1 << random.nextInt(8));
            }
            try {
                if (decoder.wrap(r) == FLOW_TEMPLATE_ID) {
                    decoder.flowInto(into);
                    decoder.agent();
                    decoder.hostName();
                }
            } catch (final WireFormatException e) {
                rejected++;
            }
        }
        assertThat(rejected).isPositive();
    }

    @Test
    void aDirectBufferAtAnOffsetIsReadLikeAnArray() {
        final FleetWireEncoder encoder = new FleetWireEncoder(AGENT);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4096]);
        final int length = encoder.encodeFlow(buffer, 100, 5, FLOWS.get(3), "x");
        final FleetWireDecoder decoder = new FleetWireDecoder();
        decoder.wrap(buffer, 100, length);
        assertThat(decoder.seq()).isEqualTo(5);
        assertThat(decoder.hostName()).isEqualTo("x");
        assertThat(describe(decoder.flowInto(new FlowSummary()))).isEqualTo(describe(FLOWS.get(3)));
        assertThat(length).isEqualTo(encoder.flow(5, FLOWS.get(3), "x").length);
    }

    /** The summaries topic may hold both encodings while agents upgrade: each record is told apart by itself. */
    @Test
    void bothEncodingsReadAsTheSameJson() {
        final FleetWireEncoder encoder = new FleetWireEncoder(AGENT);
        for (final FlowSummary s : FLOWS.subList(0, 200)) {
            final byte[] json = FleetCodec.flow(AGENT, 3, s, "sim-node-1");
            final byte[] binary = encoder.flow(3, s, "sim-node-1");
            assertThat(FleetWire.isJson(json)).isTrue();
            assertThat(FleetWire.isJson(binary)).isFalse();
            assertThat(FleetWire.readAny(binary)).isEqualTo(FleetWire.readAny(json));
        }
        final CollectiveSummary c = COLLECTIVES.get(0);
        assertThat(FleetWire.readAny(encoder.collective(4, c)))
                .isEqualTo(FleetCodec.read(FleetCodec.collective(AGENT, 4, c)));
        assertThatThrownBy(() -> FleetWire.readAny(new byte[] {1, 2, 3})).isInstanceOf(WireFormatException.class);
        assertThatThrownBy(() -> FleetWire.readAny("{\"v\":9}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("version 1");
        assertThat(FleetConfig.Encoding.parse("fleet.wire", " Binary")).isEqualTo(FleetConfig.Encoding.BINARY);
        assertThatThrownBy(() -> FleetConfig.Encoding.parse("fleet.wire", "avro"))
                .hasMessage("fleet.wire = avro: binary or json");
    }

    // ---- helpers

    /** What a version 2 writer would write: 8 bytes appended to the block and to each phase entry, and so on. */
    static byte[] version2(final byte[] v1, final long appended, final boolean newPhase) {
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        final byte[] header = java.util.Arrays.copyOf(v1, HEADER_LENGTH);
        put16(header, BLOCK_LENGTH_OFFSET, FLOW_BLOCK_LENGTH_V1 + 8);
        put16(header, VERSION_OFFSET, 2);
        out.writeBytes(header);
        out.write(v1, HEADER_LENGTH, FLOW_BLOCK_LENGTH_V1);
        out.writeBytes(le64(appended));
        final int group = HEADER_LENGTH + FLOW_BLOCK_LENGTH_V1;
        final int entries = u16(v1, group + GROUP_COUNT_OFFSET);
        final byte[] groupHeader = new byte[GROUP_HEADER_LENGTH];
        put16(groupHeader, GROUP_BLOCK_LENGTH_OFFSET, PHASE_ENTRY_LENGTH_V1 + 8);
        put16(groupHeader, GROUP_COUNT_OFFSET, entries + (newPhase ? 1 : 0));
        out.writeBytes(groupHeader);
        int at = group + GROUP_HEADER_LENGTH;
        for (int i = 0; i < entries; i++, at += PHASE_ENTRY_LENGTH_V1) {
            out.write(v1, at, PHASE_ENTRY_LENGTH_V1);
            out.writeBytes(le64(appended));
        }
        if (newPhase) {
            final byte[] unknown = new byte[PHASE_ENTRY_LENGTH_V1 + 8];
            unknown[0] = (byte) Phase.COUNT;
            java.util.Arrays.fill(unknown, 1, unknown.length, (byte) 0x55);
            out.writeBytes(unknown);
        }
        out.write(v1, at, v1.length - at);
        final byte[] newVar = "appended var data".getBytes(StandardCharsets.UTF_8);
        out.writeBytes(new byte[] {(byte) newVar.length, 0});
        out.writeBytes(newVar);
        return out.toByteArray();
    }

    private static byte[] le64(final long v) {
        final byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (v >>> (8 * i));
        }
        return b;
    }

    private static int u16(final byte[] b, final int at) {
        return (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8;
    }

    private static void put16(final byte[] b, final int at, final int v) {
        b[at] = (byte) v;
        b[at + 1] = (byte) (v >>> 8);
    }

    private static List<String> golden() throws IOException {
        try (InputStream in = FleetWireTest.class.getResourceAsStream("fleet-wire-v1.hex")) {
            assertThat(in).as("fleet-wire-v1.hex").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII)
                    .lines()
                    .filter(l -> !l.isBlank() && !l.startsWith("#"))
                    .toList();
        }
    }

    private static FlowSummary goldenFlow() {
        final FlowSummary.Builder f = FlowSummary.builder()
                .periodStartNs(1_000_000L)
                .periodEndNs(2_000_000L)
                .hostId(0x1122334455667788L)
                .kind(FlowSummary.KIND_STEP)
                .device(-1)
                .qpNum(-1L)
                .flowKey(0xABCDEFL)
                .commHash(0x0FEDCBA987654321L)
                .rank(3)
                .peer(4)
                .channel(1)
                .isSend(false)
                .flows(1)
                .periodBandwidthBytesPerSecond(12.5e9)
                .posts(40L)
                .completions(39L)
                .bytes(39L * 524_288)
                .windowCompletions(8)
                .windowBytes(8L * 524_288)
                .windowSpanNs(300_000L)
                .windowBandwidthBytesPerSecond(8.0 * 524_288 / 300e-6)
                .outstandingSteps(2L)
                .outstandingBytes(0L)
                .firstSteps(1L)
                .firstStepWaitSumNs(5_000L)
                .clearPhases();
        for (final int p : new int[] {Phase.NETWORK, Phase.GPU_CONSUME}) {
            f.phase(p, 39, 39L * 20_000 + p, 30_000 + p).phasePercentiles(p, 19_000 + p, 25_000 + p, 29_000 + p);
        }
        return f.build();
    }

    private static CollectiveSummary goldenCollective() {
        return CollectiveSummary.builder()
                .hostId(0x1122334455667788L)
                .collKey(77L)
                .commHash(0x0FEDCBA987654321L)
                .rank(3)
                .nranks(8)
                .seqNumber(1234L)
                .func(2)
                .algo(1)
                .proto(2)
                .count(1L << 20)
                .datatypeSize(4)
                .bytes(4L << 20)
                .nChannels(2)
                .kernelChannels(2)
                .complete(true)
                .gpuTimed(true)
                .hostStartNs(10_000L)
                .hostStopNs(410_000L)
                .gpuStartNs(5_000_000_000L)
                .gpuEndNs(5_000_380_000L)
                .gpuStartHostNs(12_000L)
                .gpuStartHostKnown(false)
                .durationNs(380_000L)
                .algBandwidthBytesPerSecond((4 << 20) / 380e-6)
                .busBandwidthBytesPerSecond((4 << 20) / 380e-6 * 1.75)
                .build();
    }

    private static FlowSummary randomFlow(final Random r) {
        final FlowSummary.Builder f = FlowSummary.builder()
                .periodStartNs(r.nextLong())
                .periodEndNs(r.nextLong())
                .hostId(r.nextLong())
                .kind(r.nextInt(5))
                .device(r.nextInt())
                .qpNum(r.nextLong())
                .flowKey(r.nextLong())
                .commHash(r.nextLong())
                .rank(r.nextInt())
                .peer(r.nextInt())
                .channel(r.nextInt())
                .isSend(r.nextBoolean())
                .flows(r.nextInt())
                .periodBandwidthBytesPerSecond(r.nextDouble() * 1e12)
                .posts(r.nextLong())
                .completions(r.nextLong())
                .bytes(r.nextLong())
                .windowCompletions(r.nextInt())
                .windowBytes(r.nextLong())
                .windowSpanNs(r.nextLong())
                .windowBandwidthBytesPerSecond(r.nextBoolean() ? Double.NaN : -r.nextDouble())
                .outstandingSteps(r.nextLong())
                .outstandingBytes(r.nextLong())
                .firstSteps(r.nextLong())
                .firstStepWaitSumNs(r.nextLong())
                .clearPhases();
        for (int p = 0; p < Phase.COUNT; p++) {
            // a quarter of the values at their "nothing measured" default, so entries are sent and left out
            f.phase(p, maybe(r, 0), maybe(r, 0), maybe(r, 0));
            f.phasePercentiles(p, maybe(r, Phase.ABSENT), maybe(r, Phase.ABSENT), maybe(r, Phase.ABSENT));
        }
        return f.build();
    }

    private static long maybe(final Random r, final long nothing) {
        return r.nextInt(4) == 0 ? nothing : r.nextLong();
    }

    private static CollectiveSummary randomCollective(final Random r) {
        return CollectiveSummary.builder()
                .hostId(r.nextLong())
                .collKey(r.nextLong())
                .commHash(r.nextLong())
                .rank(r.nextInt())
                .nranks(r.nextInt())
                .seqNumber(r.nextLong())
                .func(r.nextInt())
                .algo(r.nextInt())
                .proto(r.nextInt())
                .count(r.nextLong())
                .datatypeSize(r.nextInt())
                .bytes(r.nextLong())
                .nChannels(r.nextInt())
                .kernelChannels(r.nextInt())
                .complete(r.nextBoolean())
                .gpuTimed(r.nextBoolean())
                .hostStartNs(r.nextLong())
                .hostStopNs(r.nextLong())
                .gpuStartNs(r.nextLong())
                .gpuEndNs(r.nextLong())
                .gpuStartHostNs(r.nextLong())
                .gpuStartHostKnown(r.nextBoolean())
                .durationNs(r.nextLong())
                .algBandwidthBytesPerSecond(r.nextDouble())
                .busBandwidthBytesPerSecond(r.nextDouble())
                .build();
    }

    /** Every field by its accessor (doubles by their bits), so two summaries compare field by field. */
    static String describe(final FlowSummary s) {
        final StringBuilder b = new StringBuilder(512)
                .append(s.periodStartNs())
                .append(',')
                .append(s.periodEndNs())
                .append(',')
                .append(s.hostId())
                .append(',')
                .append(s.kind())
                .append(',')
                .append(s.device())
                .append(',')
                .append(s.qpNum())
                .append(',')
                .append(s.flowKey())
                .append(',')
                .append(s.commHash())
                .append(',')
                .append(s.rank())
                .append(',')
                .append(s.peer())
                .append(',')
                .append(s.channel())
                .append(',')
                .append(s.isSend())
                .append(',')
                .append(s.flows())
                .append(',')
                .append(Double.doubleToRawLongBits(s.periodBandwidthBytesPerSecond()))
                .append(',')
                .append(s.posts())
                .append(',')
                .append(s.completions())
                .append(',')
                .append(s.bytes())
                .append(',')
                .append(s.windowCompletions())
                .append(',')
                .append(s.windowBytes())
                .append(',')
                .append(s.windowSpanNs())
                .append(',')
                .append(Double.doubleToRawLongBits(s.windowBandwidthBytesPerSecond()))
                .append(',')
                .append(s.outstandingSteps())
                .append(',')
                .append(s.outstandingBytes())
                .append(',')
                .append(s.firstSteps())
                .append(',')
                .append(s.firstStepWaitSumNs());
        for (int p = 0; p < Phase.COUNT; p++) {
            b.append(" [")
                    .append(s.phaseCount(p))
                    .append(',')
                    .append(s.phaseSumNs(p))
                    .append(',')
                    .append(s.phaseMaxNs(p))
                    .append(',')
                    .append(s.phaseP50Ns(p))
                    .append(',')
                    .append(s.phaseP90Ns(p))
                    .append(',')
                    .append(s.phaseP99Ns(p))
                    .append(']');
        }
        return b.toString();
    }

    static String describe(final CollectiveSummary c) {
        return c.hostId() + "," + c.collKey() + "," + c.commHash() + "," + c.rank() + "," + c.nranks() + ","
                + c.seqNumber()
                + "," + c.func() + "," + c.algo() + "," + c.proto() + "," + c.count() + "," + c.datatypeSize()
                + "," + c.bytes() + "," + c.nChannels() + "," + c.kernelChannels() + "," + c.complete()
                + "," + c.gpuTimed() + "," + c.hostStartNs() + "," + c.hostStopNs() + "," + c.gpuStartNs()
                + "," + c.gpuEndNs() + "," + c.gpuStartHostNs() + "," + c.gpuStartHostKnown() + "," + c.durationNs()
                + "," + Double.doubleToRawLongBits(c.algBandwidthBytesPerSecond()) + ","
                + Double.doubleToRawLongBits(c.busBandwidthBytesPerSecond());
    }
}
