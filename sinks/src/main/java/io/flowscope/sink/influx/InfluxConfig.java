package io.flowscope.sink.influx;

import io.flowscope.sink.EventClock;
import io.flowscope.sink.ProcessorConfig;
import io.flowscope.sink.RankNames;
import io.flowscope.sink.http.ClientTls;
import io.flowscope.sink.http.HttpAuth;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * Where and how the InfluxDB sink writes. Immutable; {@link #builder(URI, String)}.
 *
 * @param url             the server, e.g. {@code http://127.0.0.1:8086}
 * @param database        the InfluxDB 1.x database
 * @param createDatabase  send {@code CREATE DATABASE} at start and whenever a write answers "database not found"
 * @param requestTimeout  per HTTP request
 * @param maxSeries       distinct series (measurement + tags) admitted; points of further series are refused
 * @param hostNames       the {@code host} tag of a host id
 * @param rankNames       a rank's process and GPU ({@code gpu} tag, anomaly fields)
 * @param clock           event time → epoch ns
 * @param processor       batching, back-pressure, retries
 * @param auth            none, basic (1.x user; 2.x / 3.x: a token as the password) or {@code Token} (2.x / 3.x)
 * @param tls             for https:// URLs: the CAs to trust (default the JDK's), a client certificate, or none
 */
public record InfluxConfig(
        URI url,
        String database,
        boolean createDatabase,
        Duration requestTimeout,
        int maxSeries,
        LongFunction<String> hostNames,
        RankNames rankNames,
        EventClock clock,
        ProcessorConfig processor,
        HttpAuth auth,
        ClientTls tls) {
    public InfluxConfig {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(auth, "auth");
        Objects.requireNonNull(tls, "tls");
        if (!tls.isDefault() && !"https".equalsIgnoreCase(url.getScheme())) {
            throw new IllegalArgumentException("TLS settings need an https:// URL, not " + url);
        }
        if (database.isEmpty() || database.contains("\"")) {
            throw new IllegalArgumentException("database name must be non-empty without quotes: " + database);
        }
    }

    public static Builder builder(final URI url, final String database) {
        return new Builder(url, database);
    }

    @Override
    public String toString() {
        return "InfluxConfig{url=" + url + ", database=" + database + ", createDatabase=" + createDatabase
                + ", requestTimeout=" + requestTimeout + ", maxSeries=" + maxSeries + ", auth=" + auth + ", " + tls
                + ", "
                + processor + '}';
    }

    /**
     * Defaults: create the database, 5 s requests, 100,000 series, hex host ids, clock anchored at first sight, no
     * auth, the JDK's trust store.
     */
    public static final class Builder {
        private final URI url;
        private final String database;
        private boolean createDatabase = true;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private int maxSeries = 100_000;
        private LongFunction<String> hostNames = InfluxSchema::hexHost;
        private RankNames rankNames = RankNames.NONE;
        private EventClock clock = EventClock.anchoredAtFirstSight();
        private ProcessorConfig processor =
                ProcessorConfig.builder().name("flowscope-influx").build();
        private HttpAuth auth = HttpAuth.NONE;
        private ClientTls tls = ClientTls.DEFAULT;

        Builder(final URI url, final String database) {
            this.url = url;
            this.database = database;
        }

        public Builder createDatabase(final boolean v) {
            createDatabase = v;
            return this;
        }

        public Builder requestTimeout(final Duration v) {
            requestTimeout = v;
            return this;
        }

        public Builder maxSeries(final int v) {
            maxSeries = v;
            return this;
        }

        public Builder hostNames(final LongFunction<String> v) {
            hostNames = v;
            return this;
        }

        public Builder rankNames(final RankNames v) {
            rankNames = v;
            return this;
        }

        public Builder clock(final EventClock v) {
            clock = v;
            return this;
        }

        public Builder processor(final ProcessorConfig v) {
            processor = v;
            return this;
        }

        public Builder auth(final HttpAuth v) {
            auth = v;
            return this;
        }

        public Builder tls(final ClientTls v) {
            tls = v;
            return this;
        }

        public InfluxConfig build() {
            return new InfluxConfig(
                    url,
                    database,
                    createDatabase,
                    requestTimeout,
                    maxSeries,
                    hostNames,
                    rankNames,
                    clock,
                    processor,
                    auth,
                    tls);
        }
    }
}
