package io.flowscope.window;

import io.flowscope.api.input.TelemetryListener;

/** A test event: one {@link TelemetryListener} call as a value. */
record Ev(
        int type,
        long key,
        long opKey,
        long comm,
        int rank,
        int peer,
        int channel,
        boolean isSend,
        int state,
        long arg,
        long timeNs,
        long host) {
    Ev(
            final int type,
            final long key,
            final long opKey,
            final long comm,
            final int rank,
            final int peer,
            final int channel,
            final boolean isSend,
            final int state,
            final long arg,
            final long timeNs) {
        this(type, key, opKey, comm, rank, peer, channel, isSend, state, arg, timeNs, 0);
    }

    Ev onHost(final long h) {
        return new Ev(type, key, opKey, comm, rank, peer, channel, isSend, state, arg, timeNs, h);
    }

    static final int OP_START = 0;
    static final int OP_STOP = 1;
    static final int STEP_START = 2;
    static final int STEP_STATE = 3;
    static final int STEP_STOP = 4;
    /** A QP work request: comm = qpNum, channel = device, arg = length. */
    static final int QP_START = 5;

    static final int QP_STOP = 6;

    static Ev qpStart(final long wr, final int device, final long qpNum, final long length, final long t) {
        return new Ev(QP_START, wr, 0, qpNum, 0, 0, device, true, 0, length, t);
    }

    static Ev qpStop(final long wr, final long t) {
        return new Ev(QP_STOP, wr, 0, 0, 0, 0, 0, false, 0, 0, t);
    }

    static Ev opStart(
            final long op,
            final long comm,
            final int rank,
            final int peer,
            final int ch,
            final boolean send,
            final long t) {
        return new Ev(OP_START, op, 0, comm, rank, peer, ch, send, 0, 0, t);
    }

    static Ev opStop(final long op, final long t) {
        return new Ev(OP_STOP, op, 0, 0, 0, 0, 0, false, 0, 0, t);
    }

    static Ev stepStart(final long step, final long op, final long t) {
        return new Ev(STEP_START, step, op, 0, 0, 0, 0, false, 0, 0, t);
    }

    static Ev state(final long step, final int state, final long arg, final long t) {
        return new Ev(STEP_STATE, step, 0, 0, 0, 0, 0, false, state, arg, t);
    }

    static Ev stepStop(final long step, final long t) {
        return new Ev(STEP_STOP, step, 0, 0, 0, 0, 0, false, 0, 0, t);
    }

    void feed(final TelemetryListener l) {
        l.onHost(host);
        switch (type) {
            case OP_START -> l.onProxyOpStart(key, comm, rank, peer, channel, isSend, timeNs);
            case OP_STOP -> l.onProxyOpStop(key, timeNs);
            case STEP_START -> l.onProxyStepStart(key, opKey, 0, timeNs);
            case STEP_STATE -> l.onProxyStepState(key, state, arg, timeNs);
            case QP_START -> l.onQpStart(key, channel, comm, 2, arg, timeNs);
            case QP_STOP -> l.onQpStop(key, timeNs);
            default -> l.onProxyStepStop(key, timeNs);
        }
    }
}
