package io.lifeline.client.model;

import java.time.Duration;
import java.time.Instant;

/** A maintenance window: exactly one of {@code until} and {@code seconds}, and an optional reason. */
public record Pause(Instant until, Long seconds, String reason) {

    public static Pause until(Instant until, String reason) {
        return new Pause(until, null, reason);
    }

    public static Pause lasting(Duration d, String reason) {
        return new Pause(null, d.toSeconds(), reason);
    }
}
