package io.flowscope.sink.influx;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SeriesLimiterTest {
    @Test
    void seriesBeyondTheCapAreRefusedAndCountedWhileKnownSeriesStayAdmitted() {
        final SeriesLimiter limiter = new SeriesLimiter(2);

        assertThat(limiter.admit("flow,rank=0")).isTrue();
        assertThat(limiter.admit("flow,rank=1")).isTrue();
        assertThat(limiter.admit("flow,rank=2")).isFalse();
        assertThat(limiter.admit("flow,rank=0")).isTrue();
        assertThat(limiter.admit("flow,rank=3")).isFalse();

        assertThat(limiter.refused()).isEqualTo(2);
        assertThat(limiter.series()).isEqualTo(2);
    }
}
