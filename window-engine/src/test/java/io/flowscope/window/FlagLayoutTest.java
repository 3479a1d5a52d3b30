package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.input.StepState;
import org.junit.jupiter.api.Test;

/**
 * The flag bit positions that {@link WindowEngine#onProxyStepState}'s branch-free code computes with: the state
 * table index by direction, the time field by seen bit, the transSize states. A bit that moves fails here (and the
 * engine's class initialization, {@link WindowEngine#checkFlagLayout}).
 */
class FlagLayoutTest {
    @Test
    void shouldIndexTheStateTableByDirectionWithoutABranch() {
        WindowEngine.checkFlagLayout();
        final long send = StepTable.SEND | StepTable.OCCUPIED | StepTable.POSTED;
        final long recv = StepTable.OCCUPIED | StepTable.POSTED | StepTable.FIRST;
        assertThat(((int) ((send & StepTable.SEND) >>> WindowEngine.SEND_TO_RECV_STATE_SHIFT)
                        ^ WindowEngine.RECV_STATES))
                .isZero();
        assertThat(((int) ((recv & StepTable.SEND) >>> WindowEngine.SEND_TO_RECV_STATE_SHIFT)
                        ^ WindowEngine.RECV_STATES))
                .isEqualTo(32);
        // Every NCCL state value a record may carry (0..30) fits below the recv half.
        assertThat(StepState.HIGHEST_NCCL_STATE).isLessThan(WindowEngine.RECV_STATES);
    }

    @Test
    void shouldKeepTheSeenBitsInBitsZeroToFiveApartFromTheFlags() {
        final int[] seen = {
            StepTable.SEEN_8,
            StepTable.SEEN_20,
            StepTable.SEEN_9,
            StepTable.SEEN_10,
            StepTable.SEEN_11,
            StepTable.SEEN_12
        };
        int all = 0;
        for (int i = 0; i < seen.length; i++) {
            assertThat(Integer.bitCount(seen[i])).isEqualTo(1);
            assertThat(Integer.numberOfTrailingZeros(seen[i])).isLessThan(6);
            all |= seen[i];
        }
        assertThat(all).isEqualTo(0x3F).isEqualTo(StepTable.SEEN_MASK);
        assertThat(StepTable.SEND).isEqualTo(1L << 9);
        assertThat((StepTable.POSTED | StepTable.COMPLETED | StepTable.FIRST | StepTable.SEND | StepTable.OCCUPIED)
                        & 0x3F)
                .isZero();
        assertThat(StepTable.OCCUPIED).isLessThan(1L << StepTable.HOST_SHIFT);
    }

    @Test
    void shouldCarryTransSizeOnlyFor9And11() {
        final int[] seen = {
            StepTable.SEEN_8,
            StepTable.SEEN_20,
            StepTable.SEEN_9,
            StepTable.SEEN_10,
            StepTable.SEEN_11,
            StepTable.SEEN_12
        };
        for (final int bit : seen) {
            final long carries = -(long) ((bit >>> StepTable.SEEN_9_BIT | bit >>> StepTable.SEEN_11_BIT) & 1);
            final boolean expected = bit == StepTable.SEEN_9 || bit == StepTable.SEEN_11;
            assertThat(carries).isEqualTo(expected ? -1L : 0L);
        }
    }
}
