package io.flowscope.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The scratch directories of the benchmarks that write journals and rings: removed when a run ends. */
final class BenchFiles {
    private BenchFiles() {}

    /** Deletes a directory and everything under it, deepest first. */
    static void removeTree(final Path root) throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            for (final Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
