package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link Robust#compute(double, double)} (warm start from guesses) gives {@link Robust#compute()}'s bits exactly. */
class RobustTest {
    private static final double[] SPECIAL = {
        0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.0, -1.0
    };

    @Test
    void warmStartGivesTheSameMedianAndMadAsAColdOne() {
        final Random random = new Random(42);
        for (int trial = 0; trial < 20_000; trial++) {
            final int n = trial % 10 == 0 ? 1 + random.nextInt(5000) : 1 + random.nextInt(40);
            final double[] v = new double[n];
            final int style = random.nextInt(6);
            for (int i = 0; i < n; i++) {
                v[i] = switch (style) {
                    case 0 -> random.nextGaussian();
                    case 1 -> random.nextInt(4);
                    case 2 -> random.nextInt(100) == 0 ? random.nextGaussian() : 1.0;
                    case 3 -> random.nextInt(50) == 0 ? SPECIAL[random.nextInt(SPECIAL.length)] : random.nextInt(3);
                    case 4 -> random.nextInt(3) == 0 ? 0.0 : random.nextGaussian();
                    default -> SPECIAL[random.nextInt(SPECIAL.length)];
                };
            }
            final Robust cold = new Robust();
            for (final double x : v) {
                cold.add(x);
            }
            cold.compute();
            final double[] guesses = {
                Double.NaN,
                cold.median,
                cold.mad,
                v[random.nextInt(n)],
                random.nextGaussian(),
                0.0,
                -0.0,
                cold.median + 1e-9,
                Double.POSITIVE_INFINITY
            };
            final Robust warm = new Robust();
            for (int g = 0; g < guesses.length; g++) {
                warm.clear();
                for (final double x : v) {
                    warm.add(x);
                }
                final double madGuess = g % 2 == 0 ? cold.mad : guesses[(g + 3) % guesses.length];
                warm.compute(guesses[g], madGuess);
                assertThat(Double.doubleToRawLongBits(warm.median))
                        .as("median, trial %d guess %d", trial, g)
                        .isEqualTo(Double.doubleToRawLongBits(cold.median));
                assertThat(Double.doubleToRawLongBits(warm.mad))
                        .as("mad, trial %d guess %d", trial, g)
                        .isEqualTo(Double.doubleToRawLongBits(cold.mad));
            }
        }
    }
}
