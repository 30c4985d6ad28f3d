package io.lifeline.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** API keys: 256 random bits, shown once, stored only as their SHA-256. */
public final class ApiKeys {
    public static final String PREFIX = "ll_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private ApiKeys() {
    }

    public static String generate() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The shape of every key {@link #generate} makes: the prefix and 43 characters of URL-safe base64. */
    private static final Pattern SHAPE = Pattern.compile("ll_[A-Za-z0-9_-]{43}");

    /**
     * Whether {@code key} could be a key Lifeline issued. One that could not is refused as unknown before any
     * look-up, so malformed junk costs no read.
     */
    public static boolean wellFormed(String key) {
        return key != null && SHAPE.matcher(key).matches();
    }

    public static String hash(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always present in the JDK", e);
        }
    }

    /** A short public id for a key, to list and revoke it by: the first 12 hex digits of its hash. */
    public static String idOf(String hash) {
        return hash.substring(0, 12);
    }
}
