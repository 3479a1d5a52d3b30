package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.input.TelemetryListener;
import io.flowscope.collector.journal.JournalFormat;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.journal.JournalWriter;
import io.flowscope.collector.journal.TraceReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An idle host's time is {@code advanceTo}, journaled as its own entry, never a record: and journals and traces
 * written before, which carried it as a ProxyOp stop of a reserved key, read back as {@code advanceTo} too.
 */
class IdleTimeJournalTest {
    @TempDir
    Path dir;

    /** The host, stop and advanceTo calls a reader hands on, in order. */
    private static final class Calls implements TelemetryListener, JournalReader.Meta {
        final List<String> calls = new ArrayList<>();

        @Override
        public void onHost(final long hostId) {
            calls.add("host " + hostId);
        }

        @Override
        public void advanceTo(final long hostId, final long timeNs) {
            calls.add("advanceTo " + hostId + " " + timeNs);
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
            calls.add("opStart " + opKey + " " + timeNs);
        }

        @Override
        public void onProxyOpStop(final long opKey, final long timeNs) {
            calls.add("opStop " + opKey + " " + timeNs);
        }

        @Override
        public void onProxyStepStart(final long stepKey, final long opKey, final int step, final long timeNs) {}

        @Override
        public void onProxyStepState(final long stepKey, final int state, final long transSize, final long timeNs) {}

        @Override
        public void onProxyStepStop(final long stepKey, final long timeNs) {}
    }

    private List<String> readBack() {
        final Calls calls = new Calls();
        try (JournalReader r = new JournalReader(dir)) {
            while (r.read(calls, calls, 10) > 0) {
                // all
            }
            assertThat(r.corruptDocuments()).isZero();
        }
        return calls.calls;
    }

    @Test
    void shouldJournalAdvanceToAsItsOwnEntryWithItsHostLeavingTheCurrentHostAsItWas() {
        try (JournalWriter w = new JournalWriter(dir, RollCycles.FAST_HOURLY, 0, 0)) {
            w.onHost(7);
            w.onProxyOpStart(5, 0xABC, 0, 1, 0, true, 1_000);
            w.advanceTo(9, 5_000);
            w.onProxyOpStop(5, 6_000);
            w.flush(System.currentTimeMillis() * 1_000_000L);
        }
        assertThat(readBack()).containsExactly("host 7", "opStart 5 1000", "advanceTo 9 5000", "opStop 5 6000");
    }

    @Test
    void shouldReadAnIdleTickOfAJournalWrittenBeforeAdvanceToAsAdvanceToOfItsHost() {
        // what the service journaled before: the idle host, a stop of the tick key, the host it was on
        try (JournalWriter w = new JournalWriter(dir, RollCycles.FAST_HOURLY, 0, 0)) {
            w.onHost(7);
            w.onProxyOpStart(5, 0xABC, 0, 1, 0, true, 1_000);
            w.onHost(9);
            w.onProxyOpStop(JournalFormat.LEGACY_IDLE_TICK_KEY, 5_000);
            w.onHost(7);
            w.onProxyOpStop(5, 6_000);
            w.flush(System.currentTimeMillis() * 1_000_000L);
        }
        assertThat(readBack())
                .containsExactly("host 7", "opStart 5 1000", "host 9", "advanceTo 9 5000", "host 7", "opStop 5 6000");
    }

    @Test
    void shouldReadTheIdleTicksOfARealTraceAsAdvanceToOfTheirHostAndNoneAsAStop() {
        // testdata/traces/README.md: 444 idle ticks in this recording, each a proxyOpStop of the tick key
        final Calls calls = new Calls();
        try (TraceReader r = new TraceReader(Path.of("../testdata/traces/socket-gpu-r1-4ms-ar-4m/events.jsonl.gz"))) {
            while (r.read(calls, new JournalReader.Meta() {}, 1000) > 0) {
                // all
            }
            assertThat(r.corruptDocuments()).isZero();
        }
        assertThat(calls.calls.stream().filter(c -> c.startsWith("advanceTo "))).hasSize(444);
        assertThat(calls.calls).noneMatch(c -> c.startsWith("opStop " + JournalFormat.LEGACY_IDLE_TICK_KEY + " "));
        // each tick is on the host the last "host" line named
        String host = null;
        for (final String c : calls.calls) {
            if (c.startsWith("host ")) {
                host = c.substring(5);
            } else if (c.startsWith("advanceTo ")) {
                assertThat(c.split(" ")[1]).isEqualTo(host);
            }
        }
    }
}
