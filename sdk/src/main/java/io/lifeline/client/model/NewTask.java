package io.lifeline.client.model;

/** A task to create; {@code description} is optional. */
public record NewTask(String taskId, String title, String description) {
}
