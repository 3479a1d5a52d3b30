package io.flowscope.sink.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class HmacSignerTest {
    private static byte[] bytes(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theSignatureIsHmacSha256InLowercaseHexAsRfc4231TestCase2Gives() {
        assertThat(new HmacSigner(bytes("Jefe")).sign(bytes("what do ya want for nothing?")))
                .isEqualTo("sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    @Test
    void verificationAcceptsTheRightSecretAndRefusesAnotherSecretOrAChangedBody() {
        final String header = new HmacSigner(bytes("s3cret")).sign(bytes("[{}]"));

        assertThat(HmacSigner.verify(bytes("s3cret"), bytes("[{}]"), header)).isTrue();
        assertThat(HmacSigner.verify(bytes("other"), bytes("[{}]"), header)).isFalse();
        assertThat(HmacSigner.verify(bytes("s3cret"), bytes("[{} ]"), header)).isFalse();
        assertThat(HmacSigner.verify(bytes("s3cret"), bytes("[{}]"), null)).isFalse();
    }

    @Test
    void theSecretIsNeverPrintedByTheSignerOrTheConfiguration() {
        final WebhookConfig config = WebhookConfig.builder(java.net.URI.create("http://127.0.0.1:1/x"))
                .secret("hunter2-very-secret")
                .build();

        assertThat(config.toString()).doesNotContain("hunter2").contains("secret=****");
        assertThat(new HmacSigner(config.secret()).toString()).doesNotContain("hunter2");
        assertThat(new WebhookAlertSink(config).toString()).doesNotContain("hunter2");
    }
}
