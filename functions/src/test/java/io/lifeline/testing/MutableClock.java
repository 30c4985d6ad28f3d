package io.lifeline.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The one clock every module's tests move by hand instead of sleeping (UTC; safe to read from the threads the code
 * under test runs). It lives in functions' test-jar, which infra/local's and the client's tests take in test scope.
 */
public final class MutableClock extends Clock {
    private final AtomicReference<Instant> now;

    public MutableClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    /** Moves the clock forward by {@code d} and answers the new time. */
    public Instant advance(Duration d) {
        return now.updateAndGet(t -> t.plus(d));
    }

    public Instant advanceMillis(long ms) {
        return advance(Duration.ofMillis(ms));
    }

    public void set(Instant t) {
        now.set(t);
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("tests use UTC");
    }
}
