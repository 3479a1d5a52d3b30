package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetConfigTest {
    @TempDir
    Path dir;

    @Test
    void shouldLayerTheFleetSectionFromFileEnvironmentAndCommandLine() throws Exception {
        final Path file = dir.resolve("c.yaml");
        Files.writeString(file, "fleet:\n  role: agent\n  bootstrap: 127.0.0.1:1\n  partitions: 8\n");
        final FleetConfig c = CollectorConfig.load(
                        file, Map.of("FLOWSCOPE_FLEET_BOOTSTRAP", "127.0.0.1:2"), Map.of("fleet.partitions", "2"))
                .fleet();
        assertThat(c.role()).isEqualTo("agent");
        assertThat(c.bootstrap()).isEqualTo("127.0.0.1:2");
        assertThat(c.partitions()).isEqualTo(2);
        assertThat(c.summariesTopic()).isEqualTo("flowscope.summaries");
        // the collector's own configuration accepts the same file and flags
        assertThat(CollectorConfig.load(file, Map.of(), Map.of("fleet.partitions", "2"))
                        .httpPort())
                .isEqualTo(7070);
    }

    @Test
    void shouldRefuseAnUnknownFleetKeyAndABadRoleNamingTheKeyAndItsSource() {
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("fleet.bogus", "1"))
                        .fleet())
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessageContaining("fleet.bogus");
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of("FLOWSCOPE_FLEET_ROLE", "boss"), Map.of())
                        .fleet())
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessageContaining("fleet.role = 'boss' (from env FLOWSCOPE_FLEET_ROLE)");
    }

    @Test
    void shouldPublishTheCentralSubsetByDefaultAndEverySummaryWhenAsked() {
        assertThat(CollectorConfig.load(null, Map.of(), Map.of()).fleet().publishAll())
                .isFalse();
        assertThat(CollectorConfig.load(null, Map.of("FLOWSCOPE_FLEET_PUBLISH", "all"), Map.of())
                        .fleet()
                        .publishAll())
                .isTrue();
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("fleet.publish", "some"))
                        .fleet())
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessageContaining("fleet.publish = 'some'");
    }

    @Test
    void shouldLogWhatTheAgentSendsAndHowItEncodesIt() {
        // the service's "configuration:" line is what an operator reads to know what travels
        assertThat(CollectorConfig.load(null, Map.of(), Map.of()).fleet().toString())
                .contains("fleet.wire=binary fleet.publish=central fleet.collectiveEvery=1 ");
        assertThat(CollectorConfig.load(
                                null,
                                Map.of(),
                                Map.of("fleet.wire", "json", "fleet.publish", "all", "fleet.collectiveEvery", "16"))
                        .fleet()
                        .toString())
                .contains("fleet.wire=json fleet.publish=all fleet.collectiveEvery=16 ");
    }

    @Test
    void shouldDocumentEveryFleetKeyWithItsDefaultAndEnvironmentName() throws Exception {
        final String readme = Files.readString(Path.of("README.md"));
        for (final Map.Entry<String, String> e : FleetConfig.DEFAULTS.entrySet()) {
            final String dflt = e.getValue().isEmpty() ? "(host-hash)" : "`" + e.getValue() + "`";
            assertThat(readme)
                    .contains(
                            "| `" + e.getKey() + "` | " + dflt + " | `" + CollectorConfig.envName(e.getKey()) + "` |");
        }
    }

    @Test
    void shouldPassKafkaClientPropertiesThroughFromFileAndCommandLineReadingFileValues() throws Exception {
        final Path secret = dir.resolve("jaas");
        Files.writeString(secret, "org.example.Login required password=\"p4ss\";\n");
        final Path file = dir.resolve("c.yaml");
        Files.writeString(
                file,
                "fleet:\n  kafka:\n    security.protocol: SASL_SSL\n    ssl:\n"
                        + "      truststore.location: /etc/ca.p12\n    linger.ms: 7\n");
        final FleetConfig c = CollectorConfig.load(
                        file,
                        Map.of(),
                        Map.of("fleet.kafka.sasl.jaas.config", "@file:" + secret, "fleet.kafka.linger.ms", "9"))
                .fleet();
        assertThat(c.kafka())
                .containsExactly(
                        Map.entry("linger.ms", "9"),
                        Map.entry("sasl.jaas.config", "org.example.Login required password=\"p4ss\";"),
                        Map.entry("security.protocol", "SASL_SSL"),
                        Map.entry("ssl.truststore.location", "/etc/ca.p12"));
        // applied over the fleet's own settings
        final java.util.Properties own = new java.util.Properties();
        own.put("linger.ms", 5);
        own.put("acks", "all");
        assertThat(c.withKafka(own))
                .containsEntry("linger.ms", "9")
                .containsEntry("acks", "all")
                .containsEntry("security.protocol", "SASL_SSL");
        assertThat(c.toString())
                .contains(
                        "fleet.kafka.security.protocol=SASL_SSL",
                        "fleet.kafka.linger.ms=9",
                        "fleet.kafka.sasl.jaas.config=****")
                .doesNotContain("p4ss");
        assertThat(CollectorConfig.isSecret("fleet.kafka.ssl.key.password")).isTrue();
        assertThat(CollectorConfig.isSecret("fleet.kafka.linger.ms")).isFalse();
    }

    @Test
    void shouldRefuseAKafkaPropertyTheFleetOwnsAndAnUnreadableFileValueWithOneLine() {
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("fleet.kafka.group.id", "x")))
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessage(
                        "config: fleet.kafka.group.id (from "
                                + "the command line) is the fleet's own Kafka setting and cannot be passed through: set fleet.group");
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("fleet.kafka.value.serializer", "x")))
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessageContaining("fleet.kafka.value.serializer");
        assertThatThrownBy(() -> CollectorConfig.load(
                        null, Map.of(), Map.of("fleet.kafka.sasl.jaas.config", "@file:" + dir.resolve("missing"))))
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessage("config: fleet.kafka.sasl.jaas.config (from the command line): cannot read the file "
                        + dir.resolve("missing") + " (NoSuchFileException)");
        assertThatThrownBy(() -> CollectorConfig.load(null, Map.of(), Map.of("fleet.kafka.", "x")))
                .isInstanceOf(CollectorConfig.ConfigException.class)
                .hasMessageContaining("unknown key 'fleet.kafka.'");
    }

    @Test
    void shouldKeepAStableAgentIdPerJournalDirectory() {
        final FleetConfig c = CollectorConfig.load(null, Map.of(), Map.of()).fleet();
        assertThat(c.agentIdFor(dir.resolve("j")))
                .isEqualTo(c.agentIdFor(dir.resolve("j")))
                .isNotEqualTo(c.agentIdFor(dir.resolve("k")));
    }

    @Test
    void shouldCarryEveryFlowSummaryFieldByNameAndIgnoreFieldsItDoesNotKnow() {
        final FlowSummary s = new FlowSummary();
        final ObjectNode in = FleetCodec.MAPPER.createObjectNode();
        long v = 1;
        final JsonNode blank = FleetCodec.read(FleetCodec.flow("a", 1, s, null)).path("s");
        for (final var it = blank.fieldNames(); it.hasNext(); ) {
            final String name = it.next();
            if (blank.get(name).isArray()) {
                in.putArray(name).add(v++).add(v++);
            } else if (blank.get(name).isBoolean()) {
                in.put(name, true);
            } else {
                in.put(name, v++);
            }
        }
        in.put("fieldOfAFutureSchema", 42);
        FleetCodec.flowInto(in, s);
        final JsonNode out = FleetCodec.read(FleetCodec.flow("agent-1", 7, s, "gpu-node-17"));
        assertThat(out.path("agent").asText()).isEqualTo("agent-1");
        assertThat(out.path("seq").asLong()).isEqualTo(7);
        assertThat(out.path("hostName").asText()).isEqualTo("gpu-node-17");
        assertThat(FleetCodec.read(FleetCodec.flow("agent-1", 8, s, null)).has("hostName"))
                .isFalse();
        in.remove("fieldOfAFutureSchema");
        for (final var it = in.fieldNames(); it.hasNext(); ) {
            final String name = it.next();
            assertThat(out.path("s").get(name).asDouble())
                    .as(name)
                    .isEqualTo(in.get(name).asDouble());
        }
        assertThat(s.rank()).isNotZero();
        assertThat(FleetCodec.key(s)).isEqualTo(Long.toHexString(s.commHash()) + ":" + s.rank());
    }
}
