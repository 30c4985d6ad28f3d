package io.lifeline.client.manager;

import io.lifeline.client.model.RecoveryAnswer;
import java.util.Map;

/**
 * The answer to "can this agent recover?": {@code available} with the saved {@code state}, or a
 * {@code reason} (the crash-recovery protocol: "No saved state", "State too old", "Session still active"). When
 * available, {@code state} is never null, wherever the checkpoint came from (the local file, or the server's when there
 * is no file): {@code state().checkpoint()} is the checkpoint. {@code server} is the server's own answer, or null
 * when it could not be asked.
 */
public record RecoveryCheck(boolean available, String reason, PersistedState state, RecoveryAnswer server) {
    /** The checkpoint to resume from: {@code state().checkpoint()} when available, else an empty map. */
    public Map<String, Object> checkpoint() {
        return state == null || state.checkpoint() == null ? Map.of() : state.checkpoint();
    }

    public static final String NO_SAVED_STATE = "No saved state";
    public static final String STATE_TOO_OLD = "State too old";
    public static final String SESSION_STILL_ACTIVE = "Session still active";
}
