package io.lifeline.store;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock the store's tests move by hand; the store takes each decision's {@code now} from it. */
final class TestClock extends Clock {
    private Instant now;

    TestClock(Instant start) {
        this.now = start;
    }

    /** Moves the clock forward by {@code d} and answers the new time. */
    Instant advance(Duration d) {
        now = now.plus(d);
        return now;
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
        throw new UnsupportedOperationException("the store's tests use UTC");
    }
}
