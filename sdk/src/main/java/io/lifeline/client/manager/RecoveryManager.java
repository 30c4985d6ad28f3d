package io.lifeline.client.manager;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.model.RecoveryAnswer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * The crash-recovery protocol's recovery decision, from the local state file and the server's recovery route:
 * <ol>
 * <li>no local file: the server's checkpoint if it offers one (as a {@link PersistedState} with the checkpoint,
 * {@code savedAt} and {@code heartbeatAt}, and no local {@code state}, {@code stats} or {@code cwd}), else
 * "No saved state";</li>
 * <li>a file older than {@code maxAge}: "State too old";</li>
 * <li>the session is still alive: "Session still active" (the server's word when it can be asked; without
 * the server, a local heartbeat younger than {@code staleThreshold});</li>
 * <li>else available, with the saved state.</li>
 * </ol>
 */
public final class RecoveryManager {
    private final StateStore store;
    private final LifelineClient client;
    private final String agentId;
    private final Duration maxAge;
    private final Duration staleThreshold;
    private final Clock clock;

    /**
     * @param client null to decide from the local file alone
     * @param maxAge the oldest state offered back (the crash-recovery protocol's maxAge)
     * @param staleThreshold how long after its last heartbeat a session counts as gone (60 s by the
     *        crash-recovery protocol)
     */
    public RecoveryManager(StateStore store, LifelineClient client, String agentId, Duration maxAge,
            Duration staleThreshold, Clock clock) {
        this.store = Objects.requireNonNull(store);
        this.client = client;
        this.agentId = Objects.requireNonNull(agentId);
        this.maxAge = maxAge;
        this.staleThreshold = staleThreshold;
        this.clock = clock;
    }

    public RecoveryCheck checkForRecovery() {
        Instant now = clock.instant();
        PersistedState local = store.load();
        RecoveryAnswer server = askServer();
        if (local == null) {
            if (server != null && server.available()) {
                // The same shape as a local state: state() is never null when available.
                return new RecoveryCheck(true, null, fromServer(server), server);
            }
            return new RecoveryCheck(false, RecoveryCheck.NO_SAVED_STATE, null, server);
        }
        if (local.savedAt() == null || Duration.between(local.savedAt(), now).compareTo(maxAge) > 0) {
            return new RecoveryCheck(false, RecoveryCheck.STATE_TOO_OLD, local, server);
        }
        if (sessionActive(local, server, now)) {
            return new RecoveryCheck(false, RecoveryCheck.SESSION_STILL_ACTIVE, local, server);
        }
        return new RecoveryCheck(true, null, local, server);
    }

    /** The server's checkpoint as a {@link PersistedState}: who, the checkpoint, when it was saved and beat. */
    @SuppressWarnings("unchecked")
    private PersistedState fromServer(RecoveryAnswer server) {
        Map<String, Object> checkpoint = server.checkpoint() == null || server.checkpoint().isNull() ? Map.of()
                : LifelineClient.mapper().convertValue(server.checkpoint(), Map.class);
        return new PersistedState(agentId, client.team(), null, server.heartbeatTs(), null, checkpoint, null,
                server.savedAt());
    }

    private boolean sessionActive(PersistedState local, RecoveryAnswer server, Instant now) {
        if (server == null) {
            return local.heartbeatAt() != null
                    && Duration.between(local.heartbeatAt(), now).compareTo(staleThreshold) < 0;
        }
        if (RecoveryCheck.SESSION_STILL_ACTIVE.equals(server.reason())) {
            return true;
        }
        boolean alive = "ready".equals(server.agentStatus()) || "working".equals(server.agentStatus());
        return alive && server.heartbeatTs() != null
                && Duration.between(server.heartbeatTs(), now).compareTo(staleThreshold) < 0;
    }

    private RecoveryAnswer askServer() {
        if (client == null) {
            return null;
        }
        try {
            return client.recovery(agentId, Math.max(1, maxAge.toSeconds()));
        } catch (LifelineException e) {
            return null; // decide from the local file alone
        }
    }
}
