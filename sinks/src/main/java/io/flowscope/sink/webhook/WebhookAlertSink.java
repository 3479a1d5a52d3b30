package io.flowscope.sink.webhook;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.sink.BatchingProcessor;
import io.flowscope.sink.SinkCounters;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An {@link AnomalySink} that notifies a webhook through a {@link BatchingProcessor} (its own thread, bounded
 * exponential back-off with jitter). Never blocks the caller beyond a short lock.
 * <p>
 * <b>Generic format</b>: a notification per state change, de-duplicated (same anomaly id and state once, see
 * {@link Notification#dedupKey()}); duplicates are counted as refused.
 * <p>
 * <b>Alertmanager format</b>, as Prometheus sends alerts: every open anomaly's alert is sent when it opens and then
 * again every {@code resendInterval} by a timer thread of this sink, each time with {@code endsAt} ahead of now, so
 * Alertmanager keeps it firing however long it stays open; resolving sends {@code endsAt} = the resolution time. The
 * alert's identity is its label set ({@link WebhookPayloads#labels}): when an update changes it (the severity rises,
 * the culprit is revised) the old alert is resolved and the new one fired at once; an update that only refreshes
 * evidence is carried by the next re-send (counted as refused now). Two open anomalies with one label set are one
 * alert, resolved when the last of them resolves. State: the open anomalies (at most {@code dedupCapacity}); after a
 * restart of the service, those an earlier run announced come back through {@link #onStillOpen}.
 */
public final class WebhookAlertSink implements AnomalySink, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(WebhookAlertSink.class.getName());

    /** An open anomaly as last published, and its alert's label set. */
    private record Open(Anomaly anomaly, String identity) {}

    private final WebhookConfig config;
    private final boolean alertmanager;
    private final WebhookPayloads payloads;
    private final BatchingProcessor<Notification> processor;
    private final Object lock = new Object();
    /** Generic: sent notification keys. Guarded by lock. */
    private final Map<String, Boolean> seen;
    /** Alertmanager: open anomalies by id, oldest first; and how many of them hold each label set. Guarded by lock. */
    private final LinkedHashMap<Long, Open> open = new LinkedHashMap<>();

    private final Map<String, Integer> holders = new HashMap<>();
    private final ScheduledExecutorService resender;
    private long duplicates;
    private long resends;
    private long skippedRounds;
    private long forgotten;

    public WebhookAlertSink(final WebhookConfig config) {
        this.config = config;
        this.alertmanager = config.format() == WebhookFormat.ALERTMANAGER;
        this.payloads = new WebhookPayloads(config);
        this.processor = new BatchingProcessor<>(config.processor(), new WebhookExporter(config));
        final int capacity = config.dedupCapacity();
        this.seen = new LinkedHashMap<>(16, 0.75f, false) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(final Map.Entry<String, Boolean> eldest) {
                return size() > capacity;
            }
        };
        if (alertmanager) {
            final String name = config.processor().name() + "-resend";
            resender = Executors.newSingleThreadScheduledExecutor(r -> {
                final Thread t = new Thread(r, name);
                t.setDaemon(true);
                return t;
            });
            final long every = config.resendInterval().toNanos();
            resender.scheduleAtFixedRate(this::resendOpen, every, every, TimeUnit.NANOSECONDS);
        } else {
            resender = null;
        }
    }

    @Override
    public void onOpened(final Anomaly anomaly) {
        submit(anomaly, Notification.Event.OPENED);
    }

    @Override
    public void onUpdated(final Anomaly anomaly) {
        submit(anomaly, Notification.Event.UPDATED);
    }

    @Override
    public void onResolved(final Anomaly anomaly) {
        submit(anomaly, Notification.Event.RESOLVED);
    }

    /**
     * Alertmanager: an anomaly an earlier run of the service announced, still open after its restart, is taken up
     * again: its alert is sent now (as a re-send, with the labels it fired under, so Alertmanager sees the alert it
     * has) and re-sent from then on, so it does not expire while the anomaly lasts; its resolution ends it. Generic:
     * nothing, it was notified.
     */
    @Override
    public void onStillOpen(final Anomaly anomaly) {
        if (alertmanager) {
            submit(anomaly, Notification.Event.RESENT);
        }
    }

    private void submit(final Anomaly anomaly, final Notification.Event event) {
        // the label set is computed before the lock: the host-name lookup may take its own
        final String identity = alertmanager ? payloads.identity(anomaly) : null;
        synchronized (lock) {
            if (!alertmanager) {
                final Notification n = new Notification(anomaly, event);
                if (seen.putIfAbsent(n.dedupKey(), Boolean.TRUE) != null) {
                    duplicates++;
                    return;
                }
                processor.offer(n);
            } else if (event == Notification.Event.RESOLVED) {
                resolve(anomaly);
            } else {
                fire(anomaly, identity, event);
            }
        }
    }

    /** Under lock. */
    private void fire(final Anomaly a, final String identity, final Notification.Event event) {
        final Open before = open.get(a.id());
        if (before != null && before.identity().equals(identity)) {
            open.put(a.id(), new Open(a, identity)); // the next re-send carries the new evidence
            duplicates++;
            return;
        }
        if (before != null) {
            // a new label set is a new alert in Alertmanager: the old one ends now, unless another anomaly holds it
            release(
                    before,
                    before.anomaly()
                            .resolvedAt(
                                    Math.max(a.windowEndNs(), before.anomaly().startNs())));
        } else if (open.size() >= config.dedupCapacity()) {
            final Iterator<Open> eldest = open.values().iterator();
            final Open dropped = eldest.next();
            eldest.remove();
            holders.computeIfPresent(dropped.identity(), (k, n) -> n == 1 ? null : n - 1);
            if (forgotten++ == 0) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "{0}: more than {1} open alerts; the oldest are no longer re-sent "
                                + "and expire in Alertmanager",
                        config.processor().name(),
                        config.dedupCapacity());
            }
        }
        open.put(a.id(), new Open(a, identity));
        if (holders.merge(identity, 1, Integer::sum) == 1 || before == null) {
            processor.offer(new Notification(a, event));
        }
    }

    /** Under lock. */
    private void resolve(final Anomaly resolved) {
        final Open o = open.remove(resolved.id());
        if (o == null) {
            duplicates++; // resolved twice, or never seen open
            return;
        }
        // with the labels it fired under (a resolution that revises the culprit still ends that alert)
        release(
                o,
                new Anomaly(
                        o.anomaly().id(),
                        o.anomaly().kind(),
                        o.anomaly().culprit(),
                        o.anomaly().severity(),
                        o.anomaly().startNs(),
                        o.anomaly().detectedNs(),
                        resolved.resolvedNs(),
                        resolved.evidence(),
                        resolved.windowStartNs(),
                        resolved.windowEndNs(),
                        resolved.summary()));
    }

    /** Under lock: one holder of {@code o}'s label set fewer; the last one sends the alert's resolution. */
    private void release(final Open o, final Anomaly resolved) {
        final Integer left = holders.computeIfPresent(o.identity(), (k, n) -> n == 1 ? null : n - 1);
        if (left == null) {
            processor.offer(new Notification(resolved, Notification.Event.RESOLVED));
        } else {
            duplicates++; // another open anomaly keeps this alert firing
        }
    }

    /**
     * The timer: every open alert once more (one per label set). Under the lock, so a resolution is never queued
     * before a re-send of the same alert taken earlier. Skipped while the previous round is still queued (the
     * receiver is down or slow): re-sends never pile up, and the round after it is delivered carries the latest.
     */
    private void resendOpen() {
        try {
            synchronized (lock) {
                if (open.isEmpty()) {
                    return;
                }
                if (processor.counters().queued() > 0) {
                    skippedRounds++;
                    return;
                }
                final Set<String> sent = new HashSet<>();
                for (final Open o : open.values()) {
                    if (sent.add(o.identity())) {
                        processor.offer(new Notification(o.anomaly(), Notification.Event.RESENT));
                        resends++;
                    }
                }
            }
        } catch (final RuntimeException e) {
            // a timer task that throws is never run again: log and keep the schedule
            LOG.log(System.Logger.Level.WARNING, config.processor().name() + ": re-send round failed", e);
        }
    }

    public boolean flush(final Duration timeout) {
        return processor.flush(timeout);
    }

    /** {@code refused} = notifications not sent: duplicates, evidence-only updates, alerts another anomaly holds. */
    public SinkCounters counters() {
        synchronized (lock) {
            return processor.counters().withRefused(duplicates);
        }
    }

    /** Alertmanager: alerts re-sent by the timer so far (also in {@code offered}). */
    public long resends() {
        synchronized (lock) {
            return resends;
        }
    }

    /** Alertmanager: re-send rounds skipped because the previous one was still queued. */
    public long skippedResendRounds() {
        synchronized (lock) {
            return skippedRounds;
        }
    }

    /** Alertmanager: open anomalies no longer re-sent because more than {@code dedupCapacity} were open. */
    public long forgottenOpenAlerts() {
        synchronized (lock) {
            return forgotten;
        }
    }

    /** Alertmanager: the anomalies whose alerts are being re-sent now. */
    public int openAlerts() {
        synchronized (lock) {
            return open.size();
        }
    }

    public String lastFailure() {
        return processor.lastFailure();
    }

    /**
     * Stops re-sending and delivers what is queued. Open alerts are not resolved (a collector restarting is not the
     * end of an anomaly): Alertmanager lets them resolve at their last {@code endsAt} unless they are sent again.
     */
    @Override
    public void close() {
        if (resender != null) {
            resender.shutdownNow();
            try {
                resender.awaitTermination(5, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        processor.shutdown(Duration.ofSeconds(10));
    }

    @Override
    public String toString() {
        return "WebhookAlertSink{" + config + '}';
    }
}
