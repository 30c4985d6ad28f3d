package io.lifeline.auth;

import java.util.Locale;
import java.util.Optional;

/**
 * What a key may do. {@code read} sees a team; {@code agent} also heartbeats, joins, leaves, works tasks
 * and reports errors; {@code admin} may do everything, including registering agents and creating keys.
 */
public enum Scope {
    READ, AGENT, ADMIN;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True when a key of this scope may call a route that needs {@code required}. */
    public boolean covers(Scope required) {
        return ordinal() >= required.ordinal();
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
