package io.flowscope.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@link EventBuffer}'s order: by time, ties in insertion order, at any simulated time (a demo runs for days). */
class EventBufferTest {
    /** 2^41 ns: 36 simulated minutes, twice the range the sort key once had for absolute times. */
    private static final long LATE = 1L << 41;

    @Test
    void ordersEventsByTimeThenInsertionFarPastTwoToTheForty() {
        final EventBuffer b = new EventBuffer();
        b.key(LATE + 30, EventBuffer.OP_STOP, 0, 3);
        b.key(LATE + 10, EventBuffer.OP_STOP, 1, 1);
        b.key(LATE + 30, EventBuffer.OP_STOP, 2, 4);
        b.key(LATE + 20, EventBuffer.OP_STOP, 3, 2);
        b.sort();

        assertThat(drainNodes(b, 4)).containsExactly(1, 3, 0, 2);
    }

    @Test
    void keepsPendingEventsFirstOnTiesAcrossACompaction() {
        final EventBuffer b = new EventBuffer();
        b.key(LATE + 10, EventBuffer.OP_STOP, 0, 1);
        b.key(LATE + 50, EventBuffer.OP_STOP, 1, 2);
        b.sort();
        assertThat(drainNodes(b, 1)).containsExactly(0);
        b.compact();
        b.key(LATE + 50, EventBuffer.OP_STOP, 2, 3);
        b.key(LATE + 40, EventBuffer.OP_STOP, 3, 4);
        b.sort();

        assertThat(drainNodes(b, 3)).containsExactly(3, 1, 2);
    }

    @Test
    void refusesASpanItCannotOrder() {
        final EventBuffer b = new EventBuffer();
        b.key(LATE, EventBuffer.OP_STOP, 0, 1);
        b.key(LATE + EventBuffer.MAX_SPAN, EventBuffer.OP_STOP, 1, 2);

        assertThatThrownBy(b::sort).isInstanceOf(IllegalStateException.class).hasMessageContaining("2^40");
    }

    private static java.util.List<Integer> drainNodes(final EventBuffer b, final int n) {
        final java.util.List<Integer> nodes = new java.util.ArrayList<>();
        for (int i = 0; i < n && b.hasNext(); i++) {
            nodes.add(b.nextNode());
            b.emitNext(
                    new io.flowscope.api.input.TelemetryListener() {
                        @Override
                        public void onProxyOpStart(
                                final long opKey,
                                final long commHash,
                                final int rank,
                                final int peer,
                                final int channel,
                                final boolean isSend,
                                final long timeNs) {}

                        @Override
                        public void onProxyOpStop(final long opKey, final long timeNs) {}

                        @Override
                        public void onProxyStepStart(
                                final long stepKey, final long opKey, final int step, final long timeNs) {}

                        @Override
                        public void onProxyStepState(
                                final long stepKey, final int state, final long transSize, final long timeNs) {}

                        @Override
                        public void onProxyStepStop(final long stepKey, final long timeNs) {}
                    },
                    new long[4]);
        }
        return nodes;
    }
}
