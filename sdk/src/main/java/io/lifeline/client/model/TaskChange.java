package io.lifeline.client.model;

/** The answer to a claim or complete: the agent's status after it, and the task. */
public record TaskChange(boolean success, String agentStatus, TaskView task) {
}
