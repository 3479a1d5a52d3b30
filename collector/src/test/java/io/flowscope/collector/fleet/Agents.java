package io.flowscope.collector.fleet;

import io.flowscope.collector.CollectorService;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;

/** A fleet agent beside a running service as {@code run --role agent} starts one, with a fleet section of its own. */
final class Agents {
    private Agents() {}

    /** The publisher, started, its counters in the service's /metrics and /api/health (key {@code fleet}). */
    static AgentPublisher start(final CollectorService service, final CollectorConfig config, final FleetConfig fleet) {
        final AgentPublisher p = new AgentPublisher(config, fleet, service::hostName).start();
        service.extend("fleet", p::health, p::metrics);
        return p;
    }
}
