package io.flowscope.collector.fleet;

import io.flowscope.collector.config.FleetConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/** Creates the fleet's topics when missing ({@code fleet.partitions} partitions, the broker's replication). */
final class Topics {
    private Topics() {}

    static void ensure(final FleetConfig c) throws Exception {
        final Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrap());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        try (Admin admin = Admin.create(c.withKafka(p))) {
            final List<NewTopic> topics = new ArrayList<>();
            for (final String t :
                    List.of(c.summariesTopic(), c.anomaliesTopic(), c.eventsTopic(), c.fleetAnomaliesTopic())) {
                topics.add(new NewTopic(t, Optional.of(c.partitions()), Optional.empty())
                        .configs(Map.of("retention.ms", "-1")));
            }
            for (final var f : admin.createTopics(topics).values().values()) {
                try {
                    f.get(20, TimeUnit.SECONDS);
                } catch (final ExecutionException | org.apache.kafka.common.errors.TimeoutException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        final KafkaRefusal refused = KafkaRefusal.explain(e, c);
                        throw refused != null ? refused : e;
                    }
                }
            }
        }
    }
}
