package io.lifeline.client.model;

import java.util.List;

/** A team's tasks. */
public record TaskList(int count, List<TaskView> tasks) {
}
