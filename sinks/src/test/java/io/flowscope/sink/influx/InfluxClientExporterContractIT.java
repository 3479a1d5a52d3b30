package io.flowscope.sink.influx;

import io.flowscope.sink.Exporter;
import io.flowscope.sink.ExporterContractTest;
import io.flowscope.sink.http.ClientTls;
import io.flowscope.sink.http.HttpAuth;
import io.flowscope.sink.testing.InfluxServer;
import io.flowscope.sink.testing.RealInfluxExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealInfluxExtension.class)
class InfluxClientExporterContractIT extends ExporterContractTest<String> {
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private InfluxServer server;
    private String db;

    @BeforeEach
    void useTheRealServer(final InfluxServer influx) {
        server = influx;
        db = "contract" + DATABASES.incrementAndGet();
    }

    @Override
    protected Exporter<String> newExporter() {
        final InfluxClientExporter e = new InfluxClientExporter(
                server.url(), db, true, Duration.ofSeconds(5), HttpAuth.NONE, ClientTls.DEFAULT);
        e.createDatabase();
        return e;
    }

    @Override
    protected List<String> items(final int offset, final int n) {
        return IntStream.range(offset, offset + n)
                .mapToObj(i -> "contract,item=" + i + " v=" + i + "i " + (1_000L + i))
                .toList();
    }

    @Override
    protected long delivered() {
        server.execute("CREATE DATABASE \"" + db + "\"");
        return server.count(db, "SELECT count(v) FROM contract");
    }
}
