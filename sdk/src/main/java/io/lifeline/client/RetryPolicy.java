package io.lifeline.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Retries of transient failures ({@link LifelineApiException#isTransient}, and connect errors): waiting
 * {@code baseDelay} x 2^n (2 s, 4 s, 8 s, 16 s, ... by default) plus a random jitter of up to {@code jitterFraction}
 * of that delay, each wait capped at {@code maxDelay}. A {@code Retry-After} longer than the backoff is honoured
 * (capped at {@code maxDelay} too). 4xx other than 429 are never retried.
 *
 * <p>How many retries depends on what failed. An answer that says the function did not answer
 * ({@link LifelineApiException#functionDidNotAnswer}: 502, 504, or the HTTP API's 500 without a code) gets
 * {@code notReadyRetries}: a SnapStart version not invoked for 14 days goes inactive, and its calls fail until
 * Lambda has initialised it again and taken a new snapshot. AWS documents no duration for that ("wait until the
 * function version reaches the Active state":
 * https://docs.aws.amazon.com/lambda/latest/dg/snapstart-troubleshooting.html; the states:
 * https://docs.aws.amazon.com/lambda/latest/dg/snapstart-activate.html#snapstart-function-states); a version taking
 * "upwards of 2 minutes" to become active is reported
 * (https://github.com/alexcasalboni/aws-lambda-power-tuning/pull/190). The default, 14 retries, waits 2, 4, 8, 16,
 * 32 s and then 60 s nine times: 602 s, about ten minutes, the cover the revive flow gives
 * {@code Lambda.SnapStartNotReadyException} (630 s). Anything else (429, 503, a connect error) gets
 * {@code maxRetries}: 2 s, 4 s, 8 s by default, since nobody listening or a throttle is better said soon.
 *
 * @param jitter a source of numbers in [0, 1); tests pass {@code () -> 0} for exact delays
 * @param notReadyRetries retries of an answer that says the function did not answer (see above)
 */
public record RetryPolicy(int maxRetries, Duration baseDelay, double jitterFraction, Duration maxDelay,
        DoubleSupplier jitter, int notReadyRetries) {

    /** Retries of a function that did not answer, by default: about ten minutes of waits (the class's note). */
    public static final int NOT_READY_RETRIES = 14;

    /** A policy whose every failure gets {@code maxRetries}. */
    public RetryPolicy(int maxRetries, Duration baseDelay, double jitterFraction, Duration maxDelay,
            DoubleSupplier jitter) {
        this(maxRetries, baseDelay, jitterFraction, maxDelay, jitter, maxRetries);
    }

    /** 2 s, 4 s, 8 s (+ up to 20 %) for throttles and connect errors; about ten minutes for a function not ready. */
    public static RetryPolicy defaults() {
        return new RetryPolicy(3, Duration.ofSeconds(2), 0.2, Duration.ofSeconds(60),
                () -> ThreadLocalRandom.current().nextDouble(), NOT_READY_RETRIES);
    }

    /**
     * 2 s, 4 s, 8 s (+ up to 20 %) for every failure: for a caller that tries again on its own schedule and must not
     * be held for minutes by one call (the host daemon: one call stuck for ten minutes would hold its host's beats
     * and its lease would run out; it keeps what failed and sends it again next round).
     */
    public static RetryPolicy perRound() {
        RetryPolicy d = defaults();
        return new RetryPolicy(d.maxRetries(), d.baseDelay(), d.jitterFraction(), d.maxDelay(), d.jitter());
    }

    public static RetryPolicy none() {
        return new RetryPolicy(0, Duration.ZERO, 0, Duration.ZERO, () -> 0);
    }

    public RetryPolicy withJitter(DoubleSupplier source) {
        return new RetryPolicy(maxRetries, baseDelay, jitterFraction, maxDelay, source, notReadyRetries);
    }

    /** How many retries {@code failure} gets: {@link #notReadyRetries} for a function that did not answer. */
    public int retriesFor(RuntimeException failure) {
        return failure instanceof LifelineApiException e && e.functionDidNotAnswer() ? notReadyRetries : maxRetries;
    }

    /** The wait before retry number {@code retry} (0-based), given the server's Retry-After (or null). */
    public Duration delay(int retry, Duration retryAfter) {
        long backoffMillis = baseDelay.toMillis() << Math.min(retry, 30);
        long jitterMillis = (long) (backoffMillis * jitterFraction * jitter.getAsDouble());
        Duration d = Duration.ofMillis(backoffMillis + jitterMillis);
        if (retryAfter != null && retryAfter.compareTo(d) > 0) {
            d = retryAfter;
        }
        return d.compareTo(maxDelay) > 0 && !maxDelay.isZero() ? maxDelay : d;
    }
}
