package io.flowscope.ring.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.flowscope.ring.EventKind;
import io.flowscope.ring.NcclState;
import io.flowscope.ring.RecordOp;
import io.flowscope.ring.RecordView;
import io.flowscope.ring.RingDirectory;
import io.flowscope.ring.RingHeader;
import io.flowscope.ring.RingReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code capture}: drains every ring of a directory for the life of a job and writes what arrived:
 * records per kind, op and state, net-plugin events by type, the producers' drop counters, and a
 * readable timeline of a few sampled proxy operations (each step's state transitions with their
 * own timestamps) and kernel channels (GPU start/stop). Stops on SIGTERM/SIGINT, after
 * {@code --duration}, or with {@code --exit-when-idle} once every ring it saw is detached.
 */
@Command(
        name = "capture",
        mixinStandardHelpOptions = true,
        description = {
            "Drain a ring directory for the life of a job and summarise what arrived: records by kind/op/state,",
            "drops, and a sample timeline of proxy steps and kernel channels. Consumes the rings."
        })
public final class Capture implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DIR", description = "The ring directory (e.g. /dev/shm/flowscope).")
    Path directory;

    @Option(names = "--summary", paramLabel = "FILE", description = "Write the summary as JSON here (default: stdout).")
    Path summaryFile;

    @Option(
            names = "--timeline",
            paramLabel = "FILE",
            description = "Write the sample timeline here (default: stdout).")
    Path timelineFile;

    @Option(
            names = "--sample-skip",
            paramLabel = "N",
            defaultValue = "200",
            description =
                    "Proxy operations and kernel channels to let pass (warm-up) before sampling (default: ${DEFAULT-VALUE}).")
    int sampleSkip;

    @Option(
            names = "--sample",
            paramLabel = "N",
            defaultValue = "2",
            description =
                    "Proxy operations sampled per direction, and kernel channels sampled (default: ${DEFAULT-VALUE}).")
    int sampleCount;

    @Option(
            names = "--steps",
            paramLabel = "N",
            defaultValue = "6",
            description = "Steps shown per sampled proxy operation (default: ${DEFAULT-VALUE}).")
    int stepsPerOp;

    @Option(names = "--duration", paramLabel = "S", description = "Stop after S seconds (default: until signalled).")
    double durationSeconds;

    @Option(names = "--exit-when-idle", description = "Stop once rings were seen and none has been attached for 2 s.")
    boolean exitWhenIdle;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private volatile boolean stopRequested;

    public Integer call() throws Exception {
        final Stats stats = new Stats(sampleSkip, sampleCount, stepsPerOp);
        final RingDirectory.Listener listener = new RingDirectory.Listener() {
            public void onAttach(final RingReader reader) {
                stats.ring(reader.header());
                spec.commandLine()
                        .getErr()
                        .printf(
                                "capture: attach %s (pid %d)%n",
                                reader.path(), reader.header().producerPid());
            }

            public void onDetach(
                    final RingReader reader, final RingDirectory.DetachReason reason, final boolean delete) {
                stats.ring(reader.header()).finish(reader, reason.name());
            }

            public void onIgnored(final Path path, final String reason) {
                spec.commandLine().getErr().printf("capture: ignored %s: %s%n", path, reason);
            }
        };
        final CountDownLatch finished = new CountDownLatch(1);
        final Thread hook = new Thread(
                () -> {
                    stopRequested = true;
                    try {
                        finished.await(30, TimeUnit.SECONDS);
                    } catch (final InterruptedException ignored) {
                        Thread.currentThread().interrupt();
                    }
                },
                "capture-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        final long start = System.nanoTime();
        final long end = durationSeconds > 0 ? start + (long) (durationSeconds * 1e9) : Long.MAX_VALUE;
        long idleSince = start;
        try (RingDirectory rings = RingDirectory.builder(RingTool.existingDirectory(directory))
                .deleteDrained(false)
                .listener(listener)
                .build()) {
            final IdleStrategy idle = new BackoffIdleStrategy(1, 1, 1_000, TimeUnit.MILLISECONDS.toNanos(1));
            while (!stopRequested && System.nanoTime() - end < 0) {
                idle.idle(rings.poll(stats));
                if (rings.attachedCount() > 0) {
                    idleSince = System.nanoTime();
                } else if (exitWhenIdle
                        && rings.attachedTotal() > 0
                        && System.nanoTime() - idleSince > 2_000_000_000L) {
                    break;
                }
            }
            // Whatever the producers published before we were told to stop is still read.
            while (rings.poll(stats) > 0) {
                // drain
            }
            for (final RingReader reader : rings.readers()) {
                stats.ring(reader.header()).finish(reader, "attached at exit");
            }
            stats.seconds = (System.nanoTime() - start) / 1e9;
            write(stats);
        } finally {
            finished.countDown();
            removeHook(hook);
        }
        return 0;
    }

    private static void removeHook(final Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (final IllegalStateException shuttingDown) {
            // The JVM is exiting (SIGTERM): the hook is running and waits for us.
        }
    }

    private void write(final Stats stats) throws IOException {
        final PrintWriter out = spec.commandLine().getOut();
        final JsonFactory factory = new JsonFactory();
        if (summaryFile != null) {
            try (JsonGenerator json =
                    factory.createGenerator(Files.newBufferedWriter(summaryFile, StandardCharsets.UTF_8))) {
                stats.writeSummary(json.useDefaultPrettyPrinter());
            }
        } else {
            final JsonGenerator json = factory.createGenerator(out).useDefaultPrettyPrinter();
            stats.writeSummary(json);
            json.flush();
            out.println();
        }
        final String timeline = stats.timeline();
        if (timelineFile != null) {
            Files.writeString(timelineFile, timeline, StandardCharsets.UTF_8);
        } else {
            out.print(timeline);
        }
        out.flush();
    }

    /** Counts and samples; runs on the polling thread only. */
    static final class Stats implements io.flowscope.ring.RecordHandler {
        private final Map<RingHeader, RingStats> rings = new IdentityHashMap<>();
        private final int skip;
        private final int samples;
        private final int stepsPerOp;
        double seconds;

        Stats(final int skip, final int samples, final int stepsPerOp) {
            this.skip = skip;
            this.samples = samples;
            this.stepsPerOp = stepsPerOp;
        }

        RingStats ring(final RingHeader header) {
            return rings.computeIfAbsent(header, RingStats::new);
        }

        public void onRecord(final RecordView r) {
            ring(r.header()).onRecord(r, skip, samples, stepsPerOp);
        }

        void writeSummary(final JsonGenerator json) throws IOException {
            json.writeStartObject();
            json.writeNumberField("seconds", Math.round(seconds * 1000) / 1000.0);
            long total = 0;
            final long[] byKind = new long[EventKind.COUNT];
            for (final RingStats ring : rings.values()) {
                total += ring.records;
                for (int k = 0; k < byKind.length; k++) {
                    for (int op = 0; op < 4; op++) {
                        byKind[k] += ring.counts[k][op];
                    }
                }
            }
            json.writeNumberField("records", total);
            json.writeObjectFieldStart("recordsByKind");
            for (int k = 0; k < byKind.length; k++) {
                if (byKind[k] > 0) {
                    json.writeNumberField(EventKind.of(k).label(), byKind[k]);
                }
            }
            json.writeEndObject();
            json.writeArrayFieldStart("rings");
            for (final RingStats ring : rings.values()) {
                ring.write(json);
            }
            json.writeEndArray();
            json.writeEndObject();
            json.flush();
        }

        String timeline() {
            final StringBuilder text = new StringBuilder();
            for (final RingStats ring : rings.values()) {
                ring.timeline(text);
            }
            return text.toString();
        }
    }

    /** One ring's counts, final counters and samples. */
    static final class RingStats {
        private final RingHeader header;
        final long[][] counts = new long[EventKind.COUNT][4];
        private final Map<String, Long> states = new TreeMap<>();
        private final Map<String, Long> netTypes = new TreeMap<>();
        long records;
        private String detach = "";
        // Header facts copied while the ring is mapped: a detached reader's mapping is gone.
        private String ringName = "";
        private int pid;
        private String host = "";
        private int abiVersion;
        private int ncclVersion;
        private int eventMask;
        private int clockSource;
        private final List<RingHeader.CommInfo> comms = new ArrayList<>();
        private long droppedFull;
        private long droppedAbandoned;
        private long droppedContended;
        private long invalidCalls;
        private long corrupt;
        private long skippedStale;
        private long firstTimeNs = Long.MIN_VALUE;
        // Recent collectives / p2p by id, to name the parent of a sampled proxy operation.
        private final Map<Long, String> recentParents = new LinkedHashMap<>(1024, 0.75f, false) {
            protected boolean removeEldestEntry(final Map.Entry<Long, String> eldest) {
                return size() > 4096;
            }
        };
        private final Map<Long, SampledOp> sampledOps = new LinkedHashMap<>();
        private final Map<Long, SampledStep> sampledSteps = new LinkedHashMap<>();
        private final Map<Long, SampledKernel> sampledKernels = new LinkedHashMap<>();
        private long proxyOpsSeen;
        private long kernelsSeen;
        private final int[] sampledByDirection = new int[2];

        RingStats(final RingHeader header) {
            this.header = header;
        }

        void onRecord(final RecordView r, final int skip, final int samples, final int stepsPerOp) {
            records++;
            if (firstTimeNs == Long.MIN_VALUE) {
                firstTimeNs = r.timeNs();
            }
            final int kind = r.kindCode();
            final int op = r.opCode();
            counts[kind][op & 3]++;
            final EventKind k = r.kind();
            if (r.isState()) {
                states.merge(k.label() + "/" + NcclState.name(r.state()), 1L, Long::sum);
            }
            if (k == EventKind.NET_PLUGIN && r.isStart()) {
                netTypes.merge(r.netType() == 1 ? "ibQp" : r.netType() == 2 ? "socket" : "unknown", 1L, Long::sum);
            }
            switch (k) {
                case COLL:
                    if (r.isStart()) {
                        recentParents.put(
                                r.id(),
                                String.format(
                                        "Coll %s count=%d %s %s %s nChannels=%d seq=%d",
                                        r.func(),
                                        r.count(),
                                        r.datatype(),
                                        r.algo(),
                                        r.proto(),
                                        r.nChannels(),
                                        r.seqNumber()));
                    }
                    break;
                case P2P:
                    if (r.isStart()) {
                        recentParents.put(
                                r.id(),
                                String.format(
                                        "P2p %s count=%d %s peer=%d nChannels=%d",
                                        r.func(), r.count(), r.datatype(), r.peer(), r.nChannels()));
                    }
                    break;
                case PROXY_OP:
                    if (r.isStart()) {
                        final int dir = r.isSend() ? 0 : 1;
                        if (++proxyOpsSeen > skip && sampledByDirection[dir] < samples && r.nSteps() >= 2) {
                            sampledByDirection[dir]++;
                            sampledOps.put(
                                    r.id(),
                                    new SampledOp(
                                            r.timeNs(),
                                            String.format(
                                                    "ProxyOp %s channel=%d peer=%d nSteps=%d chunkSize=%d pid=%d",
                                                    r.isSend() ? "send" : "recv",
                                                    r.channel(),
                                                    r.peer(),
                                                    r.nSteps(),
                                                    r.chunkSize(),
                                                    r.pid()),
                                            recentParents.getOrDefault(r.parent(), "(parent not seen)")));
                        }
                    } else if (r.isStop() && sampledOps.containsKey(r.id())) {
                        sampledOps.get(r.id()).stopNs = r.timeNs();
                    }
                    break;
                case PROXY_STEP:
                    if (r.isStart()) {
                        final SampledOp parent = sampledOps.get(r.parent());
                        if (parent != null && parent.steps.size() < stepsPerOp) {
                            final SampledStep step = new SampledStep(r.step(), r.timeNs());
                            parent.steps.add(step);
                            sampledSteps.put(r.id(), step);
                        }
                    } else {
                        final SampledStep step = sampledSteps.get(r.id());
                        if (step != null) {
                            step.events.add(
                                    r.isStop()
                                            ? new long[] {-1, r.timeNs(), 0}
                                            : new long[] {r.state(), r.timeNs(), r.stateArg()});
                        }
                    }
                    break;
                case KERNEL_CH:
                    if (r.isStart()) {
                        if (++kernelsSeen > skip && sampledKernels.size() < samples * 2) {
                            sampledKernels.put(
                                    r.id(),
                                    new SampledKernel(
                                            r.channel(),
                                            r.timeNs(),
                                            r.pTimer(),
                                            recentParents.getOrDefault(r.parent(), "(parent not seen)")));
                        }
                    } else {
                        final SampledKernel kernel = sampledKernels.get(r.id());
                        if (kernel != null) {
                            if (r.isState()) {
                                kernel.gpuStop = r.stateArg();
                            } else {
                                kernel.hostStop = r.timeNs();
                            }
                        }
                    }
                    break;
                default:
                    break;
            }
        }

        void finish(final RingReader reader, final String reason) {
            detach = reason;
            ringName = header.path().getFileName().toString();
            pid = header.producerPid();
            host = header.hostname();
            abiVersion = header.abiVersion();
            ncclVersion = header.ncclVersion();
            eventMask = header.eventMask();
            clockSource = header.clockSource();
            comms.clear();
            for (int i = 0; i < header.commCount() && i < header.commCapacity(); i++) {
                final RingHeader.CommInfo comm = header.comm(i);
                if (comm != null) {
                    comms.add(comm);
                }
            }
            droppedFull = header.droppedFull();
            droppedAbandoned = header.droppedAbandoned();
            droppedContended = header.droppedContended();
            invalidCalls = header.invalidCalls();
            corrupt = reader.corrupt();
            skippedStale = reader.skippedStale();
        }

        void write(final JsonGenerator json) throws IOException {
            json.writeStartObject();
            json.writeStringField("ring", ringName);
            json.writeNumberField("pid", pid);
            json.writeStringField("host", host);
            json.writeNumberField("abiVersion", abiVersion);
            json.writeNumberField("ncclVersion", ncclVersion);
            json.writeNumberField("eventMask", eventMask);
            json.writeNumberField("clockSource", clockSource);
            json.writeArrayFieldStart("communicators");
            for (final RingHeader.CommInfo comm : comms) {
                json.writeString(String.format(
                        "rank %d/%d nnodes=%d hash=0x%016x name=%s state=%d gpu=%s",
                        comm.rank(),
                        comm.nranks(),
                        comm.nnodes(),
                        comm.commHash(),
                        comm.name(),
                        comm.state(),
                        RingTool.gpu(comm)));
            }
            json.writeEndArray();
            json.writeNumberField("records", records);
            json.writeObjectFieldStart("recordsByKindOp");
            for (int k = 0; k < EventKind.COUNT; k++) {
                for (int op = 1; op <= 3; op++) {
                    if (counts[k][op] > 0) {
                        json.writeNumberField(EventKind.of(k).label() + "/" + RecordOp.of(op), counts[k][op]);
                    }
                }
            }
            json.writeEndObject();
            writeCounts(json, "states", states);
            writeCounts(json, "netPluginEvents", netTypes);
            json.writeNumberField("droppedFull", droppedFull);
            json.writeNumberField("droppedAbandoned", droppedAbandoned);
            json.writeNumberField("droppedContended", droppedContended);
            json.writeNumberField("invalidCalls", invalidCalls);
            json.writeNumberField("corrupt", corrupt);
            json.writeNumberField("skippedStale", skippedStale);
            json.writeStringField("detached", detach);
            json.writeEndObject();
        }

        private static void writeCounts(final JsonGenerator json, final String name, final Map<String, Long> counts)
                throws IOException {
            json.writeObjectFieldStart(name);
            for (final Map.Entry<String, Long> e : counts.entrySet()) {
                json.writeNumberField(e.getKey(), e.getValue());
            }
            json.writeEndObject();
        }

        void timeline(final StringBuilder text) {
            if (sampledOps.isEmpty() && sampledKernels.isEmpty()) {
                return;
            }
            final List<String> ranks = new ArrayList<>();
            for (final RingHeader.CommInfo comm : comms) {
                ranks.add("rank " + comm.rank() + "/" + comm.nranks());
            }
            text.append(String.format("== %s pid %d %s%n", ringName, pid, ranks));
            for (final SampledOp op : sampledOps.values()) {
                text.append(String.format(
                        "%s%n  %s, %s%n",
                        op.parent,
                        op.description,
                        op.stopNs != 0
                                ? String.format("%.1f us start to stop", (op.stopNs - op.startNs) / 1e3)
                                : "not stopped"));
                for (final SampledStep step : op.steps) {
                    text.append(String.format(
                            "    step %-4d start +%.3f us", step.step, (step.startNs - op.startNs) / 1e3));
                    for (final long[] e : step.events) {
                        final double at = (e[1] - step.startNs) / 1e3;
                        if (e[0] < 0) {
                            text.append(String.format(" | stop +%.3f", at));
                        } else {
                            text.append(String.format(
                                    " | %s +%.3f%s",
                                    NcclState.name((int) e[0]), at, e[2] != 0 ? " (" + e[2] + " B)" : ""));
                        }
                    }
                    text.append(String.format("%n"));
                }
            }
            for (final SampledKernel kernel : sampledKernels.values()) {
                text.append(String.format(
                        "KernelCh channel=%d GPU %d -> %d = %.3f us (host callbacks %.3f us apart) of %s%n",
                        kernel.channel,
                        kernel.gpuStart,
                        kernel.gpuStop,
                        (kernel.gpuStop - kernel.gpuStart) / 1e3,
                        (kernel.hostStop - kernel.hostStart) / 1e3,
                        kernel.parent));
            }
        }
    }

    static final class SampledOp {
        final long startNs;
        final String description;
        final String parent;
        final List<SampledStep> steps = new ArrayList<>();
        long stopNs;

        SampledOp(final long startNs, final String description, final String parent) {
            this.startNs = startNs;
            this.description = description;
            this.parent = parent;
        }
    }

    static final class SampledStep {
        final int step;
        final long startNs;
        final List<long[]> events = new ArrayList<>();

        SampledStep(final int step, final long startNs) {
            this.step = step;
            this.startNs = startNs;
        }
    }

    static final class SampledKernel {
        final int channel;
        final long hostStart;
        final long gpuStart;
        final String parent;
        long gpuStop;
        long hostStop;

        SampledKernel(final int channel, final long hostStart, final long gpuStart, final String parent) {
            this.channel = channel;
            this.hostStart = hostStart;
            this.gpuStart = gpuStart;
            this.parent = parent;
        }
    }
}
