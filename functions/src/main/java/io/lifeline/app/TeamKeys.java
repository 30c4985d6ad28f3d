package io.lifeline.app;

import io.lifeline.auth.Scope;
import io.lifeline.store.team.KeyStore;
import io.lifeline.store.team.TeamStore;
import io.lifeline.support.Page;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Teams and their API keys: a team created with its first admin key (an operator's), an admin key minted for an
 * existing team (an operator's way back when a team lost its admin keys), a team's keys created, listed and
 * revoked (its admin's), and a key looked up by its secret (the authorizer's and the heartbeat URL's).
 */
public final class TeamKeys {
    private final KeyStore keys;

    public TeamKeys(KeyStore keys) {
        this.keys = keys;
    }

    /** A new team with its settings (null ones not set) and its first admin key; refused 409 when it exists. */
    public KeyStore.NewKey createTeam(String team, String leaderAgentId, Double threshold, Integer minAlive,
                                      Instant now) {
        return keys.createTeam(team, TeamStore.settingsAttributes(leaderAgentId, threshold, minAlive), now);
    }

    /** A new admin key of an existing team, minted by the operator key {@code operatorKeyId}; 404 when no team. */
    public KeyStore.NewKey mintAdminKey(String team, String label, String operatorKeyId, Instant now) {
        return keys.mintAdminKey(team, label, operatorKeyId, now);
    }

    public KeyStore.NewKey createKey(String team, Scope scope, String label, Instant now) {
        return keys.createKey(team, scope, label, now);
    }

    public List<KeyStore.KeyRef> list(String team) {
        return keys.list(team);
    }

    /** A page of the team's keys (by id) from {@code cursor} (null: the first). */
    public Page<KeyStore.KeyRef> page(String team, int limit, String cursor) {
        return keys.page(team, limit, cursor);
    }

    /** Revokes a key; refused 409 LAST_ADMIN_KEY for a team's last admin key. */
    public void revoke(String team, String keyId) {
        keys.revoke(team, keyId);
    }

    /** The key whose secret is {@code key}, or empty. */
    public Optional<KeyStore.KeyInfo> find(String key) {
        return keys.find(key);
    }
}
