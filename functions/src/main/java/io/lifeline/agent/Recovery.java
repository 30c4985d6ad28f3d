package io.lifeline.agent;

import java.time.Duration;
import java.time.Instant;

/**
 * The crash-recovery answer: a saved checkpoint is offered back when it exists, is not older
 * than {@code maxAge}, and the session that saved it has gone quiet: not alive, or stale as the sweep judges it
 * (after its deadline; {@link Liveness#sessionActive}).
 */
public final class Recovery {

    public static final String NO_SAVED_STATE = "No saved state";
    public static final String STATE_TOO_OLD = "State too old";
    public static final String SESSION_STILL_ACTIVE = "Session still active";

    /** {@code checkpointJson} and {@code savedAt} are present when {@code available}. */
    public record Answer(boolean available, String reason, String checkpointJson, Instant savedAt) {
    }

    private Recovery() {
    }

    public static Answer decide(Agent agent, String checkpointJson, Instant savedAt, Duration maxAge, Instant now) {
        if (checkpointJson == null || savedAt == null) {
            return new Answer(false, NO_SAVED_STATE, null, null);
        }
        if (Duration.between(savedAt, now).compareTo(maxAge) > 0) {
            return new Answer(false, STATE_TOO_OLD, null, savedAt);
        }
        // The session is active while the liveness rule still holds it alive: at its deadline itself too.
        if (Liveness.sessionActive(agent, now)) {
            return new Answer(false, SESSION_STILL_ACTIVE, null, savedAt);
        }
        return new Answer(true, null, checkpointJson, savedAt);
    }
}
