package io.lifeline.junit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The clock Lifeline Local runs on inside a test: it moves only when the test moves it, so "60 seconds without a
 * beat" takes no time at all. Safe to read from Local's own threads (UTC).
 */
public final class TestClock extends Clock {
    private final AtomicReference<Instant> now;

    public TestClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    /** Moves the clock forward by {@code d} (never back) and answers the new time. */
    public Instant advance(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("the clock moves forward only, not by " + d);
        }
        return now.updateAndGet(t -> t.plus(d));
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
        if (ZoneOffset.UTC.equals(zone)) {
            return this;
        }
        throw new UnsupportedOperationException("Lifeline's clock is UTC");
    }
}
