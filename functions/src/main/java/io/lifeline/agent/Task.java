package io.lifeline.agent;

import java.time.Instant;

/** A unit of work an agent can claim. {@code assignee} is set while in progress and kept once done. */
public record Task(String team, String taskId, String title, String description, TaskStatus status,
                   String assignee, Instant createdAt, Instant claimedAt, Instant completedAt, String result) {
}
