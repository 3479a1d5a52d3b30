package io.flowscope.sim;

import io.flowscope.api.input.TelemetryListener;
import java.util.Arrays;

/**
 * The simulator's pending events in parallel primitive arrays (no object per event), sorted once per
 * collective by (simulated time, insertion order) and replayed into a {@link TelemetryListener}.
 */
final class EventBuffer {
    static final byte OP_START = 1;
    static final byte OP_STOP = 2;
    static final byte STEP_START = 3;
    static final byte STEP_STATE = 4;
    static final byte STEP_STOP = 5;
    static final byte QP_START = 6;
    static final byte QP_STOP = 7;
    static final byte COLL_START = 8;
    static final byte COLL_STOP = 9;
    static final byte KCH_START = 10;
    static final byte KCH_STOP = 11;

    /**
     * The sort key: an event's time relative to the earliest one held ({@link #keyBase}) above its insertion index
     * (2^23 events a batch): the events held at once span one collective and what is pending, so the 40 bits left
     * for the time (18 minutes) bound that span, not the run (a demo runs for days).
     */
    private static final int SEQ_BITS = 23;

    static final int MAX_EVENTS = 1 << SEQ_BITS;
    static final long MAX_SPAN = 1L << 40;

    private int size;
    private int next;
    private long[] order = new long[0];
    private long[] t = new long[1024];
    private byte[] type = new byte[1024];
    private int[] node = new int[1024];
    private long[] k1 = new long[1024];
    private long[] k2 = new long[1024];
    private long[] k3 = new long[1024];
    private long[] k4 = new long[1024];
    private int[] i1 = new int[1024];
    private int[] i2 = new int[1024];
    private int[] i3 = new int[1024];
    private int[] i4 = new int[1024];
    private int[] i5 = new int[1024];
    private int[] i6 = new int[1024];
    /** The second set of arrays {@link #compact} copies into (then the sets swap). */
    private long[] spareT = new long[0];

    private byte[] spareType = new byte[0];
    private int[] spareNode = new int[0];
    private long[][] spareK = new long[4][0];
    private int[][] spareI = new int[6][0];

    boolean hasNext() {
        return next < size;
    }

    long nextTime() {
        return t[(int) (order[next] & (MAX_EVENTS - 1))];
    }

    int nextNode() {
        return node[(int) (order[next] & (MAX_EVENTS - 1))];
    }

    void clear() {
        size = 0;
        next = 0;
    }

    int size() {
        return size;
    }

    /**
     * Drops the emitted events and moves the pending ones, in their emission order, to the front: the next
     * batch is added after them and {@link #sort} then orders all (ties: pending first, in their order). The
     * pending events are copied into a second set of arrays, kept for the next time, and the two sets swap.
     */
    void compact() {
        if (next == 0) {
            return; // nothing emitted: the stored order already gives the pending events' order on ties
        }
        final int m = size - next;
        if (spareT.length != t.length) {
            spareT = new long[t.length];
            spareType = new byte[t.length];
            spareNode = new int[t.length];
            spareK = new long[4][t.length];
            spareI = new int[6][t.length];
        }
        final long[][] k = {k1, k2, k3, k4};
        final int[][] in = {i1, i2, i3, i4, i5, i6};
        for (int j = 0; j < m; j++) {
            final int from = (int) (order[next + j] & (MAX_EVENTS - 1));
            spareT[j] = t[from];
            spareType[j] = type[from];
            spareNode[j] = node[from];
            for (int x = 0; x < 4; x++) {
                spareK[x][j] = k[x][from];
            }
            for (int x = 0; x < 6; x++) {
                spareI[x][j] = in[x][from];
            }
        }
        final long[] oldT = t;
        final byte[] oldType = type;
        final int[] oldNode = node;
        t = spareT;
        type = spareType;
        node = spareNode;
        k1 = spareK[0];
        k2 = spareK[1];
        k3 = spareK[2];
        k4 = spareK[3];
        i1 = spareI[0];
        i2 = spareI[1];
        i3 = spareI[2];
        i4 = spareI[3];
        i5 = spareI[4];
        i6 = spareI[5];
        spareT = oldT;
        spareType = oldType;
        spareNode = oldNode;
        spareK = k;
        spareI = in;
        size = m;
        next = 0;
        final long base = keyBase();
        for (int j = 0; j < m; j++) {
            order[j] = key(base, j);
        }
    }

    /** The earliest time held: sort keys are relative to it. */
    private long keyBase() {
        long base = Long.MAX_VALUE;
        for (int i = 0; i < size; i++) {
            base = Math.min(base, t[i]);
        }
        return base;
    }

    private long key(final long base, final int i) {
        final long rel = t[i] - base;
        if (rel >= MAX_SPAN) {
            throw new IllegalStateException("events held span more than 2^40 ns: " + rel);
        }
        return (rel << SEQ_BITS) | i;
    }

    /** Sorts the pending events by time (ties in insertion order); call after adding a batch. */
    void sort() {
        if (order.length < size) {
            order = new long[t.length];
        }
        final long base = keyBase();
        for (int i = 0; i < size; i++) {
            order[i] = key(base, i);
        }
        Arrays.sort(order, 0, size);
        next = 0;
    }

