package io.flowscope.bench;

import io.flowscope.api.input.TelemetryListener;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.window.WindowConfig;
import io.flowscope.window.WindowEngine;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Window engine rate on one thread, in events/s ({@code thrpt}, ops = events). A realistic host stream
 * ({@link ProxyStream}: 128 step flows, ProxyOps of 4–16 send/recv steps, one NetPlugin IB QP work request per
 * step on 128 QP flows, ~50 ms of event time) is generated once
 * in {@code @Setup}; each invocation replays the next {@link #EVENTS} events of it through
 * {@link TelemetryListener}, wrapping around with fresh keys and later times, so the engine sees one endless
 * stream (periods of 1 ms end, summaries are emitted, tombstones and idle state are swept, all inside the
 * measurement).
 * <ul>
 * <li>{@code engine}: into a {@link WindowEngine} (window 8, period 1 ms, default step timeout (10 s) for live
 * steps, tombstones of stopped steps and work requests kept {@code tombstoneNs} (2 ms; the default 5 ms also
 * fits the step pool of {@code maxSteps}); a summary sink that sums completions and bytes).</li>
 * <li>{@code baseline}: the same loop into a listener that only sums key + time (the replay's own cost).</li>
 * </ul>
 * After every iteration (outside the measurement) the current replay is finished and the engine flushed; the
 * sink must have seen exactly one post and one completion per generated step and per work request and every
 * byte (step and QP summaries), aggregate summaries, no duplicate, unknown or dropped record, no step timed
 * out and all 256 flows live; the baseline's sum must match. A fast wrong answer fails the run.
 *
 * The fork runs under G1, the collector service's GC on any multi-core host: a fork pinned to one core
 * ({@code taskset}) would otherwise get SerialGC, whose copying leaves the step slab at a random 8-byte offset, so
 * that its rows straddle cache lines in some runs and not in others ({@code StepTable.ALIGN}).
 * <p>
 * Warm-up 5 × 2 s, measurement 10 × 2 s: on a quiet core the rate still climbs for the first ~4 s of a fork
 * (C2's last compilations, the step table and tombstone slabs reaching their working set), so a shorter
 * warm-up reports part of that climb (docs/perf-journal/4-window-engine.md).
 * <pre>
 * java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar WindowEngine -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 10, time = 2)
public class WindowEngineBenchmark {
    /** Events per invocation. */
    public static final int EVENTS = 1 << 16;
    /** Event time generated once and replayed (ns). */
    static final long STREAM_NS = 50_000_000L;
    /** The host id of the stream (one clock domain). */
    static final long HOST_ID = 0x0123_4567_89AB_CDEFL;

    /** The stream and the cursor of the endless replay. */
    abstract static class Replay {
        ProxyStream stream;
        int position;
        long replays;
        long keyBase;
        long timeBase;

        void generate(final boolean withQp) {
            stream = ProxyStream.generate(42, STREAM_NS, withQp);
            timeBase = 1_000_000_000L;
        }

        /** Replays the next {@code count} events, wrapping around to a new replay. */
        final void next(final int count, final TelemetryListener listener) {
            int remaining = count;
            while (remaining > 0) {
                final int to = Math.min(stream.events, position + remaining);
                ProxyStream.replay(stream, position, to, keyBase, timeBase, listener);
                remaining -= to - position;
                position = to;
                if (position == stream.events) {
                    wrap();
                }
            }
        }

        /** Finishes the current replay (outside the measurement). */
        final void finishReplay(final TelemetryListener listener) {
            if (position != 0) {
                ProxyStream.replay(stream, position, stream.events, keyBase, timeBase, listener);
                wrap();
            }
        }

        void wrap() {
            position = 0;
            replays++;
            keyBase += stream.keySpan;
            timeBase += stream.timeSpanNs;
        }
    }

    /** Sums what the engine emits, per kind of summary. */
    static final class CountingSink implements FlowSummarySink {
        long summaries;
        long completions;
        long bytes;
        long posts;
        long qpCompletions;
        long qpBytes;
        long qpPosts;
        long aggregateSummaries;

        @Override
        public void onSummary(final FlowSummary s) {
            summaries++;
            switch (s.kind()) {
                case FlowSummary.KIND_STEP:
                    completions += s.completions();
                    bytes += s.bytes();
                    posts += s.posts();
                    break;
                case FlowSummary.KIND_QP:
                    qpCompletions += s.completions();
                    qpBytes += s.bytes();
                    qpPosts += s.posts();
                    break;
                default:
                    aggregateSummaries++;
                    break;
            }
        }
    }

    @State(Scope.Thread)
    public static class EngineState extends Replay {
        /**
         * The step table (live steps + tombstones; 10–15 k in use at this stream's rate); the engine sizes its step
         * index from it (the next power of two ≥ 2 × maxSteps slots of 8 B) and its row slab (maxSteps rows of
         * 64 B, of which the LIFO uses about the peak occupancy).
         */
        @Param({"65536"})
        public int maxSteps;

        /**
         * Tombstone lifetime of stopped steps and work requests (ns): 2 ms, as the step timeout before
         * {@code tombstoneTimeoutNs} existed (comparable figures); the engine's default is 5 ms (~23 k tombstones
         * at this stream's rate, a larger working set). Live steps keep the default step timeout (10 s).
         */
        @Param({"2000000"})
        public long tombstoneNs;

        /** With the NetPlugin QP work requests (true: the ProxyStep + QP mix) or ProxySteps alone. */
        @Param({"true"})
        public boolean qp;

        CountingSink sink;
        WindowEngine engine;

        @Setup(Level.Trial)
        public void setUp() {
            generate(qp);
            sink = new CountingSink();
            engine = new WindowEngine(
                    new WindowConfig()
                            .periodNs(1_000_000L)
                            .tombstoneTimeoutNs(tombstoneNs)
                            .maxFlows(1024)
                            .maxOps(4096)
                            .maxSteps(maxSteps),
                    sink);
            engine.onHost(HOST_ID);
            System.out.println();
            System.out.println(stream + ", " + engine.config());
        }

        @TearDown(Level.Iteration)
        public void check() {
            finishReplay(engine);
            engine.flush();
            final long expectedCompletions = replays * stream.steps;
            final long expectedBytes = replays * stream.bytes;
            final long expectedWrs = replays * stream.wrs;
            final long expectedWrBytes = replays * stream.wrBytes;
            final String state = "replays=" + replays + " completions=" + sink.completions + "/" + expectedCompletions
                    + " bytes="
                    + sink.bytes + "/" + expectedBytes + " posts=" + sink.posts + " qpCompletions=" + sink.qpCompletions
                    + "/" + expectedWrs + " qpBytes=" + sink.qpBytes + "/" + expectedWrBytes + " qpPosts="
                    + sink.qpPosts + " summaries=" + sink.summaries + " (aggregates " + sink.aggregateSummaries
                    + ")" + " liveFlows="
                    + engine.liveFlows() + " liveSteps=" + engine.liveSteps() + " late=" + engine.lateCompletions()
                    + " " + engine;
            if (sink.completions != expectedCompletions
                    || sink.bytes != expectedBytes
                    || sink.posts != expectedCompletions
                    || sink.qpCompletions != expectedWrs
                    || sink.qpBytes != expectedWrBytes
                    || sink.qpPosts != expectedWrs
                    || sink.aggregateSummaries == 0
                    || engine.duplicateRecords() != 0
                    || engine.unknownOpRecords() != 0
                    || engine.unknownStepRecords() != 0
                    || engine.droppedFlowTableFull() != 0
                    || engine.droppedOpTableFull() != 0
                    || engine.droppedStepTableFull() != 0
                    || engine.stepsTimedOut() != 0
                    || engine.liveFlows() != (qp ? 2 : 1) * stream.flows) {
                throw new IllegalStateException("wrong engine result: " + state);
            }
            System.out.print(" [replays=" + replays + " completions=" + sink.completions + " wrs=" + sink.qpCompletions
                    + " ok] ");
        }
    }

    /** Sums key + time of every call. */
    static final class SumListener implements TelemetryListener {
        long sum;

        @Override
        public void onProxyOpStart(
                final long opKey,
                final long commHash,
                final int rank,
                final int peer,
                final int channel,
                final boolean isSend,
                final long timeNs) {
            sum += opKey + timeNs;
        }

        @Override
        public void onProxyOpStop(final long opKey, final long timeNs) {
            sum += opKey + timeNs;
        }

        @Override
        public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {
            sum += stepKey + timeNs;
        }

        @Override
        public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {
            sum += stepKey + timeNs;
        }

        @Override
        public void onProxyStepStop(final long stepKey, final long timeNs) {
            sum += stepKey + timeNs;
        }

        @Override
        public void onQpStart(
                final long wrKey,
                final int device,
                final long qpNum,
                final int opcode,
                final long length,
                final long timeNs) {
            sum += wrKey + timeNs;
        }

        @Override
        public void onQpStop(final long wrKey, final long timeNs) {
            sum += wrKey + timeNs;
        }
    }

    @State(Scope.Thread)
    public static class BaselineState extends Replay {
        /** As {@link EngineState#qp}. */
        @Param({"true"})
        public boolean qp;

        SumListener listener;
        long streamSum;
        long expectedSum;

        @Setup(Level.Trial)
        public void setUp() {
            generate(qp);
            listener = new SumListener();
            for (int i = 0; i < stream.events; i++) {
                streamSum += stream.key[i] + stream.time[i];
            }
        }

        @Override
        void wrap() {
            expectedSum += streamSum + stream.events * (keyBase + timeBase);
            super.wrap();
        }

        @TearDown(Level.Iteration)
        public void check() {
            finishReplay(listener);
            if (listener.sum != expectedSum) {
                throw new IllegalStateException("wrong baseline sum: " + listener.sum + " != " + expectedSum);
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void engine(final EngineState s) {
        s.next(EVENTS, s.engine);
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void baseline(final BaselineState s) {
        s.next(EVENTS, s.listener);
    }
}
