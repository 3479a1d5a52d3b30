package io.flowscope.collector.security;

import java.nio.file.Path;

/**
 * The HTTP side's security slice of the configuration: the API token (empty = no authentication, allowed only on a
 * loopback bind), TLS, and request size limits. Immutable. {@link #toString()} never prints the token or the
 * keystore password.
 *
 * @param token             the bearer token (empty: off)
 * @param tls               TLS, or null for plain HTTP
 * @param maxBodyBytes      request body limit (larger: 413)
 * @param maxHeaderBytes    total request header size limit (larger: 431)
 * @param maxUriBytes       request line limit (longer: 414)
 */
public record SecurityConfig(String token, Tls tls, int maxBodyBytes, int maxHeaderBytes, int maxUriBytes) {
    /** PEM certificate chain + private key, or a PKCS12 keystore with its password. */
    public record Tls(Path certFile, Path keyFile, Path keystoreFile, String keystorePassword) {
        public boolean pem() {
            return certFile != null;
        }

        @Override
        public String toString() {
            return pem()
                    ? "pem(cert=" + certFile + ", key=" + keyFile + ")"
                    : "pkcs12(keystore=" + keystoreFile + ", password=" + (keystorePassword.isEmpty() ? "none" : "****")
                            + ")";
        }
    }

    public boolean authenticate() {
        return !token.isEmpty();
    }

    @Override
    public String toString() {
        return "token=" + (token.isEmpty() ? "(off)" : "****") + " tls=" + (tls == null ? "(off)" : tls)
                + " maxBodyBytes=" + maxBodyBytes + " maxHeaderBytes=" + maxHeaderBytes + " maxUriBytes=" + maxUriBytes;
    }
}
