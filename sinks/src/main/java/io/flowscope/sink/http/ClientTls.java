package io.flowscope.sink.http;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * TLS towards a sink's destination, from PEM files as Prometheus' {@code tls_config} takes them: {@code caFile}
 * (the CAs to trust instead of the JDK's; null: the JDK's), an optional client certificate chain and its private key
 * (PKCS#8 {@code PRIVATE KEY}, or PKCS#1 {@code RSA PRIVATE KEY}), and {@code insecureSkipVerify}: neither the chain
 * nor the host name is checked, only when asked for explicitly. Paths only: {@link #sslContext()} reads them.
 *
 * @param caFile             PEM certificates to trust, or null (the JDK's trust store)
 * @param certFile           PEM client certificate chain, or null (no client certificate)
 * @param keyFile            PEM private key of {@code certFile}, or null
 * @param insecureSkipVerify accept any server certificate (testing only)
 */
public record ClientTls(Path caFile, Path certFile, Path keyFile, boolean insecureSkipVerify) {
    /** The JDK's defaults: its trust store, no client certificate. */
    public static final ClientTls DEFAULT = new ClientTls(null, null, null, false);

    private static final Pattern PEM =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");
    private static final char[] NO_PASSWORD = new char[0];

    public ClientTls {
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException(
                    "a client certificate needs both certFile and keyFile (PEM), or neither");
        }
    }

    public boolean isDefault() {
        return caFile == null && certFile == null && !insecureSkipVerify;
    }

    /** The context for an HTTP client; fails with one line naming the file that could not be used. */
    public SSLContext sslContext() {
        try {
            final TrustManager[] trust =
                    caFile == null && !insecureSkipVerify ? null : new TrustManager[] {trustManager()};
            KeyManagerFactory kmf = null;
            if (certFile != null) {
                final List<X509Certificate> chain = certificates(certFile);
                final KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry(
                        "client", privateKey(keyFile, chain.get(0)), NO_PASSWORD, chain.toArray(new Certificate[0]));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, NO_PASSWORD);
            }
            final SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf == null ? null : kmf.getKeyManagers(), trust, null);
            return ctx;
        } catch (final IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("TLS setup failed: " + e.getMessage(), e);
        }
    }

    /**
     * The server-certificate check {@link #sslContext()} uses: {@code caFile}'s CAs, the JDK's trust store, or none
     * ({@code insecureSkipVerify}). Clients that take the trust manager beside the socket factory (OkHttp) need it.
     */
    public X509TrustManager trustManager() {
        if (insecureSkipVerify) {
            return new AcceptAnything();
        }
        try {
            KeyStore anchors = null;
            if (caFile != null) {
                anchors = KeyStore.getInstance("PKCS12");
                anchors.load(null, null);
                int i = 0;
                for (final X509Certificate c : certificates(caFile)) {
                    anchors.setCertificateEntry("ca-" + i++, c);
                }
            }
            final TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(anchors); // null: the JDK's trust store
            for (final TrustManager t : tmf.getTrustManagers()) {
                if (t instanceof X509TrustManager x509) {
                    return x509;
                }
            }
            throw new GeneralSecurityException("no X.509 trust manager in this JDK");
        } catch (final IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("TLS setup failed: " + e.getMessage(), e);
        }
    }

    static List<X509Certificate> certificates(final Path file) throws IOException, GeneralSecurityException {
        final CertificateFactory cf = CertificateFactory.getInstance("X.509");
        final List<X509Certificate> out = new ArrayList<>();
        for (final byte[] der : blocks(file, "CERTIFICATE")) {
            out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(der)));
        }
        if (out.isEmpty()) {
            throw new IOException(file + " holds no PEM CERTIFICATE block");
        }
        return out;
    }

    static PrivateKey privateKey(final Path file, final X509Certificate cert)
            throws IOException, GeneralSecurityException {
        final String algorithm = cert.getPublicKey().getAlgorithm();
        final List<byte[]> pkcs8 = blocks(file, "PRIVATE KEY");
        if (!pkcs8.isEmpty()) {
            return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(pkcs8.get(0)));
        }
        final List<byte[]> pkcs1 = blocks(file, "RSA PRIVATE KEY");
        if (!pkcs1.isEmpty()) {
            return KeyFactory.getInstance("RSA")
                    .generatePrivate(new PKCS8EncodedKeySpec(rsaPkcs1ToPkcs8(pkcs1.get(0))));
        }
        throw new IOException(file + " holds no PEM 'PRIVATE KEY' (PKCS#8) or 'RSA PRIVATE KEY' block "
                + "(convert one with: openssl pkcs8 -topk8 -nocrypt -in key.pem)");
    }

    private static List<byte[]> blocks(final Path file, final String type) throws IOException {
        final String text = Files.readString(file, StandardCharsets.US_ASCII);
        final List<byte[]> out = new ArrayList<>();
        final Matcher m = PEM.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(type)) {
                out.add(Base64.getMimeDecoder().decode(m.group(2)));
            }
        }
        return out;
    }

    /** PKCS#1 RSAPrivateKey wrapped as PKCS#8: SEQUENCE { 0, { rsaEncryption, NULL }, OCTET STRING pkcs1 }. */
    static byte[] rsaPkcs1ToPkcs8(final byte[] pkcs1) {
        final byte[] algorithm = {
            0x30,
            0x0d,
            0x06,
            0x09,
            0x2a,
            (byte) 0x86,
            0x48,
            (byte) 0x86,
            (byte) 0xf7,
            0x0d,
            0x01,
            0x01,
            0x01,
            0x05,
            0x00
        };
        final byte[] version = {0x02, 0x01, 0x00};
        final byte[] octets = der(0x04, pkcs1);
        final byte[] body = new byte[version.length + algorithm.length + octets.length];
        System.arraycopy(version, 0, body, 0, version.length);
        System.arraycopy(algorithm, 0, body, version.length, algorithm.length);
        System.arraycopy(octets, 0, body, version.length + algorithm.length, octets.length);
        return der(0x30, body);
    }

    private static byte[] der(final int tag, final byte[] content) {
        final int n = content.length;
        final byte[] length = n < 0x80
                ? new byte[] {(byte) n}
                : n < 0x100
                        ? new byte[] {(byte) 0x81, (byte) n}
                        : n < 0x10000
                                ? new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n}
                                : new byte[] {(byte) 0x83, (byte) (n >> 16), (byte) (n >> 8), (byte) n};
        final byte[] out = new byte[1 + length.length + n];
        out[0] = (byte) tag;
        System.arraycopy(length, 0, out, 1, length.length);
        System.arraycopy(content, 0, out, 1 + length.length, n);
        return out;
    }

    @Override
    public String toString() {
        return "tls{ca=" + (caFile == null ? "jdk" : caFile) + ", clientCert=" + (certFile == null ? "none" : certFile)
                + (insecureSkipVerify ? ", insecureSkipVerify" : "") + '}';
    }

    /**
     * Trusts every chain and, being an extended trust manager, does no host name check either (JSSE leaves
     * endpoint identification to the extended trust manager): what {@code insecureSkipVerify} asks for.
     */
    private static final class AcceptAnything extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(final X509Certificate[] chain, final String authType, final Socket socket) {}

        @Override
        public void checkServerTrusted(final X509Certificate[] chain, final String authType, final Socket socket) {}

        @Override
        public void checkClientTrusted(final X509Certificate[] chain, final String authType, final SSLEngine engine) {}

        @Override
        public void checkServerTrusted(final X509Certificate[] chain, final String authType, final SSLEngine engine) {}

        @Override
        public void checkClientTrusted(final X509Certificate[] chain, final String authType) {}

        @Override
        public void checkServerTrusted(final X509Certificate[] chain, final String authType) {}

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
