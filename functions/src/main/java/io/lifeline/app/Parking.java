package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.Liveness;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.ParkStore;
import java.time.Duration;
import java.time.Instant;

/**
 * Parking at a provider's usage limit (docs/liveness.md, "Parked at a usage limit"): an agent whose runtime reported a
 * rate or usage limit is parked until the reset, alive and neither stale nor stalled meanwhile, and resumed when it
 * shows activity again (or its daemon says so). A park reads the agent for its deadline and beat count, then writes
 * conditionally on that count, so a beat that lands in between wins and the park is made again on what it wrote.
 */
public final class Parking {
    /** The reason a park carries when its reporter gave none. */
    public static final String USAGE_LIMIT = "usage limit";
    private static final int ATTEMPTS = 3;

    private final AgentStore agents;
    private final ParkStore parks;
    private final Duration defaultPark;

    public Parking(AgentStore agents, ParkStore parks, Duration defaultPark) {
        this.agents = agents;
        this.parks = parks;
        this.defaultPark = defaultPark;
    }

    /**
     * Parks the alive agent until {@code reset} (null: the answer named none, so {@link Liveness#DEFAULT_PARK} from
     * now), for {@code reason} (null: {@value #USAGE_LIMIT}). False when it is not alive or already parked to that reset.
     */
    public boolean park(String team, String agentId, Instant reset, String reason, Instant now) {
        Instant until = Liveness.parkUntil(reset, now, defaultPark);
        for (int i = 0; i < ATTEMPTS; i++) {
            Agent a = agents.requireCurrent(team, agentId);
            if (!a.status().isAlive() || a.parked() != null && a.parked().until().equals(until)) {
                return false;
            }
            Instant deadline = Liveness.parkedDeadline(until, a.staleAfter(), a.deadline());
            if (parks.park(team, agentId, new Liveness.Parked(until, reason == null ? USAGE_LIMIT : reason, now),
                    deadline, a.beats())) {
                return true;
            }
        }
        return false;
    }

    /** Ends the agent's park, if one stands: true when it did. */
    public boolean resume(String team, String agentId, Instant now) {
        return parks.resume(team, agentId, now);
    }
}
