package io.flowscope.sink.webhook;

import io.flowscope.sink.ExportResult;
import io.flowscope.sink.Exporter;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;

/**
 * POSTs one JSON body per batch of notifications, signed with HMAC-SHA256 when a secret is configured, with the
 * configured {@code Authorization} (bearer or basic) and TLS settings. 2xx = delivered; 5xx, 408, 429, timeouts and
 * refused connections are retryable; other 4xx (a wrong password: 401) fail the batch.
 */
public final class WebhookExporter implements Exporter<Notification> {
    private final WebhookConfig config;
    private final WebhookPayloads payloads;
    private final HmacSigner signer;
    private final HttpClient client;
    private volatile boolean shutdown;
    private volatile String lastError = "";

    public WebhookExporter(final WebhookConfig config) {
        this.config = config;
        this.payloads = new WebhookPayloads(config);
        final byte[] secret = config.secret();
        this.signer = secret.length == 0 ? null : new HmacSigner(secret);
        final HttpClient.Builder client = HttpClient.newBuilder().connectTimeout(config.requestTimeout());
        if (!config.tls().isDefault()) {
            client.sslContext(config.tls().sslContext());
        }
        this.client = client.build();
    }

    @Override
    public ExportResult export(final List<Notification> batch) {
        if (shutdown) {
            lastError = "exporter shut down";
            return ExportResult.FAILED;
        }
        final byte[] body = payloads.body(batch);
        final HttpRequest.Builder request = HttpRequest.newBuilder(config.url())
                .timeout(config.requestTimeout())
                .header("Content-Type", "application/json")
                .header("User-Agent", "flowscope-webhook")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (signer != null) {
            request.header(config.signatureHeader(), signer.sign(body));
        }
        if (!config.auth().isNone()) {
            request.header("Authorization", config.auth().header());
        }
        final HttpResponse<String> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (final IOException e) {
            lastError = "POST " + config.url() + " failed: " + e;
            return ExportResult.RETRYABLE;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            lastError = "interrupted";
            return ExportResult.RETRYABLE;
        }
        final int status = response.statusCode();
        if (status / 100 == 2) {
            return ExportResult.SUCCESS;
        }
        final String why =
                response.body() == null ? "" : response.body().strip().replaceAll("\\s+", " ");
        lastError = "POST " + config.url() + " answered " + status
                + (why.isEmpty() ? "" : ": " + (why.length() > 200 ? why.substring(0, 200) + "…" : why));
        return ExportResult.ofHttpStatus(status);
    }

    @Override
    public String lastError() {
        return lastError;
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public String toString() {
        return "WebhookExporter{" + config.url() + ", " + config.format() + ", signed=" + (signer != null) + ", auth="
                + config.auth() + '}';
    }
}
