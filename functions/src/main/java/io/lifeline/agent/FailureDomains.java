package io.lifeline.agent;

import java.util.Locale;
import java.util.Optional;

/**
 * What a team counts as one failure domain when self-preservation weighs a mass silence ({@link SweepPlan}): a
 * silence confined to one domain while the rest of the team or fleet still reaches Lifeline is the agents' failure,
 * not Lifeline's, and its agents die; any other mass silence is held.
 * <ul>
 *   <li>{@link #SOURCE} (the default): one host (all the leases of one daemon's host) for agents beating through a
 *       daemon, and one source address for agents that beat directly;</li>
 *   <li>{@link #HOST}: host leases only; agents that beat directly have no domain (their mass silence is held);</li>
 *   <li>{@link #NONE}: no domain explains a silence: every mass silence is held, as before domains existed.</li>
 * </ul>
 */
public enum FailureDomains {
    HOST,
    SOURCE,
    NONE;

    /** The rule a team that set none gets. */
    public static final FailureDomains DEFAULT = SOURCE;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<FailureDomains> fromWire(String text) {
        for (FailureDomains d : values()) {
            if (d.wire().equals(text)) {
                return Optional.of(d);
            }
        }
        return Optional.empty();
    }

    /** The team's rule, or the default when it set none. */
    public static FailureDomains of(TeamSettings settings) {
        return settings == null || settings.failureDomains() == null ? DEFAULT : settings.failureDomains();
    }
}
