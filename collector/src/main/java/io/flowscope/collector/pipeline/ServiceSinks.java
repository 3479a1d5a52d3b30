package io.flowscope.collector.pipeline;

import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.summary.CollectiveSink;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.api.summary.FlowSummarySink;
import io.flowscope.collector.config.SinksConfig;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.SinkCounters;
import io.flowscope.sink.influx.InfluxConfig;
import io.flowscope.sink.influx.InfluxSchema;
import io.flowscope.sink.influx.InfluxSink;
import io.flowscope.sink.webhook.WebhookAlertSink;
import io.flowscope.sink.webhook.WebhookConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The sinks the configuration asks for ({@code sinks.*}), fed from the drain thread: flow and collective summaries
 * (InfluxDB) and the anomaly events the service announces (InfluxDB and every webhook). Each sink encodes on the
 * caller's thread and queues without blocking; its own worker does the I/O. Counters are read from any thread.
 */
public final class ServiceSinks implements FlowSummarySink, CollectiveSink, AutoCloseable {
    /** One sink's name, kind and live counters, for /metrics and /api/health. */
    public record Status(String name, String kind, String target, SinkCounters counters, String lastFailure) {}

    /** The runbooks page the service serves beside its live page (over docs/runbooks.md, packaged beside it). */
    public static final String RUNBOOKS = "runbooks.html";

    private final InfluxSink influx;
    private final List<WebhookAlertSink> webhooks = new ArrayList<>();
    private final List<AnomalySink> anomalySinks = new ArrayList<>();
    private final List<Supplier<Status>> statuses = new ArrayList<>();
    /** Who the ranks are: the drain thread's pipeline's, once it runs ({@link #rankNames(RankNames)}). */
    private volatile RankNames rankNames = RankNames.NONE;

    public ServiceSinks(final SinksConfig config) {
        this(config, InfluxSchema::hexHost);
    }

    /**
     * Each sink built from its own slice of {@code config} ({@link SinksConfig.Influx}, each
     * {@link SinksConfig.Webhook}); {@code hostNames}: a host id's {@code host} tag (InfluxDB) and label (webhooks).
     */
    public ServiceSinks(final SinksConfig config, final LongFunction<String> hostNames) {
        final SinksConfig.Influx ic = config.influx();
        if (ic != null) {
            influx = influx(ic, hostNames);
            anomalySinks.add(influx);
            final String target = ic.url() + " db=" + ic.database();
            statuses.add(() -> new Status("influxdb", "influxdb", target, influx.counters(), influx.lastFailure()));
        } else {
            influx = null;
        }
        int i = 0;
        for (final SinksConfig.Webhook w : config.webhooks()) {
            final WebhookAlertSink sink = webhook(i, w, config.liveUrl(), hostNames);
            webhooks.add(sink);
            anomalySinks.add(sink);
            final String name = "webhook" + i;
            final String target = w.url().toString();
            statuses.add(() -> new Status(name, "webhook", target, sink.counters(), sink.lastFailure()));
            i++;
        }
    }

    private InfluxSink influx(final SinksConfig.Influx ic, final LongFunction<String> hostNames) {
        return new InfluxSink(InfluxConfig.builder(ic.url(), ic.database())
                .maxSeries(ic.maxSeries())
                .hostNames(hostNames)
                .rankNames((h, c, r) -> rankNames.of(h, c, r))
                .auth(ic.auth())
                .tls(ic.tls())
                .processor(ProcessorConfig.builder()
                        .name("flowscope-influx")
                        .maxBatch(ic.batchSize())
                        .queueCapacity(ic.queueCapacity())
                        .maxAttempts(ic.maxAttempts())
                        .build())
                .build());
    }

    /** Webhook {@code i}; {@code liveUrl}: the live page alerts link to, whose runbooks it links to by default. */
    private WebhookAlertSink webhook(
            final int i,
            final SinksConfig.Webhook w,
            final java.net.URI liveUrl,
            final LongFunction<String> hostNames) {
        final java.net.URI runbooks =
                w.runbookUrl() != null ? w.runbookUrl() : liveUrl != null ? liveUrl.resolve(RUNBOOKS) : null;
        final SinksConfig.Delivery d = w.delivery();
        final WebhookConfig.Builder b = WebhookConfig.builder(w.url())
                .format(w.format())
                .hostNames(hostNames)
                .rankNames((h, c, r) -> rankNames.of(h, c, r))
                .resendInterval(Duration.ofMillis(w.resendIntervalMs()))
                .liveUrl(liveUrl)
                .runbookUrl(runbooks)
                .auth(w.auth())
                .tls(w.tls())
                .processor(ProcessorConfig.builder()
                        .name("flowscope-webhook-" + i)
                        .queueCapacity(d.queueCapacity())
                        .maxBatch(d.maxBatch())
                        .flushInterval(Duration.ofMillis(d.flushIntervalMs()))
                        .maxAttempts(w.maxAttempts())
                        .initialBackoff(Duration.ofMillis(d.initialBackoffMs()))
                        .maxBackoff(Duration.ofMillis(d.maxBackoffMs()))
                        .jitter(d.jitter())
                        .build());
        if (!w.secret().isEmpty()) {
            b.secret(w.secret());
        }
        return new WebhookAlertSink(b.build());
    }

    /** A rank's process and GPU as the pipeline learnt them (the sinks' gpu tag, alert annotations). */
    public void rankNames(final RankNames names) {
        this.rankNames = names;
    }

    public boolean isEmpty() {
        return statuses.isEmpty();
    }

    @Override
    public void onSummary(final FlowSummary summary) {
        if (influx != null) {
            influx.onSummary(summary);
        }
    }

    @Override
    public void onCollective(final CollectiveSummary summary) {
        if (influx != null) {
            influx.onCollective(summary);
        }
    }

    /**
     * An anomaly event the service announces. Recovered ones were announced by an earlier run: only those still open
     * after a restart's catch-up ({@link Pipeline#STILL_OPEN}) are handed on, to {@link AnomalySink#onStillOpen}.
     */
    public void onAnomaly(final AnomalyEvent e) {
        if (e.recovered()) {
            if (Pipeline.STILL_OPEN.equals(e.type())) {
                anomalySinks.forEach(s -> s.onStillOpen(e.anomaly()));
            }
            return;
        }
        for (final AnomalySink s : anomalySinks) {
            switch (e.type()) {
                case "opened" -> s.onOpened(e.anomaly());
                case "updated" -> s.onUpdated(e.anomaly());
                case "resolved" -> s.onResolved(e.anomaly());
                default -> throw new IllegalArgumentException("anomaly event type " + e.type());
            }
        }
    }

    public List<Status> statuses() {
        final List<Status> out = new ArrayList<>(statuses.size());
        statuses.forEach(s -> out.add(s.get()));
        return out;
    }

    /** For /api/health: name → counters and the last failure. */
    public Map<String, Object> health() {
        final Map<String, Object> m = new LinkedHashMap<>();
        for (final Status s : statuses()) {
            final Map<String, Object> one = new LinkedHashMap<>();
            one.put("kind", s.kind());
            one.put("target", s.target());
            one.put("counters", s.counters());
            one.put("lastFailure", s.lastFailure());
            m.put(s.name(), one);
        }
        return m;
    }

    /** Writes what is queued, waiting at most {@code timeout} per sink. */
    public void flush(final Duration timeout) {
        if (influx != null) {
            influx.flush(timeout);
        }
        webhooks.forEach(w -> w.flush(timeout));
    }

    @Override
    public void close() {
        if (influx != null) {
            influx.close();
        }
        webhooks.forEach(WebhookAlertSink::close);
    }
}
