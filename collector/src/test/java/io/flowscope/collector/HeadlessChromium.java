package io.flowscope.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The live page in a real headless chromium (Debian's {@code chromium}): loads the page of a running service,
 * runs its JavaScript against the real API and checks what it drew; saves a screenshot under target/.
 */
final class HeadlessChromium {
    private HeadlessChromium() {}

    static Path chromium() {
        for (final String p : new String[] {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
            if (Files.isExecutable(Path.of(p))) {
                return Path.of(p);
            }
        }
        return null;
    }

    /** Runs chromium headless on {@code url} with {@code extra} (e.g. --dump-dom); returns stdout. */
    static String chromium(final Path tmp, final String url, final String... extra) throws Exception {
        final Path bin = chromium();
        if (bin == null) {
            throw new AssertionError("chromium is not installed: apt-get install -y chromium chromium-driver");
        }
        final Path profile = Files.createTempDirectory(tmp, "chromium-profile");
        final List<String> cmd = new ArrayList<>(List.of(
                bin.toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--user-data-dir=" + profile,
                "--virtual-time-budget=6000",
                "--window-size=1280,900"));
        cmd.addAll(List.of(extra));
        cmd.add(url);
        final Path out = tmp.resolve("chromium-" + System.nanoTime() + ".out");
        final Path err = tmp.resolve("chromium-" + System.nanoTime() + ".err");
        final Process p = new ProcessBuilder(cmd)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        try {
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                throw new AssertionError("chromium did not finish: " + Files.readString(err));
            }
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        assertThat(p.exitValue()).as(Files.readString(err)).isZero();
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    /** Loads the page, checks heatmap (and the anomaly timeline when {@code anomaly}), saves a screenshot. */
    static String checkPage(
            final CollectorService s, final Path tmp, final String screenshotName, final boolean anomaly)
            throws Exception {
        final String dom = chromium(tmp, s.url(), "--dump-dom");
        assertThat(dom).contains("id=\"heatmap\"");
        assertThat(dom).containsPattern("id=\"heatmap\"[^>]*data-ranks=\"[1-9]");
        assertThat(dom).containsPattern("id=\"series\"[^>]*data-points=\"[1-9]");
        if (anomaly) {
            assertThat(dom).containsPattern("class=\"tl anomaly [A-Z]+ (open|resolved)\" data-kind=");
        }
        screenshot(s, tmp, screenshotName);
        return dom;
    }

    /** A screenshot of the page (chromium's window, 1280 x 900) as target/{@code name}; returns its path. */
    static Path screenshot(final CollectorService s, final Path tmp, final String name) throws Exception {
        return screenshot(s.url(), tmp, name);
    }

    /** A screenshot of the page at {@code url} as target/{@code name}. */
    static Path screenshot(final String url, final Path tmp, final String name) throws Exception {
        final Path target = Path.of("target");
        Files.createDirectories(target);
        final Path png = target.resolve(name).toAbsolutePath();
        Files.deleteIfExists(png);
        chromium(tmp, url, "--screenshot=" + png);
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(png) && Files.size(png) > 1000);
        return png;
    }
}
