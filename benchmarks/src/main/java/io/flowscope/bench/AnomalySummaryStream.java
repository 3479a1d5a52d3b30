package io.flowscope.bench;

import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.Phase;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A synthetic flow-summary stream of a large cluster, generated directly (the event simulator cannot produce
 * 4,096 ranks' events in real time): {@code ranks} ranks, 8 per host, one communicator running a ring over
 * {@code channels} channels. Per rank and 1 ms period: one send and one receive step flow per channel and one
 * send and one receive QP flow, and the aggregates the window engine emits after a host's flows (per rank and
 * direction its RANK and LINK sums, per direction the COMM sum; the wait-state detectors read the LINK ones), with
 * realistic figures (512 KiB steps, ~21 µs on the wire, a few µs of credit and
 * GPU waits, receives outstanding). From period {@link #SLOW_FROM_PERIOD} on, link 7 → 8 takes three times as
 * long on the wire (a slow link the engine must find).
 * <p>
 * The summaries are built once; each period only their period bounds move ({@link FlowSummary} has no setters:
 * its fields are written here through {@link VarHandle}s, as the window engine would write them).
 */
final class AnomalySummaryStream {
    static final int RANKS_PER_HOST = 8;
    static final long PERIOD_NS = 1_000_000L;
    static final int SLOW_FROM_PERIOD = 40;
    static final int SLOW_RANK = 7;
    static final long COMM = 0x5eed_0000_4096L;

    private static final VarHandle PERIOD_START;
    private static final VarHandle PERIOD_END;
    private static final VarHandle HOST_ID;
    private static final VarHandle DEVICE;
    private static final VarHandle QP_NUM;
    private static final VarHandle FLOW_KEY;
    private static final VarHandle RANK;
    private static final VarHandle PEER;
    private static final VarHandle CHANNEL;

    static {
        try {
            final MethodHandles.Lookup l = MethodHandles.privateLookupIn(FlowSummary.class, MethodHandles.lookup());
            PERIOD_START = l.findVarHandle(FlowSummary.class, "periodStartNs", long.class);
            PERIOD_END = l.findVarHandle(FlowSummary.class, "periodEndNs", long.class);
            HOST_ID = l.findVarHandle(FlowSummary.class, "hostId", long.class);
            DEVICE = l.findVarHandle(FlowSummary.class, "device", int.class);
            QP_NUM = l.findVarHandle(FlowSummary.class, "qpNum", long.class);
            FLOW_KEY = l.findVarHandle(FlowSummary.class, "flowKey", long.class);
            RANK = l.findVarHandle(FlowSummary.class, "rank", int.class);
            PEER = l.findVarHandle(FlowSummary.class, "peer", int.class);
            CHANNEL = l.findVarHandle(FlowSummary.class, "channel", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int ranks;
    final int hosts;
    final int perHost;
    /** Per host, its summaries of one period, in the order the window engine emits them. */
    final FlowSummary[][] byHost;
    /** The slow link's send summaries after the onset (replacing the healthy ones). */
    final FlowSummary[] slowSends;

    final int[] slowIndex;
    final long[] hostIds;
    /**
     * The hot variant ({@link #hot}): one reused instance per kind of summary (healthy send, slow send, receive,
     * send QP, receive QP), as the window engine hands over one reused {@link FlowSummary}; per summary position
     * only its identity (compact arrays) is written into it.
     */
    private final FlowSummary[] hotByTemplate = new FlowSummary[12];
    /** The slow link's LINK aggregate after the onset, and its position on its host. */
    FlowSummary slowLink;

    int slowLinkIndex = -1;
    private final byte[] template;
    private final int[] hotRank;
    private final int[] hotPeer;
    private final int[] hotChannel;
    private final int[] hotDevice;
    private final long[] hotFlowKey;
    private final long[] hotQpNum;

    AnomalySummaryStream(final int ranks, final int channels) {
        this.ranks = ranks;
        hosts = (ranks + RANKS_PER_HOST - 1) / RANKS_PER_HOST;
        perHost = RANKS_PER_HOST * (2 * channels + 2 + 4) + 2;
        byHost = new FlowSummary[hosts][perHost];
        hostIds = new long[hosts];
        slowSends = new FlowSummary[channels];
        slowIndex = new int[channels];
        for (int h = 0; h < hosts; h++) {
            hostIds[h] = 0x4057_0000_0000L + h;
            int i = 0;
            for (int k = 0; k < RANKS_PER_HOST; k++) {
                final int r = h * RANKS_PER_HOST + k;
                for (int c = 0; c < channels; c++) {
                    byHost[h][i++] = step(h, r, (r + 1) % ranks, c, true, 21_000);
                    if (r == SLOW_RANK) {
                        slowIndex[c] = i - 1;
                        slowSends[c] = step(h, r, (r + 1) % ranks, c, true, 63_000);
                    }
                    byHost[h][i++] = step(h, r, (r - 1 + ranks) % ranks, c, false, 21_000);
                }
                byHost[h][i++] = qp(h, k, true);
                byHost[h][i++] = qp(h, k, false);
            }
            // The aggregates, in the window engine's order of first contribution (rank, link, comm per flow).
            for (int k = 0; k < RANKS_PER_HOST; k++) {
                final int r = h * RANKS_PER_HOST + k;
                byHost[h][i++] = aggregate(h, FlowSummary.KIND_RANK, r, -1, true, 21_000, channels);
                byHost[h][i++] = aggregate(h, FlowSummary.KIND_LINK, r, (r + 1) % ranks, true, 21_000, channels);
                if (r == SLOW_RANK) {
                    slowLinkIndex = i - 1;
                    slowLink = aggregate(h, FlowSummary.KIND_LINK, r, (r + 1) % ranks, true, 63_000, channels);
                }
                if (k == 0) {
                    byHost[h][i++] = aggregate(h, FlowSummary.KIND_COMM, -1, -1, true, 21_000, channels);
                }
                byHost[h][i++] = aggregate(h, FlowSummary.KIND_RANK, r, -1, false, 21_000, channels);
                byHost[h][i++] =
                        aggregate(h, FlowSummary.KIND_LINK, r, (r - 1 + ranks) % ranks, false, 21_000, channels);
                if (k == 0) {
                    byHost[h][i++] = aggregate(h, FlowSummary.KIND_COMM, -1, -1, false, 21_000, channels);
                }
            }
        }
        hotByTemplate[0] = step(0, 0, 1, 0, true, 21_000);
        hotByTemplate[1] = step(0, 0, 1, 0, true, 63_000);
        hotByTemplate[2] = step(0, 0, 1, 0, false, 21_000);
        hotByTemplate[3] = qp(0, 0, true);
        hotByTemplate[4] = qp(0, 0, false);
        hotByTemplate[5] = aggregate(0, FlowSummary.KIND_LINK, 0, 1, true, 21_000, channels);
        hotByTemplate[6] = aggregate(0, FlowSummary.KIND_LINK, 0, 1, true, 63_000, channels);
        hotByTemplate[7] = aggregate(0, FlowSummary.KIND_LINK, 0, 1, false, 21_000, channels);
        hotByTemplate[8] = aggregate(0, FlowSummary.KIND_RANK, 0, -1, true, 21_000, channels);
        hotByTemplate[9] = aggregate(0, FlowSummary.KIND_RANK, 0, -1, false, 21_000, channels);
        hotByTemplate[10] = aggregate(0, FlowSummary.KIND_COMM, -1, -1, true, 21_000, channels);
        hotByTemplate[11] = aggregate(0, FlowSummary.KIND_COMM, -1, -1, false, 21_000, channels);
        final int n = hosts * perHost;
        template = new byte[n];
        hotRank = new int[n];
        hotPeer = new int[n];
        hotChannel = new int[n];
        hotDevice = new int[n];
        hotFlowKey = new long[n];
        hotQpNum = new long[n];
        for (int h = 0; h < hosts; h++) {
            for (int i = 0; i < perHost; i++) {
                final FlowSummary s = byHost[h][i];
                final int g = h * perHost + i;
                template[g] = (byte)
                        switch (s.kind()) {
                            case FlowSummary.KIND_QP -> s.bytes() > 0 ? 3 : 4;
                            case FlowSummary.KIND_LINK -> s.isSend() ? 5 : 7;
                            case FlowSummary.KIND_RANK -> s.isSend() ? 8 : 9;
                            case FlowSummary.KIND_COMM -> s.isSend() ? 10 : 11;
                            default -> s.isSend() ? 0 : 2;
                        };
                hotRank[g] = s.rank();
                hotPeer[g] = s.peer();
                hotChannel[g] = s.channel();
                hotDevice[g] = s.device();
                hotFlowKey[g] = s.flowKey();
                hotQpNum[g] = s.qpNum();
            }
        }
    }

    /**
     * The same summary as {@link #summary} in one of five reused instances (the window engine's single reused
     * summary stays in cache; 24,576 distinct ones with six phase arrays each, ~13 MB, do not).
     */
    FlowSummary hot(final int h, final int i, final long period) {
        final int g = h * perHost + i;
        int t = template[g];
        if (t == 5 && period >= SLOW_FROM_PERIOD && h == SLOW_RANK / RANKS_PER_HOST && i == slowLinkIndex) {
            t = 6;
        }
        if (t == 0 && period >= SLOW_FROM_PERIOD && h == SLOW_RANK / RANKS_PER_HOST) {
            for (int c = 0; c < slowIndex.length; c++) {
                if (slowIndex[c] == i) {
                    t = 1;
                }
            }
        }
        final FlowSummary s = hotByTemplate[t];
        HOST_ID.set(s, hostIds[h]);
        DEVICE.set(s, hotDevice[g]);
        QP_NUM.set(s, hotQpNum[g]);
        FLOW_KEY.set(s, hotFlowKey[g]);
        RANK.set(s, hotRank[g]);
        PEER.set(s, hotPeer[g]);
        CHANNEL.set(s, hotChannel[g]);
        final long start = period * PERIOD_NS;
        PERIOD_START.set(s, start);
        PERIOD_END.set(s, start + PERIOD_NS);
        return s;
    }

    int summariesPerPeriod() {
        return hosts * perHost;
    }

    /** The summary {@code i} of host {@code h} for period {@code period}, its bounds set. */
    FlowSummary summary(final int h, final int i, final long period) {
        FlowSummary s = byHost[h][i];
        if (period >= SLOW_FROM_PERIOD && h == SLOW_RANK / RANKS_PER_HOST && i == slowLinkIndex) {
            s = slowLink;
        }
        if (period >= SLOW_FROM_PERIOD && h == SLOW_RANK / RANKS_PER_HOST) {
            for (int c = 0; c < slowIndex.length; c++) {
                if (slowIndex[c] == i) {
                    s = slowSends[c];
                }
            }
        }
        final long start = period * PERIOD_NS;
        PERIOD_START.set(s, start);
        PERIOD_END.set(s, start + PERIOD_NS);
        return s;
    }

    private FlowSummary step(
            final int h, final int rank, final int peer, final int channel, final boolean send, final long wireNs) {
        final FlowSummary s = new FlowSummary();
        final long steps = 24;
        set(s, "hostId", long.class, hostIds[h]);
        set(s, "kind", int.class, FlowSummary.KIND_STEP);
        set(s, "device", int.class, -1);
        set(s, "qpNum", long.class, -1L);
        set(s, "flowKey", long.class, (long) rank * 1_000_003L + peer * 131L + channel * 2L + (send ? 1 : 0));
        set(s, "commHash", long.class, COMM);
        set(s, "rank", int.class, rank);
        set(s, "peer", int.class, peer);
        set(s, "channel", int.class, channel);
        set(s, "isSend", boolean.class, send);
        set(s, "flows", int.class, 1);
        set(s, "posts", long.class, steps);
        set(s, "completions", long.class, steps);
        set(s, "bytes", long.class, steps * (512L << 10));
        set(s, "periodBandwidthBytesPerSecond", double.class, steps * (512.0 * 1024) * 1000);
        set(s, "windowCompletions", int.class, 8);
        set(s, "windowBytes", long.class, 8 * (512L << 10));
        set(s, "windowSpanNs", long.class, 8 * 40_000L);
        set(s, "outstandingSteps", long.class, send ? 1L : 3L);
        set(s, "outstandingBytes", long.class, send ? 512L << 10 : 0L);
        // One op starts per period (24 steps of 512 KiB: a 12 MiB collective a ms): its first step's wait.
        set(s, "firstSteps", long.class, 1L);
        set(s, "firstStepWaitSumNs", long.class, send ? 4_000L : 30_000L);
        final long[] count = (long[]) get(s, "phaseCount");
        final long[] sum = (long[]) get(s, "phaseSumNs");
        final long[] max = (long[]) get(s, "phaseMaxNs");
        if (send) {
            fill(count, sum, max, Phase.GPU_WAIT, steps, 4_000);
            fill(count, sum, max, Phase.PEER_WAIT, steps, 2_000);
            fill(count, sum, max, Phase.NETWORK, steps, wireNs + 4_000);
        } else {
            fill(count, sum, max, Phase.NETWORK, steps, 30_000);
            fill(count, sum, max, Phase.FLUSH, steps, 1_500);
            fill(count, sum, max, Phase.GPU_CONSUME, steps, 2_600);
        }
        return s;
    }

    /** An aggregate of {@code channels} step flows like {@link #step}'s: their sums, channel -1. */
    private FlowSummary aggregate(
            final int h,
            final int kind,
            final int rank,
            final int peer,
            final boolean send,
            final long wireNs,
            final int channels) {
        final FlowSummary s = step(h, Math.max(rank, 0), Math.max(peer, 0), 0, send, wireNs);
        set(s, "kind", int.class, kind);
        set(
                s,
                "flowKey",
                long.class,
                0x1000_0000_0000L * kind + (long) (rank + 1) * 1_000_003L + (peer + 1) * 131L + (send ? 1 : 0));
        set(s, "rank", int.class, rank);
        set(s, "peer", int.class, peer);
        set(s, "channel", int.class, -1);
        set(s, "flows", int.class, channels);
        for (final String f : new String[] {
            "posts", "completions", "bytes", "outstandingSteps", "outstandingBytes", "firstSteps", "firstStepWaitSumNs"
        }) {
            set(s, f, long.class, (long) get(s, f) * channels);
        }
        for (final String a : new String[] {"phaseCount", "phaseSumNs"}) {
            final long[] v = (long[]) get(s, a);
            for (int p = 0; p < v.length; p++) {
                v[p] *= channels;
            }
        }
        // Aggregates carry no percentiles and no completion window.
        set(s, "windowCompletions", int.class, 0);
        set(s, "windowBytes", long.class, 0L);
        set(s, "windowSpanNs", long.class, 0L);
        return s;
    }

    private FlowSummary qp(final int h, final int local, final boolean send) {
        final FlowSummary s = new FlowSummary();
        final long wrs = 48;
        set(s, "hostId", long.class, hostIds[h]);
        set(s, "kind", int.class, FlowSummary.KIND_QP);
        set(s, "device", int.class, local);
        set(s, "qpNum", long.class, 0x100L + local * 2L + (send ? 0 : 1));
        set(s, "flowKey", long.class, hostIds[h] * 31 + local * 2L + (send ? 0 : 1));
        set(s, "commHash", long.class, 0L);
        set(s, "rank", int.class, -1);
        set(s, "peer", int.class, -1);
        set(s, "channel", int.class, -1);
        set(s, "isSend", boolean.class, true);
        set(s, "flows", int.class, 1);
        set(s, "posts", long.class, wrs);
        set(s, "completions", long.class, wrs);
        set(s, "bytes", long.class, send ? wrs * (512L << 10) : 0L);
        set(s, "outstandingSteps", long.class, 2L);
        set(s, "outstandingBytes", long.class, send ? 512L << 10 : 0L);
        fill(
                (long[]) get(s, "phaseCount"),
                (long[]) get(s, "phaseSumNs"),
                (long[]) get(s, "phaseMaxNs"),
                Phase.NETWORK,
                wrs,
                send ? 25_000 : 30_000);
        return s;
    }

    private static void fill(
            final long[] count, final long[] sum, final long[] max, final int phase, final long n, final long each) {
        count[phase] = n;
        sum[phase] = n * each;
        max[phase] = each + each / 4;
    }

    private static final java.util.Map<String, java.lang.reflect.Field> FIELDS = new java.util.HashMap<>();

    /** Each field looked up once (many lookups get the JDK's reflection code compiled, which crashes under valgrind). */
    private static java.lang.reflect.Field field(final String name) throws NoSuchFieldException {
        java.lang.reflect.Field f = FIELDS.get(name);
        if (f == null) {
            f = FlowSummary.class.getDeclaredField(name);
            f.setAccessible(true);
            FIELDS.put(name, f);
        }
        return f;
    }

    private static void set(final FlowSummary s, final String field, final Class<?> type, final Object value) {
        // Plain reflection, not a VarHandle of the boxed value: its asType conversion crashes the JVM under
        // valgrind (callgrind instruction counts of this stream, docs/perf-journal/5-anomaly.md section 5.4).
        try {
            final java.lang.reflect.Field f = field(field);
            if (f.getType() != type) {
                throw new IllegalStateException(field + " is not a " + type);
            }
            f.set(s, value);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Object get(final FlowSummary s, final String field) {
        try {
            return field(field).get(s);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
