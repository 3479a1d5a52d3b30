package io.flowscope.collector;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The real NCCL traces beside the repository ({@code ../shared/traces}, read-only; CI has it next to its clone), found
 * from wherever the tests run (the module directory, usually): the first ancestor with {@code shared/traces} beside
 * or inside it. {@code -Dflowscope.sharedTraces=DIR} overrides. Missing: the test is skipped with the reason, except
 * on CI ({@code CI=true}), where it fails.
 */
public final class SharedTraces {
    private SharedTraces() {}

    public static Path dir() {
        final String override = System.getProperty("flowscope.sharedTraces");
        if (override != null) {
            return Path.of(override);
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            for (final Path candidate : new Path[] {p.resolve("shared/traces"), p.resolveSibling("shared/traces")}) {
                if (p.getParent() != null && Files.isDirectory(candidate)) {
                    return candidate;
                }
            }
        }
        final String why =
                "no shared/traces beside the repository (from " + Path.of("").toAbsolutePath() + ")";
        if ("true".equals(System.getenv("CI"))) {
            throw new AssertionError(why);
        }
        Assumptions.assumeTrue(false, why);
        return null;
    }

    /** The {@code events.jsonl.gz} of the named trace folders, in that order. */
    public static List<Path> events(final String... names) {
        final Path root = dir();
        final List<Path> out = new ArrayList<>();
        for (final String n : names) {
            out.add(root.resolve(n).resolve("events.jsonl.gz"));
        }
        return out;
    }

    /** Every trace folder's {@code events.jsonl.gz}, by name. */
    static List<Path> all() throws java.io.IOException {
        try (Stream<Path> s = Files.list(dir())) {
            return s.map(d -> d.resolve("events.jsonl.gz"))
                    .filter(Files::isRegularFile)
                    .sorted()
                    .toList();
        }
    }
}
