package io.lifeline.auth;

import java.util.Locale;
import java.util.Optional;

/**
 * What a key may do. {@code read} sees a team; {@code agent} also heartbeats, joins, leaves, works tasks
 * and reports errors; {@code admin} may do everything in its team, including registering agents and creating
 * keys. {@code operator} belongs to no team: it opens only the operator routes (creating a team, minting a team's
 * admin key, releasing the fleet's hold; the routes declared with this scope) and no team route, so a leaked operator
 * key cannot read or change any team's agents.
 */
public enum Scope {
    READ, AGENT, ADMIN, OPERATOR;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True when a key of this scope may call a route that needs {@code required}. */
    public boolean covers(Scope required) {
        return ordinal() >= required.ordinal();
    }

    /** The scopes a team's admin may give a key: never {@link #OPERATOR}. */
    public boolean isTeamScope() {
        return this != OPERATOR;
    }

    public static Optional<Scope> fromWire(String value) {
        for (Scope s : values()) {
            if (s.wire().equals(value)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }
}
