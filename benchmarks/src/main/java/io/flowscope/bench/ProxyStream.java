package io.flowscope.bench;

import io.flowscope.api.input.TelemetryListener;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A pre-generated, realistic ProxyOp / ProxyStep event stream of one host, as primitive tuples in parallel
 * arrays, and its replay into a {@link TelemetryListener}.
 * <p>
 * Shape: 8 ranks, each with 2 peers (ring neighbours) × 4 channels × send/recv = 128 flows of one communicator.
 * Every flow runs ProxyOps back to back, each of 4–16 steps; a step's {@code transSize} is 128–512 KiB and
 * steps start every {@code transSize / 6.25 GB/s} (± 20 %), i.e. 8 flows of a rank share a 400 Gb/s NIC,
 * several steps in flight. Send step: start → 8 (+0.2–0.6 µs) → 20 (+0.5–3 µs, repeated in a quarter of the
 * steps) → 9 (+0.2–1 µs, transSize) → stop (+2 step intervals + 0–5 µs of network). Recv step: start → 10
 * (+0.2–0.6 µs) → 11 (+1.5 step intervals + 0–5 µs, transSize) → 12 (+1–3 µs flush) → stop (+2–10 µs). Every
 * step has one NetPlugin IB QP work request on its connection's QP (device = the rank's NIC, one QP per flow: 128
 * QP flows): a send WR (RDMA write with imm, transSize) posted 0.1–0.3 µs after 9 and completed 0.2–0.8 µs
 * before the stop, a receive WR posted 0.1–0.3 µs after 10 and completed 0.2–0.8 µs before 11. About
 * 17 M events per second of event time in all, 27 % of them QP (≈ 17 k per 1 ms summary period; 50 ms: 850 k
 * events, 116 k steps, 116 k WRs, 11.7 k ops). Events are sorted by time (ties keep generation order, so each
 * step's records stay in order).
 * <p>
 * Keys (op, step and work request alike) are, per rank, the serials 1, 2, … in the order of their start events
 * XORed with a salt of the rank, as the plugin numbers a process's records and RingEventSource keys them.
 * <p>
 * Replays: {@link #replay} adds a key base and a time base to every key / time, so the same arrays can be
 * replayed again and again as new ops and steps later in time ({@link #keySpan}, {@link #timeSpanNs}).
 */
final class ProxyStream {
    static final byte OP_START = 0;
    static final byte OP_STOP = 1;
    static final byte STEP_START = 2;
    static final byte STEP_STATE = 3;
    static final byte STEP_STOP = 4;
    static final byte QP_START = 5;
    static final byte QP_STOP = 6;

    /** {@code ibv_wr_opcode} IBV_WR_RDMA_WRITE_WITH_IMM (NCCL IB isend). */
    static final int OPCODE_WRITE_WITH_IMM = 1;
    /** Opcode recorded for a receive WR (NCCL IB irecv; {@code ibv_post_recv} has no ibv_wr_opcode). */
    static final int OPCODE_RECV = 128;

    static final long LENGTH_MASK = (1L << 48) - 1;

    static final long COMM_HASH = 0x5EED_C0FF_EE12_3456L;
    static final int RANKS = 8;
    static final int PEERS = 2;
    static final int CHANNELS = 4;
    /**
     * Keys of one replay differ in their low 24 bits only (a serial below 2^24 XORed with a salt), so a key base
     * advanced by 2^24 per replay keeps every replay's keys apart.
     */
    static final long KEY_SPAN = 1L << 24;
    /** Each rank's (process's) key salt, as RingEventSource derives one from the host and the pid. */
    private static final long[] PROCESS_SALT = new long[RANKS];

    static {
        for (int rank = 0; rank < RANKS; rank++) {
            long z = (rank + 4_000L) * 0x9E3779B97F4A7C15L;
            z = (z ^ z >>> 31) * 0xBF58476D1CE4E5B9L;
            PROCESS_SALT[rank] = z ^ z >>> 29;
        }
    }

    /** Event kind. */
    final byte[] type;
    /** opKey (op events), stepKey (step events) or wrKey (QP events), before the key base. */
    final long[] key;
    /** Event time ns, before the time base. */
    final long[] time;
    /**
     * commHash (op start), opKey before the key base (step start), transSize (step state), length | opcode << 48
     * (QP start).
     */
    final long[] arg;
    /**
     * rank | peer << 8 | channel << 16 | isSend << 24 (op start), step (step start), state (step state),
     * qpNum | device << 24 (QP start).
     */
    final int[] iarg;

    final int events;
    final int flows;
    final long ops;
    final long steps;
    /** Bytes the engine counts at completion: transSize of 9 (send) / 11 (recv), all steps. */
    final long bytes;
    /** NetPlugin IB QP work requests (one per step) and their lengths. */
    final long wrs;

    final long wrBytes;
    /** Events of the kinds QP_START / QP_STOP. */
    final int qpEvents;
    /** Keys used by one replay: the key base advances by this much per replay. */
    final long keySpan;
    /** Event time of one replay: the time base advances by this much per replay. */
    final long timeSpanNs;

    private ProxyStream(final Builder b) {
        final int n = b.n;
        final long[] order = new long[n];
        for (int i = 0; i < n; i++) {
            order[i] = b.time[i] << 24 | i; // times < 2^39 ns, indices < 2^24
        }
        Arrays.sort(order);
        type = new byte[n];
        key = new long[n];
        time = new long[n];
        arg = new long[n];
        iarg = new int[n];
        // Keys as the plugin and RingEventSource make them: each rank is a process that numbers its records in
        // start order (one serial, taken when NCCL starts the event), and the key is that serial XORed with the
        // process's salt (RingEventSource.key: host and pid). Generation runs flow by flow, so its own numbering
        // would give each flow a block of keys, and one numbering for all ranks would make one sequence of eight.
        final long[] renumbered = new long[(int) b.nextKey];
        final int[] rankOfKey = new int[(int) b.nextKey];
        final long[] serial = new long[RANKS];
        for (int j = 0; j < n; j++) {
            final int i = (int) (order[j] & 0xFF_FFFF);
            final byte t = b.type[i];
            if (t == OP_START || t == STEP_START || t == QP_START) {
                final int k = (int) b.key[i];
                final int rank = t == OP_START
                        ? b.iarg[i] & 0xFF
                        : t == STEP_START ? rankOfKey[(int) b.arg[i]] : b.iarg[i] >>> 24;
                rankOfKey[k] = rank;
                renumbered[k] = ++serial[rank] ^ PROCESS_SALT[rank];
            }
        }
        for (final long count : serial) {
            if (count >= KEY_SPAN) {
                throw new IllegalStateException("more than 2^24 records of one rank in one replay");
            }
        }
        for (int j = 0; j < n; j++) {
            final int i = (int) (order[j] & 0xFF_FFFF);
            type[j] = b.type[i];
            key[j] = renumbered[(int) b.key[i]];
            time[j] = b.time[i];
            arg[j] = type[j] == STEP_START ? renumbered[(int) b.arg[i]] : b.arg[i];
            iarg[j] = b.iarg[i];
        }
        events = n;
        flows = RANKS * PEERS * CHANNELS * 2;
        wrs = b.wrs;
        wrBytes = b.wrBytes;
        int q = 0;
        for (int j = 0; j < n; j++) {
            q += type[j] >= QP_START ? 1 : 0;
        }
        qpEvents = q;
        ops = b.ops;
        steps = b.steps;
        bytes = b.bytes;
        keySpan = KEY_SPAN;
        timeSpanNs = time[n - 1] + 10_000;
    }

    /**
     * Generates about {@code durationNs} of event time (ops start until then; each finishes completely), with
     * or without the QP work requests.
     */
    static ProxyStream generate(final long seed, final long durationNs, final boolean withQp) {
        final SplittableRandom random = new SplittableRandom(seed);
        final Builder b = new Builder();
        for (int rank = 0; rank < RANKS; rank++) {
            for (int p = 0; p < PEERS; p++) {
                final int peer = p == 0 ? (rank + 1) % RANKS : (rank + RANKS - 1) % RANKS;
                for (int channel = 0; channel < CHANNELS; channel++) {
                    for (int dir = 0; dir < 2; dir++) {
                        flow(b, random, rank, peer, channel, dir == 0, durationNs, withQp);
                    }
                }
            }
        }
        return new ProxyStream(b);
    }

    private static void flow(
            final Builder b,
            final SplittableRandom r,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final long durationNs,
            final boolean withQp) {
        long t = 1_000 + r.nextLong(20_000);
        final int flowBits = rank | peer << 8 | channel << 16 | (isSend ? 1 << 24 : 0);
        // One QP per connection and direction on the rank's NIC (device = rank).
        final int qpBits = (0x100 + (peer << 4 | channel << 1 | (isSend ? 1 : 0))) | rank << 24;
        while (t < durationNs) {
            final long opKey = b.nextKey++;
            b.add(OP_START, opKey, t, COMM_HASH, flowBits);
            b.ops++;
            final int nSteps = 4 + r.nextInt(13);
            long stepStart = t + 100 + r.nextLong(400);
            long lastStop = stepStart;
            for (int s = 0; s < nSteps; s++) {
                final long transSize = (128 + r.nextInt(385)) * 1024L;
                final long interval = transSize * 1_000 / 6_250 * (80 + r.nextInt(41)) / 100; // 6.25 GB/s ± 20 %
                final long stepKey = b.nextKey++;
                long ts = stepStart;
                b.add(STEP_START, stepKey, ts, opKey, s);
                if (isSend) {
                    ts += 200 + r.nextLong(400);
                    b.add(STEP_STATE, stepKey, ts, 0, 8);
                    ts += 500 + r.nextLong(2_500);
                    b.add(STEP_STATE, stepKey, ts, 0, 20);
                    if (r.nextInt(4) == 0) {
                        ts += 100 + r.nextLong(400);
                        b.add(STEP_STATE, stepKey, ts, 0, 20);
                    }
                    ts += 200 + r.nextLong(800);
                    b.add(STEP_STATE, stepKey, ts, transSize, 9);
                    final long stop = ts + 2 * interval + r.nextLong(5_000);
                    if (withQp) {
                        wr(b, r, qpBits, OPCODE_WRITE_WITH_IMM, transSize, ts, stop);
                    }
                    ts = stop;
                    b.add(STEP_STOP, stepKey, ts, 0, 0);
                } else {
                    ts += 200 + r.nextLong(400);
                    b.add(STEP_STATE, stepKey, ts, 0, 10);
                    final long t11 = ts + interval * 3 / 2 + r.nextLong(5_000);
                    if (withQp) {
                        wr(b, r, qpBits, OPCODE_RECV, transSize, ts, t11);
                    }
                    ts = t11;
                    b.add(STEP_STATE, stepKey, ts, transSize, 11);
                    ts += 1_000 + r.nextLong(2_000);
                    b.add(STEP_STATE, stepKey, ts, 0, 12);
                    ts += 2_000 + r.nextLong(8_000);
                    b.add(STEP_STOP, stepKey, ts, 0, 0);
                }
                b.steps++;
                b.bytes += transSize;
                lastStop = Math.max(lastStop, ts);
                stepStart += interval;
            }
            final long opStop = lastStop + 200 + r.nextLong(800);
            b.add(OP_STOP, opKey, opStop, 0, 0);
            t = Math.max(stepStart, opStop - 20_000) + 200 + r.nextLong(2_000); // next op overlaps the tail
        }
    }

    /**
     * A work request posted 100–300 ns after {@code fromNs} (9 / 10: isend / irecv), completed 200–800 ns
     * before {@code toNs} (the step's stop / 11, which follow the CQ completion).
     */
    private static void wr(
            final Builder b,
            final SplittableRandom r,
            final int qpBits,
            final int opcode,
            final long length,
            final long fromNs,
            final long toNs) {
        final long wrKey = b.nextKey++;
        b.add(QP_START, wrKey, fromNs + 100 + r.nextLong(200), length | (long) opcode << 48, qpBits);
        b.add(QP_STOP, wrKey, toNs - 200 - r.nextLong(600), 0, 0);
        b.wrs++;
        b.wrBytes += length;
    }

    /**
     * Replays events {@code [from, to)} into {@code listener}, keys + {@code keyBase}, times + {@code timeBase}.
     */
    static void replay(
            final ProxyStream s,
            final int from,
            final int to,
            final long keyBase,
            final long timeBase,
            final TelemetryListener listener) {
        final byte[] type = s.type;
        final long[] key = s.key;
        final long[] time = s.time;
        final long[] arg = s.arg;
        final int[] iarg = s.iarg;
        for (int i = from; i < to; i++) {
            final long k = key[i] + keyBase;
            final long t = time[i] + timeBase;
            switch (type[i]) {
                case STEP_STATE:
                    listener.onProxyStepState(k, iarg[i], arg[i], t);
                    break;
                case STEP_START:
                    listener.onProxyStepStart(k, arg[i] + keyBase, iarg[i], t);
                    break;
                case STEP_STOP:
                    listener.onProxyStepStop(k, t);
                    break;
                case OP_START: {
                    final int f = iarg[i];
                    listener.onProxyOpStart(k, arg[i], f & 0xFF, f >>> 8 & 0xFF, f >>> 16 & 0xFF, f >>> 24 != 0, t);
                    break;
                }
                case QP_START: {
                    final long a = arg[i];
                    final int q = iarg[i];
                    listener.onQpStart(k, q >>> 24, q & 0xFF_FFFF, (int) (a >>> 48), a & LENGTH_MASK, t);
                    break;
                }
                case QP_STOP:
                    listener.onQpStop(k, t);
                    break;
                default:
                    listener.onProxyOpStop(k, t);
                    break;
            }
        }
    }

    @Override
    public String toString() {
        return "ProxyStream{events=" + events + " (QP " + qpEvents + "), step flows=" + flows + ", QP flows=" + flows
                + ", ops="
                + ops + ", steps=" + steps + ", bytes=" + bytes + ", wrs=" + wrs + ", wrBytes=" + wrBytes
                + ", timeSpanNs="
                + timeSpanNs + '}';
    }

    private static final class Builder {
        byte[] type = new byte[1 << 16];
        long[] key = new long[1 << 16];
        long[] time = new long[1 << 16];
        long[] arg = new long[1 << 16];
        int[] iarg = new int[1 << 16];
        int n;
        long nextKey = 1;
        long ops;
        long steps;
        long bytes;
        long wrs;
        long wrBytes;

        void add(final byte t, final long k, final long ts, final long a, final int ia) {
            if (n == type.length) {
                final int c = n * 2;
                type = Arrays.copyOf(type, c);
                key = Arrays.copyOf(key, c);
                time = Arrays.copyOf(time, c);
                arg = Arrays.copyOf(arg, c);
                iarg = Arrays.copyOf(iarg, c);
            }
            type[n] = t;
            key[n] = k;
            time[n] = ts;
            arg[n] = a;
            iarg[n] = ia;
            n++;
        }
    }
}
