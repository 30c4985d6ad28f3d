package io.lifeline.app;

import io.lifeline.agent.LifelineException;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.TeamFleetHold;
import io.lifeline.agent.TeamSettings;
import io.lifeline.store.team.TeamStore;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Each team's share of the deployment-wide hold ({@link TeamFleetHold}), which its settings, its dashboard's banner
 * and {@code lifeline status} read with the team item alone: no read of the fleet, no scan, on any poll. The sweep
 * already counts every team when it judges the fleet, so it writes a team's figure in the same pass: only for a team
 * with agents held (or a share already written), and only when its counts change, so a long hold costs at most one
 * small conditional write per held team per change. The sweep that finds the hold over removes the shares.
 */
final class FleetShares {
    private FleetShares() {
    }

    /**
     * Writes the shares after the fleet's flag: {@code held} is this sweep's fleet outcome, {@code since} the hold
     * that stands after it (null while held: its flag's write was skipped, so the shares wait for the next sweep).
     */
    static void write(TeamStore teams, boolean held, Instant since, List<SweepPlan.TeamOutcome> outcomes,
                      Map<String, TeamSettings> settings, Runnable skipped) {
        if (held && since == null) {
            return;
        }
        Set<String> current = new HashSet<>();
        if (held) {
            for (SweepPlan.TeamOutcome o : outcomes) {
                TeamSettings s = settings.get(o.team());
                TeamFleetHold read = s == null ? null : s.fleetHold();
                boolean same = read != null && read.since().equals(since);
                if (s == null || (same ? read.alive() == o.alive() && read.stale() == o.stale() : o.stale() == 0)) {
                    continue;
                }
                try {
                    teams.shareFleetHold(o.team(), since, o.alive(), o.stale(), read == null ? null : read.since());
                    current.add(o.team());
                } catch (LifelineException e) {
                    skipped.run();
                }
            }
        }
        // Shares of a hold that is over (or of an earlier one, not rewritten above) are removed.
        for (TeamSettings s : settings.values()) {
            TeamFleetHold read = s.fleetHold();
            if (read != null && !read.since().equals(since) && !current.contains(s.team())) {
                try {
                    teams.clearFleetShare(s.team(), read.since());
                } catch (LifelineException e) {
                    skipped.run();
                }
            }
        }
    }

    /** The teams their admin released from the hold that began at {@code since}: judged as if it did not stand. */
    static Set<String> released(Map<String, TeamSettings> teams, Instant since) {
        Set<String> out = new TreeSet<>();
        teams.values().stream().filter(s -> SweepPlan.releasedFromFleet(s, since)).forEach(s -> out.add(s.team()));
        return out;
    }
}
