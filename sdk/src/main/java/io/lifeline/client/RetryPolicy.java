package io.lifeline.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Retries of transient failures (connect errors, 429, 503): {@code maxRetries} more attempts after the first,
 * waiting {@code baseDelay} x 2^n (2 s, 4 s, 8 s by default) plus a random jitter of up to
 * {@code jitterFraction} of that delay. A {@code Retry-After} longer than the backoff is honoured (capped at
 * {@code maxDelay}). 4xx other than 429 are never retried.
 *
 * @param jitter a source of numbers in [0, 1); tests pass {@code () -> 0} for exact delays
 */
public record RetryPolicy(int maxRetries, Duration baseDelay, double jitterFraction, Duration maxDelay,
        DoubleSupplier jitter) {

    public static RetryPolicy defaults() {
        return new RetryPolicy(3, Duration.ofSeconds(2), 0.2, Duration.ofSeconds(60),
                () -> ThreadLocalRandom.current().nextDouble());
    }

    public static RetryPolicy none() {
        return new RetryPolicy(0, Duration.ZERO, 0, Duration.ZERO, () -> 0);
    }

    public RetryPolicy withJitter(DoubleSupplier source) {
        return new RetryPolicy(maxRetries, baseDelay, jitterFraction, maxDelay, source);
    }

    /** The wait before retry number {@code retry} (0-based), given the server's Retry-After (or null). */
    public Duration delay(int retry, Duration retryAfter) {
        long backoffMillis = baseDelay.toMillis() << retry;
        long jitterMillis = (long) (backoffMillis * jitterFraction * jitter.getAsDouble());
        Duration d = Duration.ofMillis(backoffMillis + jitterMillis);
        if (retryAfter != null && retryAfter.compareTo(d) > 0) {
            d = retryAfter;
        }
        return d.compareTo(maxDelay) > 0 && !maxDelay.isZero() ? maxDelay : d;
    }
}
