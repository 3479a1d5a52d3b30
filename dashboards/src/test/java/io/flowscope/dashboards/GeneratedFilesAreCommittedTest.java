package io.flowscope.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** deploy/grafana holds exactly what the generator writes (regenerate: dashboards/README.md). */
class GeneratedFilesAreCommittedTest {
    static Path deployDir() {
        return Path.of(System.getProperty("flowscope.grafana.dir", "../deploy/grafana"));
    }

    @Test
    void everyGeneratedFileIsCommittedWithTheSameContent() throws IOException {
        for (final Map.Entry<String, String> f : DashboardGenerator.render().entrySet()) {
            final Path committed = deployDir().resolve(f.getKey());
            assertThat(committed)
                    .as("%s is missing: regenerate (dashboards/README.md)", committed)
                    .exists();
            assertThat(Files.readString(committed))
                    .as("%s differs from the generator's output: regenerate", committed)
                    .isEqualTo(f.getValue());
        }
    }

    @Test
    void noDashboardIsCommittedThatTheGeneratorDoesNotWrite() throws IOException {
        final Set<String> generated = new TreeSet<>(DashboardGenerator.render().keySet());
        try (Stream<Path> files = Files.walk(deployDir())) {
            final Set<String> committed = files.filter(Files::isRegularFile)
                    .map(p -> deployDir().relativize(p).toString().replace('\\', '/'))
                    .filter(p -> p.endsWith(".json") || p.endsWith(".yaml") || p.endsWith(".yml"))
                    .collect(Collectors.toCollection(TreeSet::new));
            assertThat(committed).isEqualTo(generated);
        }
    }
}
