package io.flowscope.collector;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.EngineSettings;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.fleet.AgentPublisher;
import io.flowscope.collector.fleet.Aggregator;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.TraceReader;
import io.flowscope.collector.pipeline.Announcements;
import io.flowscope.collector.pipeline.AnomalyEvent;
import io.flowscope.collector.pipeline.Json;
import io.flowscope.collector.replay.JournalJson;
import io.flowscope.collector.replay.TraceClock;
import io.flowscope.collector.replay.TraceExport;
import io.flowscope.ring.cli.RingTool;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code flowscope}: the collector service and its tools. One entry point: reads the configuration once (file,
 * environment, flags) into an immutable {@link CollectorConfig} and starts what the subcommand asks for.
 */
@Command(
        name = "flowscope",
        mixinStandardHelpOptions = true,
        version = "flowscope collector 0.1.0",
        description = "Microsecond flow telemetry for NCCL: the collector service and its tools.",
        subcommands = {
            Main.Run.class,
            Main.Simulate.class,
            Main.Replay.class,
            Main.Inspect.class,
            CommandLine.HelpCommand.class
        })
public final class Main implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(Main.class);

    /** Exit code of a bad command line (unknown option, missing or bad argument) or configuration error. */
    public static final int EXIT_CONFIG = 2;
    /** Exit code of an input that cannot be read (not a ring, not a journal). */
    public static final int EXIT_INPUT = 3;
    /** Exit code of a service that an error stopped (the drain loop died, an unexpected error). */
    public static final int EXIT_FAILED = 1;
    /** Exit code of a replay or inspect that skipped damaged input (unless --tolerate-corruption). */
    public static final int EXIT_DAMAGED = 4;
    /** Exit code of a service whose journal directory another service holds. */
    public static final int EXIT_IN_USE = 5;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    PrintStream stdout = System.out;
    PrintStream stderr = System.err;

    /**
     * How long SIGTERM waits for the service to close (the InfluxDB sink flushes for at most 10 s, plus 5 s for its
     * worker); under the units' TimeoutStopSec=45 in deploy/systemd, after which systemd kills anyway.
     */
    static final long SHUTDOWN_WAIT_SECONDS = 40;

    /** Set by tests: stop a running service (instead of waiting for SIGINT/SIGTERM). */
    static volatile CountDownLatch stopSignal;
    /** Set by tests: sees the service once it runs. */
    static volatile Consumer<CollectorService> onStarted;
    /** Set by tests: the anomaly stage the service runs (a stage that fails as a test needs), instead of its own. */
    static volatile java.util.function.Function<
                    io.flowscope.api.anomaly.AnomalySink, io.flowscope.api.anomaly.AnomalyStage>
            stageForTests;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return CommandLine.ExitCode.USAGE;
    }

    public static void main(final String[] args) {
        int rc;
        try {
            rc = run(System.out, System.err, args);
        } catch (final Throwable t) {
            // an error no command handled (an Error escaping picocli): one line, and not the exit status of success
            LOG.error("flowscope stopped by an error", t);
            System.err.println("flowscope: stopped by an error: " + t);
            rc = EXIT_FAILED;
        }
        System.exit(rc);
    }

    /** Runs a command with the given streams; returns its exit code. */
    public static int run(final PrintStream out, final PrintStream err, final String... args) {
        final Main main = new Main();
        main.stdout = out;
        main.stderr = err;
        final CommandLine cl = new CommandLine(main);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.setParameterExceptionHandler(Main::badCommandLine);
        cl.setExecutionExceptionHandler((ex, cmd, parse) -> {
            final String who = cmd.getCommandSpec().qualifiedName();
            if (ex instanceof CollectorConfig.ConfigException) {
                cmd.getErr().println(who + ": " + ex.getMessage());
                return EXIT_CONFIG;
            }
            if (ex instanceof io.flowscope.collector.fleet.KafkaRefusal) {
                cmd.getErr().println(who + ": " + ex.getMessage()); // refused credentials or TLS: a setting to fix
                return EXIT_FAILED;
            }
            if (ex instanceof io.flowscope.collector.journal.JournalLock.InUseException) {
                cmd.getErr().println(who + ": " + ex.getMessage());
                return EXIT_IN_USE;
            }
            if (ex instanceof IllegalArgumentException
                    || ex instanceof java.io.IOException
                    || ex instanceof java.io.UncheckedIOException) {
                cmd.getErr().println(who + ": " + oneLine(ex.getMessage() != null ? ex.getMessage() : ex.toString()));
                return EXIT_INPUT;
            }
            throw ex;
        });
        return cl.execute(args);
    }

    /**
     * A bad command line (unknown option, missing or extra argument, a value that does not parse, an empty time
     * range): one line on stderr, the command's name, what is wrong and where the usage is; exit {@link #EXIT_CONFIG}.
     * Not picocli's usage dump after the error: the one line is what a reader (and a script's log) needs.
     */
    static int badCommandLine(final CommandLine.ParameterException ex, final String[] args) {
        final CommandLine cmd = ex.getCommandLine();
        final String who = cmd.getCommandSpec().qualifiedName();
        final StringBuilder line = new StringBuilder(who).append(": ").append(oneLine(ex.getMessage()));
        if (ex instanceof CommandLine.UnmatchedArgumentException u
                && !u.getSuggestions().isEmpty()) {
            line.append(" (did you mean ")
                    .append(String.join(" or ", u.getSuggestions()))
                    .append("?)");
        }
        line.append("; usage: ")
                .append(who.startsWith("flowscope") ? "./" : "")
                .append(who)
                .append(" --help");
        cmd.getErr().println(line);
        cmd.getErr().flush();
        return EXIT_CONFIG;
    }

    /** A message on one line (an exception's message may span several). */
    static String oneLine(final String message) {
        return message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    /** Options shared by run and simulate. */
    static final class ServiceOptions {
        @Option(
                names = {"-c", "--config"},
                paramLabel = "FILE",
                description = "YAML or JSON configuration file (keys in collector/README.md).")
        Path config;

        @Option(
                names = "--set",
                paramLabel = "KEY=VALUE",
                description = "Override one configuration key (repeatable), e.g. --set journal.maxBytes=1000000.")
        Map<String, String> set = new LinkedHashMap<>();

        @Option(names = "--port", paramLabel = "PORT", description = "HTTP port (http.port; 0 = any free port).")
        Integer port;

        @Option(names = "--host", paramLabel = "ADDR", description = "HTTP bind address (http.host).")
        String host;

        @Option(names = "--ring-dir", paramLabel = "DIR", description = "Ring directory (ring.dir).")
        Path ringDir;

        @Option(names = "--journal-dir", paramLabel = "DIR", description = "Journal directory (journal.dir).")
        Path journalDir;

        @Option(names = "--no-journal", description = "Do not journal (journal.enabled=false).")
        boolean noJournal;

        @Option(
                names = "--duration",
                paramLabel = "SECONDS",
                description = "Stop after this many seconds (default: until Ctrl-C).")
        long durationSeconds;

        @Option(names = "--quiet", description = "Do not print anomalies to the console.")
        boolean quiet;

        @Option(
                names = "--role",
                paramLabel = "ROLE",
                description = "Fleet role (fleet.role): standalone (default), agent (also publish to Kafka) or "
                        + "aggregator (consume the agents' summaries from Kafka; no rings).")
        String role;

        Map<String, String> overrides() {
            final Map<String, String> o = new LinkedHashMap<>(set);
            if (port != null) {
                o.put("http.port", port.toString());
            }
            if (host != null) {
                o.put("http.host", host);
            }
            if (ringDir != null) {
                o.put("ring.dir", ringDir.toString());
            }
            if (journalDir != null) {
                o.put("journal.dir", journalDir.toString());
            }
            if (noJournal) {
                o.put("journal.enabled", "false");
            }
            if (role != null) {
                o.put("fleet.role", role);
            }
            return o;
        }
    }

    static int serve(final CollectorConfig config, final ServiceOptions opts, final PrintWriter out) throws Exception {
        final Consumer<AnomalyEvent> console = e -> {
            if (!opts.quiet) {
                synchronized (out) {
                    out.println(Json.line(e));
                    out.flush();
                }
            }
        };
        final CountDownLatch stop = stopSignal != null ? stopSignal : new CountDownLatch(1);
        if (config.fleet().isAggregator()) {
            return serveAggregator(config, console, out, stop, opts.durationSeconds);
        }
        final CountDownLatch closed = new CountDownLatch(1);
        if (config.journalTemporary()) {
            removeStaleTemporaryJournals(out);
        }
        Throwable stoppedBy = null;
        final var stage = stageForTests;
        try (CollectorService service = stage == null
                        ? CollectorService.start(config, console)
                        : CollectorService.start(config, CollectorService.sourceOf(config), stage, console);
                AgentPublisher agent = startAgent(service, config, out)) {
            // the JVM halts as soon as the hooks return: on SIGTERM (systemd stop, a pod deleted) the hook waits
            // until the service is closed, or what the sinks still queue is lost (the InfluxDB sink runs seconds
            // behind under load, so the last anomalies announced were among it)
            final Thread hook = shutdownHook(stop, closed);
            Runtime.getRuntime().addShutdownHook(hook);
            out.println("flowscope: serving " + service.url() + "  (live page; API under " + service.url()
                    + "api/, metrics at " + service.url() + "metrics)");
            out.println("flowscope: source: " + service.sourceDescription()
                    + (config.journalEnabled()
                            ? "; journal: " + config.journalDir() + " (" + journalBound(config) + ")"
                            : "; no journal"));
            out.flush();
            if (onStarted != null) {
                onStarted.accept(service);
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(opts.durationSeconds);
            String health = "UP";
            while (!stop.await(200, TimeUnit.MILLISECONDS)) {
                health = sayHealth(service.health(), health, out);
                if (service.failure() != null) {
                    break;
                }
                if (opts.durationSeconds > 0 ? System.nanoTime() - deadline >= 0 : service.finished()) {
                    break;
                }
            }
            stoppedBy = service.failure();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (final IllegalStateException ignored) {
                // shutting down already
            }
            if (stoppedBy != null) {
                out.println("flowscope: stopped by an error: " + stoppedBy + " (exit status " + EXIT_FAILED + ")");
            }
            out.println("flowscope: stopping"
                    + (!config.journalEnabled()
                            ? ""
                            : config.journalTemporary()
                                    ? "; this run's journal " + config.journalDir()
                                            + " is removed (name one with --journal-dir to keep it)"
                                    : "; replay this run with: ./flowscope replay " + config.journalDir()));
            out.flush();
        } finally {
            try {
                if (config.journalEnabled() && config.journalTemporary()) {
                    removeTree(config.journalDir());
                }
            } finally {
                closed.countDown();
            }
        }
        return stoppedBy != null ? EXIT_FAILED : 0;
    }

    /** A fleet agent's publisher, started, its counters in the service's /metrics and /api/health; null otherwise. */
    static AgentPublisher startAgent(
            final CollectorService service, final CollectorConfig config, final PrintWriter out) {
        final FleetConfig fleet = config.fleet();
        if (!fleet.isAgent()) {
            return null;
        }
        final AgentPublisher p = new AgentPublisher(config, fleet, service::hostName).start();
        service.extend("fleet", p::health, p::metrics);
        out.println("flowscope: fleet agent " + p.agentId() + " publishing to " + fleet.bootstrap() + " (topics "
                + fleet.summariesTopic() + ", " + fleet.anomaliesTopic() + ", " + fleet.eventsTopic() + ")");
        out.flush();
        return p;
    }

    /**
     * {@code run --role aggregator}: the service around a fleet aggregator (the same API and live page as a node's;
     * anomalies only) until {@code stop}, the duration or the aggregator's failure; a failed aggregator exits 1, so
     * that systemd (Restart=on-failure) or Kubernetes restarts it.
     */
    static int serveAggregator(
            final CollectorConfig config,
            final Consumer<AnomalyEvent> console,
            final PrintWriter out,
            final CountDownLatch stop,
            final long durationSeconds)
            throws Exception {
        final FleetConfig fleet = config.fleet();
        final String instance = fleet.agentId().isEmpty()
                ? FleetConfig.hostName() + "-" + ProcessHandle.current().pid()
                : fleet.agentId();
        final Announcements announced = new Announcements();
        final Aggregator aggregator = new Aggregator(fleet, instance, announced);
        final Throwable failed;
        final CountDownLatch closed = new CountDownLatch(1);
        try (CollectorService s = CollectorService.start(config, aggregator, announced, console)) {
            final Thread hook = shutdownHook(stop, closed);
            Runtime.getRuntime().addShutdownHook(hook);
            out.println("flowscope: fleet aggregator " + aggregator.instance() + " (group " + fleet.group() + ", "
                    + fleet.bootstrap() + ") serving " + s.url() + "  (anomalies at " + s.url()
                    + "api/anomalies; written to "
                    + fleet.fleetAnomaliesTopic() + ")");
            out.flush();
            if (durationSeconds > 0) {
                stop.await(durationSeconds, TimeUnit.SECONDS);
            } else {
                while (!stop.await(200, TimeUnit.MILLISECONDS) && s.failure() == null) {
                    // serving
                }
            }
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (final IllegalStateException ignored) {
                // shutting down already
            }
            failed = s.failure();
            out.println("flowscope: stopping the aggregator" + (failed == null ? "" : " (failed: " + failed + ")"));
            out.flush();
        } finally {
            closed.countDown();
        }
        return failed == null ? 0 : EXIT_FAILED;
    }

    /** The journal's bound as the console says it: its cap, and the free space of its file system when less. */
    private static String journalBound(final CollectorConfig config) {
        final StringBuilder b = new StringBuilder(
                config.journalMaxBytes() > 0
                        ? "bounded at " + gib(config.journalMaxBytes()) + ", oldest cycles retired first"
                        : "no size bound");
        try {
            final long free = Files.getFileStore(config.journalDir()).getUsableSpace();
            if (config.journalMaxBytes() <= 0 || free < config.journalMaxBytes()) {
                b.append("; ").append(gib(free)).append(" free on its file system");
            }
        } catch (final java.io.IOException e) {
            // not there yet: nothing to add
        }
        return b.toString();
    }

    private static String gib(final long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }

    /**
     * Removes the journals that simulated runs of this user left behind (killed before they could remove their
     * own): those under {@link CollectorConfig#temporaryRoot()} whose process is gone.
     */
    static void removeStaleTemporaryJournals(final PrintWriter out) {
        final Path root = CollectorConfig.temporaryRoot();
        if (!Files.isDirectory(root)) {
            return;
        }
        try (java.util.stream.Stream<Path> dirs = Files.list(root)) {
            for (final Path d : (Iterable<Path>) dirs::iterator) {
                final java.util.regex.Matcher m = CollectorConfig.TEMPORARY_JOURNAL.matcher(
                        d.getFileName().toString());
                if (m.matches()
                        && Files.isDirectory(d)
                        && ProcessHandle.of(Long.parseLong(m.group(1)))
                                        .map(ProcessHandle::isAlive)
                                        .orElse(false)
                                == false) {
                    removeTree(d);
                    out.println(
                            "flowscope: removed " + d + ", the journal of an earlier simulated run that was killed");
                }
            }
        } catch (final java.io.IOException | RuntimeException e) {
            LOG.warn("cannot look for stale simulated journals in {}: {}", root, e.toString());
        }
    }

    /** Deletes a directory and what it holds (a journal: flat); what cannot be deleted is logged and left. */
    static void removeTree(final Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            for (final Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (final java.io.IOException | RuntimeException e) {
            LOG.warn("cannot remove {}: {}", dir, e.toString());
        }
    }

    /**
     * Prints a change of the service's health on the console, once (DEGRADED with its reasons, UP again), and logs
     * it; returns what was said.
     */
    static String sayHealth(final Map<String, Object> health, final String said, final PrintWriter out) {
        final Object reasons = health.get("reasons");
        final String status = String.valueOf(health.get("status"));
        final String now = "UP".equals(status)
                ? "UP"
                : status
                        + (reasons instanceof List<?> l && !l.isEmpty()
                                ? ": "
                                        + String.join(
                                                "; ",
                                                l.stream().map(String::valueOf).toList())
                                : "");
        if (!now.equals(said)) {
            final String line = "UP".equals(now) ? "health UP again" : "health " + now + figures(health);
            if ("UP".equals(now)) {
                LOG.info(line);
            } else {
                LOG.warn(line);
            }
            synchronized (out) {
                out.println("flowscope: " + line);
                out.flush();
            }
        }
        return now;
    }

    /** The simulator's figures when it is behind (reasons stay stable lines: a change is said once). */
    private static String figures(final Map<String, Object> health) {
        if (health.get("simulator") instanceof Map<?, ?> sim && Boolean.FALSE.equals(sim.get("keepingUp"))) {
            final Object speed = sim.get("achievedSpeed");
            return " (" + sim.get("behindMs") + " ms behind"
                    + (speed == null
                            ? ""
                            : ", running at speed "
                                    + String.format(java.util.Locale.ROOT, "%.3g", ((Number) speed).doubleValue()))
                    + ")";
        }
        return "";
    }

    /**
     * The JVM halts as soon as its shutdown hooks return: on SIGTERM (systemd stop, a pod deleted) this hook asks
     * the serving loop to stop ({@code stop}) and waits, at most {@link #SHUTDOWN_WAIT_SECONDS}, until what it
     * served is closed ({@code closed}), so that open transactions are aborted and the sinks write what they queue.
     */
    public static Thread shutdownHook(final CountDownLatch stop, final CountDownLatch closed) {
        return new Thread(
                () -> {
                    stop.countDown();
                    try {
                        closed.await(SHUTDOWN_WAIT_SECONDS, TimeUnit.SECONDS);
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "flowscope-shutdown");
    }

    @Command(
            name = "run",
            mixinStandardHelpOptions = true,
            description = {
                "Run the collector service (rings, or the simulator with --simulate).",
                "Discovers and drains the rings of the ring directory on a dedicated thread, journals the events "
                        + "(Chronicle Queue), runs the window engine and the anomaly detectors, serves the REST API, the live "
                        + "stream, Prometheus /metrics and the live page. With --simulate: a simulated cluster with a fault "
                        + "injected feeds it instead of rings."
            },
            footer = {
                "",
                "Examples:",
                "  # a node's rings, the live page on http://127.0.0.1:7070/",
                "  ./flowscope run --ring-dir /dev/shm/flowscope --port 7070",
                "  # a simulated slow link for 10 s, no journal",
                "  ./flowscope run --simulate --duration 10 --no-journal"
            })
    static final class Run implements Callable<Integer> {
        @CommandLine.Mixin
        ServiceOptions opts;

        @Option(
                names = "--simulate",
                arity = "0..1",
                paramLabel = "SCENARIO",
                fallbackValue = "default",
                description = "Feed the service from the cluster simulator: a built-in scenario name or a spec "
                        + "(see 'flowscope simulate --help'); without a value the default scenario (a slow link).")
        String simulate;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            final Map<String, String> o = opts.overrides();
            if (simulate != null) {
                o.put("simulate.scenario", simulate);
            }
            final CollectorConfig config = CollectorConfig.load(opts.config, System.getenv(), o);
            return serve(config, opts, spec.commandLine().getOut());
        }
    }

    @Command(
            name = "simulate",
            mixinStandardHelpOptions = true,
            description = {
                "Run the service fed by the cluster simulator, with faults injected.",
                "No GPUs needed: a scenario of nodes, GPUs, channels and message size, with faults injected at given "
                        + "times (built-in scenarios: clean-ring-2x4, slow-link-ring-2x4-50, hang-ring-2x4; default: "
                        + "slow-link-ring-2x4-50). Open the printed URL to watch the detection live."
            },
            footer = {
                "",
                "Examples:",
                "  ./flowscope simulate --scenario nodes=2,gpus=4,channels=4,size=8M,seed=1 \\",
                "          --fault slow-link:rank=3,peer=4,fraction=0.5,at=200ms",
                "  ./flowscope simulate --scenario hang-ring-2x4 --duration 3 \\",
                "          --set window.periodMs=2"
            })
    static final class Simulate implements Callable<Integer> {
        @CommandLine.Mixin
        ServiceOptions opts;

        @Option(
                names = "--scenario",
                paramLabel = "NAME|SPEC",
                defaultValue = "default",
                description = "A built-in scenario name or a spec such as 'nodes=2,gpus=4,channels=4,size=8M,seed=1' "
                        + "(default: the default scenario, slow-link-ring-2x4-50).")
        String scenario;

        @Option(
                names = "--fault",
                paramLabel = "SPEC",
                description =
                        "Add a fault (repeatable): KIND:key=value,..., e.g. slow-link:rank=3,peer=4,fraction=0.5,at=200ms "
                                + "(KIND,key=value,... also reads).")
        List<String> faults = new java.util.ArrayList<>();

        @Option(names = "--speed", paramLabel = "X", description = "Simulated time per wall time (default 1.0).")
        Double speed;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            final Map<String, String> o = opts.overrides();
            final StringBuilder s = new StringBuilder(scenario);
            for (final String f : faults) {
                s.append(",fault=").append(faultSpec(f));
            }
            o.put("simulate.scenario", s.toString());
            if (speed != null) {
                o.put("simulate.speed", speed.toString());
            }
            final CollectorConfig config = CollectorConfig.load(opts.config, System.getenv(), o);
            return serve(config, opts, spec.commandLine().getOut());
        }

        /**
         * A fault flag as the scenario spec reads it: {@code slow-link:rank=3,peer=4} (the documented form) or
         * {@code slow-link,rank=3,peer=4}; the kind's colon becomes the spec's comma.
         */
        static String faultSpec(final String flag) {
            final int colon = flag.indexOf(':');
            final int eq = flag.indexOf('=');
            return colon > 0 && (eq < 0 || colon < eq)
                    ? flag.substring(0, colon) + "," + flag.substring(colon + 1)
                    : flag;
        }
    }

    @Command(
            name = "replay",
            mixinStandardHelpOptions = true,
            description = {
                "Replay a journal or a JSON-lines trace through the engines, faster than real time; print the "
                        + "anomalies.",
                "The same window engine and anomaly stage as the live service, built with the engine settings the "
                        + "journal says the live run used (window.*; said on stderr) unless --config or --set give others, so "
                        + "the same anomalies as the live run; a progress bar on stderr; --trace exports the range as Chrome / "
                        + "Perfetto trace JSON. Trace format: docs/trace-format.md."
            },
            footer = {
                "",
                "Examples:",
                "  ./flowscope replay ~/.local/state/flowscope/journal-7070 --trace trace.json",
                "  # other engine settings than the run's:",
                "  ./flowscope replay run.jsonl.gz --set window.periodMs=2"
            })
    static final class Replay implements Callable<Integer> {
        @Parameters(
                index = "0",
                paramLabel = "JOURNAL",
                description =
                        "The journal directory, or a JSON-lines trace (.jsonl / .jsonl.gz, as inspect writes it).")
        Path journal;

        @Option(
                names = {"-c", "--config"},
                paramLabel = "FILE",
                description = "Configuration file; its window.* keys replace the journal's own engine settings.")
        Path config;

        @Option(
                names = "--set",
                paramLabel = "KEY=VALUE",
                description = "Override one configuration key (repeatable), e.g. --set window.periodMs=2 (the engine "
                        + "settings: window.periodMs, window.windowSize; by default the journal's own).")
        Map<String, String> set = new LinkedHashMap<>();

        @Option(names = "--from", paramLabel = "NS", description = "Only events at or after this event time (ns).")
        long fromNs = Long.MIN_VALUE;

        @Option(names = "--to", paramLabel = "NS", description = "Only events at or before this event time (ns).")
        long toNs = Long.MAX_VALUE;

        @Option(names = "--json", description = "Print anomaly events as JSON lines.")
        boolean json;

        @Option(
                names = "--trace",
                paramLabel = "FILE",
                description = "Export the range as Chrome / Perfetto trace JSON (ui.perfetto.dev).")
        Path trace;

        @Option(
                names = "--trace-base",
                paramLabel = "NS|FILE",
                description =
                        "The export's time base: Unix ns, or a PyTorch profiler trace whose baseTimeNanoseconds "
                                + "to share (both on one axis in Perfetto). Default: the first host's boot instant, to the second.")
        String traceBase;

        @Option(names = "--no-progress", description = "No progress bar on stderr.")
        boolean noProgress;

        @Option(
                names = "--tolerate-corruption",
                description = "Exit 0 even when damaged batches (or trace lines) were skipped; they are still said on "
                        + "stderr. Without it such a replay exits " + EXIT_DAMAGED + ".")
        boolean tolerateCorruption;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @CommandLine.ParentCommand
        Main parent;

        @Override
        public Integer call() throws Exception {
            checkRange(spec, fromNs, toNs);
            // the user's configuration first: a bad key or value is said before the input is opened
            CollectorConfig.load(config, System.getenv(), set);
            // before the progress count and the export file: a wrong path is said plainly, and nothing is written
            EventLog.open(journal).close();
            final Long given = traceBase != null ? TraceExport.baseOf(traceBase) : null;
            final PrintWriter out = spec.commandLine().getOut();
            final PrintStream err = parent.stderr;
            // the engines as the live run built them: its journaled settings, unless the user gave others
            final String journaled = io.flowscope.collector.replay.Replay.journaledSettings(journal);
            final EngineSettings.Choice choice = EngineSettings.choose(config, System.getenv(), set, journaled);
            final CollectorConfig cfg = choice.config();
            err.println("flowscope replay: " + choice.said());
            final long total = noProgress ? 0 : io.flowscope.collector.replay.Replay.countDocuments(journal);
            // the trace on the epoch: the hosts' clock offsets from the input's first batches (TraceClock)
            final TraceClock clock = trace != null ? TraceClock.of(journal) : null;
            final long base = given != null ? given : clock != null ? clock.defaultBaseNs() : 0;
            final TraceExport export =
                    trace != null ? new TraceExport(trace, clock, TraceExport.DEFAULT_MAX_EVENTS, base) : null;
            final io.flowscope.collector.replay.Replay.Progress progress =
                    noProgress ? null : io.flowscope.collector.replay.Replay.progressBar(err, total);
            final io.flowscope.collector.replay.Replay.Result r = io.flowscope.collector.replay.Replay.run(
                    journal, cfg, fromNs, toNs, export, export, progress == null ? d -> {} : progress, d -> {
                        final String line = "flowscope replay: damaged, skipped: " + d;
                        if (progress != null) {
                            progress.say(line);
                        } else {
                            err.println(line);
                        }
                    });
            if (progress != null) {
                progress.end();
            }
            for (final AnomalyEvent e : r.events()) {
                if (!"updated".equals(e.type())) {
                    out.println(json ? Json.write(Json.event(e)) : Json.line(e));
                }
            }
            if (export != null) {
                final Map<Long, io.flowscope.api.anomaly.Anomaly> last = new LinkedHashMap<>();
                r.events().forEach(e -> last.put(e.anomaly().id(), e.anomaly()));
                export.finish(List.copyOf(last.values()), fromNs, toNs);
                export.close();
                err.println("flowscope replay: trace " + trace + ": " + export.describe());
            }
            if (r.engineSettings().size() > 1) {
                // a journal written on by a service restarted with another configuration
                err.println("flowscope replay: the input holds runs with different engine settings ("
                        + String.join("; ", r.engineSettings())
                        + "); all were replayed with " + EngineSettings.of(cfg)
                        + ": the anomalies of the others may differ from their live run's");
            }
            err.println(r.describe() + (trace == null ? "" : "; trace written to " + trace));
            out.flush();
            return damaged(err, "replay", r.corruptDocuments(), r.corruptionUnit(), tolerateCorruption);
        }
    }

    @Command(
            name = "inspect",
            mixinStandardHelpOptions = true,
            description = {
                "Decode a ring file, a journal directory or a JSON-lines trace to JSON lines on stdout.",
                "A ring is drained (its consumer lock taken, its head moved): see './flowscope stat --help'. A journal "
                        + "or a trace is read, not changed: one line per entry with its batch and the batch's wall time, in "
                        + "the current trace format (docs/trace-format.md; an older trace is upgraded). Stops when the reader "
                        + "of its output goes away ('| head')."
            },
            footer = {
                "",
                "Examples:",
                "  ./flowscope inspect ~/.local/state/flowscope/journal-7070 | head",
                "  ./flowscope inspect /dev/shm/flowscope/flowscope-1234-0.ring --limit 10"
            })
    static final class Inspect implements Callable<Integer> {
        @Parameters(
                index = "0",
                paramLabel = "RING|JOURNAL|TRACE",
                description = "A ring file, a journal directory or a trace (.jsonl / .jsonl.gz).")
        Path input;

        @Option(names = "--limit", paramLabel = "N", description = "Stop after N lines (default: all).")
        long limit = Long.MAX_VALUE;

        @Option(
                names = "--from",
                paramLabel = "NS",
                description = "Journal or trace: only events at or after this event time (ns); other entries pass.")
        Long fromNs;

        @Option(
                names = "--to",
                paramLabel = "NS",
                description = "Journal or trace: only events at or before this event time (ns); other entries pass.")
        Long toNs;

        @Option(
                names = "--tolerate-corruption",
                description = "Exit 0 even when damaged batches (or trace lines) were skipped; they are still said on "
                        + "stderr. Without it such an inspect exits " + EXIT_DAMAGED + ".")
        boolean tolerateCorruption;

        @CommandLine.ParentCommand
        Main parent;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            if (Files.isDirectory(input) || TraceReader.isTrace(input)) {
                return inspectLog();
            }
            if (fromNs != null || toNs != null) {
                throw new IllegalArgumentException(
                        "--from / --to apply to a journal or a trace, not to a ring file: " + input);
            }
            if (!Files.isRegularFile(input)) {
                throw new IllegalArgumentException("no such ring file or journal directory (or trace file): " + input);
            }
            final String[] args = limit == Long.MAX_VALUE
                    ? new String[] {"inspect", input.toString()}
                    : new String[] {"inspect", input.toString(), "--limit", Long.toString(limit)};
            // a file that is not a readable ring is unreadable input here, as a journal that does not read is
            final int rc = RingTool.run(parent.stdout, parent.stderr, args);
            return rc == RingTool.EXIT_BAD_RING ? EXIT_INPUT : rc;
        }

        /** A journal or a trace, as JSON lines of the current version (a trace of an older one is upgraded). */
        private int inspectLog() {
            checkRange(spec, fromNs != null ? fromNs : Long.MIN_VALUE, toNs != null ? toNs : Long.MAX_VALUE);
            final PrintStream target = parent.stdout;
            final JournalJson json = new JournalJson(target, limit);
            try (EventLog reader = EventLog.open(input)
                    .timeRange(fromNs != null ? fromNs : Long.MIN_VALUE, toNs != null ? toNs : Long.MAX_VALUE)) {
                reader.onDamage(d -> parent.stderr.println("flowscope inspect: damaged, skipped: " + d));
                // Until the reader of the output goes away (`inspect ... | head`): a PrintStream swallows the broken
                // pipe, checkError says it (and flushes, once a batch).
                while (json.lines() < limit && reader.read(json, json, 1) > 0 && !target.checkError()) {
                    // decoded into json
                }
                target.flush();
                if (reader.corruptDocuments() > 0) {
                    parent.stderr.println("flowscope inspect: " + reader.documents() + " "
                            + ("lines".equals(reader.corruptionUnit()) ? "batches" : reader.corruptionUnit())
                            + " read; " + reader.corruptDocuments()
                            + " corrupt " + reader.corruptionUnit() + " skipped"
                            + io.flowscope.collector.replay.Replay.damageSummary(
                                    reader.corruptDocuments(),
                                    reader.corruptionUnit(),
                                    reader.damagedRanges(),
                                    reader.damage()));
                }
                return damaged(
                        parent.stderr,
                        "inspect",
                        reader.corruptDocuments(),
                        reader.corruptionUnit(),
                        tolerateCorruption);
            }
        }
    }

    /**
     * The exit status of a replay or inspect: {@link #EXIT_DAMAGED} when damaged input was skipped (said once
     * more, with the way out), unless tolerated; else 0.
     */
    static int damaged(
            final PrintStream err,
            final String command,
            final long corrupt,
            final String unit,
            final boolean tolerate) {
        if (corrupt == 0 || tolerate) {
            return 0;
        }
        err.println("flowscope " + command + ": " + corrupt + " damaged " + unit + " skipped (listed above): exit "
                + "status " + EXIT_DAMAGED + " (--tolerate-corruption: 0)");
        return EXIT_DAMAGED;
    }

    /** A time range the user gave: from must not be after to (a bad command line, exit {@link #EXIT_CONFIG}). */
    static void checkRange(final CommandLine.Model.CommandSpec spec, final long fromNs, final long toNs) {
        if (fromNs > toNs) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--from " + fromNs + " is after --to " + toNs + ": an empty range");
        }
    }
}
