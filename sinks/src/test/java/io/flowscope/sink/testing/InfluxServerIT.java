package io.flowscope.sink.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InfluxServerIT {
    @Test
    void withoutInfluxdTheTestsFailWithTheCommandThatInstallsIt(@TempDir final Path empty) {
        assertThatThrownBy(() -> InfluxServer.influxdBinary(null, empty.toString()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("apt-get install -y --no-install-recommends influxdb");
    }

    @Test
    void theServerStartsOnLoopbackAnswersPingAndIsGoneAfterStop() throws Exception {
        try (InfluxServer server = new InfluxServer().start()) {
            final long pid = server.pid();
            assertThat(server.url().getHost()).isEqualTo("127.0.0.1");
            assertThat(server.pingStatus()).isEqualTo(204);

            server.stop();

            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .isFalse();
            assertThat(server.pingStatus()).isEqualTo(-1);
        }
    }
}
