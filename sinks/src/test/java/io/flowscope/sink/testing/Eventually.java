package io.flowscope.sink.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition that another thread makes true; fails with a message when it never does (not a timing assertion: the limit is generous). */
public final class Eventually {
    private Eventually() {}

    public static void await(final BooleanSupplier condition, final Supplier<String> whatFailed) {
        await(Duration.ofSeconds(60), condition, whatFailed);
    }

    public static void await(final Duration limit, final BooleanSupplier condition, final Supplier<String> whatFailed) {
        final long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not reached within " + limit + ": " + whatFailed.get());
            }
            try {
                Thread.sleep(10);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }
}
