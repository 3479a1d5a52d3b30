package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CompletionWindowTest {
    @Test
    void shouldComputeBandwidthAsBytesOverLastCompletionMinusFirstPost() {
        final CompletionWindow w = new CompletionWindow(8);
        w.record(1, 1_000, 2_000, 1_000);
        w.record(2, 1_500, 3_000, 3_000);

        assertThat(w.bytesInWindow()).isEqualTo(4_000);
        assertThat(w.spanNs()).isEqualTo(2_000);
        assertThat(w.bandwidthBytesPerSecond()).isEqualTo(2e9);
    }

    @Test
    void shouldKeepOnlyTheLastNCompletionsByCompletionTime() {
        final CompletionWindow w = new CompletionWindow(2);
        w.record(1, 0, 10, 1);
        w.record(2, 0, 30, 2);
        w.record(3, 5, 20, 4);

        assertThat(w.size()).isEqualTo(2);
        assertThat(w.id(0)).isEqualTo(3);
        assertThat(w.id(1)).isEqualTo(2);
        assertThat(w.bytesInWindow()).isEqualTo(6);
        assertThat(w.firstPostNs()).isEqualTo(0);
    }

    @Test
    void shouldReportACompletionOlderThanAFullWindowAsLate() {
        final CompletionWindow w = new CompletionWindow(2);
        w.record(1, 0, 20, 1);
        w.record(2, 0, 30, 1);

        assertThat(w.record(3, 0, 10, 100)).isEqualTo(CompletionWindow.LATE);
        assertThat(w.bytesInWindow()).isEqualTo(2);
    }

    @Test
    void shouldIgnoreADuplicateStepId() {
        final CompletionWindow w = new CompletionWindow(4);
        w.record(7, 0, 20, 5);

        assertThat(w.record(7, 0, 25, 5)).isEqualTo(CompletionWindow.DUPLICATE);
        assertThat(w.size()).isEqualTo(1);
        assertThat(w.bytesInWindow()).isEqualTo(5);
    }

    @Test
    void shouldOrderTimesAcrossTheWrapOfTheClock() {
        final CompletionWindow w = new CompletionWindow(2);
        final long before = Long.MAX_VALUE - 5;
        final long after = Long.MIN_VALUE + 5; // 11 ns later, wrapped
        w.record(1, before - 10, before, 10);
        w.record(2, before - 5, after, 10);

        assertThat(w.id(1)).isEqualTo(2);
        assertThat(w.lastCompletionNs()).isEqualTo(after);
        assertThat(w.firstPostNs()).isEqualTo(before - 10);
        assertThat(w.spanNs()).isEqualTo(21);
    }

    @Test
    void shouldReportZeroBandwidthWhenEmptyOrWithoutPositiveSpan() {
        final CompletionWindow w = new CompletionWindow(2);
        assertThat(w.bandwidthBytesPerSecond()).isZero();
        w.record(1, 100, 100, 10);
        assertThat(w.bandwidthBytesPerSecond()).isZero();
    }

    @Test
    void shouldRefuseASizeBelowOne() {
        assertThatThrownBy(() -> new CompletionWindow(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0");
    }

    /** Property: after any sequence of distinct completions, the window equals the top N of a sort. */
    @Test
    void shouldMatchTheTopNOfAFullSortOnRandomCompletions() {
        for (long seed = 1; seed <= 300; seed++) {
            final SplittableRandom rnd = new SplittableRandom(seed);
            final int n = 1 + rnd.nextInt(10);
            final CompletionWindow w = new CompletionWindow(n);
            final List<long[]> all = new ArrayList<>();
            final long base = rnd.nextBoolean() ? 0 : Long.MAX_VALUE - 500;
            final int count = rnd.nextInt(60);
            for (int i = 0; i < count; i++) {
                final long id = i + 1;
                final long complete = base + rnd.nextInt(1000);
                final long post = complete - rnd.nextInt(100);
                final long bytes = rnd.nextInt(1 << 20);
                w.record(id, post, complete, bytes);
                all.add(new long[] {id, post, complete, bytes});
                if (rnd.nextInt(5) == 0) {
                    assertThat(w.record(id, post, complete, bytes))
                            .as("seed %d", seed)
                            .isIn(CompletionWindow.DUPLICATE, CompletionWindow.LATE);
                }
            }
            all.sort(Comparator.<long[]>comparingLong(e -> e[2] - base).thenComparingLong(e -> e[0]));
            final List<long[]> top = all.subList(Math.max(0, all.size() - n), all.size());
            assertThat(w.size()).as("seed %d", seed).isEqualTo(top.size());
            long bytes = 0;
            for (int i = 0; i < top.size(); i++) {
                assertThat(w.id(i)).as("seed %d", seed).isEqualTo(top.get(i)[0]);
                bytes += top.get(i)[3];
            }
            assertThat(w.bytesInWindow()).as("seed %d", seed).isEqualTo(bytes);
            if (!top.isEmpty()) {
                final long firstPost =
                        top.stream().mapToLong(e -> e[1] - base).min().getAsLong() + base;
                assertThat(w.firstPostNs()).as("seed %d", seed).isEqualTo(firstPost);
                assertThat(w.spanNs()).as("seed %d", seed).isEqualTo(top.get(top.size() - 1)[2] - firstPost);
            }
        }
    }
    /** recordUnique (no duplicate scan) is record for distinct ids: same results and windows, in and out of order. */
    @Test
    void shouldRecordUniqueIdsAsRecordDoes() {
        for (long seed = 1; seed <= 200; seed++) {
            final SplittableRandom rnd = new SplittableRandom(seed);
            final int n = rnd.nextBoolean() ? CompletionWindow.DEFAULT_SIZE : 1 + rnd.nextInt(10);
            final CompletionWindow a = new CompletionWindow(n);
            final CompletionWindow b = new CompletionWindow(n);
            long time = rnd.nextBoolean() ? 0 : Long.MAX_VALUE - 5_000;
            for (int i = 0; i < 200; i++) {
                // Mostly in order, now and then an earlier completion (late or inserted).
                time += rnd.nextInt(4) == 0 ? -rnd.nextInt(50) : rnd.nextInt(50);
                final long post = time - rnd.nextInt(100);
                final long bytes = rnd.nextInt(1 << 20);
                assertThat(b.recordUnique(i + 1, post, time, bytes))
                        .as("seed %d", seed)
                        .isEqualTo(a.record(i + 1, post, time, bytes));
                assertThat(b.size()).isEqualTo(a.size());
                assertThat(b.bytesInWindow()).as("seed %d", seed).isEqualTo(a.bytesInWindow());
                for (int k = 0; k < a.size(); k++) {
                    assertThat(b.id(k)).as("seed %d", seed).isEqualTo(a.id(k));
                    assertThat(b.postNs(k)).isEqualTo(a.postNs(k));
                    assertThat(b.completeNs(k)).isEqualTo(a.completeNs(k));
                    assertThat(b.bytes(k)).isEqualTo(a.bytes(k));
                }
            }
        }
    }
}
