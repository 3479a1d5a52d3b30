package io.flowscope.sink.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PEM files as operators are given them: certificates, PKCS#8 and PKCS#1 keys, and what is refused. */
class ClientTlsTest {
    @TempDir
    Path dir;

    private KeyStore rsaKeystore() throws Exception {
        final Path ks = dir.resolve("rsa.p12");
        final Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-alias",
                        "c",
                        "-keyalg",
                        "RSA",
                        "-keysize",
                        "2048",
                        "-dname",
                        "CN=client",
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        ks.toString(),
                        "-storepass",
                        "pass-1234")
                .redirectErrorStream(true)
                .start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        final KeyStore k = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(ks)) {
            k.load(in, "pass-1234".toCharArray());
        }
        return k;
    }

    private Path pem(final String name, final String type, final byte[] der) throws Exception {
        final Path f = dir.resolve(name);
        Files.writeString(
                f,
                "-----BEGIN " + type + "-----\n"
                        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END " + type
                        + "-----\n");
        return f;
    }

    /** The RSAPrivateKey inside a PKCS#8 encoding: the content of its last element, the OCTET STRING. */
    private static byte[] pkcs1Of(final byte[] pkcs8) {
        int i = pkcs8.length;
        for (int start = 0; start < pkcs8.length - 4; start++) {
            // the OCTET STRING's header: 04 82 hi lo, its length reaching exactly to the end
            if (pkcs8[start] == 0x04
                    && (pkcs8[start + 1] & 0xff) == 0x82
                    && start + 4 + (((pkcs8[start + 2] & 0xff) << 8) | (pkcs8[start + 3] & 0xff)) == pkcs8.length) {
                i = start + 4;
                break;
            }
        }
        return Arrays.copyOfRange(pkcs8, i, pkcs8.length);
    }

    @Test
    void aPkcs1RsaKeyIsReadAsTheSameKeyAsItsPkcs8Form() throws Exception {
        final KeyStore k = rsaKeystore();
        final PrivateKey key = (PrivateKey) k.getKey("c", "pass-1234".toCharArray());
        final X509Certificate cert = (X509Certificate) k.getCertificate("c");
        final byte[] pkcs1 = pkcs1Of(key.getEncoded());
        assertThat(pkcs1.length).isLessThan(key.getEncoded().length);

        assertThat(ClientTls.rsaPkcs1ToPkcs8(pkcs1)).isEqualTo(key.getEncoded());
        final Path certPem = pem("c.crt", "CERTIFICATE", cert.getEncoded());
        final Path pkcs1Pem = pem("c1.key", "RSA PRIVATE KEY", pkcs1);
        final Path pkcs8Pem = pem("c8.key", "PRIVATE KEY", key.getEncoded());
        assertThat(ClientTls.privateKey(pkcs1Pem, cert)).isEqualTo(key);
        assertThat(ClientTls.privateKey(pkcs8Pem, cert)).isEqualTo(key);
        assertThat(new ClientTls(certPem, certPem, pkcs1Pem, false).sslContext())
                .isNotNull();
    }

    @Test
    void whatCannotBeUsedFailsInOneLineNamingTheFileAndAHalfPairIsRefused() throws Exception {
        final Path notPem = dir.resolve("x.pem");
        Files.writeString(notPem, "not a certificate\n");
        assertThatThrownBy(() -> new ClientTls(notPem, null, null, false).sslContext())
                .hasMessage("TLS setup failed: " + notPem + " holds no PEM CERTIFICATE block");
        final KeyStore k = rsaKeystore();
        final Path certPem = pem("c.crt", "CERTIFICATE", k.getCertificate("c").getEncoded());
        final Path ec = dir.resolve("ec.key");
        Files.writeString(ec, "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
        assertThatThrownBy(() -> new ClientTls(null, certPem, ec, false).sslContext())
                .hasMessageContaining(ec + " holds no PEM 'PRIVATE KEY' (PKCS#8)")
                .hasMessageContaining("openssl pkcs8");
        assertThatThrownBy(() -> new ClientTls(null, certPem, null, false))
                .hasMessageContaining("needs both certFile and keyFile");
    }

    @Test
    void credentialsNeverPrintAndCannotSmuggleHeaderLines() {
        assertThat(HttpAuth.basic("flowscope", "s3cret:with-colon").toString()).isEqualTo("basic(flowscope, ****)");
        assertThat(HttpAuth.bearer("tok-abcdef").toString()).isEqualTo("bearer");
        assertThat(HttpAuth.NONE.isNone()).isTrue();
        assertThatThrownBy(() -> HttpAuth.bearer("s3cr\r\nX-Evil: 1"))
                .hasMessageContaining("control character")
                .hasMessageNotContaining("s3cr");
        assertThatThrownBy(() -> HttpAuth.basic("a:b", "pw")).hasMessageContaining("may not contain ':'");
        assertThatThrownBy(() -> HttpAuth.basic("a", "")).hasMessageContaining("empty");
    }
}
