package io.flowscope.sink.influx;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.sink.testing.InfluxServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** deploy/influxdb: the template is the tests' config, and the script starts, answers and stops a real influxd. */
class DeployInfluxScriptIT {
    private static final Path DEPLOY =
            Path.of(System.getProperty("flowscope.deploy.dir", "../deploy")).resolve("influxdb");

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String run(final Path dir, final int http, final int rpc, final String command) throws Exception {
        final ProcessBuilder pb =
                new ProcessBuilder("bash", DEPLOY.resolve("influxdb.sh").toString(), command).redirectErrorStream(true);
        final Map<String, String> env = pb.environment();
        env.put("FLOWSCOPE_INFLUX_DIR", dir.toString());
        env.put("FLOWSCOPE_INFLUX_HTTP_PORT", Integer.toString(http));
        env.put("FLOWSCOPE_INFLUX_RPC_PORT", Integer.toString(rpc));
        env.put("INFLUXD", InfluxServer.influxdBinary());
        final Process p = pb.start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return p.exitValue() + ": " + out;
    }

    @Test
    void theConfigTemplateRendersToTheConfigTheTestsRun() throws IOException {
        final String rendered = Files.readString(DEPLOY.resolve("influxdb.conf.template"))
                .replace("@DIR@", "/srv/flux")
                .replace("@HTTP_PORT@", "18086")
                .replace("@RPC_PORT@", "18088");

        assertThat(rendered).isEqualTo(InfluxServer.configText(Path.of("/srv/flux"), 18086, 18088));
    }

    @Test
    void theScriptStartsInfluxdOnLoopbackCreatesTheDatabaseAndStopsItByPid(@TempDir final Path dir) throws Exception {
        final int http = freePort();
        final int rpc = freePort();
        try {
            assertThat(run(dir, http, rpc, "start")).startsWith("0: ").contains("influxd started");
            final HttpResponse<String> r = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + "/query?q=SHOW%20DATABASES"))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(r.body()).contains("\"flowscope\"");
            final long pid =
                    Long.parseLong(Files.readString(dir.resolve("influxd.pid")).trim());
            assertThat(ProcessHandle.of(pid)).isPresent();

            assertThat(run(dir, http, rpc, "stop")).startsWith("0: ").contains("stopped");
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .isFalse();
        } finally {
            run(dir, http, rpc, "stop");
        }
    }
}
