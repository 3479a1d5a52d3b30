package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.Launcher.Ran;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.ring.cli.RingTool;
import io.flowscope.sink.webhook.HmacSigner;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The docs run (issue #16): every command line shown in a fenced block of the READMEs and docs, and in the
 * "Examples:" of the {@code --help} texts (the launcher's, the collector's commands', the ring tool's), is in
 * {@link #TABLE}, which says how the test runs it and what it must show; a documented command missing from the table
 * fails, and so does a table entry no document shows any more. The commands run through the real launcher on this
 * JVM's classpath, as written: only placeholders are replaced (the journal of a run → one this test made with a short
 * {@code simulate}, {@code /dev/shm/flowscope} and its ring → rings the C harness writes in a temporary directory, a
 * port → a free port, {@code old.jsonl.gz} → a real version-1 recording), one scratch directory for all of them in
 * table order, so a file a command writes is there for the next. Long-running commands are stopped once their
 * documented output appeared. The few that cannot run here say why and what covers them.
 */
class DocsRunIT {
    /** Documents (or folders of them) not read, with why. */
    static final Map<String, String> NOT_READ = Map.of(
            "docs/benchmarks.md",
                    "every command in it is a benchmark run (JMH, C harnesses, GPU-host scripts, opt-in "
                            + "-Dflowscope.bench tests against real servers) taking minutes each, some on GPUs; its figures come from "
                            + "those runs, not from this test (benchmarks/README.md lists them)",
            "benchmarks/README.md", "lists the same benchmark runs as docs/benchmarks.md, for the same reason",
            "docs/fleet-wire.md",
                    "the design of what crosses Kafka: its commands are the JMH runs and the size count "
                            + "behind its figures (benchmarks/README.md lists them), for the same reason",
            "docs/perf-journal",
                    "history: the commands as they were run at the time, some naming commits, jars or "
                            + "options that have moved on; nothing there is meant to be run again as written");

    /**
     * What a benchmark run looks like (a GPU-host script, a C harness, a bench script against real servers, the JMH
     * jar, an opt-in {@code -Dflowscope.bench} run of the benchmarks module's tests or of the collector's one opt-in
     * method, {@code MultiHostHarnessIT#rateSweep}): the reason the benchmark documents are {@link #NOT_READ},
     * checked.
     */
    static final Pattern BENCHMARK_RUN = Pattern.compile(
            "([A-Z_]+=(\"[^\"]*\"|\\S+) )*(bash )?deploy/gpu/\\S+\\.sh.*|cd profiler-plugin && make .*|"
                    + "build/fs_(abi_)?bench .*|(JAVA_OPTS=\"[^\"]*\" )?benchmarks/[\\w-]+\\.sh .*|"
                    + "mvn -B -q -pl benchmarks -am package .*|java .*benchmarks/target/benchmarks\\.jar.*|"
                    + "mvn -B -q -pl benchmarks -am test .*-Dflowscope\\.bench=true.*|"
                    + "mvn -B -q -pl collector -am verify .*-Dit\\.test=MultiHostHarnessIT#rateSweep .*-Dflowscope\\.bench=true.*");

    /** Fence languages whose blocks are shell command lines (an untagged fence counts as commands). */
    static final Set<String> SHELL = Set.of("", "sh", "bash", "shell", "console");

    /** The placeholders of the docs' commands. */
    static final String JOURNAL = "~/.local/state/flowscope/journal-7070";

    static final String RING_FILE = "/dev/shm/flowscope/flowscope-1234-0.ring";
    static final String RING_DIR = "/dev/shm/flowscope";
    static final String PORT = "--port 7070";
    static final String OLD_TRACE = "old.jsonl.gz";
    static final String SHARED_TRACES = "../shared/traces";

    /** What a table entry needs around its command. */
    enum Setup {
        /** Nothing. */
        NONE,
        /** A fresh ring the harness wrote ({@link #RING_FILE}). */
        RING_FILE,
        /** The harness streaming into the ring directory while the command runs ({@link #RING_DIR}). */
        LIVE_RINGS
    }

    interface Check {
        void check(Ran r, Path cwd) throws Exception;
    }

    /**
     * How one documented command is run: to its end, or until {@code stopWhen} appeared (then SIGTERM), within
     * {@code limit}; or not at all ({@code notRun}: why, and what covers it). {@code cwd}: the scratch directory, or
     * the repository root when {@code inRoot}.
     */
    record Entry(
            String command,
            Setup setup,
            Pattern stopWhen,
            int limitSeconds,
            boolean inRoot,
            Check check,
            String notRun) {}

    static Entry runs(final String command, final Check check) {
        return new Entry(command, Setup.NONE, null, 90, false, check, null);
    }

    static Entry runs(final String command, final Setup setup, final Check check) {
        return new Entry(command, setup, null, 90, false, check, null);
    }

    static Entry until(final String command, final Setup setup, final String stopWhen, final Check check) {
        return new Entry(command, setup, Pattern.compile(stopWhen), 90, false, check, null);
    }

    static Entry notRun(final String command, final String why) {
        return new Entry(command, Setup.NONE, null, 0, false, null, why);
    }

    static final String BODY = "{\"schema\":\"flowscope.alerts.v1\"}";
    static final String SECRET = "s3cret";

    @TempDir
    static Path tmp;

    static Path journal;
    static Path scratch;

    /** The slow link of the journal this test makes (see {@link #makeJournal}). */
    static final String JOURNALS_SLOW_LINK = "OPENED +SLOW_LINK .*rank 1 → 2 ";

    /** Every documented command, in the order they run. */
    static final List<Entry> TABLE = List.of(
            // ---- the demo and the service
            until("./flowscope demo", Setup.NONE, "OPENED +SLOW_LINK .*rank 3 → 4 ", (r, cwd) -> assertThat(r.out())
                    .containsPattern("flowscope: serving http://127\\.0\\.0\\.1:\\d+/")
                    .contains("flowscope: stopping; this run's journal")
                    .contains("is removed")),
            until(
                    "./flowscope run",
                    Setup.LIVE_RINGS,
                    "flowscope: serving http://127\\.0\\.0\\.1:\\d+/",
                    (r, cwd) -> assertThat(r.out()).contains("source: rings in " + tmp.resolve("rings"))),
            until(
                    "./flowscope run --ring-dir /dev/shm/flowscope --port 7070",
                    Setup.LIVE_RINGS,
                    "flowscope: serving http://127\\.0\\.0\\.1:\\d+/",
                    (r, cwd) -> assertThat(r.out())
                            .doesNotContain(":7070/")
                            .contains("source: rings in " + tmp.resolve("rings"))),
            until(
                    "./flowscope run --simulate --duration 10 --no-journal",
                    Setup.NONE,
                    "OPENED +SLOW_LINK .*rank 3 → 4 ",
                    (r, cwd) -> assertThat(r.out()).contains("; no journal")),
            until(
                    "./flowscope simulate --scenario nodes=4,gpus=8 --fault slow-link:rank=3,peer=4,fraction=0.5,at=200ms",
                    Setup.NONE,
                    "OPENED +SLOW_LINK .*rank 3 → 4 ",
                    (r, cwd) -> assertThat(r.out()).contains("4 nodes x 8 GPUs")),
            until(
                    "./flowscope simulate --scenario nodes=2,gpus=4,channels=4,size=8M,seed=1 "
                            + "--fault slow-link:rank=3,peer=4,fraction=0.5,at=200ms",
                    Setup.NONE,
                    "OPENED +SLOW_LINK .*rank 3 → 4 ",
                    (r, cwd) -> assertThat(r.out()).contains("2 nodes x 4 GPUs")),
            runs("./flowscope simulate --scenario hang-ring-2x4 --duration 3 --set window.periodMs=2", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.out()).as(r.both()).containsPattern("OPENED +HANG ");
            }),
            runs("./flowscope harness-demo 5", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.out()).as(r.both()).contains("attach ").containsPattern("rings=1 records/s=[1-9]");
            }),

            // ---- journals and traces
            runs("./flowscope replay ~/.local/state/flowscope/journal-7070 --trace trace.json", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.out()).as(r.both()).containsPattern(JOURNALS_SLOW_LINK);
                assertThat(r.err())
                        .contains("flowscope replay: engine settings of the journal: window.periodMs=1 "
                                + "window.windowSize=8")
                        .contains("trace written to trace.json");
                assertThat(Json.MAPPER
                                .readTree(cwd.resolve("trace.json").toFile())
                                .path("traceEvents")
                                .size())
                        .isPositive();
            }),
            runs("./flowscope inspect ~/.local/state/flowscope/journal-7070 | head", (r, cwd) -> {
                // stops on the closed pipe: the journal has ~180 k lines (27 MB), far more than a pipe holds
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.out().lines().toList()).hasSize(10);
                assertThat(Json.MAPPER
                                .readTree(r.out().lines().findFirst().orElseThrow())
                                .path("type")
                                .asText())
                        .isEqualTo("engineSettings");
                assertThat(r.err()).as(r.both()).isEmpty();
            }),
            runs("./flowscope inspect ~/.local/state/flowscope/journal-7070 > run.jsonl", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(countTypes(cwd.resolve("run.jsonl")))
                        .containsEntry("engineSettings", 1L)
                        .containsEntry("end", 1L)
                        .containsKey("proxyStepState");
            }),
            runs("./flowscope inspect ~/.local/state/flowscope/journal-7070 | gzip > run.jsonl.gz", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(countTypes(cwd.resolve("run.jsonl.gz"))).isEqualTo(countTypes(cwd.resolve("run.jsonl")));
            }),
            runs("./flowscope replay run.jsonl.gz", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.out()).as(r.both()).containsPattern(JOURNALS_SLOW_LINK);
                assertThat(r.err()).contains("engine settings of the journal: window.periodMs=1 window.windowSize=8");
            }),
            runs("./flowscope replay run.jsonl.gz --set window.periodMs=2", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.err())
                        .as(r.both())
                        .contains("engine settings window.periodMs=2 window.windowSize=8 "
                                + "(window.periodMs from the command line), not the journal's (window.periodMs=1 window.windowSize=8): "
                                + "anomalies may differ from the live run's");
            }),
            runs("./flowscope replay run.jsonl.gz --from 1500000000", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(entries(r)).isPositive();
                assertThat(r.out()).doesNotContain("detected at t=0.");
            }),
            runs("./flowscope replay run.jsonl.gz --from 1500000000 --trace trace.json", (r, cwd) -> {
                // docs/perfetto.md: a simulated run has no ring clock anchor: on the epoch by the batch-wall estimate
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.err())
                        .as(r.both())
                        .contains("flowscope replay: trace trace.json: ")
                        .contains("on the epoch estimated from the journal's batch wall times");
                final JsonNode t = ChromeTraceCheck.EXACT.readTree(
                        cwd.resolve("trace.json").toFile());
                assertThat(ChromeTraceCheck.violations(t)).isEmpty();
                assertThat(t.path("otherData").path("clockSource").asText()).isEqualTo("batch-wall-estimate");
                assertThat(t.path("traceEvents").size()).isPositive();
            }),
            runs("./flowscope replay run.jsonl.gz --from 1500000000 --to 2500000000", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(entries(r)).isPositive();
            }),
            runs("./flowscope inspect ~/.local/state/flowscope/journal-7070 | gzip -9 > run.jsonl.gz", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(countTypes(cwd.resolve("run.jsonl.gz"))).isEqualTo(countTypes(cwd.resolve("run.jsonl")));
            }),
            runs("./flowscope inspect run.jsonl.gz --from 1500000000 --to 1501000000", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                long timed = 0;
                for (final String line : r.out().lines().toList()) {
                    final JsonNode t = Json.MAPPER.readTree(line).get("timeNs");
                    if (t != null) {
                        assertThat(t.asLong()).isBetween(1_500_000_000L, 1_501_000_000L);
                        timed++;
                    }
                }
                assertThat(timed).as(r.both()).isPositive();
            }),
            runs("./flowscope inspect old.jsonl.gz > new.jsonl", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                try (Stream<String> lines = Files.lines(cwd.resolve("new.jsonl"))) {
                    // version 2: every line has its batch
                    assertThat(lines.filter(l -> !l.contains("\"batch\":")).count())
                            .isZero();
                }
            }),
            runs("./flowscope replay ../shared/traces/gpu-r1-2ms/events.jsonl.gz", (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                // the recording's fault: rank 1's GPU 2 ms late before each all_reduce
                assertThat(r.out()).as(r.both()).containsPattern("OPENED +SLOW_NODE .*rank 1");
            }),

            // ---- rings
            runs("./flowscope stat /dev/shm/flowscope/flowscope-1234-0.ring", Setup.RING_FILE, (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                assertThat(r.out())
                        .contains("layout            1.")
                        .containsPattern("producer +pid \\d+ on .*, closed");
            }),
            runs("./flowscope inspect /dev/shm/flowscope/flowscope-1234-0.ring", Setup.RING_FILE, (r, cwd) -> {
                assertThat(r.rc()).as(r.both()).isZero();
                final List<String> lines = r.out().lines().toList();
                assertThat(lines.size()).as(r.both()).isGreaterThan(100);
                assertThat(Json.MAPPER.readTree(lines.get(0)).has("kind")).isTrue();
                assertThat(r.err()).contains("inspect: " + lines.size() + " records, 0 corrupt");
            }),
            runs(
                    "./flowscope inspect /dev/shm/flowscope/flowscope-1234-0.ring --limit 10",
                    Setup.RING_FILE,
                    (r, cwd) -> {
                        assertThat(r.rc()).as(r.both()).isZero();
                        assertThat(r.out().lines().toList()).hasSize(10);
                    }),
            until(
                    "./flowscope tail /dev/shm/flowscope",
                    Setup.LIVE_RINGS,
                    "rings=1 records/s=[1-9]",
                    (r, cwd) -> assertThat(r.out()).contains("attach ")),

            // ---- sinks and dashboards
            runs(
                    "printf '%s' \"$BODY\" | openssl dgst -sha256 -hmac \"$SECRET\" | sed 's/^.*= /sha256=/'",
                    (r, cwd) -> {
                        assertThat(r.rc()).as(r.both()).isZero();
                        assertThat(r.out().strip())
                                .isEqualTo(new HmacSigner(SECRET.getBytes(StandardCharsets.UTF_8))
                                        .sign(BODY.getBytes(StandardCharsets.UTF_8)));
                    }),
            new Entry(
                    "java -cp \"dashboards/target/classes:$(ls ~/.m2/repository/com/fasterxml/jackson/core/"
                            + "jackson-{databind,core}/2.21.5/*.jar ~/.m2/repository/com/fasterxml/jackson/core/jackson-annotations/2.21/"
                            + "*.jar | paste -sd:)\" io.flowscope.dashboards.DashboardGenerator deploy/grafana",
                    Setup.NONE,
                    null,
                    90,
                    true,
                    (r, cwd) -> {
                        assertThat(r.rc()).as(r.both()).isZero();
                        // written to a directory of the test's (the placeholder): what is checked in, file for file
                        final Path written = Path.of(r.out().replaceAll("(?s).* files under (\\S+).*", "$1"));
                        assertThat(writtenAsCheckedIn(written, Launcher.ROOT.resolve("deploy/grafana")))
                                .as(r.both())
                                .isGreaterThan(3);
                    },
                    null),

            // ---- not run here
            notRun("mvn -B verify", "the build that runs this test (bash .ci/run runs it on CI)"),
            notRun(
                    "dashboards/schema-check/run.sh",
                    "needs node, npm and the npm registry (npm ci of @grafana/schema): bash .ci/run runs it on CI before the "
                            + "build, with its self-test (each mutation refused)"),
            notRun(
                    "mvn -B -q -pl dashboards -am compile -Dflowscope.skipSanitizers=true",
                    "Maven inside Maven: the build that runs this test compiled dashboards/target/classes, which the next "
                            + "documented command (DashboardGenerator) runs from"),
            notRun(
                    "mvn -B -q -pl collector -am verify -Dflowscope.skipSanitizers=true -Dtest=RealTraceSuiteTest "
                            + "-Dsurefire.failIfNoSpecifiedTests=false",
                    "Maven inside Maven: RealTraceSuiteTest runs in this build"),
            notRun(
                    "mvn -B -q -pl anomaly -am -Pdetection-report package -DskipTests -Dflowscope.skipSanitizers=true",
                    "Maven inside Maven: the profile runs the anomaly module's scenario report (DetectionReport) by hand"),
            notRun(
                    "mvn -B -q -pl anomaly -am verify -Dflowscope.skipSanitizers=true",
                    "Maven inside Maven: SimulatorCalibrationTest runs in this build"),
            notRun(
                    "mvn -B -q -pl anomaly test -Dflowscope.skipSanitizers=true -Dtest=SimulatorCalibrationTest "
                            + "-Dsurefire.failIfNoSpecifiedTests=false",
                    "Maven inside Maven: SimulatorCalibrationTest runs in this build"),
            notRun(
                    "cat anomaly/target/simulator-calibration.md",
                    "prints what SimulatorCalibrationTest writes in the anomaly module's test run, which asserts its figures"),
            notRun(
                    "NCCL_PROFILER_PLUGIN=/path/to/libnccl-profiler-flowscope.so torchrun ... train.py",
                    "a training job on GPUs: deploy/gpu/e2e-detection.sh runs torchrun with the plugin on the GPU host "
                            + "(docs/benchmarks.md section 3)"),
            notRun(
                    "NCCL_PROFILER_PLUGIN=/path/to/libnccl-profiler-flowscope.so",
                    "the NCCL job's setting (GPUs): deploy/gpu/*.sh set it on the GPU host; the C harness loads the same "
                            + "library by path in make check and in this test"),
            notRun(
                    "./flowscope simulate --role agent --set fleet.bootstrap=127.0.0.1:19092 --set fleet.agentId=node-1",
                    "needs a Kafka broker: FleetIT.shouldRunAnAgentAndAnAggregatorFromTheCommandLineAndServeTheSlowLink"
                            + "OverHttp runs simulate --role agent with these options against a real one"),
            notRun(
                    "./flowscope run --role aggregator --port 7071 --set fleet.bootstrap=127.0.0.1:19092 --no-journal",
                    "needs a Kafka broker: the same FleetIT runs run --role aggregator --no-journal --port against a real one"),
            notRun(
                    "deploy/local-cluster.sh start",
                    "starts Kafka, InfluxDB and three services for as long as one wants them (deploy/README.md): by hand; "
                            + "FleetIT runs a real broker with agents and aggregators, SinksServiceIT a real InfluxDB"));

    @BeforeAll
    static void makeJournal() throws Exception {
        scratch = Files.createDirectories(tmp.resolve("scratch"));
        journal = tmp.resolve("journal");
        // a slow link in a small cluster, 2.6 s of events (the docs' ranges reach 2.5 s), as fast as it goes
        final Ran r = Launcher.run(
                Launcher.FLOWSCOPE + " simulate --scenario nodes=2,gpus=2,channels=1,size=1M,"
                        + "bw=5e8,duration=2600ms --fault slow-link:rank=1,peer=2,fraction=0.5,at=200ms --speed 50 --port 0 "
                        + "--journal-dir "
                        + journal + " --quiet",
                tmp,
                env(),
                Duration.ofSeconds(90),
                null);
        assertThat(r.rc()).as(r.both()).isZero();
    }

    static Map<String, String> env() throws IOException {
        final Map<String, String> env = Launcher.environment(tmp);
        env.put("BODY", BODY);
        env.put("SECRET", SECRET);
        return env;
    }

    @Test
    void shouldHaveEveryDocumentedCommandInTheTableAndNoOther() throws Exception {
        final Map<String, List<String>> documented = documentedCommands();
        final Set<String> table = new LinkedHashSet<>();
        TABLE.forEach(e -> assertThat(table.add(e.command()))
                .as("twice in the table: " + e.command())
                .isTrue());
        final Set<String> missing = new TreeSet<>(documented.keySet());
        missing.removeAll(table);
        assertThat(missing)
                .as("documented (where: " + where(documented, missing) + ") but not in DocsRunIT.TABLE: "
                        + "add how it runs (or, for a block that is not commands, tag its fence, e.g. ```text)")
                .isEmpty();
        final Set<String> stale = new TreeSet<>(table);
        stale.removeAll(documented.keySet());
        assertThat(stale)
                .as("in DocsRunIT.TABLE but no document or --help shows it any more")
                .isEmpty();
        // the few that cannot run here stay few: under half of the table
        final long notRun = TABLE.stream().filter(e -> e.notRun() != null).count();
        assertThat(2 * notRun).as(notRun + " of " + TABLE.size() + " not run").isLessThan(TABLE.size());
    }

    @Test
    void shouldFindOnlyBenchmarkRunsInTheBenchmarkDocuments() throws IOException {
        for (final String doc : List.of("docs/benchmarks.md", "benchmarks/README.md", "docs/fleet-wire.md")) {
            final Path path = Launcher.ROOT.resolve(doc);
            assertThat(notRead(path)).as(doc).isTrue();
            assertThat(commandsOfMarkdown(Files.readString(path)))
                    .as(doc)
                    .isNotEmpty()
                    .allSatisfy(c -> assertThat(c).matches(BENCHMARK_RUN));
        }
        assertThat(notRead(Launcher.ROOT.resolve("docs/perf-journal/README.md")))
                .isTrue();
    }

    @Test
    void shouldReadCommandLinesFromShellFencesAndHelpExamplesOnly() {
        final String md = "# doc\n```\n./a one \\\n    --two  # why\n# a comment line\n\n./b\n```\n"
                + "```text\nnot -> a command\n```\n  ```sh\n  printf '%s' \"#x\" | c  # c\n  ```\n```json\n{}\n```\n";
        assertThat(commandsOfMarkdown(md)).containsExactly("./a one --two", "./b", "printf '%s' \"#x\" | c");
        final String help = "Usage: f [-h]\n  -h  help, e.g. f -h\n\nExamples:\n  # what it does\n  ./f x \\\n"
                + "      --y\n  ./f z\n\nmore text\n";
        assertThat(examplesOfHelp(help)).containsExactly("./f x --y", "./f z");
    }

    @Test
    void shouldRunEveryDocumentedCommandAndShowWhatTheDocsSay() throws Exception {
        final List<String> failures = new ArrayList<>();
        for (final Entry e : TABLE) {
            if (e.notRun() != null) {
                continue;
            }
            try {
                runEntry(e);
            } catch (final AssertionError | Exception ex) {
                failures.add(e.command() + "\n" + ex.getMessage());
            }
        }
        assertThat(failures).as(String.join("\n\n", failures)).isEmpty();
    }

    private static void runEntry(final Entry e) throws Exception {
        final Map<String, String> env = env();
        final int port = Launcher.freePort();
        env.put("FLOWSCOPE_HTTP_PORT", Integer.toString(port));
        final Path rings = Files.createTempDirectory(tmp, "rings");
        env.put("FLOWSCOPE_RING_DIR", rings.toString());
        String command = e.command();
        Process live = null;
        if (e.setup() == Setup.RING_FILE) {
            command =
                    command.replace(RING_FILE, Launcher.harnessRing(rings, 200).toString());
        }
        if (e.setup() == Setup.LIVE_RINGS) {
            live = Launcher.liveHarness(rings, 60);
        }
        command = command.replace(JOURNAL, journal.toString())
                .replace(RING_DIR, rings.toString())
                .replace(PORT, "--port " + port);
        if (command.contains(SHARED_TRACES)) {
            command = command.replace(SHARED_TRACES, SharedTraces.dir().toString());
        }
        if (command.contains(OLD_TRACE)) {
            // a real recording of the repository: trace version 1 (no batch numbers)
            command = command.replace(
                    OLD_TRACE,
                    Launcher.ROOT
                            .resolve("testdata/traces/socket-hang-r1-2500ms-ag-16m/events.jsonl.gz")
                            .toString());
        }
        if (e.inRoot()) {
            command = command.replace(
                    "deploy/grafana", Files.createTempDirectory(tmp, "grafana").toString());
        }
        command = command.replace("./flowscope ", Launcher.FLOWSCOPE + " ");
        try {
            final Path cwd = e.inRoot() ? Launcher.ROOT : scratch;
            final Ran r = Launcher.run(command, cwd, env, Duration.ofSeconds(e.limitSeconds()), e.stopWhen());
            System.out.printf(java.util.Locale.ROOT, "docs run: %5.1f s  %s%n", r.seconds(), e.command());
            e.check().check(r, cwd);
        } finally {
            if (live != null) {
                Launcher.kill(live);
                live.waitFor();
            }
        }
    }

    // ---- what the docs show

    /** Every documented command → where it is shown (file, or the --help of a command). */
    static Map<String, List<String>> documentedCommands() throws IOException {
        final Map<String, List<String>> all = new LinkedHashMap<>();
        for (final Path doc : documents()) {
            final String name = Launcher.ROOT.relativize(doc).toString();
            for (final String c : commandsOfMarkdown(Files.readString(doc))) {
                all.computeIfAbsent(c, k -> new ArrayList<>()).add(name);
            }
        }
        for (final Map.Entry<String, String> help : helpTexts().entrySet()) {
            for (final String c : examplesOfHelp(help.getValue())) {
                all.computeIfAbsent(c, k -> new ArrayList<>()).add(help.getKey());
            }
        }
        return all;
    }

    /** README.md, every module's README.md and the .md files under docs/, less {@link #NOT_READ}. */
    static List<Path> documents() throws IOException {
        final List<Path> docs = new ArrayList<>();
        docs.add(Launcher.ROOT.resolve("README.md"));
        try (Stream<Path> dirs = Files.list(Launcher.ROOT)) {
            dirs.filter(d -> Files.isRegularFile(d.resolve("README.md")) && Files.isRegularFile(d.resolve("pom.xml"))
                            || Files.isRegularFile(d.resolve("README.md"))
                                    && d.getFileName().toString().equals("deploy"))
                    .map(d -> d.resolve("README.md"))
                    .filter(f -> !notRead(f))
                    .sorted()
                    .forEach(docs::add);
        }
        try (Stream<Path> files = Files.walk(Launcher.ROOT.resolve("docs"))) {
            files.filter(f -> Files.isRegularFile(f) && f.toString().endsWith(".md"))
                    .filter(f -> !notRead(f))
                    .sorted()
                    .forEach(docs::add);
        }
        return docs;
    }

    /** Whether a document is {@link #NOT_READ}, itself or by a folder above it. */
    static boolean notRead(final Path doc) {
        for (Path p = Launcher.ROOT.relativize(doc); p != null; p = p.getParent()) {
            if (NOT_READ.containsKey(p.toString())) {
                return true;
            }
        }
        return false;
    }

    private static final Pattern FENCE = Pattern.compile("^\\s*```\\s*(\\S*)\\s*$");

    /**
     * The command lines of a Markdown text's shell fences ({@link #SHELL}): continuation lines ({@code \}) joined,
     * comment lines skipped, a trailing {@code # comment} cut, blank lines skipped.
     */
    static List<String> commandsOfMarkdown(final String text) {
        final List<String> out = new ArrayList<>();
        boolean inFence = false;
        boolean shell = false;
        final StringBuilder pending = new StringBuilder();
        for (final String line : text.split("\n", -1)) {
            final Matcher m = FENCE.matcher(line);
            if (m.matches()) {
                if (inFence) {
                    inFence = false;
                } else {
                    inFence = true;
                    shell = SHELL.contains(m.group(1).toLowerCase(java.util.Locale.ROOT));
                }
                continue;
            }
            if (inFence && shell) {
                addLine(line, pending, out);
            }
        }
        return out;
    }

    private static void addLine(final String line, final StringBuilder pending, final List<String> out) {
        final String stripped = stripComment(line).strip();
        if (stripped.endsWith("\\")) {
            pending.append(stripped, 0, stripped.length() - 1).append(' ');
            return;
        }
        pending.append(stripped);
        final String command = pending.toString().strip().replaceAll("\\s+", " ");
        pending.setLength(0);
        if (!command.isEmpty()) {
            out.add(command);
        }
    }

    /** A line without its comment: a '#' at the start or after white space, outside quotes. */
    static String stripComment(final String line) {
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            final char c = line.charAt(i);
            if (quote != 0) {
                quote = c == quote ? 0 : quote;
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (c == '#' && (i == 0 || Character.isWhitespace(line.charAt(i - 1)))) {
                return line.substring(0, i);
            }
        }
        return line;
    }

    /** The command lines under "Examples:" in a --help text, until a blank line. */
    static List<String> examplesOfHelp(final String help) {
        final List<String> out = new ArrayList<>();
        boolean in = false;
        final StringBuilder pending = new StringBuilder();
        for (final String line : help.split("\n", -1)) {
            if (line.strip().equals("Examples:")) {
                in = true;
                continue;
            }
            if (in && line.isBlank()) {
                in = false;
                continue;
            }
            if (in) {
                addLine(line, pending, out);
            }
        }
        return out;
    }

    /**
     * The --help texts: the launcher's (through the real script: its own usage, then the collector's top level), and
     * every command's of the collector and of the ring tool as picocli renders them for --help.
     */
    static Map<String, String> helpTexts() throws IOException {
        final Map<String, String> helps = new LinkedHashMap<>();
        try {
            final Ran r = Launcher.run(
                    Launcher.FLOWSCOPE + " --help",
                    Launcher.ROOT,
                    Launcher.environment(Files.createTempDirectory("docsrun")),
                    Duration.ofSeconds(60),
                    null);
            assertThat(r.rc()).as(r.both()).isZero();
            helps.put("the launcher's ./flowscope --help", r.out());
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        addHelps("./flowscope", new CommandLine(new Main()), helps);
        addHelps("ring-tool", new CommandLine(new RingTool()), helps);
        return helps;
    }

    private static void addHelps(final String name, final CommandLine cl, final Map<String, String> helps) {
        helps.put(name + " --help", cl.getUsageMessage(CommandLine.Help.Ansi.OFF));
        for (final Map.Entry<String, CommandLine> sub : cl.getSubcommands().entrySet()) {
            if (!sub.getKey().equals("help")) {
                helps.put(
                        name + " " + sub.getKey() + " --help",
                        sub.getValue().getUsageMessage(CommandLine.Help.Ansi.OFF));
            }
        }
    }

    private static String where(final Map<String, List<String>> documented, final Set<String> commands) {
        final StringBuilder b = new StringBuilder();
        commands.forEach(c ->
                b.append(b.length() == 0 ? "" : "; ").append(c).append(" in ").append(documented.get(c)));
        return b.toString();
    }

    // ---- checks

    /** Lines of a JSON-lines file (gzipped or not) by type. */
    static Map<String, Long> countTypes(final Path file) throws IOException {
        final Map<String, Long> counts = new java.util.TreeMap<>();
        final boolean gz = file.toString().endsWith(".gz");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                gz ? new GZIPInputStream(Files.newInputStream(file)) : Files.newInputStream(file),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                final Matcher m = TYPE.matcher(line);
                assertThat(m.find()).as(line).isTrue();
                counts.merge(m.group(1), 1L, Long::sum);
            }
        }
        return counts;
    }

    private static final Pattern TYPE = Pattern.compile("^\\{\"type\":\"(\\w+)\"");

    /** The entries a replay's summary line says it read. */
    static long entries(final Ran r) {
        final Matcher m =
                Pattern.compile("replay: \\d+ batches, (\\d+) entries").matcher(r.err());
        assertThat(m.find()).as(r.both()).isTrue();
        return Long.parseLong(m.group(1));
    }

    /** Every file written under {@code written} is checked in under {@code checkedIn} with the same text; how many. */
    static int writtenAsCheckedIn(final Path written, final Path checkedIn) throws IOException {
        final Map<String, String> x = contents(written);
        final Map<String, String> y = contents(checkedIn);
        assertThat(y.keySet()).as("files written vs. checked in").containsAll(x.keySet());
        for (final String k : x.keySet()) {
            assertThat(x.get(k)).as(k).isEqualTo(y.get(k));
        }
        return x.size();
    }

    private static Map<String, String> contents(final Path dir) throws IOException {
        final Map<String, String> m = new java.util.TreeMap<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (final Path f : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
                m.put(dir.relativize(f).toString(), Files.readString(f));
            }
        }
        return m;
    }
}
