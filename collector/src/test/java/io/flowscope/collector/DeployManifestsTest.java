package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import io.flowscope.collector.security.TokenAuth;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The deployment manifests are consistent with each other and with the code: every Kubernetes YAML parses, labels
 * and selectors match, every referenced ConfigMap / Secret key and volume exists, container args are real
 * {@code flowscope} commands and options (picocli's parser), the configuration files they name load through
 * {@link CollectorConfig} with the Secret's files mounted where the pod would see them, probes use the routes served
 * without a token; the systemd units' ExecStart, credentials, environment files and hardening likewise. The fleet
 * (Kafka) keys: every key a role needs is set explicitly (file or environment; {@link #AGENT_KEYS},
 * {@link #AGGREGATOR_KEYS}), the role is the workload's, and agents and aggregators agree on the Kafka cluster,
 * the topics and the partitions.
 */
class DeployManifestsTest {
    private static final Path K8S = Path.of("..", "deploy", "k8s");
    private static final Path SYSTEMD = Path.of("..", "deploy", "systemd");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    /** Environment variables the manifests may set besides configuration keys. */
    private static final Set<String> OTHER_ENV =
            Set.of("FLOWSCOPE_LOG_LEVEL", "FLOWSCOPE_NODE_NAME", "FLOWSCOPE_JAVA_OPTS");

    /** Fleet keys an agent's deployment must set (a default would silently point it at the wrong cluster). */
    static final List<String> AGENT_KEYS = List.of(
            "fleet.role",
            "fleet.bootstrap",
            "fleet.topicPrefix",
            "fleet.partitions",
            "fleet.eventSampleEvery",
            "fleet.bufferBytes");
    /** Fleet keys an aggregator's deployment must set; fleet.agentId names its transactional id. */
    static final List<String> AGGREGATOR_KEYS = List.of(
            "fleet.role", "fleet.bootstrap", "fleet.topicPrefix", "fleet.partitions", "fleet.group", "fleet.agentId");

    @TempDir
    Path tmp;

    /** The fleet keys a configuration file (its {@code fleet:} section or dotted keys) and an environment set. */
    private static Set<String> fleetKeysSet(final Path config, final Map<String, String> env) throws IOException {
        final Set<String> set = new TreeSet<>();
        final JsonNode root = YAML.readTree(config.toFile());
        root.path("fleet").fieldNames().forEachRemaining(k -> set.add("fleet." + k));
        root.fieldNames().forEachRemaining(k -> {
            if (k.startsWith("fleet.")) {
                set.add(k);
            }
        });
        for (final String k : FleetConfig.DEFAULTS.keySet()) {
            if (env.containsKey(CollectorConfig.envName(k))) {
                set.add(k);
            }
        }
        return set;
    }

    /** Loads the fleet section, asserting that the role's keys are set explicitly and that the role is the one meant. */
    private static FleetConfig fleet(
            final String where, final Path config, final Map<String, String> env, final boolean agent)
            throws IOException {
        assertThat(fleetKeysSet(config, env))
                .as(where + ": fleet keys set in " + config.getFileName() + " or the environment")
                .containsAll(agent ? AGENT_KEYS : AGGREGATOR_KEYS);
        final FleetConfig f = CollectorConfig.load(config, env, Map.of()).fleet();
        assertThat(agent ? f.isAgent() : f.isAggregator())
                .as(where + ": fleet.role = " + f.role())
                .isTrue();
        return f;
    }

    private static void sameKafka(final Map<String, FleetConfig> byRole) {
        assertThat(byRole).containsOnlyKeys("agent", "aggregator");
        final FleetConfig agent = byRole.get("agent");
        final FleetConfig aggregator = byRole.get("aggregator");
        assertThat(agent.bootstrap())
                .as("fleet.bootstrap of agents and aggregators")
                .isEqualTo(aggregator.bootstrap());
        assertThat(agent.topicPrefix()).as("fleet.topicPrefix").isEqualTo(aggregator.topicPrefix());
        assertThat(agent.partitions()).as("fleet.partitions").isEqualTo(aggregator.partitions());
    }

    private static List<JsonNode> documents(final Path file) throws IOException {
        final List<JsonNode> out = new ArrayList<>();
        try (JsonParser p = YAML.getFactory().createParser(file.toFile());
                MappingIterator<JsonNode> it = YAML.readValues(p, JsonNode.class)) {
            while (it.hasNext()) {
                final JsonNode d = it.next();
                if (d != null && !d.isNull() && !d.isMissingNode()) {
                    out.add(d);
                }
            }
        }
        return out;
    }

    private static Map<String, JsonNode> byKindAndName(final List<JsonNode> docs) {
        final Map<String, JsonNode> m = new LinkedHashMap<>();
        docs.forEach(d -> m.put(
                d.path("kind").asText() + "/" + d.path("metadata").path("name").asText(), d));
        return m;
    }

    private static List<JsonNode> all() throws IOException {
        final List<JsonNode> docs = new ArrayList<>();
        try (Stream<Path> files = Files.list(K8S)) {
            for (final Path f :
                    files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                if (!f.getFileName().toString().equals("kustomization.yaml")) {
                    docs.addAll(documents(f));
                }
            }
        }
        return docs;
    }

    private static Map<String, String> labels(final JsonNode n) {
        final Map<String, String> m = new HashMap<>();
        n.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }

    @Test
    void shouldListEveryManifestInTheKustomizationAndGiveEachAKindANameAndTheNamespace() throws Exception {
        final JsonNode k = documents(K8S.resolve("kustomization.yaml")).get(0);
        final Set<String> listed = new TreeSet<>();
        k.path("resources").forEach(r -> listed.add(r.asText()));
        final Set<String> present = new TreeSet<>();
        try (Stream<Path> files = Files.list(K8S)) {
            files.map(f -> f.getFileName().toString())
                    .filter(f -> f.endsWith(".yaml") && !f.equals("kustomization.yaml"))
                    .forEach(present::add);
        }
        assertThat(listed).isEqualTo(present);
        final String ns = k.path("namespace").asText();
        for (final JsonNode d : all()) {
            assertThat(d.path("apiVersion").asText()).as(d.toString()).isNotEmpty();
            assertThat(d.path("metadata").path("name").asText())
                    .as(d.toString())
                    .isNotEmpty();
            if (!d.path("kind").asText().equals("Namespace")) {
                assertThat(d.path("metadata").path("namespace").asText())
                        .as(d.path("metadata").toString())
                        .isEqualTo(ns);
            }
        }
        assertThat(byKindAndName(all()))
                .containsKeys(
                        "Namespace/" + ns,
                        "DaemonSet/flowscope-agent",
                        "Deployment/flowscope-aggregator",
                        "ConfigMap/flowscope-config",
                        "Secret/flowscope-secrets");
    }

    @Test
    void shouldSelectEachWorkloadsPodsAndRouteEveryServiceToANamedContainerPort() throws Exception {
        final List<JsonNode> docs = all();
        final List<JsonNode> workloads = docs.stream()
                .filter(d -> Set.of("DaemonSet", "Deployment")
                        .contains(d.path("kind").asText()))
                .toList();
        assertThat(workloads).hasSize(2);
        for (final JsonNode w : workloads) {
            final Map<String, String> podLabels =
                    labels(w.path("spec").path("template").path("metadata").path("labels"));
            final Map<String, String> selector =
                    labels(w.path("spec").path("selector").path("matchLabels"));
            assertThat(selector).as(w.path("metadata").path("name").asText()).isNotEmpty();
            assertThat(podLabels).containsAllEntriesOf(selector);
        }
        final List<JsonNode> services = docs.stream()
                .filter(d -> d.path("kind").asText().equals("Service"))
                .toList();
        assertThat(services).isNotEmpty();
        for (final JsonNode s : services) {
            final Map<String, String> selector = labels(s.path("spec").path("selector"));
            final List<JsonNode> selected = workloads.stream()
                    .filter(w -> labels(w.path("spec")
                                    .path("template")
                                    .path("metadata")
                                    .path("labels"))
                            .entrySet()
                            .containsAll(selector.entrySet()))
                    .toList();
            assertThat(selected)
                    .as("pods of service " + s.path("metadata").path("name"))
                    .hasSize(1);
            for (final JsonNode port : s.path("spec").path("ports")) {
                final String target = port.path("targetPort").asText();
                final List<String> names = new ArrayList<>();
                selected.get(0)
                        .path("spec")
                        .path("template")
                        .path("spec")
                        .path("containers")
                        .forEach(c -> c.path("ports")
                                .forEach(p -> names.add(p.path("name").asText())));
                assertThat(names)
                        .as("service " + s.path("metadata").path("name"))
                        .contains(target);
            }
        }
    }

    @Test
    void shouldRunRealCommandsWhoseConfigurationLoadsWithTheMountedConfigMapAndSecret() throws Exception {
        final Map<String, JsonNode> index = byKindAndName(all());
        final Map<String, FleetConfig> fleetByRole = new HashMap<>();
        int checked = 0;
        for (final JsonNode w : index.values()) {
            if (!Set.of("DaemonSet", "Deployment").contains(w.path("kind").asText())) {
                continue;
            }
            final JsonNode pod = w.path("spec").path("template").path("spec");
            final Map<String, JsonNode> volumes = new HashMap<>();
            pod.path("volumes").forEach(v -> volumes.put(v.path("name").asText(), v));
            for (final JsonNode c : pod.path("containers")) {
                final String where = w.path("metadata").path("name").asText() + "/"
                        + c.path("name").asText();
                // the pod's files: ConfigMap and Secret items written where the container mounts them
                final Path root = Files.createDirectories(tmp.resolve(where.replace('/', '_')));
                final Map<String, Path> mounts = new LinkedHashMap<>();
                for (final JsonNode m : c.path("volumeMounts")) {
                    final JsonNode v = volumes.get(m.path("name").asText());
                    assertThat(v)
                            .as(where + " mounts an undeclared volume " + m.path("name"))
                            .isNotNull();
                    final Path dir =
                            Files.createDirectories(root.resolve(m.path("name").asText()));
                    mounts.put(m.path("mountPath").asText(), dir);
                    materialize(index, v, dir, where);
                }
                final Map<String, String> env = new HashMap<>();
                final Map<String, String> fieldRefs = new HashMap<>();
                for (final JsonNode e : c.path("env")) {
                    final String name = e.path("name").asText();
                    assertThat(name.startsWith("FLOWSCOPE_") && !OTHER_ENV.contains(name) ? knownEnv(name) : true)
                            .as(where + ": env " + name + " is no configuration key")
                            .isTrue();
                    final JsonNode ref = e.path("valueFrom");
                    if (ref.has("secretKeyRef") || ref.has("configMapKeyRef")) {
                        final JsonNode r =
                                ref.has("secretKeyRef") ? ref.path("secretKeyRef") : ref.path("configMapKeyRef");
                        env.put(
                                name,
                                value(
                                        index,
                                        ref.has("secretKeyRef") ? "Secret" : "ConfigMap",
                                        r.path("name").asText(),
                                        r.path("key").asText(),
                                        where));
                    } else if (e.has("value")) {
                        env.put(name, remap(e.path("value").asText(), mounts));
                    } else if (ref.has("fieldRef")) {
                        // what the kubelet puts there: a pod or node name
                        fieldRefs.put(
                                name, ref.path("fieldRef").path("fieldPath").asText());
                        env.put(name, "flowscope-" + c.path("name").asText() + "-x7k2p");
                    }
                }
                // the args: a real subcommand with real options
                final List<String> args = new ArrayList<>();
                c.path("args").forEach(a -> args.add(a.asText()));
                final CommandLine.ParseResult parsed =
                        new CommandLine(new Main()).parseArgs(args.toArray(String[]::new));
                assertThat(parsed.subcommand()).as(where + " args " + args).isNotNull();
                assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("run");
                final String configPath = parsed.subcommand()
                        .matchedOptionValue("--config", (Path) null)
                        .toString();
                final Path configFile = Path.of(remap(configPath, mounts));
                assertThat(configFile)
                        .as(where + ": --config " + configPath + " is not in a mounted volume")
                        .exists();
                final String text = remap(Files.readString(configFile), mounts);
                final Path remapped = root.resolve("config-remapped.yaml");
                Files.writeString(remapped, text);
                final CollectorConfig cfg = CollectorConfig.load(remapped, env, Map.of());
                // it serves other hosts, so it must have its token (from the Secret)
                assertThat(cfg.security().authenticate()).as(where).isTrue();
                assertThat(cfg.security().token())
                        .isEqualTo(value(index, "Secret", "flowscope-secrets", "api-token", where));
                // the container port is the configured one, and the probes need no token
                final List<Integer> ports = new ArrayList<>();
                c.path("ports").forEach(p -> ports.add(p.path("containerPort").asInt()));
                assertThat(ports).as(where).contains(cfg.httpPort());
                for (final String probe : List.of("readinessProbe", "livenessProbe")) {
                    assertThat(TokenAuth.OPEN_PATHS)
                            .as(where + " " + probe)
                            .contains(c.path(probe).path("httpGet").path("path").asText());
                }
                // the fleet keys of the role; the instance name is the pod's (see agent-daemonset.yaml: the
                // agent's journal and mark are in an emptyDir, so a new pod must not reuse an old pod's name)
                final boolean agent = w.path("kind").asText().equals("DaemonSet");
                fleetByRole.put(agent ? "agent" : "aggregator", fleet(where, remapped, env, agent));
                assertThat(fieldRefs.get(CollectorConfig.envName("fleet.agentId")))
                        .as(where + ": fleet.agentId")
                        .isEqualTo("metadata.name");
                if (agent) {
                    assertThat(cfg.journalEnabled())
                            .as(where + ": the agent's journal (its spool)")
                            .isTrue();
                }
                // the agent drains the node's rings from the hostPath
                if (w.path("kind").asText().equals("DaemonSet")) {
                    final String vol = cfg.ringDir()
                                    .getParent()
                                    .getFileName()
                                    .toString()
                                    .equals(root.getFileName().toString())
                            ? cfg.ringDir().getFileName().toString()
                            : "(not a mount)";
                    assertThat(volumes)
                            .as(where + ": ring.dir " + cfg.ringDir() + " is a mounted volume")
                            .containsKey(vol);
                    assertThat(volumes.get(vol).path("hostPath").path("path").asText())
                            .isEqualTo("/dev/shm/flowscope");
                } else {
                    assertThat(cfg.sinks().webhooks()).hasSize(1);
                    assertThat(cfg.sinks().webhooks().get(0).secret())
                            .isEqualTo(value(index, "Secret", "flowscope-secrets", "webhook-secret", where));
                    assertThat(cfg.sinks().influx()).isNotNull();
                }
                checked++;
            }
        }
        assertThat(checked).isEqualTo(2);
        sameKafka(fleetByRole);
    }

    private static boolean knownEnv(final String name) {
        return CollectorConfig.DEFAULTS.keySet().stream()
                        .anyMatch(k -> CollectorConfig.envName(k).equals(name))
                || FleetConfig.DEFAULTS.keySet().stream()
                        .anyMatch(k -> CollectorConfig.envName(k).equals(name));
    }

    /** Paths under a mount point (at a path start) rewritten into the test's copy of that volume, in one pass. */
    private static String remap(final String text, final Map<String, Path> mounts) {
        final List<String> points = new ArrayList<>(mounts.keySet());
        points.sort((a, b) -> b.length() - a.length());
        final StringBuilder alternation = new StringBuilder();
        for (final String p : points) {
            alternation.append(alternation.length() == 0 ? "" : "|").append(Pattern.quote(p));
        }
        final Matcher m = Pattern.compile("(?<![\\w./-])(" + alternation + ")(?=/|$|\\s)", Pattern.MULTILINE)
                .matcher(text);
        final StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(
                    out, Matcher.quoteReplacement(mounts.get(m.group(1)).toString()));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static String value(
            final Map<String, JsonNode> index,
            final String kind,
            final String name,
            final String key,
            final String where) {
        final JsonNode d = index.get(kind + "/" + name);
        assertThat(d).as(where + " refers to a missing " + kind + " " + name).isNotNull();
        final JsonNode v = d.path("stringData").has(key)
                ? d.path("stringData").path(key)
                : d.path("data").path(key);
        assertThat(v.isMissingNode())
                .as(where + " refers to a missing key " + key + " of " + kind + " " + name)
                .isFalse();
        return d.path("stringData").has(key) || kind.equals("ConfigMap")
                ? v.asText()
                : new String(java.util.Base64.getDecoder().decode(v.asText()), java.nio.charset.StandardCharsets.UTF_8);
    }

    private static void materialize(
            final Map<String, JsonNode> index, final JsonNode volume, final Path dir, final String where)
            throws IOException {
        final String kind = volume.has("configMap") ? "ConfigMap" : volume.has("secret") ? "Secret" : null;
        if (kind == null) {
            assertThat(volume.has("emptyDir") || volume.has("hostPath"))
                    .as(where + " volume " + volume)
                    .isTrue();
            return;
        }
        final JsonNode src = kind.equals("ConfigMap") ? volume.path("configMap") : volume.path("secret");
        final String name = kind.equals("ConfigMap")
                ? src.path("name").asText()
                : src.path("secretName").asText();
        assertThat(src.path("items").size()).as(where + ": items of " + name).isPositive();
        for (final JsonNode item : src.path("items")) {
            Files.writeString(
                    dir.resolve(item.path("path").asText()),
                    value(index, kind, name, item.path("key").asText(), where));
        }
    }

    // ---- systemd -----------------------------------------------------------------------------------------------

    /** Key → values (a key may repeat) of a unit file's lines, section names ignored. */
    private static Map<String, List<String>> unit(final Path file) throws IOException {
        final Map<String, List<String>> m = new LinkedHashMap<>();
        for (final String raw : Files.readAllLines(file)) {
            final String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith("[")) {
                continue;
            }
            final int eq = line.indexOf('=');
            assertThat(eq).as(file + ": " + line).isPositive();
            m.computeIfAbsent(line.substring(0, eq), k -> new ArrayList<>()).add(line.substring(eq + 1));
        }
        return m;
    }

    @Test
    void shouldStartRealCommandsFromTheSystemdUnitsWithTheirCredentialsEnvironmentFilesAndHardening() throws Exception {
        final String pom = Files.readString(Path.of("pom.xml"));
        final Matcher flags = Pattern.compile("<collector.jvm.flags>([^<]+)</collector.jvm.flags>")
                .matcher(pom);
        assertThat(flags.find()).isTrue();
        final Map<String, FleetConfig> fleetByRole = new HashMap<>();
        for (final String name : List.of("agent", "aggregator")) {
            final Path file = SYSTEMD.resolve("flowscope-" + name + ".service");
            final Map<String, List<String>> u = unit(file);
            assertThat(u.get("User")).containsExactly("flowscope");
            assertThat(u.get("NoNewPrivileges")).containsExactly("yes");
            assertThat(u.get("ProtectSystem")).containsExactly("strict");
            assertThat(u.get("CapabilityBoundingSet")).containsExactly("");
            assertThat(u).doesNotContainKey("MemoryDenyWriteExecute"); // the JIT needs W+X pages

            // credentials: the %d directory holds each LoadCredential's file (from the Secret-like example values)
            final Path creds = Files.createDirectories(tmp.resolve(name + "-credentials"));
            for (final String lc : u.getOrDefault("LoadCredential", List.of())) {
                Files.writeString(
                        creds.resolve(lc.substring(0, lc.indexOf(':'))), "credential-" + name + "-0123456789abcdef");
            }
            final Map<String, String> env = new HashMap<>();
            final String envFile = u.get("EnvironmentFile").get(0);
            final Path example = SYSTEMD.resolve(Path.of(envFile).getFileName() + ".example");
            assertThat(example).as(envFile).exists();
            for (final String line : Files.readAllLines(example)) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    env.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
                }
            }
            for (final String e : u.getOrDefault("Environment", List.of())) {
                env.put(
                        e.substring(0, e.indexOf('=')),
                        e.substring(e.indexOf('=') + 1)
                                .replace("%d", creds.toString())
                                .replace("%H", "gpu-node-17"));
            }
            for (final String k : env.keySet()) {
                assertThat(OTHER_ENV.contains(k) || knownEnv(k))
                        .as(file + ": " + k + " is no configuration key")
                        .isTrue();
            }
            assertThat(env.get("FLOWSCOPE_JAVA_OPTS").split(" "))
                    .as("JVM flags of " + example)
                    .contains(flags.group(1).split(" "));

            final List<String> exec = Arrays.asList(u.get("ExecStart").get(0).split("\\s+"));
            final int main = exec.indexOf("io.flowscope.collector.Main");
            assertThat(main).as(file + " ExecStart").isPositive();
            final String[] args = exec.subList(main + 1, exec.size()).toArray(String[]::new);
            final CommandLine.ParseResult parsed = new CommandLine(new Main()).parseArgs(args);
            assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("run");
            final Path configPath = parsed.subcommand().matchedOptionValue("--config", (Path) null);
            final Path config = SYSTEMD.resolve(configPath.getFileName());
            assertThat(configPath.getParent()).isEqualTo(Path.of("/etc/flowscope"));
            final CollectorConfig c = CollectorConfig.load(config, env, Map.of());
            assertThat(c.security().token()).isEqualTo("credential-" + name + "-0123456789abcdef");
            assertThat(c.httpHost()).isEqualTo("0.0.0.0");
            fleetByRole.put(name, fleet(file.toString(), config, env, name.equals("agent")));
            if (name.equals("agent")) {
                // its default fleet.agentId (host name + hash of journal.dir) is stable because the journal and the
                // mark are in the state directory, which outlives restarts
                assertThat(c.journalEnabled()).isTrue();
                assertThat(c.journalDir().startsWith(Path.of("/var/lib/flowscope")))
                        .as("journal.dir " + c.journalDir())
                        .isTrue();
                assertThat(u.get("StateDirectory")).containsExactly("flowscope");
                assertThat(u.get("ReadWritePaths")).contains(c.ringDir().toString());
                assertThat(u).doesNotContainKey("PrivateDevices"); // /dev/shm must be the host's
            } else {
                assertThat(c.sinks().webhooks().get(0).secret()).isEqualTo("credential-" + name + "-0123456789abcdef");
                assertThat(CollectorConfig.load(config, env, Map.of()).fleet().agentId())
                        .isEqualTo("gpu-node-17");
            }
        }
        sameKafka(fleetByRole);
    }
}
