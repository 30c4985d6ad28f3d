package io.lifeline.local.asl;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock the tests move by hand instead of sleeping. */
final class TestClock extends Clock {
    private volatile Instant now;

    TestClock(Instant start) {
        this.now = start;
    }

    void advance(Duration d) {
        now = now.plus(d);
    }

    void advanceMillis(long ms) {
        advance(Duration.ofMillis(ms));
    }

    void set(Instant t) {
        now = t;
    }

    @Override
    public Instant instant() {
        return now;
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
