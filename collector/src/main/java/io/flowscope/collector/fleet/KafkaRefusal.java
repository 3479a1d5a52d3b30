package io.flowscope.collector.fleet;

import io.flowscope.collector.config.FleetConfig;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * A Kafka client failure that the fleet's settings explain (credentials or TLS refused, no answer over the
 * configured protocol), as one line naming the keys to check: the operator reads one line, not a stack trace.
 */
public final class KafkaRefusal extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final boolean refused;

    private KafkaRefusal(final String message, final Throwable cause, final boolean refused) {
        super(message, cause, false, false);
        this.refused = refused;
    }

    /** True when the broker answered and refused (credentials, TLS, ACLs): retrying will not help; false: no answer. */
    public boolean refused() {
        return refused;
    }

    /** The one line for {@code t} (or one of its causes), or null when the settings do not explain it. */
    public static KafkaRefusal explain(final Throwable t, final FleetConfig fleet) {
        final String at = "Kafka at " + fleet.bootstrap();
        final String protocol = fleet.kafka().getOrDefault("security.protocol", "PLAINTEXT");
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SslAuthenticationException) {
                return new KafkaRefusal(
                        at + ": TLS handshake failed (" + firstLine(c) + "); check "
                                + "fleet.kafka.ssl.* (trust store, its password) against the broker's certificate",
                        t,
                        true);
            }
            if (c instanceof SaslAuthenticationException) {
                return new KafkaRefusal(
                        at + " refused the SASL credentials (" + firstLine(c) + "); check "
                                + "fleet.kafka.sasl.mechanism and fleet.kafka.sasl.jaas.config",
                        t,
                        true);
            }
            if (c instanceof AuthenticationException || c instanceof AuthorizationException) {
                return new KafkaRefusal(
                        at + " refused this client (" + c.getClass().getSimpleName() + ": " + firstLine(c) + ")",
                        t,
                        true);
            }
            if (c instanceof TimeoutException) {
                return new KafkaRefusal(
                        "no answer from " + at + " over " + protocol + " (" + firstLine(c)
                                + "): is the broker up, and is its listener " + protocol
                                + "? (fleet.kafka.security.protocol)",
                        t,
                        false);
            }
        }
        return null;
    }

    private static String firstLine(final Throwable c) {
        final String m = c.getMessage();
        return m == null ? c.getClass().getSimpleName() : m.lines().findFirst().orElse(m);
    }

    @Override
    public String toString() {
        return getMessage();
    }
}
