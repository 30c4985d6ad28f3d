package io.lifeline.agent;

import java.time.Duration;

/**
 * A validated registration. {@code schedule} (canonical text) and {@code timeZone} (a zone id) are null for
 * an agent that simply heartbeats within {@code staleAfter}; with a schedule, {@code staleAfter} is the grace
 * after each expected heartbeat.
 */
public record NewAgent(String team, String agentId, String name, String role, String hostId,
                       Duration staleAfter, int graceMisses, String schedule, String timeZone) {
}
