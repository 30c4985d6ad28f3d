package io.lifeline.client.model;

import java.util.List;

/** A page of a team's tasks; {@code nextCursor} reads the next (null: the last, or every page joined). */
public record TaskList(int count, List<TaskView> tasks, String nextCursor) {
    public TaskList(int count, List<TaskView> tasks) {
        this(count, tasks, null);
    }
}
