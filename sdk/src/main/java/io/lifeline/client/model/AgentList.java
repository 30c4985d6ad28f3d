package io.lifeline.client.model;

import java.util.List;

/** A team's agents. */
public record AgentList(int count, List<AgentView> agents) {
}
