package io.flowscope.sink.webhook;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 over the exact request body bytes, written as {@code sha256=<64 lowercase hex>} in the
 * signature header. A receiver recomputes it with the shared secret and compares in constant time
 * ({@link #verify}).
 */
public final class HmacSigner {
    public static final String ALGORITHM = "HmacSHA256";
    public static final String PREFIX = "sha256=";

    private final SecretKeySpec key;

    public HmacSigner(final byte[] secret) {
        if (secret.length == 0) {
            throw new IllegalArgumentException("the webhook secret is empty");
        }
        this.key = new SecretKeySpec(secret.clone(), ALGORITHM);
    }

    public String sign(final byte[] body) {
        try {
            final Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return PREFIX + HexFormat.of().formatHex(mac.doFinal(body));
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JDK", e);
        }
    }

    /** True when {@code header} is the signature of {@code body} with {@code secret} (constant-time compare). */
    public static boolean verify(final byte[] secret, final byte[] body, final String header) {
        if (header == null) {
            return false;
        }
        final String expected = new HmacSigner(secret).sign(body);
        return MessageDigest.isEqual(
                expected.getBytes(StandardCharsets.US_ASCII), header.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public String toString() {
        return "HmacSigner{HmacSHA256, secret=****}";
    }
}
