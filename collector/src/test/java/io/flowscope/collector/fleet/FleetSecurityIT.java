package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.collector.CollectorService;
import io.flowscope.collector.Main;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet through a real broker whose client listener is SASL_SSL only (TLS from a CA made here with the JDK's
 * keytool, SASL SCRAM-SHA-512 and PLAIN), configured through {@code fleet.kafka.*}: an agent and an aggregator exchange summaries; a
 * wrong password and a client without TLS are each refused with one line.
 */
class FleetSecurityIT {
    private static final String PASSWORD = secret();
    private static final String STORE_PASSWORD = secret();

    @RegisterExtension
    static final KafkaBroker BROKER = new KafkaBroker(FleetSecurityIT::saslSslListener);

    @TempDir
    Path dir;

    private static String secret() {
        final byte[] b = new byte[12];
        new SecureRandom().nextBytes(b);
        return "s" + HexFormat.of().formatHex(b);
    }

    /** A CA, the broker's key signed by it for 127.0.0.1, the clients' trust store, and the SASL_SSL listener. */
    private static String saslSslListener(final Path dir, final int plainPort, final int controllerPort, final int port)
            throws Exception {
        final Path ca = dir.resolve("ca.p12");
        final Path broker = dir.resolve("broker.p12");
        keytool(
                "-genkeypair",
                "-alias",
                "ca",
                "-keyalg",
                "EC",
                "-dname",
                "CN=flowscope test CA",
                "-ext",
                "bc:c",
                "-validity",
                "2",
                "-keystore",
                ca.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                STORE_PASSWORD);
        keytool(
                "-exportcert",
                "-rfc",
                "-alias",
                "ca",
                "-keystore",
                ca.toString(),
                "-storepass",
                STORE_PASSWORD,
                "-file",
                dir.resolve("ca.crt").toString());
        keytool(
                "-genkeypair",
                "-alias",
                "broker",
                "-keyalg",
                "EC",
                "-dname",
                "CN=127.0.0.1",
                "-validity",
                "2",
                "-keystore",
                broker.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                STORE_PASSWORD);
        keytool(
                "-certreq",
                "-alias",
                "broker",
                "-keystore",
                broker.toString(),
                "-storepass",
                STORE_PASSWORD,
                "-file",
                dir.resolve("broker.csr").toString());
        keytool(
                "-gencert",
                "-rfc",
                "-alias",
                "ca",
                "-keystore",
                ca.toString(),
                "-storepass",
                STORE_PASSWORD,
                "-infile",
                dir.resolve("broker.csr").toString(),
                "-outfile",
                dir.resolve("broker.crt").toString(),
                "-ext",
                "SAN=ip:127.0.0.1",
                "-validity",
                "2");
        keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                "ca",
                "-file",
                dir.resolve("ca.crt").toString(),
                "-keystore",
                broker.toString(),
                "-storepass",
                STORE_PASSWORD);
        keytool(
                "-importcert",
                "-alias",
                "broker",
                "-file",
                dir.resolve("broker.crt").toString(),
                "-keystore",
                broker.toString(),
                "-storepass",
                STORE_PASSWORD);
        keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                "ca",
                "-file",
                dir.resolve("ca.crt").toString(),
                "-keystore",
                dir.resolve("truststore.p12").toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                STORE_PASSWORD);
        // the PLAINTEXT listener stays the broker's own (controller and inter-broker); clients get SASL_SSL
        return String.join(
                "\n",
                "listeners=PLAINTEXT://127.0.0.1:" + plainPort + ",SASL_SSL://127.0.0.1:" + port
                        + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + plainPort + ",SASL_SSL://127.0.0.1:" + port,
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
                "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
                "listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                        + "required user_fleet=\"" + PASSWORD + "\";",
                // SCRAM users live in the cluster's metadata: added after the start (scramUser)
                "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
                        + "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "ssl.keystore.type=PKCS12",
                "ssl.keystore.location=" + broker,
                "ssl.keystore.password=" + STORE_PASSWORD,
                "ssl.key.password=" + STORE_PASSWORD,
                "");
    }

    private static void keytool(final String... args) throws Exception {
        final List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        cmd.addAll(List.of(args));
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool " + args[0] + " failed: " + out);
        }
    }

    /** The SCRAM user {@code fleet} with {@link #PASSWORD}, through the broker's own PLAINTEXT listener. */
    @BeforeAll
    static void scramUser() throws Exception {
        final Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrap());
        try (Admin admin = Admin.create(p)) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(
                            "fleet", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), PASSWORD)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
        // the listener knows the user once the broker applied the metadata record: until then SCRAM is refused
        final Properties scram = new Properties();
        scram.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.listenerBootstrap());
        scram.putAll(CollectorConfig.load(null, Map.of(), secureFleet(BROKER.dir(), "probe", "probe", PASSWORD, true))
                .fleet()
                .kafka());
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            try (Admin admin = Admin.create(scram)) {
                return admin.describeCluster().clusterId().get(5, TimeUnit.SECONDS) != null;
            }
        });
    }

    private static String jaas(final String password, final boolean scram) {
        return (scram
                        ? "org.apache.kafka.common.security.scram.ScramLoginModule"
                        : "org.apache.kafka.common.security.plain.PlainLoginModule")
                + " required username=\"fleet\" password=\"" + password
                + "\";";
    }

    private Map<String, String> secureFleet(final String prefix, final String id, final String password)
            throws Exception {
        return secureFleet(dir, prefix, id, password, true);
    }

    /**
     * The fleet keys of a client of the SASL_SSL listener, its JAAS line from a file ({@code @file:}): SCRAM and the
     * CA in a PKCS12 trust store with its password, or PLAIN and the CA as a PEM file.
     */
    private static Map<String, String> secureFleet(
            final Path dir, final String prefix, final String id, final String password, final boolean scram)
            throws Exception {
        final Path jaasFile = dir.resolve("jaas-" + id);
        Files.writeString(jaasFile, jaas(password, scram) + "\n");
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("fleet.bootstrap", BROKER.listenerBootstrap());
        o.put("fleet.topicPrefix", prefix);
        o.put("fleet.group", prefix + "-group");
        o.put("fleet.agentId", id);
        o.put("fleet.partitions", "2");
        o.put("fleet.eventSampleEvery", "0");
        o.put("fleet.kafka.security.protocol", "SASL_SSL");
        o.put("fleet.kafka.sasl.mechanism", scram ? "SCRAM-SHA-512" : "PLAIN");
        o.put("fleet.kafka.sasl.jaas.config", "@file:" + jaasFile);
        if (scram) {
            o.put("fleet.kafka.ssl.truststore.type", "PKCS12");
            o.put(
                    "fleet.kafka.ssl.truststore.location",
                    BROKER.dir().resolve("truststore.p12").toString());
            o.put("fleet.kafka.ssl.truststore.password", STORE_PASSWORD);
        } else {
            o.put("fleet.kafka.ssl.truststore.type", "PEM");
            o.put(
                    "fleet.kafka.ssl.truststore.location",
                    BROKER.dir().resolve("ca.crt").toString());
        }
        return o;
    }

    @Test
    void shouldExchangeSummariesOverSaslSslAndNameTheSlowLinkWithoutPrintingASecret() throws Exception {
        final Map<String, String> agentKeys = secureFleet("sec", "sec-agent", PASSWORD);
        agentKeys.put("fleet.role", "agent");
        agentKeys.put("http.port", "0");
        agentKeys.put("ring.dir", dir.resolve("rings").toString());
        agentKeys.put("journal.dir", dir.resolve("journal").toString());
        agentKeys.put("simulate.scenario", "default");
        agentKeys.put("simulate.durationSeconds", "2");
        agentKeys.put("window.periodMs", "10");
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), agentKeys);
        final FleetConfig agentFleet = config.fleet();
        assertThat(agentFleet.kafka().get("sasl.jaas.config"))
                .as("read from its file")
                .isEqualTo(jaas(PASSWORD, true));
        // what the service logs at start ("configuration: ...") names the settings and hides the secrets
        assertThat(config.toString())
                .contains(
                        "fleet.kafka.security.protocol=SASL_SSL",
                        "fleet.kafka.sasl.jaas.config=****",
                        "fleet.kafka.ssl.truststore.password=****")
                .doesNotContain(PASSWORD)
                .doesNotContain(STORE_PASSWORD);
        // the agent authenticates with SCRAM-SHA-512, the aggregator with PLAIN and the CA as PEM
        final FleetConfig aggregatorFleet = CollectorConfig.load(
                        null, Map.of(), secureFleet(dir, "sec", "sec-aggregator", PASSWORD, false))
                .fleet();

        final long started = System.nanoTime();
        try (Aggregator aggregator = new Aggregator(aggregatorFleet, "sec-aggregator", e -> {}).start();
                CollectorService service = CollectorService.start(config, e -> {});
                AgentPublisher agent = Agents.start(service, config, agentFleet)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> aggregator.anomalies().stream()
                    .anyMatch(a -> a.kind() == AnomalyKind.SLOW_LINK
                            && a.culprit().rank() == 3
                            && a.culprit().peer() == 4));
            assertThat(agent.failures())
                    .as("sessions ended by an error: %s", agent.lastError())
                    .isZero();
            assertThat(aggregator.failed()).isNull();
            assertThat(aggregator.records()).isPositive();
        }
        System.out.printf(
                "FleetSecurityIT: slow link named through SASL_SSL %.1f s after the start%n",
                (System.nanoTime() - started) / 1e9);
    }

    @Test
    void shouldRefuseAWrongPasswordWithOneLineThatHoldsNoSecret() throws Exception {
        final String wrong = secret();
        final Result r = aggregator(secureFleet("wrong", "wrong-aggregator", wrong));
        assertThat(r.rc).isEqualTo(Main.EXIT_FAILED);
        assertThat(r.err.strip())
                .doesNotContain("\n")
                .contains("Kafka at " + BROKER.listenerBootstrap() + " refused the SASL credentials")
                .contains("fleet.kafka.sasl.jaas.config")
                .doesNotContain(wrong)
                .doesNotContain(STORE_PASSWORD);
        assertThat(r.seconds).as("refused, not a hang").isLessThan(30);
    }

    @Test
    void shouldKeepAnAgentWithAWrongPasswordRetryingAndSayWhyInOneLine() throws Exception {
        final String wrong = secret();
        final Map<String, String> keys = secureFleet("wrong-agent", "wrong-agent", wrong);
        keys.put("fleet.role", "agent");
        keys.put("http.port", "0");
        keys.put("ring.dir", dir.resolve("rings").toString());
        keys.put("journal.dir", dir.resolve("journal").toString());
        keys.put("simulate.scenario", "default");
        keys.put("simulate.durationSeconds", "1");
        final CollectorConfig config = CollectorConfig.load(null, Map.of(), keys);
        final long started = System.nanoTime();
        try (CollectorService service = CollectorService.start(config, e -> {});
                AgentPublisher agent = Agents.start(service, config, config.fleet())) {
            await().atMost(Duration.ofSeconds(30)).until(() -> agent.failures() >= 1);
            // the service goes on (the node's own judgement does not need Kafka); the agent retries with back-off
            assertThat(service.failure()).isNull();
            assertThat(agent.publishedUpTo()).isZero();
            assertThat(agent.lastError())
                    .doesNotContain("\n")
                    .contains("Kafka at " + BROKER.listenerBootstrap() + " refused the SASL credentials")
                    .doesNotContain(wrong);
        }
        // closing, a refused agent stops at once instead of retrying for close()'s 30 s (the journal keeps the rest)
        assertThat((System.nanoTime() - started) / 1e9).isLessThan(25);
    }

    @Test
    void shouldSayThatAClientWithoutTlsGetsNoAnswerFromTheTlsListener() throws Exception {
        final Map<String, String> o = new LinkedHashMap<>();
        o.put("fleet.bootstrap", BROKER.listenerBootstrap());
        o.put("fleet.topicPrefix", "plain");
        o.put("fleet.group", "plain-group");
        o.put("fleet.agentId", "plain-aggregator");
        // the fleet's own timeouts, overridden through the pass-through: a short test
        o.put("fleet.kafka.default.api.timeout.ms", "4000");
        o.put("fleet.kafka.request.timeout.ms", "2000");
        final Result r = aggregator(o);
        assertThat(r.rc).isEqualTo(Main.EXIT_FAILED);
        assertThat(r.err.strip())
                .doesNotContain("\n")
                .contains("no answer from Kafka at " + BROKER.listenerBootstrap() + " over PLAINTEXT")
                .contains("fleet.kafka.security.protocol");
        assertThat(r.seconds)
                .as("the overridden 4 s timeout, not the fleet's 15 s")
                .isLessThan(14);
    }

    private record Result(int rc, String err, double seconds) {}

    /** {@code flowscope run --role aggregator} with these keys (as --set), its exit status and standard error. */
    private Result aggregator(final Map<String, String> keys) {
        final List<String> args = new ArrayList<>(
                List.of("run", "--role", "aggregator", "--no-journal", "--port", "0", "--duration", "20", "--quiet"));
        keys.forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final long t0 = System.nanoTime();
        final int rc = Main.run(
                new PrintStream(new ByteArrayOutputStream(), true),
                new PrintStream(err, true),
                args.toArray(new String[0]));
        return new Result(rc, err.toString(StandardCharsets.UTF_8), (System.nanoTime() - t0) / 1e9);
    }
}
