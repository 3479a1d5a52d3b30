package io.flowscope.sink;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ExportResultTest {
    @Test
    void anHttpAnswerIsDeliveredRetryableOrFailed() {
        assertThat(ExportResult.ofHttpStatus(200)).isEqualTo(ExportResult.SUCCESS);
        assertThat(ExportResult.ofHttpStatus(204)).isEqualTo(ExportResult.SUCCESS);
        for (final int later : new int[] {500, 502, 503, 408, 429}) {
            assertThat(ExportResult.ofHttpStatus(later)).as("%d", later).isEqualTo(ExportResult.RETRYABLE);
        }
        for (final int never : new int[] {400, 401, 403, 404, 413, 301, -1}) {
            assertThat(ExportResult.ofHttpStatus(never)).as("%d", never).isEqualTo(ExportResult.FAILED);
        }
    }
}
