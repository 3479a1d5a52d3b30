package io.flowscope.collector.tools;

import io.flowscope.api.input.TelemetryListener;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.window.GpuClockEstimate;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The window engine's per-GPU clock estimates over a recorded run (a journal directory or a trace), as CSV, for
 * checking them against an independent measurement ({@code deploy/gpu/gpu-clock-check.sh}, issue #17).
 * <p>
 * The log is replayed into a {@link WindowEngine} with the default configuration. Every {@code --every-ms} of a
 * host's event time the estimate of each GPU of that host ((commHash, rank) of its collectives) is printed as the
 * live service would have had it then, at that instant ({@code live} rows); at the end, each GPU's estimate at its
 * last sample ({@code final} rows). The rings' communicator entries name each GPU's CUDA device and PCI bus id
 * ({@code gpu} rows), by which another measurement finds the same GPU.
 * <pre>
 *   java -cp 'collector/target/lib/*:collector/target/classes' io.flowscope.collector.tools.GpuClockReport LOG [--every-ms N]
 * </pre>
 * Rows: {@code gpu,hostId,commHash,rank,cudaDevice,pciBusId} and
 * {@code live|final,hostId,commHash,rank,atHostNs,samples,buckets,steps,offsetNs,driftPpm,driftKnown,errorBoundNs,settled}
 * (hostId and commHash in hex; offset = host CLOCK_MONOTONIC − GPU %globaltimer, ns).
 */
public final class GpuClockReport implements TelemetryListener {
    /** One GPU as the engine keys it. */
    private record Gpu(long hostId, long commHash, int rank) {}

    private final WindowEngine engine = new WindowEngine(new WindowConfig(), s -> {});
    private final GpuClockEstimate estimate = new GpuClockEstimate();
    private final PrintStream out;
    private final long everyNs;
    /** Per host: the GPUs seen in its collectives, and its next report time. */
    private final Map<Long, List<Gpu>> gpusByHost = new LinkedHashMap<>();

    private final Map<Long, Long> nextReportByHost = new LinkedHashMap<>();
    private final Map<Gpu, String> devices = new LinkedHashMap<>();
    private long host;

    GpuClockReport(final PrintStream out, final long everyNs) {
        this.out = Objects.requireNonNull(out);
        this.everyNs = everyNs;
    }

    public static void main(final String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    public static int run(final String[] args, final PrintStream out, final PrintStream err) {
        Path log = null;
        long everyMs = 1000;
        for (int i = 0; i < args.length; i++) {
            if ("--every-ms".equals(args[i]) && i + 1 < args.length) {
                try {
                    everyMs = Long.parseLong(args[++i]);
                } catch (final NumberFormatException e) {
                    everyMs = -1;
                }
                if (everyMs <= 0) {
                    err.println("gpu-clock-report: --every-ms needs a positive integer, was " + args[i]);
                    return 2;
                }
            } else if (log == null && !args[i].startsWith("--")) {
                log = Path.of(args[i]);
            } else {
                err.println("gpu-clock-report: unexpected argument " + args[i] + "; usage: GpuClockReport "
                        + "JOURNAL_DIR|TRACE.jsonl[.gz] [--every-ms N]");
                return 2;
            }
        }
        if (log == null) {
            err.println("gpu-clock-report: usage: GpuClockReport JOURNAL_DIR|TRACE.jsonl[.gz] [--every-ms N]");
            return 2;
        }
        final GpuClockReport report = new GpuClockReport(out, everyMs * 1_000_000L);
        try (EventLog in = EventLog.open(log)) {
            in.onDamage(line -> err.println("gpu-clock-report: skipped damaged input: " + line));
            final JournalReader.Meta meta = new JournalReader.Meta() {};
            while (in.read(report, meta, 256) > 0) {
                // all of it
            }
        } catch (final IllegalArgumentException e) {
            err.println("gpu-clock-report: " + e.getMessage());
            return 3;
        }
        report.finish();
        return 0;
    }

    /** The {@code gpu} rows and each GPU's estimate at its last sample. */
    void finish() {
        for (final Map.Entry<Gpu, String> d : devices.entrySet()) {
            final Gpu g = d.getKey();
            out.println("gpu," + Long.toHexString(g.hostId) + "," + Long.toHexString(g.commHash) + "," + g.rank + ","
                    + d.getValue());
        }
        for (final List<Gpu> gpus : gpusByHost.values()) {
            for (final Gpu g : gpus) {
                if (engine.gpuClock(g.hostId, g.commHash, g.rank, estimate)) {
                    row("final", g);
                }
            }
        }
        out.flush();
    }

    private void row(final String kind, final Gpu g) {
        out.println(kind + "," + Long.toHexString(g.hostId) + "," + Long.toHexString(g.commHash) + "," + g.rank + ","
                + estimate.atHostNs()
                + "," + estimate.samples() + "," + estimate.buckets() + "," + estimate.steps() + ","
                + estimate.offsetNs()
                + "," + estimate.driftPpm() + "," + estimate.driftKnown() + "," + estimate.errorBoundNs()
                + "," + estimate.settled());
    }

    /** Before an event of the current host at {@code timeNs}: the live rows of the report instants it passed. */
    private void reportUpTo(final long timeNs) {
        final Long next = nextReportByHost.get(host);
        if (next == null) {
            nextReportByHost.put(host, Math.floorDiv(timeNs, everyNs) * everyNs + everyNs);
            return;
        }
        if (timeNs - next < 0) {
            return;
        }
        // The latest instant passed (a gap in the input gives one row, not one per instant).
        final long at = next + (timeNs - next) / everyNs * everyNs;
        for (final Gpu g : gpusByHost.getOrDefault(host, List.of())) {
            if (engine.gpuClock(g.hostId, g.commHash, g.rank, at, estimate)) {
                row("live", g);
            }
        }
        nextReportByHost.put(host, at + everyNs);
    }

    private void gpu(final long commHash, final int rank) {
        final List<Gpu> gpus = gpusByHost.computeIfAbsent(host, h -> new ArrayList<>());
        for (final Gpu g : gpus) {
            if (g.commHash == commHash && g.rank == rank) {
                return;
            }
        }
        gpus.add(new Gpu(host, commHash, rank));
    }

    @Override
    public void onHost(final long hostId) {
        host = hostId;
        engine.onHost(hostId);
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
        devices.put(new Gpu(hostId, commHash, rank), cudaDevice + "," + pciBusId);
        engine.onRingComm(hostId, hostname, pid, commHash, rank, nranks, cudaDevice, pciBusId);
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
        reportUpTo(timeNs);
        engine.onProxyOpStart(opKey, commHash, rank, peer, channel, isSend, timeNs);
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        reportUpTo(timeNs);
        engine.advanceTo(hostId, timeNs);
    }

    @Override
    public void onProxyOpStop(final long opKey, final long timeNs) {
        reportUpTo(timeNs);
        engine.onProxyOpStop(opKey, timeNs);
    }

    @Override
    public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
        reportUpTo(timeNs);
        engine.onProxyStepStart(stepKey, opKey, step, timeNs);
    }

    @Override
    public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
        reportUpTo(timeNs);
        engine.onProxyStepState(stepKey, state, transSize, timeNs);
    }

    @Override
    public void onProxyStepStop(final long stepKey, final long timeNs) {
        reportUpTo(timeNs);
        engine.onProxyStepStop(stepKey, timeNs);
    }

    @Override
    public void onQpStart(
            final long wrKey,
            final int device,
            final long qpNum,
            final int opcode,
            final long length,
            final long timeNs) {
        reportUpTo(timeNs);
        engine.onQpStart(wrKey, device, qpNum, opcode, length, timeNs);
    }

    @Override
    public void onQpStop(final long wrKey, final long timeNs) {
        reportUpTo(timeNs);
        engine.onQpStop(wrKey, timeNs);
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
        reportUpTo(timeNs);
        gpu(commHash, rank);
        engine.onCollStart(
                collKey, commHash, rank, nranks, func, algo, proto, count, datatypeSize, nChannels, seqNumber, timeNs);
    }

    @Override
    public void onCollStop(final long collKey, final long timeNs) {
        reportUpTo(timeNs);
        engine.onCollStop(collKey, timeNs);
    }

    @Override
    public void onKernelChStart(
            final long chKey, final long collKey, final int channel, final long pTimerNs, final long timeNs) {
        reportUpTo(timeNs);
        engine.onKernelChStart(chKey, collKey, channel, pTimerNs, timeNs);
    }

    @Override
    public void onKernelChStop(final long chKey, final long pTimerNs, final long timeNs) {
        reportUpTo(timeNs);
        engine.onKernelChStop(chKey, pTimerNs, timeNs);
    }
}
