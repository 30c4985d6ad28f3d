package io.lifeline.api;

import io.lifeline.agent.LifelineException;
import io.lifeline.app.Parking;
import io.lifeline.hooks.UsageLimit;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a beat says of parking (docs/liveness.md, "Parked at a usage limit"): {@code "parked": {"until": ISO-8601,
 * "reason": "..."}} parks the agent until its provider's limit resets (no {@code until}: the default), and
 * {@code "parked": false} ends the park. A daemon sends either once, when it changes; the park is its own conditional
 * write beside the beat's, which a host lease may still answer alone.
 */
final class ParkRequests {
    /** A park's reason as a client may word it: a short phrase, never free text (it reaches events). */
    private static final Pattern REASON = Pattern.compile("[A-Za-z0-9 ._,:()-]{1,32}");

    /** A park until {@code until} (null: the default) for {@code reason}, or the end of one ({@code park} false). */
    record Request(boolean park, Instant until, String reason) {
    }

    private static final Request RESUME = new Request(false, null, null);

    private ParkRequests() {
    }

    /** The beat's {@code parked}, read at {@code now}; null when it says nothing of parking. */
    static Request of(Fields f, Instant now) {
        if (f.isFalse("parked")) {
            return RESUME;
        }
        if (!f.has("parked")) {
            return null;
        }
        Fields p = f.nested("parked", Set.of("until", "reason"));
        String reason = p.string("reason", 32);
        if (reason != null && !REASON.matcher(reason).matches()) {
            throw LifelineException.badInput("INVALID_FIELD", "'parked.reason' must be a short phrase of letters, "
                    + "digits, spaces and . _ , : ( ) -");
        }
        String text = p.string("until", 40);
        Instant until = null;
        if (text != null) {
            try {
                until = Instant.parse(text);
            } catch (DateTimeParseException e) {
                throw LifelineException.badInput("INVALID_FIELD", "'parked.until' must be an ISO-8601 instant");
            }
            if (until.isAfter(now.plus(UsageLimit.MAX_WAIT))) {
                throw LifelineException.badInput("INVALID_FIELD", "'parked.until' is at most "
                        + UsageLimit.MAX_WAIT.toDays() + " days away");
            }
        }
        return new Request(true, until, reason);
    }

    /** Applies {@code r} (null: nothing) to the agent, after its beat was taken. */
    static void apply(Parking parking, String team, String agentId, Request r, Instant now) {
        if (r == null) {
            return;
        }
        if (r.park()) {
            parking.park(team, agentId, r.until(), r.reason(), now);
        } else {
            parking.resume(team, agentId, now);
        }
    }
}
