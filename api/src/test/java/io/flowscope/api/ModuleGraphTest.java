package io.flowscope.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The module graph of issue #19, read from the poms so that it cannot drift back: this module depends on nothing;
 * the window engine and the sinks on this module only; the ring reader library on no project module and without
 * its command line (ring-tools); only the composition roots (collector, benchmarks) may take any module.
 */
class ModuleGraphTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** Project modules each module may depend on (any scope); a module missing here may depend on none. */
    private static final Map<String, Set<String>> ALLOWED = Map.of(
            "api", Set.of(),
            "profiler-plugin", Set.of(),
            "ring-tools", Set.of("profiler-plugin"),
            "window-engine", Set.of("api"),
            "sinks", Set.of("api"),
            "anomaly", Set.of("api", "window-engine"),
            "dashboards", Set.of("api", "sinks"));

    private static final Set<String> COMPOSITION_ROOTS = Set.of("collector", "benchmarks");

    @Test
    void shouldKeepEveryModulesProjectDependenciesToItsAllowedSet() throws Exception {
        final Map<String, Set<String>> graph = projectDependencies();
        assertThat(graph).containsKeys("api", "window-engine", "sinks", "anomaly", "profiler-plugin");
        for (final Map.Entry<String, Set<String>> e : graph.entrySet()) {
            if (COMPOSITION_ROOTS.contains(e.getKey())) {
                continue;
            }
            assertThat(ALLOWED)
                    .as("a new module: say here what it may depend on")
                    .containsKey(e.getKey());
            assertThat(e.getValue())
                    .as("project modules %s depends on", e.getKey())
                    .isSubsetOf(ALLOWED.get(e.getKey()));
        }
    }

    @Test
    void shouldKeepTheApiFreeOfThirdPartyCodeAndTheRingReaderFreeOfTheCommandLine() throws Exception {
        assertThat(nonTestArtifacts(pom(ROOT.resolve("api")))).isEmpty();
        assertThat(nonTestArtifacts(pom(ROOT.resolve("profiler-plugin")))).doesNotContain("picocli");
        assertThat(Files.exists(ROOT.resolve("profiler-plugin/src/main/java/io/flowscope/ring/cli")))
                .isFalse();
    }

    @Test
    void shouldReadAProjectDependencyFromAPom() throws Exception {
        // The reader itself: anomaly's pom names the api and the window engine (a reader that found nothing would
        // pass every rule above).
        final Map<String, Set<String>> graph = projectDependencies();
        assertThat(graph.get("anomaly")).contains("api", "window-engine");
        assertThat(graph.get("collector")).contains("api", "window-engine", "profiler-plugin");
    }

    /** Module directory -> the project modules (by directory) its pom depends on. */
    private static Map<String, Set<String>> projectDependencies() throws Exception {
        final Document parent = pom(ROOT);
        final List<String> modules = new ArrayList<>();
        final NodeList moduleNodes = parent.getElementsByTagName("module");
        for (int i = 0; i < moduleNodes.getLength(); i++) {
            modules.add(moduleNodes.item(i).getTextContent().trim());
        }
        final Map<String, String> dirByArtifact = new LinkedHashMap<>();
        for (final String m : modules) {
            dirByArtifact.put(childText(pom(ROOT.resolve(m)).getDocumentElement(), "artifactId"), m);
        }
        final Map<String, Set<String>> graph = new LinkedHashMap<>();
        for (final String m : modules) {
            final Set<String> deps = new TreeSet<>();
            for (final Element d : dependencies(pom(ROOT.resolve(m)))) {
                final String dir = dirByArtifact.get(childText(d, "artifactId"));
                if ("io.flowscope".equals(childText(d, "groupId")) && dir != null) {
                    deps.add(dir);
                }
            }
            graph.put(m, deps);
        }
        return graph;
    }

    private static Set<String> nonTestArtifacts(final Document pom) {
        final Set<String> out = new TreeSet<>();
        for (final Element d : dependencies(pom)) {
            if (!"test".equals(childText(d, "scope"))) {
                out.add(childText(d, "artifactId"));
            }
        }
        return out;
    }

    /** The project's own dependencies (not dependencyManagement's, not a plugin's). */
    private static List<Element> dependencies(final Document pom) {
        final List<Element> out = new ArrayList<>();
        final Element deps = firstChild(pom.getDocumentElement(), "dependencies");
        final NodeList children = deps == null ? null : deps.getChildNodes();
        for (int i = 0; children != null && i < children.getLength(); i++) {
            if (children.item(i) instanceof Element e && "dependency".equals(e.getTagName())) {
                out.add(e);
            }
        }
        return out;
    }

    private static Document pom(final Path moduleDir) throws Exception {
        final Path file = moduleDir.resolve("pom.xml");
        assertThat(file).exists();
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Files.newInputStream(file));
    }

    private static Element firstChild(final Element parent, final String tag) {
        final NodeList children = parent.getChildNodes();
        for (int i = 0; i < children.getLength(); i++) {
            if (children.item(i) instanceof Element e && tag.equals(e.getTagName())) {
                return e;
            }
        }
        return null;
    }

    private static String childText(final Element parent, final String tag) {
        final Element e = firstChild(parent, tag);
        return e == null ? null : e.getTextContent().trim();
    }
}
