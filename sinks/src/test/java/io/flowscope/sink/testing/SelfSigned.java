package io.flowscope.sink.testing;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for 127.0.0.1 made by the JDK's keytool, written as PEM files (certificate, PKCS#8
 * key) as a server or client is given them.
 */
public record SelfSigned(Path certPem, Path keyPem) {
    public static SelfSigned create(final Path dir, final String name) throws Exception {
        final Path ks = dir.resolve(name + ".p12");
        final String pass = "keystore-pass-" + name;
        final Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-alias",
                        name,
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=" + name,
                        "-ext",
                        "SAN=ip:127.0.0.1,dns:localhost",
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        ks.toString(),
                        "-storepass",
                        pass,
                        "-keypass",
                        pass)
                .redirectErrorStream(true)
                .start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        final KeyStore k = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(ks)) {
            k.load(in, pass.toCharArray());
        }
        final PrivateKey key = (PrivateKey) k.getKey(name, pass.toCharArray());
        final X509Certificate cert = (X509Certificate) k.getCertificate(name);
        final Base64.Encoder b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        final SelfSigned s = new SelfSigned(dir.resolve(name + ".crt"), dir.resolve(name + ".key"));
        Files.writeString(
                s.certPem(),
                "-----BEGIN CERTIFICATE-----\n" + b64.encodeToString(cert.getEncoded())
                        + "\n-----END CERTIFICATE-----\n");
        Files.writeString(
                s.keyPem(),
                "-----BEGIN PRIVATE KEY-----\n" + b64.encodeToString(key.getEncoded())
                        + "\n-----END PRIVATE KEY-----\n");
        return s;
    }
}
