package io.flowscope.ring.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.ring.EventKind;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.RecordLayout;
import io.flowscope.ring.TestRingWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaptureTest {
    @TempDir
    Path dir;

    private final TestRingWriter.Draft draft = new TestRingWriter.Draft();

    @Test
    void capturesCountsDropsAndTheTimelineOfASampledProxyOperationUntilTheProducerCloses() throws IOException {
        final Path rings = Files.createDirectories(dir.resolve("rings"));
        try (TestRingWriter writer = TestRingWriter.builder(rings.resolve("flowscope-4242-0.ring"))
                .capacity(256)
                .lanes(2)
                .pid(4242)
                .hostname("node-7")
                .create()) {
            final int comm = writer.comm(0xC0FFEEL, 3, 8, 2, "world");
            final int func = writer.string("AllReduce");
            final int type = writer.string("ncclFloat32");
            final int ring = writer.string("RING");
            final int simple = writer.string("SIMPLE");
            final long coll = RecordLayout.id(EventKind.COLL.code(), comm, 1);
            final long op = RecordLayout.id(EventKind.PROXY_OP.code(), comm, 2);
            writer.append(
                    draft.start(EventKind.COLL, 0, 1_000, coll, 0).coll(7, 2, 8, 1 << 20, 0, func, type, ring, simple));
            writer.append(draft.start(EventKind.PROXY_OP, 1, 2_000, op, coll).proxyOp(4242, 4, 2, 131072, 1, true));
            for (int s = 0; s < 2; s++) {
                final long step = RecordLayout.id(EventKind.PROXY_STEP.code(), comm, 10 + s);
                final long t = 3_000 + s * 10_000;
                writer.append(draft.start(EventKind.PROXY_STEP, 1, t, step, op).proxyStep(s));
                writer.append(
                        draft.state(EventKind.PROXY_STEP, 1, t + 500, step, NcclState.PROXY_STEP_SEND_GPU_WAIT, 65536));
                writer.append(
                        draft.state(EventKind.PROXY_STEP, 1, t + 1_500, step, NcclState.PROXY_STEP_SEND_WAIT, 65536));
                writer.append(draft.stop(EventKind.PROXY_STEP, 1, t + 4_000, step));
            }
            writer.append(draft.stop(EventKind.PROXY_OP, 1, 30_000, op));
            writer.markClosed(40_000);
        }
        final Path summary = dir.resolve("summary.json");
        final Path timeline = dir.resolve("timeline.txt");
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();

        final int code = RingTool.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                "capture",
                rings.toString(),
                "--exit-when-idle",
                "--sample-skip",
                "0",
                "--summary",
                summary.toString(),
                "--timeline",
                timeline.toString());

        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        final JsonNode json = new ObjectMapper().readTree(summary.toFile());
        assertThat(json.get("records").asLong()).isEqualTo(11);
        assertThat(json.get("recordsByKind").get("ProxyStep").asLong()).isEqualTo(8);
        final JsonNode ringNode = json.get("rings").get(0);
        assertThat(ringNode.get("pid").asInt()).isEqualTo(4242);
        assertThat(ringNode.get("host").asText()).isEqualTo("node-7");
        assertThat(ringNode.get("recordsByKindOp").get("ProxyStep/STATE").asLong())
                .isEqualTo(4);
        assertThat(ringNode.get("states").get("ProxyStep/ProxyStepSendWait").asLong())
                .isEqualTo(2);
        assertThat(ringNode.get("droppedFull").asLong()).isZero();
        assertThat(ringNode.get("communicators").get(0).asText())
                .startsWith("rank 3/8 nnodes=2 hash=0x0000000000c0ffee");
        final String text = Files.readString(timeline);
        assertThat(text)
                .contains("Coll AllReduce count=1048576 ncclFloat32 RING SIMPLE nChannels=2 seq=7")
                .contains("ProxyOp send channel=1 peer=4 nSteps=2 chunkSize=131072 pid=4242, 28.0 us start to stop")
                .contains(
                        "step 0    start +1.000 us | ProxyStepSendGPUWait +0.500 (65536 B) | ProxyStepSendWait +1.500 (65536 B) | stop +4.000")
                .contains("step 1    start +11.000 us");
    }
}
