package io.flowscope.sink.influx;

import io.flowscope.sink.ExportResult;
import io.flowscope.sink.Exporter;
import io.flowscope.sink.http.ClientTls;
import io.flowscope.sink.http.HttpAuth;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.influxdb.InfluxDB;
import org.influxdb.InfluxDBException;
import org.influxdb.InfluxDBFactory;
import org.influxdb.InfluxDBIOException;
import org.influxdb.dto.Query;
import org.influxdb.dto.QueryResult;

/**
 * Writes batches of line-protocol points through the InfluxDB Java client ({@code org.influxdb:influxdb-java}, the
 * 1.x API: {@code POST /write?db=..&precision=n}, which InfluxDB 2.x and 3.x also serve), one synchronous
 * {@code write} per batch on the caller's (the processor worker's) thread; the client's own batching, with its
 * unbounded queue, stays off. 2xx = success; 5xx, 408, 429, timeouts and refused connections are retryable;
 * "database not found" creates the database (when configured) and is retryable; other 4xx (a malformed point, a
 * wrong password: 401) fail the batch. The client reports an error by its message only, so the HTTP status is read
 * by an interceptor of our own.
 *
 * <p>Authentication ({@link HttpAuth}): basic (InfluxDB 1.x users; 2.x / 3.x take a token as the password) or
 * {@code Token <token>} (2.x / 3.x, or {@code user:password} for 1.8+). TLS ({@link ClientTls}) for https:// URLs.
 * The client's HTTP logging stays off: it would print the {@code Authorization} header.
 */
public final class InfluxClientExporter implements Exporter<String> {
    private final String database;
    private final boolean createDatabase;
    private final String writeTarget;
    private final InfluxDB client;
    private final StatusRecorder status = new StatusRecorder();
    private volatile boolean shutdown;
    private volatile String lastError = "";

    public InfluxClientExporter(
            final URI url,
            final String database,
            final boolean createDatabase,
            final Duration requestTimeout,
            final HttpAuth auth,
            final ClientTls tls) {
        this.database = database;
        this.createDatabase = createDatabase;
        final String base = url.toString().endsWith("/") ? url.toString() : url + "/";
        this.writeTarget = base + "write?db=" + URLEncoder.encode(database, StandardCharsets.UTF_8);
        final OkHttpClient.Builder http = new OkHttpClient.Builder()
                .connectTimeout(requestTimeout)
                .readTimeout(requestTimeout)
                .writeTimeout(requestTimeout)
                .callTimeout(requestTimeout)
                .retryOnConnectionFailure(false) // the processor retries, with back-off, counted
                .addInterceptor(status);
        if (!auth.isNone()) {
            final String header = auth.header();
            http.addInterceptor(chain -> chain.proceed(
                    chain.request().newBuilder().header("Authorization", header).build()));
        }
        if ("https".equalsIgnoreCase(url.getScheme()) && !tls.isDefault()) {
            http.sslSocketFactory(tls.sslContext().getSocketFactory(), tls.trustManager());
            if (tls.insecureSkipVerify()) {
                http.hostnameVerifier((host, session) -> true); // OkHttp checks names itself, beside JSSE
            }
        }
        this.client = InfluxDBFactory.connect(base, http);
        client.setLogLevel(InfluxDB.LogLevel.NONE);
    }

    /** Sends {@code CREATE DATABASE} (idempotent). @return true when the server accepted it */
    public boolean createDatabase() {
        try {
            final QueryResult r = client.query(new Query("CREATE DATABASE \"" + database + "\"", null, true));
            if (r.hasError()) {
                lastError = "CREATE DATABASE answered: " + r.getError();
                return false;
            }
            return true;
        } catch (final InfluxDBIOException e) {
            lastError = "CREATE DATABASE at " + writeTarget + " failed: " + e.getCause();
            return false;
        } catch (final InfluxDBException e) {
            lastError = "CREATE DATABASE answered " + status.last + ": " + e.getMessage();
            return false;
        }
    }

    @Override
    public ExportResult export(final List<String> batch) {
        if (shutdown) {
            lastError = "exporter shut down";
            return ExportResult.FAILED;
        }
        status.last = -1;
        try {
            client.write(database, null, InfluxDB.ConsistencyLevel.ONE, TimeUnit.NANOSECONDS, batch);
            return ExportResult.SUCCESS;
        } catch (final InfluxDBIOException e) {
            lastError = "POST " + writeTarget + " failed: " + e.getCause();
            return ExportResult.RETRYABLE;
        } catch (final InfluxDBException e) {
            final int code = status.last;
            lastError = "POST " + writeTarget + " answered " + code + ": " + e.getMessage();
            if (e instanceof InfluxDBException.DatabaseNotFoundException) {
                if (createDatabase) {
                    createDatabase();
                }
                return ExportResult.RETRYABLE;
            }
            final ExportResult r = ExportResult.ofHttpStatus(code);
            return r == ExportResult.SUCCESS ? ExportResult.FAILED : r; // the client threw: not delivered
        }
    }

    @Override
    public String lastError() {
        return lastError;
    }

    @Override
    public void shutdown() {
        shutdown = true;
        client.close();
    }

    @Override
    public String toString() {
        return "InfluxClientExporter{" + writeTarget + '}';
    }

    /** The HTTP status of the last response (-1: none); one worker thread calls the client at a time. */
    private static final class StatusRecorder implements Interceptor {
        volatile int last = -1;

        @Override
        public Response intercept(final Chain chain) throws IOException {
            final Response response = chain.proceed(chain.request());
            last = response.code();
            return response;
        }
    }
}
