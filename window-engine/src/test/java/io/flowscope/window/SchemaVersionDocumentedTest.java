package io.flowscope.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.summary.FlowSummary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The flow summary's schema version as the documents state it equals {@link FlowSummary#SCHEMA_VERSION} (issue #19
 * item 4: a README said "schema v2" long after the code moved to 3). The documents are the ones a reader takes as
 * current: the top README, every module's README and docs/*.md; docs/perf-journal/ is history and may name any
 * version. In them "schema vN" names the flow summary's schema (the journal has "format N", the ring "layout N.M"),
 * and "since schema vN" says when a field came, so it is exempt.
 */
class SchemaVersionDocumentedTest {
    /** "schema v4", not "since schema v3". */
    static final Pattern STATED = Pattern.compile("(?<!since )\\bschema v(\\d+)\\b", Pattern.CASE_INSENSITIVE);

    /** The window engine's own statement of the version, in the heading of its output section. */
    static final String DEFINED = "`FlowSummary.SCHEMA_VERSION = %d`";

    @Test
    void shouldStateTheCodesSchemaVersionInEveryCurrentDocument() throws IOException {
        final Path root = repositoryRoot();
        assertThat(Files.readString(root.resolve("window-engine/README.md")))
                .contains(String.format(Locale.ROOT, DEFINED, FlowSummary.SCHEMA_VERSION));
        final List<String> wrong = new ArrayList<>();
        int stated = 0;
        for (final Path doc : currentDocuments(root)) {
            final Matcher m = STATED.matcher(Files.readString(doc));
            while (m.find()) {
                stated++;
                if (Integer.parseInt(m.group(1)) != FlowSummary.SCHEMA_VERSION) {
                    wrong.add(root.relativize(doc) + ": \"" + m.group() + "\"");
                }
            }
        }
        assertThat(wrong)
                .as("documents stating another flow summary schema than v%d", FlowSummary.SCHEMA_VERSION)
                .isEmpty();
        // the window engine's, anomaly's and sinks' READMEs each state it at least once
        assertThat(stated).isGreaterThanOrEqualTo(3);
    }

    @Test
    void shouldTellAStatedVersionFromTheVersionAFieldCameIn() {
        final Matcher m = STATED.matcher("p50 (since schema v3); the stream, schema v4; Schema V2");
        final List<String> found = new ArrayList<>();
        while (m.find()) {
            found.add(m.group(1));
        }
        assertThat(found).containsExactly("4", "2");
    }

    /** README.md, each module's README.md (a folder with a pom.xml, and deploy/) and docs/*.md. */
    static List<Path> currentDocuments(final Path root) throws IOException {
        final List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        try (Stream<Path> dirs = Files.list(root)) {
            dirs.filter(d -> Files.isRegularFile(d.resolve("README.md"))
                            && (Files.isRegularFile(d.resolve("pom.xml"))
                                    || d.getFileName().toString().equals("deploy")))
                    .sorted()
                    .forEach(d -> docs.add(d.resolve("README.md")));
        }
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            files.filter(f -> Files.isRegularFile(f) && f.toString().endsWith(".md"))
                    .sorted()
                    .forEach(docs::add);
        }
        assertThat(docs)
                .extracting(d -> root.relativize(d).toString())
                .contains("window-engine/README.md", "anomaly/README.md", "sinks/README.md");
        return docs;
    }

    /** The build runs this module's tests in window-engine/; the repository root is the folder above it. */
    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null
                && !(Files.isDirectory(dir.resolve("docs")) && Files.isRegularFile(dir.resolve("pom.xml")))) {
            dir = dir.getParent();
        }
        assertThat(dir)
                .as("the repository root above " + Path.of("").toAbsolutePath())
                .isNotNull();
        return dir;
    }
}
