package io.flowscope.sink.influx;

import io.flowscope.sink.ExportResult;
import io.flowscope.sink.Exporter;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Writes batches of line-protocol points with {@code POST /write?db=..&precision=ns} (InfluxDB 1.x HTTP API,
 * JDK HTTP client). 204 = success; 5xx, timeouts and refused connections are retryable; "database not found"
 * creates the database (when configured) and is retryable; other 4xx (a malformed point) fail the batch.
 */
public final class InfluxHttpExporter implements Exporter<String>
{
    private final URI url;
    private final String database;
    private final boolean createDatabase;
    private final Duration requestTimeout;
    private final URI writeUri;
    private final HttpClient client;
    private volatile boolean shutdown;
    private volatile String lastError = "";

    public InfluxHttpExporter(final URI url, final String database, final boolean createDatabase,
        final Duration requestTimeout)
    {
        this.url = url;
        this.database = database;
        this.createDatabase = createDatabase;
        this.requestTimeout = requestTimeout;
        this.writeUri = url.resolve("/write?db=" + URLEncoder.encode(database, StandardCharsets.UTF_8) + "&precision=ns");
        this.client = HttpClient.newBuilder().connectTimeout(requestTimeout).build();
    }

    /** Sends {@code CREATE DATABASE} (idempotent). @return true when the server accepted it */
    public boolean createDatabase()
    {
        final String q = "CREATE DATABASE \"" + database + "\"";
        final HttpRequest request = HttpRequest.newBuilder(url.resolve("/query"))
            .timeout(requestTimeout)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString("q=" + URLEncoder.encode(q, StandardCharsets.UTF_8)))
            .build();
        try
        {
            final HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() / 100 == 2)
            {
                return true;
            }
            lastError = "CREATE DATABASE answered " + response.statusCode() + ": " + response.body();
            return false;
        }
        catch (final IOException e)
        {
            lastError = "CREATE DATABASE at " + url + " failed: " + e;
            return false;
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public ExportResult export(final List<String> batch)
    {
        if (shutdown)
        {
            lastError = "exporter shut down";
            return ExportResult.FAILED;
        }
        final StringBuilder body = new StringBuilder(batch.size() * 256);
        for (final String line : batch)
        {
            body.append(line).append('\n');
        }
        final HttpRequest request = HttpRequest.newBuilder(writeUri)
            .timeout(requestTimeout)
            .header("Content-Type", "text/plain; charset=utf-8")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
            .build();
        final HttpResponse<String> response;
        try
        {
            response = client.send(request, HttpResponse.BodyHandlers.ofString());
        }
        catch (final IOException e)
        {
            lastError = "POST " + writeUri + " failed: " + e;
            return ExportResult.RETRYABLE;
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            lastError = "interrupted";
            return ExportResult.RETRYABLE;
        }
        final int status = response.statusCode();
        if (status == 204 || status == 200)
        {
            return ExportResult.SUCCESS;
        }
        lastError = "POST " + writeUri + " answered " + status + ": " + response.body().strip();
        if (status == 404 && response.body().contains("database not found"))
        {
            if (createDatabase)
            {
                createDatabase();
            }
            return ExportResult.RETRYABLE;
        }
        if (status >= 500 || status == 408 || status == 429)
        {
            return ExportResult.RETRYABLE;
        }
        return ExportResult.FAILED;
    }

    @Override
    public String lastError()
    {
        return lastError;
    }

    @Override
    public void shutdown()
    {
        shutdown = true;
    }

    @Override
    public String toString()
    {
        return "InfluxHttpExporter{" + writeUri + '}';
    }
}
