package io.flowscope.collector.fleet;

import io.flowscope.collector.config.FleetConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Kafka broker for one test class: {@code deploy/kafka/kafka.sh} with a temporary
 * {@code FLOWSCOPE_KAFKA_DIR}, free ports on 127.0.0.1 and the jars shared across classes
 * ({@code FLOWSCOPE_KAFKA_LIBS} = system property {@code flowscope.kafka.libs}, default
 * {@code target/kafka-libs}: downloaded once). Stopped after the class (by its PID, also when a test failed).
 */
public final class KafkaBroker implements BeforeAllCallback, AfterAllCallback {
    private static final Path SCRIPT =
            Path.of("..", "deploy", "kafka", "kafka.sh").toAbsolutePath().normalize();

    /** Extra server properties for a second listener (TLS, SASL), written before the first start. */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param dir            the broker's state directory (keys and certificates may go there)
         * @param plainPort      the PLAINTEXT listener's port (kept: the broker's own listener)
         * @param controllerPort the KRaft controller's port
         * @param port           the extra listener's port
         * @return server properties appended to deploy/kafka/kafka.sh's (the last value of a key wins)
         */
        String properties(Path dir, int plainPort, int controllerPort, int port) throws Exception;
    }

    private final Listener listener;
    private Path dir;
    private int port;
    private int controllerPort;
    private int listenerPort;

    /** A PLAINTEXT broker. */
    public KafkaBroker() {
        this(null);
    }

    /** A broker with a second listener configured by {@code listener}. */
    public KafkaBroker(final Listener listener) {
        this.listener = listener;
    }

    /** The second listener's address. */
    public String listenerBootstrap() {
        return "127.0.0.1:" + listenerPort;
    }

    /** The broker's state directory (where a {@link Listener} put its files). */
    public Path dir() {
        return dir;
    }

    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    /** The aggregators' group's committed offsets by partition of the summaries topic (0 where none). */
    public Map<Integer, Long> committed(final FleetConfig fleet) throws Exception {
        final Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        try (Admin admin = Admin.create(p)) {
            final Map<TopicPartition, OffsetAndMetadata> m = admin.listConsumerGroupOffsets(fleet.group())
                    .partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS);
            final Map<Integer, Long> out = new TreeMap<>();
            for (int i = 0; i < fleet.partitions(); i++) {
                final OffsetAndMetadata om = m.get(new TopicPartition(fleet.summariesTopic(), i));
                out.put(i, om == null ? 0L : om.offset());
            }
            return out;
        }
    }

    @Override
    public void beforeAll(final ExtensionContext context) throws Exception {
        dir = Files.createTempDirectory("flowscope-kafka-test-");
        port = freePort();
        controllerPort = freePort();
        if (listener != null) {
            listenerPort = freePort();
            Files.writeString(
                    dir.resolve("extra-server.properties"),
                    listener.properties(dir, port, controllerPort, listenerPort));
        }
        start();
    }

    @Override
    public void afterAll(final ExtensionContext context) throws Exception {
        try {
            stop();
        } finally {
            killLeftover();
            deleteTree(dir);
        }
    }

    /** Starts the broker (again: the same state directory, so a restart keeps its topics and records). */
    public void start() throws IOException, InterruptedException {
        script("start");
    }

    /** SIGTERM to the broker's PID (SIGKILL after 30 s), through the script. */
    public void stop() throws IOException, InterruptedException {
        script("stop");
    }

    private void script(final String command) throws IOException, InterruptedException {
        final ProcessBuilder pb = new ProcessBuilder("bash", SCRIPT.toString(), command).redirectErrorStream(true);
        pb.environment().put("FLOWSCOPE_KAFKA_DIR", dir.toString());
        pb.environment().put("FLOWSCOPE_KAFKA_PORT", Integer.toString(port));
        pb.environment().put("FLOWSCOPE_KAFKA_CONTROLLER_PORT", Integer.toString(controllerPort));
        pb.environment()
                .put(
                        "FLOWSCOPE_KAFKA_LIBS",
                        System.getProperty(
                                "flowscope.kafka.libs",
                                Path.of("target", "kafka-libs").toAbsolutePath().toString()));
        if (listener != null) {
            pb.environment()
                    .put(
                            "FLOWSCOPE_KAFKA_EXTRA_CONFIG",
                            dir.resolve("extra-server.properties").toString());
        }
        final Process p = pb.start();
        final byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("kafka.sh " + command + " failed: "
                    + new String(out, StandardCharsets.UTF_8) + tail(dir.resolve("broker.log")));
        }
    }

    private static String tail(final Path log) throws IOException {
        if (!Files.exists(log)) {
            return "";
        }
        final String s = Files.readString(log);
        return "\nbroker.log: " + s.substring(Math.max(0, s.length() - 3000));
    }

    private void killLeftover() throws IOException {
        final Path pid = dir.resolve("broker.pid");
        if (Files.exists(pid)) {
            ProcessHandle.of(Long.parseLong(Files.readString(pid).trim())).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void deleteTree(final Path p) throws IOException {
        if (p == null || !Files.exists(p)) {
            return;
        }
        try (var s = Files.walk(p)) {
            s.sorted(java.util.Comparator.reverseOrder())
                    .forEach(f -> f.toFile().delete());
        }
    }
}
