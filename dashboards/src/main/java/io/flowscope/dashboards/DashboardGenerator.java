package io.flowscope.dashboards;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.flowscope.dashboards.model.Dashboard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the dashboards and the provisioning files under a Grafana deploy directory (deploy/grafana):
 * {@code dashboards/<uid>.json}, {@code provisioning/datasources/flowscope.yaml},
 * {@code provisioning/dashboards/flowscope.yaml}. Refuses to write a dashboard that fails
 * {@link DashboardChecks}.
 * <pre>java -cp ... io.flowscope.dashboards.DashboardGenerator deploy/grafana</pre>
 */
public final class DashboardGenerator {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

    private DashboardGenerator() {}

    /** Every dashboard: the InfluxDB ones, then the Prometheus ones. */
    public static List<Dashboard> all() {
        final List<Dashboard> all = new java.util.ArrayList<>(FlowscopeDashboards.all());
        all.addAll(PrometheusDashboards.all());
        return List.copyOf(all);
    }

    /** Every generated file: path relative to the deploy directory → content. */
    public static Map<String, String> render() {
        final Map<String, String> files = new LinkedHashMap<>();
        final List<String> problems = new java.util.ArrayList<>();
        for (final Dashboard d : all()) {
            problems.addAll(DashboardChecks.problems(d, Provisioning.datasourceTypes()));
            files.put("dashboards/" + d.uid() + ".json", toJson(d));
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("dashboards fail their checks:\n  " + String.join("\n  ", problems));
        }
        files.put("provisioning/datasources/flowscope.yaml", Provisioning.datasources());
        files.put("provisioning/dashboards/flowscope.yaml", Provisioning.dashboardProviders());
        return files;
    }

    public static String toJson(final Dashboard d) {
        final DefaultPrettyPrinter printer = new DefaultPrettyPrinter()
                .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                .withArrayIndenter(new DefaultIndenter("  ", "\n"));
        try {
            return JSON.writer(printer).writeValueAsString(d) + "\n";
        } catch (final JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise dashboard " + d.uid(), e);
        }
    }

    public static void write(final Path deployDir) throws IOException {
        for (final Map.Entry<String, String> f : render().entrySet()) {
            final Path path = deployDir.resolve(f.getKey());
            Files.createDirectories(path.getParent());
            Files.writeString(path, f.getValue());
        }
    }

    public static void main(final String[] args) throws IOException {
        final Path dir = Path.of(args.length > 0 ? args[0] : "deploy/grafana");
        write(dir);
        System.out.println("wrote " + render().size() + " files under " + dir.toAbsolutePath());
    }
}
