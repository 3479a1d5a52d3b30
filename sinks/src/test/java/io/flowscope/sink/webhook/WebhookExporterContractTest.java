package io.flowscope.sink.webhook;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.sink.EventClock;
import io.flowscope.sink.Exporter;
import io.flowscope.sink.ExporterContractTest;
import io.flowscope.sink.testing.Anomalies;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;

class WebhookExporterContractTest extends ExporterContractTest<Notification> {
    private Receiver receiver;

    @Override
    protected Exporter<Notification> newExporter() throws Exception {
        receiver = Receiver.start();
        return new WebhookExporter(WebhookConfig.builder(receiver.url())
                .secret("k")
                .clock(EventClock.epoch())
                .build());
    }

    @Override
    protected List<Notification> items(final int offset, final int n) {
        return IntStream.range(offset, offset + n)
                .mapToObj(i -> new Notification(
                        Anomalies.slowLink(i, 1, 2, i, i + 1, Severity.WARNING, 1_000L + i, -1),
                        Notification.Event.OPENED))
                .toList();
    }

    @Override
    protected long delivered() throws Exception {
        long n = 0;
        if (receiver != null) {
            for (final Receiver.Request r : receiver.accepted) {
                n += new ObjectMapper().readTree(r.body()).size();
            }
        }
        return n;
    }

    @AfterEach
    void stopTheReceiver() {
        if (receiver != null) {
            receiver.close();
        }
    }
}
