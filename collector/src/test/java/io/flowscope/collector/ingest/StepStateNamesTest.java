package io.flowscope.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.input.StepState;
import io.flowscope.ring.NcclState;
import org.junit.jupiter.api.Test;

/**
 * The ProxyStep states of the input interface ({@code api}'s {@link StepState}) are the ring's NCCL values
 * ({@link NcclState}): the adapter hands a record's state on as it is, so the two must never drift apart.
 */
class StepStateNamesTest {
    @Test
    void shouldGiveTheInputsStepStatesTheRingsNcclValues() {
        assertThat(StepState.SEND_GPU_WAIT).isEqualTo(NcclState.PROXY_STEP_SEND_GPU_WAIT);
        assertThat(StepState.SEND_WAIT).isEqualTo(NcclState.PROXY_STEP_SEND_WAIT);
        assertThat(StepState.RECV_WAIT).isEqualTo(NcclState.PROXY_STEP_RECV_WAIT);
        assertThat(StepState.RECV_FLUSH_WAIT).isEqualTo(NcclState.PROXY_STEP_RECV_FLUSH_WAIT);
        assertThat(StepState.RECV_GPU_WAIT).isEqualTo(NcclState.PROXY_STEP_RECV_GPU_WAIT);
        assertThat(StepState.SEND_PEER_WAIT).isEqualTo(NcclState.PROXY_STEP_SEND_PEER_WAIT);
        assertThat(StepState.HIGHEST_NCCL_STATE).isEqualTo(NcclState.CE_BATCH_COMPLETE);
        assertThat(NcclState.name(StepState.HIGHEST_NCCL_STATE + 1)).startsWith("State");
    }
}
