package io.lifeline.agent;

import java.time.Instant;

/**
 * A team's mass-silence flag as it stands: raised by the sweep that first judged the silence ({@code since}), with
 * the counts it saw ({@code alive}, {@code stale}) and {@code why}. {@code held}: self-preservation holds the team's
 * dead-marking; false when one failure domain explained the silence and its agents die (the flag is then that
 * incident's one page). {@code releasedAt}: when an admin released the hold (its agents die as judged, until the
 * silence ends and the flag comes down), or null.
 */
public record TeamHold(Instant since, int alive, int stale, boolean held, String why, Instant releasedAt) {

    /** Whether the hold holds the team's dead-marking now: held and not released. */
    public boolean holding() {
        return held && releasedAt == null;
    }
}
