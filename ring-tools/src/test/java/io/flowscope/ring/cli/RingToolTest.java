package io.flowscope.ring.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingToolTest {
    @TempDir
    Path dir;

    private final TestRingWriter.Draft draft = new TestRingWriter.Draft();

    private record Result(int code, String out, String err) {}

    private static Result run(final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = RingTool.run(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                args);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static List<Map<String, String>> jsonLines(final String text) throws IOException {
        final List<Map<String, String>> objects = new ArrayList<>();
        try (JsonParser parser = new JsonFactory().createParser(text)) {
            while (parser.nextToken() == JsonToken.START_OBJECT) {
                final Map<String, String> fields = new LinkedHashMap<>();
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    final String name = parser.currentName();
                    parser.nextToken();
                    fields.put(name, parser.getText());
                }
                objects.add(fields);
            }
        }
        return objects;
    }

    private Path ringWithRecords(final String name) throws IOException {
        final Path path = dir.resolve(name);
        try (TestRingWriter writer = TestRingWriter.builder(path)
                .capacity(64)
                .lanes(2)
                .hostname("node-1")
                .create()) {
            final byte[] uuid = new byte[16];
            uuid[0] = (byte) 0x1a;
            uuid[15] = (byte) 0xef;
            final int comm = writer.comm(0xF00DL, 1, 4, 1, "world", 1, "0000:19:00.0", uuid);
            writer.comm(0xBEEFL, 0, 1, 1, "no-gpu");
            final int func = writer.string("AllReduce");
            final int type = writer.string("ncclBfloat16");
            final long coll = RecordLayout.id(EventKind.COLL.code(), comm, 1);
            final long step = RecordLayout.id(EventKind.PROXY_STEP.code(), comm, 2);
            writer.append(draft.start(EventKind.COLL, 0, 10, coll, 0).coll(3, 2, 8, 1 << 20, 0, func, type, 0, 0));
            writer.append(draft.start(EventKind.PROXY_STEP, 1, 11, step, coll).proxyStep(4));
            writer.append(draft.state(EventKind.PROXY_STEP, 1, 12, step, NcclState.PROXY_STEP_SEND_WAIT, -1L));
            writer.append(draft.stop(EventKind.PROXY_STEP, 1, 13, step));
            writer.buffer().putLong(io.flowscope.ring.RingLayout.DROPPED_FULL_OFFSET, 17);
        }
        return path;
    }

    @Test
    void statPrintsHeaderPositionsCountersCommunicatorsAndStringsWithoutConsuming() throws IOException {
        final Path ring = ringWithRecords("flowscope-1-0.ring");

        final Result result = run("stat", ring.toString());

        assertThat(result.code()).isZero();
        assertThat(result.out())
                .contains("layout            1.3")
                .contains("pid " + ProcessHandle.current().pid() + " on node-1, open")
                .contains("abi v5, version 22809")
                .contains(
                        "event mask        0xfff (Group,Coll,P2p,ProxyOp,ProxyStep,ProxyCtrl,KernelCh,NetPlugin,GroupApi,CollApi,P2pApi,KernelLaunch)")
                .contains("capacity          64 slots")
                .contains("lane_count        2")
                .contains("lane_capacity     32 slots")
                .contains("lag               4")
                .contains("  lane 0  head 0 tail 1 lag 1")
                .contains("  lane 1  head 0 tail 3 lag 3")
                .contains("consumer          pid 0, heartbeat never")
                .contains("dropped_full      17")
                .contains("[0] hash 0x000000000000f00d rank 1/4 nodes 1 active gpu 1 (0000:19:00.0, "
                        + "GPU-1a000000-0000-0000-0000-0000000000ef) name 'world'")
                .contains("[1] hash 0x000000000000beef rank 0/1 nodes 1 active gpu unknown name 'no-gpu'")
                .contains("[1] AllReduce")
                .contains("[2] ncclBfloat16");
        assertThat(run("stat", ring.toString()).out()).contains("lag               4");
    }

    @Test
    void inspectDrainsTheRingAsJsonLinesNamedAsTheTypedEvent() throws IOException {
        final Path ring = ringWithRecords("flowscope-2-0.ring");

        final Result result = run("inspect", ring.toString());

        assertThat(result.code()).isZero();
        final List<Map<String, String>> records = jsonLines(result.out());
        assertThat(records).hasSize(4);
        assertThat(records.get(0))
                .containsEntry("kind", "Coll")
                .containsEntry("op", "START")
                .containsEntry("host", "node-1")
                .containsEntry("thread", "0")
                .containsEntry("timeNs", "10")
                .containsEntry("commHash", "61453")
                .containsEntry("rank", "1")
                .containsEntry("commIndex", "0")
                .containsEntry("seqNumber", "3")
                .containsEntry("nChannels", "2")
                .containsEntry("nWarps", "8")
                .containsEntry("count", "1048576")
                .containsEntry("func", "AllReduce")
                .containsEntry("datatype", "ncclBfloat16")
                .containsEntry("algo", "null")
                .containsEntry("proto", "null")
                .containsEntry("lane", "0")
                .containsEntry("position", "0")
                .containsKeys("producerPid", "wallTimeNs", "id", "parent");
        assertThat(records.get(1))
                .containsEntry("kind", "ProxyStep")
                .containsEntry("step", "4")
                .containsEntry("lane", "1")
                .containsEntry("position", "0")
                .containsEntry("parent", records.get(0).get("id"));
        assertThat(records.get(2))
                .containsEntry("op", "STATE")
                .containsEntry("state", "9")
                .containsEntry("arg", "18446744073709551615")
                .containsEntry("stateName", "ProxyStepSendWait");
        assertThat(records.get(3))
                .containsEntry("op", "STOP")
                .containsEntry("id", records.get(1).get("id"))
                .containsEntry("lane", "1")
                .containsEntry("position", "2");
        assertThat(result.err()).contains("inspect: 4 records, 0 corrupt");
        assertThat(jsonLines(run("inspect", ring.toString()).out()))
                .as("consumed")
                .isEmpty();
    }

    @Test
    void inspectStopsAfterTheLimit() throws IOException {
        final Path ring = ringWithRecords("flowscope-3-0.ring");

        assertThat(jsonLines(run("inspect", "--limit", "3", ring.toString()).out()))
                .hasSize(3);
        assertThat(jsonLines(run("inspect", ring.toString()).out())).hasSize(1);
    }

    @Test
    void aFileThatIsNotARingExitsWithCode2AndSaysWhy() throws IOException {
        final Path notRing = dir.resolve("x.ring");
        Files.writeString(notRing, "definitely not a ring file");

        final Result stat = run("stat", notRing.toString());
        final Result inspect = run("inspect", notRing.toString());

        assertThat(stat.code()).isEqualTo(RingTool.EXIT_BAD_RING);
        assertThat(stat.err()).contains("not a flowscope ring");
        assertThat(inspect.code()).isEqualTo(RingTool.EXIT_BAD_RING);
    }

    @Test
    void tailJsonPrintsTheRecordsOfEveryRingOfTheDirectoryAndStopsAfterTheDuration() throws IOException {
        ringWithRecords("flowscope-4-0.ring");
        ringWithRecords("flowscope-5-0.ring");

        final Result result = run("tail", "--json", "--duration", "0.5", "--keep-files", dir.toString());

        assertThat(result.code()).isZero();
        assertThat(jsonLines(result.out()))
                .hasSize(8)
                .extracting(m -> m.get("kind"))
                .containsOnly("Coll", "ProxyStep");
    }

    @Test
    void tailSummarisesRingsRecordsByKindAndNewDrops() throws IOException {
        ringWithRecords("flowscope-6-0.ring");

        final Result result = run("tail", "--duration", "0.3", dir.toString());

        assertThat(result.code()).isZero();
        assertThat(result.out())
                .contains("attach " + dir.resolve("flowscope-6-0.ring"))
                .containsPattern(
                        "rings=1 records/s=\\d+ Coll=\\d+ ProxyStep=\\d+ \\| dropped full=17 abandoned=0 contended=0")
                .doesNotContain("deleted");
        assertThat(dir.resolve("flowscope-6-0.ring"))
                .as("its producer is alive (another host)")
                .exists();
    }

    @Test
    void everyCommandHasItsHelp() {
        for (final String command : new String[] {"stat", "inspect", "tail"}) {
            final Result help = run(command, "--help");
            assertThat(help.code()).isZero();
            assertThat(help.out()).contains("Usage: ring-tool " + command).contains("-h, --help");
        }
        assertThat(run("tail", "--help").out())
                .contains("--json", "--duration", "--keep-files", "--scan-ms", "--stale-ms");
        assertThat(run("inspect", "--help").out()).contains("--limit", "--stale-ms");
        assertThat(run("--help").out()).contains("stat", "inspect", "tail");
        assertThat(run().code()).isEqualTo(2);
    }
}
