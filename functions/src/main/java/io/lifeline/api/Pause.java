package io.lifeline.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Limits;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Set;

/** A maintenance window: {@code {"until": ISO-8601}} or {@code {"seconds": n}}, and an optional reason. */
record Pause(Instant until, String reason) {
    /** The longest maintenance window accepted. */
    static final Duration MAX_PAUSE = Duration.ofDays(30);

    static Pause parse(JsonNode body, Instant now) {
        Fields f = Fields.of(body, "the pause", Set.of("until", "seconds", "reason"));
        String untilText = f.string("until", 64);
        Long seconds = f.integer("seconds", 1, MAX_PAUSE.toSeconds());
        if ((untilText == null) == (seconds == null)) {
            throw LifelineException.badInput("INVALID_FIELD", "Give exactly one of 'until' (ISO-8601) or 'seconds'");
        }
        Instant until;
        if (seconds != null) {
            until = now.plusSeconds(seconds);
        } else {
            try {
                until = Instant.parse(untilText);
            } catch (DateTimeParseException e) {
                throw LifelineException.badInput("INVALID_FIELD", "'until' must be an ISO-8601 instant such as "
                        + "2026-03-01T12:00:00Z");
            }
            if (!until.isAfter(now) || until.isAfter(now.plus(MAX_PAUSE))) {
                throw LifelineException.badInput("INVALID_FIELD", "'until' must be in the future and at most "
                        + MAX_PAUSE.toDays() + " days away");
            }
        }
        return new Pause(until, f.string("reason", Limits.MAX_REASON_CHARS));
    }
}