    private int add(final long time, final byte ty, final int n) {
        if (time < 0) {
            throw new IllegalStateException("simulated time before the run's start: " + time);
        }
        if (size == t.length) {
            if (size == MAX_EVENTS) {
                throw new IllegalStateException("more than " + MAX_EVENTS + " events in one collective: shrink it");
            }
            grow(Math.min(MAX_EVENTS, size * 2));
        }
        final int i = size++;
        t[i] = time;
        type[i] = ty;
        node[i] = n;
        return i;
    }

    private void grow(final int n) {
        t = Arrays.copyOf(t, n);
        type = Arrays.copyOf(type, n);
        node = Arrays.copyOf(node, n);
        k1 = Arrays.copyOf(k1, n);
        k2 = Arrays.copyOf(k2, n);
        k3 = Arrays.copyOf(k3, n);
        k4 = Arrays.copyOf(k4, n);
        i1 = Arrays.copyOf(i1, n);
        i2 = Arrays.copyOf(i2, n);
        i3 = Arrays.copyOf(i3, n);
        i4 = Arrays.copyOf(i4, n);
        i5 = Arrays.copyOf(i5, n);
        i6 = Arrays.copyOf(i6, n);
    }

    void opStart(
            final long time,
            final int n,
            final long opKey,
            final long comm,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend) {
        final int i = add(time, OP_START, n);
        k1[i] = opKey;
        k2[i] = comm;
        i1[i] = rank;
        i2[i] = peer;
        i3[i] = channel;
        i4[i] = isSend ? 1 : 0;
    }

    void key(final long time, final byte ty, final int n, final long key) {
        final int i = add(time, ty, n);
        k1[i] = key;
    }

    void stepStart(final long time, final int n, final long stepKey, final long opKey, final int step) {
        final int i = add(time, STEP_START, n);
        k1[i] = stepKey;
        k2[i] = opKey;
        i1[i] = step;
    }

    void stepState(final long time, final int n, final long stepKey, final int state, final long transSize) {
        final int i = add(time, STEP_STATE, n);
        k1[i] = stepKey;
        i1[i] = state;
        k3[i] = transSize;
    }

    void qpStart(
            final long time,
            final int n,
            final long wrKey,
            final int device,
            final long qpNum,
            final int opcode,
            final long length) {
        final int i = add(time, QP_START, n);
        k1[i] = wrKey;
        i1[i] = device;
        k2[i] = qpNum;
        i2[i] = opcode;
        k3[i] = length;
    }

    void collStart(
            final long time,
            final int n,
            final long collKey,
            final long comm,
            final int rank,
            final int nranks,
            final int func,
            final int algo,
            final int proto,
            final long count,
            final int nChannels,
            final long seq) {
        final int i = add(time, COLL_START, n);
        k1[i] = collKey;
        k2[i] = comm;
        i1[i] = rank;
        i2[i] = nranks;
        i3[i] = func;
        i4[i] = algo;
        i5[i] = proto;
        k3[i] = count;
        i6[i] = nChannels;
        k4[i] = seq;
    }

    void kernelChStart(
            final long time, final int n, final long chKey, final long collKey, final int channel, final long pTimer) {
        final int i = add(time, KCH_START, n);
        k1[i] = chKey;
        k2[i] = collKey;
        i1[i] = channel;
        k3[i] = pTimer;
    }

    void kernelChStop(final long time, final int n, final long chKey, final long pTimer) {
        final int i = add(time, KCH_STOP, n);
        k1[i] = chKey;
        k3[i] = pTimer;
    }

    /** Emits the next event; host times are simulated time + {@code hostOffset[node]}. */
    void emitNext(final TelemetryListener out, final long[] hostOffset) {
        final int i = (int) (order[next++] & (MAX_EVENTS - 1));
        final long time = t[i] + hostOffset[node[i]];
        switch (type[i]) {
            case OP_START:
                out.onProxyOpStart(k1[i], k2[i], i1[i], i2[i], i3[i], i4[i] == 1, time);
                break;
            case OP_STOP:
                out.onProxyOpStop(k1[i], time);
                break;
            case STEP_START:
                out.onProxyStepStart(k1[i], k2[i], i1[i], time);
                break;
            case STEP_STATE:
                out.onProxyStepState(k1[i], i1[i], k3[i], time);
                break;
            case STEP_STOP:
                out.onProxyStepStop(k1[i], time);
                break;
            case QP_START:
                out.onQpStart(k1[i], i1[i], k2[i], i2[i], k3[i], time);
                break;
            case QP_STOP:
                out.onQpStop(k1[i], time);
                break;
            case COLL_START:
                out.onCollStart(k1[i], k2[i], i1[i], i2[i], i3[i], i4[i], i5[i], k3[i], 4, i6[i], k4[i], time);
                break;
            case COLL_STOP:
                out.onCollStop(k1[i], time);
                break;
            case KCH_START:
                out.onKernelChStart(k1[i], k2[i], i1[i], k3[i], time);
                break;
            case KCH_STOP:
                out.onKernelChStop(k1[i], k3[i], time);
                break;
            default:
                throw new IllegalStateException("event type " + type[i]);
        }
    }
}
