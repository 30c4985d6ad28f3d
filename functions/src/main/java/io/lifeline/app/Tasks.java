package io.lifeline.app;

import io.lifeline.agent.Task;
import io.lifeline.agent.TaskStatus;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.support.Page;
import java.time.Instant;
import java.util.List;

/**
 * A team's tasks: create, list, and claim or complete, each of which moves the task and its agent together in one
 * transaction (the store's). A task's hand-back when its agent stops is the agent's lifecycle's
 * ({@link AgentChanges#handBack}).
 */
public final class Tasks {
    private final TaskStore tasks;

    public Tasks(TaskStore tasks) {
        this.tasks = tasks;
    }

    /** A new pending task; refused 409 when the id is taken. */
    public Task create(String team, String taskId, String title, String description, Instant now) {
        return tasks.create(team, taskId, title, description, now);
    }

    /** The team's tasks, optionally only those in {@code status}. */
    public List<Task> list(String team, TaskStatus status) {
        return tasks.list(team, status);
    }

    /** A page of the team's tasks in id order from {@code cursor} (null: the first), optionally only in {@code status}. */
    public Page<Task> page(String team, TaskStatus status, int limit, String cursor) {
        return tasks.page(team, status, limit, cursor);
    }

    /** The agent takes the task (pending -> in_progress) and starts working on it. */
    public TaskStore.Change claim(String team, String taskId, String agentId, Instant now) {
        return tasks.claim(team, taskId, agentId, now);
    }

    /** The agent finishes the task it holds (in_progress -> done) and is ready again. */
    public TaskStore.Change complete(String team, String taskId, String agentId, String result, Instant now) {
        return tasks.complete(team, taskId, agentId, result, now);
    }
}
