package io.lifeline.agent;

import java.time.Duration;

/** A validated registration. */
public record NewAgent(String team, String agentId, String name, String role, String hostId,
                       Duration staleAfter, int graceMisses) {
}
