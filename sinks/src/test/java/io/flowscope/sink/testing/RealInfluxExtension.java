package io.flowscope.sink.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * {@code @ExtendWith(RealInfluxExtension.class)}: one real influxd per test class, started before all tests and
 * stopped by PID after all (also when a test fails); injected as an {@link InfluxServer} parameter.
 */
public final class RealInfluxExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RealInfluxExtension.class);

    @Override
    public void beforeAll(final ExtensionContext context) throws Exception {
        final InfluxServer server = new InfluxServer();
        context.getStore(NS).put("server", server);
        server.start();
    }

    @Override
    public void afterAll(final ExtensionContext context) {
        final InfluxServer server = context.getStore(NS).remove("server", InfluxServer.class);
        if (server != null) {
            server.close();
        }
    }

    @Override
    public boolean supportsParameter(final ParameterContext p, final ExtensionContext e) {
        return p.getParameter().getType() == InfluxServer.class;
    }

    @Override
    public Object resolveParameter(final ParameterContext p, final ExtensionContext e) {
        return e.getStore(NS).get("server", InfluxServer.class);
    }
}
