package io.lifeline.client.model;

import java.time.Instant;

/** A task; status pending|in_progress|done. */
public record TaskView(String taskId, String title, String description, String status, String assignee,
        Instant createdAt, Instant claimedAt, Instant completedAt, String result) {
}
