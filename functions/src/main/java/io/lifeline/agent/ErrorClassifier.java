package io.lifeline.agent;

import java.util.List;
import java.util.Locale;

/**
 * The error-handling protocol's three error categories: a context limit rotates the session, a transient API error is
 * retried with backoff (2 s, 4 s, 8 s), anything else is recorded for a person to look at.
 */
public final class ErrorClassifier {

    public enum Category { CONTEXT_LIMIT, TRANSIENT, UNKNOWN }

    public record Classification(Category category, String action, List<Integer> retryDelaysSeconds) {
    }

    /** Backoff for transient errors, in seconds. */
    public static final List<Integer> TRANSIENT_RETRY_DELAYS_SECONDS = List.of(2, 4, 8);

    private static final List<String> CONTEXT_LIMIT_MARKERS = List.of("context", "token limit");
    private static final List<String> TRANSIENT_MARKERS =
            List.of("rate limit", "rate_limit", "timeout", "timed out", "overloaded", "429", "503", "529");

    private ErrorClassifier() {
    }

    public static Classification classify(String message) {
        String m = message.toLowerCase(Locale.ROOT);
        if (CONTEXT_LIMIT_MARKERS.stream().anyMatch(m::contains)) {
            return new Classification(Category.CONTEXT_LIMIT, "rotate_session", List.of());
        }
        if (TRANSIENT_MARKERS.stream().anyMatch(m::contains)) {
            return new Classification(Category.TRANSIENT, "retry_with_backoff", TRANSIENT_RETRY_DELAYS_SECONDS);
        }
        return new Classification(Category.UNKNOWN, "record", List.of());
    }
}
