package io.flowscope.ring.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import io.flowscope.ring.EventKind;
import io.flowscope.ring.RecordHandler;
import io.flowscope.ring.RecordView;
import io.flowscope.ring.RingDirectory;
import io.flowscope.ring.RingEventJson;
import io.flowscope.ring.RingFormatException;
import io.flowscope.ring.RingHeader;
import io.flowscope.ring.RingLayout;
import io.flowscope.ring.RingLockedException;
import io.flowscope.ring.RingReader;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.agrona.IoUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ring-tool}: look into flowscope rings. {@code stat} (read-only), {@code inspect} (drain one
 * ring as JSON lines), {@code tail} (follow a ring directory live).
 */
@Command(
        name = "ring-tool",
        mixinStandardHelpOptions = true,
        version = "flowscope ring-tool, ring layout " + RingLayout.LAYOUT_MAJOR + "." + RingLayout.LAYOUT_MINOR,
        description = "Look into flowscope NCCL profiler rings (layout 1.x).",
        subcommands = {
            RingTool.Stat.class,
            RingTool.Inspect.class,
            RingTool.Tail.class,
            Capture.class,
            CommandLine.HelpCommand.class
        })
public final class RingTool implements Callable<Integer> {
    /**
     * Exit code of a file that is not a readable ring (missing, garbage), a ring directory that does not exist, a ring
     * held by another consumer, and of a bad command line (picocli's usage code).
     */
    public static final int EXIT_BAD_RING = 2;
    /** Exit code of another I/O error. */
    public static final int EXIT_IO = 1;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return CommandLine.ExitCode.USAGE;
    }

    public static void main(final String[] args) {
        System.exit(run(System.out, System.err, args));
    }

    /** Runs the tool with the given streams and returns its exit code. */
    public static int run(final PrintStream out, final PrintStream err, final String... args) {
        final CommandLine commandLine = new CommandLine(new RingTool());
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        // every error is one line on stderr (no usage dump, no stack trace) and a non-zero exit
        commandLine.setParameterExceptionHandler((ex, arguments) -> {
            final CommandLine cmd = ex.getCommandLine();
            final StringBuilder line = new StringBuilder(cmd.getCommandSpec().qualifiedName())
                    .append(": ")
                    .append(ex.getMessage().strip().replaceAll("\\s*\\R\\s*", " "));
            if (ex instanceof CommandLine.UnmatchedArgumentException u
                    && !u.getSuggestions().isEmpty()) {
                line.append(" (did you mean ")
                        .append(String.join(" or ", u.getSuggestions()))
                        .append("?)");
            }
            cmd.getErr().println(line.append("; usage: --help"));
            cmd.getErr().flush();
            return EXIT_BAD_RING;
        });
        commandLine.setExecutionExceptionHandler((ex, cmd, parseResult) -> {
            final String who = cmd.getCommandSpec().qualifiedName();
            if (ex instanceof RingFormatException || ex instanceof RingLockedException) {
                cmd.getErr().println("ring-tool: " + ex.getMessage());
                return EXIT_BAD_RING;
            }
            if (ex instanceof java.nio.file.NoSuchFileException missing) {
                cmd.getErr().println(who + ": no such file: " + missing.getFile());
                return EXIT_BAD_RING;
            }
            if (ex instanceof NoSuchDirectory missing) {
                cmd.getErr().println(who + ": " + missing.getMessage());
                return EXIT_BAD_RING;
            }
            if (ex instanceof IOException) {
                cmd.getErr().println(who + ": " + (ex.getClass() == IOException.class ? ex.getMessage() : ex));
                return EXIT_IO;
            }
            throw ex;
        });
        final int code = commandLine.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** A ring directory that is not there: said, not waited for (a mistyped path would wait forever). */
    static final class NoSuchDirectory extends IOException {
        NoSuchDirectory(final Path dir) {
            super("no such ring directory: " + dir + " (the plugin creates it with its first ring: start the job "
                    + "first, or create it)");
        }
    }

    /** The ring directory a command follows, which must exist. */
    static Path existingDirectory(final Path dir) throws NoSuchDirectory {
        if (!java.nio.file.Files.isDirectory(dir)) {
            throw new NoSuchDirectory(dir);
        }
        return dir;
    }

    /**
     * A communicator's CUDA device as {@code stat} prints it: "1 (0000:19:00.0)", with the UUID where known
     * "1 (0000:19:00.0, GPU-1a2b...)", "unknown".
     */
    static String gpu(final RingHeader.CommInfo c) {
        if (!c.hasDevice()) {
            return "unknown";
        }
        final String ids = c.pciBusId().isEmpty()
                ? c.gpuUuid()
                : c.gpuUuid().isEmpty() ? c.pciBusId() : c.pciBusId() + ", " + c.gpuUuid();
        return ids.isEmpty() ? Integer.toString(c.cudaDevice()) : c.cudaDevice() + " (" + ids + ")";
    }

    private static JsonGenerator jsonLines(final PrintStream out) throws IOException {
        final JsonGenerator json = new JsonFactory().createGenerator(out);
        json.setPrettyPrinter(new MinimalPrettyPrinter("\n"));
        json.configure(JsonGenerator.Feature.AUTO_CLOSE_TARGET, false);
        return json;
    }

    @Command(
            name = "stat",
            mixinStandardHelpOptions = true,
            description = {
                "Print a ring's header: layout version, producer pid and host, NCCL ABI and version, event mask,",
                "capacity, lanes with their head/tail/lag, every counter, the consumer heartbeat, communicators and",
                "strings.",
                "Read-only: maps the file read-only, takes no lock, consumes nothing."
            })
    static final class Stat implements Callable<Integer> {
        @Parameters(
                index = "0",
                paramLabel = "RING",
                description = "The ring file (e.g. /dev/shm/flowscope/flowscope-<pid>-0.ring).")
        Path ring;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        public Integer call() throws IOException {
            if (java.nio.file.Files.isDirectory(ring)) {
                throw new RingFormatException.NotARing(
                        ring, "a directory, not a ring file (to follow its rings: tail)");
            }
            try (FileChannel channel = FileChannel.open(ring, StandardOpenOption.READ)) {
                final long size = channel.size();
                final MappedByteBuffer mapped =
                        channel.map(FileChannel.MapMode.READ_ONLY, 0, Math.min(size, Integer.MAX_VALUE));
                try {
                    print(spec.commandLine().getOut(), RingHeader.read(ring, new UnsafeBuffer(mapped), size));
                } finally {
                    IoUtil.unmap(mapped);
                }
            }
            return 0;
        }

        private static void print(final PrintWriter out, final RingHeader h) {
            final int lanes = h.laneCount();
            final long[] heads = new long[lanes];
            final long[] tails = new long[lanes];
            long lag = 0;
            for (int lane = 0; lane < lanes; lane++) {
                heads[lane] = h.head(lane);
                tails[lane] = h.tail(lane);
                lag += Math.max(0, tails[lane] - heads[lane]);
            }
            final long heartbeat = h.consumerHeartbeatNs();
            out.printf("ring              %s%n", h.path());
            out.printf("layout            %s%n", RingLayout.layoutVersionString(h.layoutVersion()));
            out.printf("plugin            %s%n", h.pluginVersion());
            out.printf(
                    "producer          pid %d on %s, %s%n",
                    h.producerPid(),
                    h.hostname(),
                    h.producerState() == RingLayout.PRODUCER_STATE_CLOSED
                            ? "closed at " + h.closedMonotonicNs() + " ns"
                            : h.producerState() == RingLayout.PRODUCER_STATE_OPEN
                                    ? "open"
                                    : "state " + h.producerState());
            out.printf("nccl              abi v%d, version %d%n", h.abiVersion(), h.ncclVersion());
            final StringBuilder kinds = new StringBuilder();
            for (final EventKind kind : EventKind.values()) {
                if ((h.eventMask() & kind.maskBit()) != 0) {
                    kinds.append(kinds.length() == 0 ? "" : ",").append(kind.label());
                }
            }
            out.printf("event mask        0x%x (%s)%n", h.eventMask(), kinds);
            out.printf(
                    "clock             %s, anchors realtime %d ns = monotonic %d ns%n",
                    h.clockSource() == RingLayout.CLOCK_SOURCE_TSC
                            ? "tsc"
                            : h.clockSource() == RingLayout.CLOCK_SOURCE_CLOCK_GETTIME
                                    ? "clock_gettime"
                                    : "source " + h.clockSource(),
                    h.anchorRealtimeNs(),
                    h.anchorMonotonicNs());
            out.printf(
                    "capacity          %d slots (%d bytes), header %d bytes%n",
                    h.capacity(), h.capacity() * 64, h.headerSize());
            out.printf("lane_count        %d%n", lanes);
            out.printf("lane_capacity     %d slots%n", h.laneCapacity());
            out.printf("lag               %d%n", lag);
            for (int lane = 0; lane < lanes; lane++) {
                out.printf(
                        "  lane %-2d head %d tail %d lag %d%n",
                        lane, heads[lane], tails[lane], Math.max(0, tails[lane] - heads[lane]));
            }
            out.printf(
                    "consumer          pid %d, heartbeat %s%n",
                    h.consumerPid(),
                    heartbeat == 0 ? "never" : String.format("%.3f s ago", (System.nanoTime() - heartbeat) / 1e9));
            out.printf("dropped_full      %d%n", h.droppedFull());
            out.printf("dropped_abandoned %d%n", h.droppedAbandoned());
            out.printf("dropped_contended %d%n", h.droppedContended());
            out.printf("invalid_calls     %d%n", h.invalidCalls());
            out.printf("strings_overflow  %d%n", h.stringsOverflow());
            out.printf("comms_overflow    %d%n", h.commsOverflow());
            out.printf("skipped_stale     %d%n", h.consumerSkippedStale());
            out.printf("corrupt           %d%n", h.consumerCorrupt());
            final int comms = Math.min(h.commCount(), h.commCapacity());
            out.printf("communicators     %d%n", comms);
            for (int i = 0; i < comms; i++) {
                final RingHeader.CommInfo c = h.comm(i);
                if (c == null) {
                    out.printf("  [%d] (not yet published)%n", i);
                    continue;
                }
                out.printf(
                        "  [%d] hash 0x%016x rank %d/%d nodes %d %s gpu %s name '%s'%n",
                        i,
                        c.commHash(),
                        c.rank(),
                        c.nranks(),
                        c.nnodes(),
                        c.state() == RingLayout.COMM_STATE_FINALIZED ? "finalized" : "active",
                        gpu(c),
                        c.name());
            }
            final int strings = Math.min(h.stringCount(), h.stringCapacity());
            out.printf("strings           %d%n", Math.max(0, strings - 1));
            for (int i = 1; i < strings; i++) {
                out.printf("  [%d] %s%n", i, h.string(i));
            }
            out.flush();
        }
    }

    @Command(
            name = "inspect",
            mixinStandardHelpOptions = true,
            description = {
                "Drain a ring and print one JSON object per record (JSON lines), with the field names of the",
                "typed event (RingEvent): producerPid, host, thread, timeNs, wallTimeNs, lane, position, id, parent,",
                "kind, op, commIndex, commHash, rank, then the payload fields named as in RING.md.",
                "Consumes: takes the ring's consumer lock and moves its head."
            })
    static final class Inspect implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "RING", description = "The ring file.")
        Path ring;

        @Option(names = "--limit", paramLabel = "N", description = "Stop after N records (default: all).")
        long limit = Long.MAX_VALUE;

        @Option(
                names = "--stale-ms",
                paramLabel = "MS",
                defaultValue = "100",
                description = "Skip a slot claimed but not published for this long (default: ${DEFAULT-VALUE}).")
        long staleMs;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        public Integer call() throws IOException {
            final PrintStream out =
                    new PrintStream(new WriterOutputStream(spec.commandLine().getOut()), false, StandardCharsets.UTF_8);
            final long staleNs = TimeUnit.MILLISECONDS.toNanos(staleMs);
            try (RingReader reader = RingReader.open(ring, org.agrona.concurrent.SystemNanoClock.INSTANCE, staleNs);
                    JsonGenerator json = jsonLines(out)) {
                final long[] printed = {0};
                final RecordHandler handler = record -> {
                    try {
                        RingEventJson.write(json, record.toEvent());
                    } catch (final IOException ex) {
                        throw new IllegalStateException(ex);
                    }
                    printed[0]++;
                };
                long waitUntil = 0;
                while (printed[0] < limit) {
                    final int n = reader.poll(handler, (int) Math.min(1024, limit - printed[0]));
                    if (n > 0) {
                        continue;
                    }
                    if (reader.isDrained()) {
                        break;
                    }
                    // Claimed slots are left: give them the stale timeouts to publish or be skipped.
                    final long now = System.nanoTime();
                    if (waitUntil == 0) {
                        // A claim is skipped two timeouts after first sight at most (first seen empty, then claimed).
                        waitUntil = now + 2 * staleNs + TimeUnit.MILLISECONDS.toNanos(10);
                    } else if (now - waitUntil > 0) {
                        break;
                    }
                    Thread.onSpinWait();
                }
                json.flush();
                out.flush();
                spec.commandLine()
                        .getErr()
                        .printf(
                                "inspect: %d records, %d corrupt, %d skipped stale, lag %d%n",
                                reader.delivered(), reader.corrupt(), reader.skippedStale(), reader.lag());
            }
            return 0;
        }
    }

    @Command(
            name = "tail",
            mixinStandardHelpOptions = true,
            description = {
                "Follow a ring directory: attach to rings as processes come and go, drain them, and print every",
                "second: rings attached, records/s by kind, drops (new dropped_full/abandoned/contended), corrupt",
                "and stale-skipped records. Consumes the rings, and deletes those of gone producers once drained",
                "(unless --keep-files)."
            })
    static final class Tail implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "DIR", description = "The ring directory (e.g. /dev/shm/flowscope).")
        Path directory;

        @Option(names = "--json", description = "Print every record as a JSON line instead of the summaries.")
        boolean json;

        @Option(
                names = "--duration",
                paramLabel = "S",
                description = "Stop after S seconds (default: run until killed).")
        double durationSeconds;

        @Option(
                names = "--scan-ms",
                paramLabel = "MS",
                defaultValue = "100",
                description = "How often to look for new rings and gone producers (default: ${DEFAULT-VALUE}).")
        long scanMs;

        @Option(
                names = "--stale-ms",
                paramLabel = "MS",
                defaultValue = "100",
                description = "Skip a slot claimed but not published for this long (default: ${DEFAULT-VALUE}).")
        long staleMs;

        @Option(names = "--keep-files", description = "Do not delete drained rings of gone producers.")
        boolean keepFiles;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        public Integer call() throws IOException {
            final PrintWriter text = spec.commandLine().getOut();
            final PrintStream out = new PrintStream(new WriterOutputStream(text), false, StandardCharsets.UTF_8);
            final long[] byKind = new long[EventKind.COUNT];
            final Map<RingReader, long[]> dropsSeen = new IdentityHashMap<>();
            final long[] pendingDrops = new long[3];
            final RingDirectory.Listener listener = new RingDirectory.Listener() {
                public void onAttach(final RingReader reader) {
                    dropsSeen.put(reader, new long[3]);
                    if (!json) {
                        text.printf(
                                "attach %s (pid %d on %s)%n",
                                reader.path(),
                                reader.header().producerPid(),
                                reader.header().hostname());
                    }
                }

                public void onDetach(
                        final RingReader reader, final RingDirectory.DetachReason reason, final boolean deleted) {
                    final long[] seen = dropsSeen.remove(reader);
                    if (seen != null) {
                        final RingHeader h = reader.header();
                        pendingDrops[0] += h.droppedFull() - seen[0];
                        pendingDrops[1] += h.droppedAbandoned() - seen[1];
                        pendingDrops[2] += h.droppedContended() - seen[2];
                    }
                    if (!json) {
                        text.printf("detach %s: %s%s%n", reader.path(), reason, deleted ? ", deleted" : "");
                    }
                }

                public void onIgnored(final Path path, final String reason) {
                    spec.commandLine().getErr().printf("ignored %s: %s%n", path, reason);
                }
            };
            final RingDirectory rings = RingDirectory.builder(existingDirectory(directory))
                    .scanInterval(scanMs, TimeUnit.MILLISECONDS)
                    .staleTimeout(staleMs, TimeUnit.MILLISECONDS)
                    .deleteDrained(!keepFiles)
                    .listener(listener)
                    .build();
            final IdleStrategy idle =
                    new BackoffIdleStrategy(1, 1, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
            final long start = System.nanoTime();
            final long end = durationSeconds > 0 ? start + (long) (durationSeconds * 1e9) : Long.MAX_VALUE;
            long nextReport = start + TimeUnit.SECONDS.toNanos(1);
            long lastReport = start;
            try (rings;
                    JsonGenerator generator = jsonLines(out)) {
                final RecordHandler handler =
                        json ? record -> writeJson(generator, record) : record -> byKind[record.kindCode()]++;
                while (true) {
                    idle.idle(rings.poll(handler));
                    final long now = System.nanoTime();
                    if (json && now - nextReport >= 0) {
                        generator.flush();
                        out.flush();
                        nextReport = now + TimeUnit.SECONDS.toNanos(1);
                    } else if (!json && now - nextReport >= 0) {
                        summary(text, rings, byKind, dropsSeen, pendingDrops, (now - lastReport) / 1e9);
                        lastReport = now;
                        nextReport = now + TimeUnit.SECONDS.toNanos(1);
                    }
                    if (now - end >= 0 || Thread.currentThread().isInterrupted()) {
                        break;
                    }
                }
                generator.flush();
                out.flush();
                if (!json) {
                    summary(text, rings, byKind, dropsSeen, pendingDrops, (System.nanoTime() - lastReport) / 1e9);
                }
            }
            return 0;
        }

        private static void writeJson(final JsonGenerator generator, final RecordView record) {
            try {
                RingEventJson.write(generator, record.toEvent());
            } catch (final IOException ex) {
                throw new IllegalStateException(ex);
            }
        }

        private static void summary(
                final PrintWriter out,
                final RingDirectory rings,
                final long[] byKind,
                final Map<RingReader, long[]> dropsSeen,
                final long[] pendingDrops,
                final double seconds) {
            long total = 0;
            final StringBuilder kinds = new StringBuilder();
            for (int k = 0; k < byKind.length; k++) {
                total += byKind[k];
                if (byKind[k] > 0) {
                    kinds.append(' ')
                            .append(EventKind.of(k).label())
                            .append('=')
                            .append(Math.round(byKind[k] / seconds));
                }
                byKind[k] = 0;
            }
            long full = pendingDrops[0];
            long abandoned = pendingDrops[1];
            long contended = pendingDrops[2];
            java.util.Arrays.fill(pendingDrops, 0);
            long corrupt = 0;
            long stale = 0;
            for (final RingReader reader : rings.readers()) {
                final RingHeader h = reader.header();
                final long[] seen = dropsSeen.computeIfAbsent(reader, r -> new long[3]);
                final long f = h.droppedFull();
                final long a = h.droppedAbandoned();
                final long c = h.droppedContended();
                full += f - seen[0];
                abandoned += a - seen[1];
                contended += c - seen[2];
                seen[0] = f;
                seen[1] = a;
                seen[2] = c;
                corrupt += reader.corrupt();
                stale += reader.skippedStale();
            }
            out.printf(
                    "rings=%d records/s=%d%s | dropped full=%d abandoned=%d contended=%d | corrupt=%d stale=%d%n",
                    rings.attachedCount(),
                    Math.round(total / seconds),
                    kinds,
                    full,
                    abandoned,
                    contended,
                    corrupt,
                    stale);
            out.flush();
        }
    }

    /** Bytes to a PrintWriter (picocli's streams are writers), for Jackson. */
    private static final class WriterOutputStream extends java.io.OutputStream {
        private final PrintWriter writer;
        private final java.io.ByteArrayOutputStream pending = new java.io.ByteArrayOutputStream();

        WriterOutputStream(final PrintWriter writer) {
            this.writer = writer;
        }

        public void write(final int b) {
            pending.write(b);
        }

        public void write(final byte[] b, final int off, final int len) {
            pending.write(b, off, len);
            if (pending.size() >= 1 << 16) {
                flush();
            }
        }

        public void flush() {
            writer.write(pending.toString(StandardCharsets.UTF_8));
            pending.reset();
            writer.flush();
        }
    }

    static {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            System.err.println("ring-tool: warning: big-endian platform, rings are little-endian");
        }
    }
}
