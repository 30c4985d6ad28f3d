package io.lifeline.store.agent;

import static io.lifeline.store.agent.AgentItems.STATUS;
import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Task;
import io.lifeline.agent.TaskStatus;
import io.lifeline.agent.Trigger;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Transactions;
import io.lifeline.store.dynamo.Update;
import io.lifeline.support.Page;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Tasks. Claim and complete change the task and the agent in one TransactWriteItems: both or neither.
 * A dead agent's task is found from the agent item, which names the task it holds; no index is written. Tasks
 * claimed before the assignee index was dropped still carry its keys, which a completion or hand-back removes.
 */
public final class TaskStore {
    private static final String TITLE = "title";
    private static final String DESCRIPTION = "description";
    private static final String ASSIGNEE = "assignee";
    private static final String CREATED_AT = "createdAt";
    private static final String CLAIMED_AT = "claimedAt";
    private static final String COMPLETED_AT = "completedAt";
    private static final String RESULT = "result";
    /** Set when a task is handed back from an agent that stopped; its appearance is the TasksReassigned event. */
    static final String REASSIGNED_FROM = "reassignedFrom";
    static final String REASSIGNED_AT = "reassignedAt";
    private static final int CONTENTION_ATTEMPTS = 3;

    /** The outcome of a claim or complete: the task and the agent after the change. */
    public record Change(Task task, AgentStatus agentStatus) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final String live;

    public TaskStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.live = tables.live();
    }

    private static Map<String, AttributeValue> key(String team, String taskId) {
        return Map.of(Keys.PK, s(Keys.team(team)), Keys.SK, s(Keys.taskSk(taskId)));
    }

    public Task create(String team, String taskId, String title, String description, Instant now) {
        Map<String, AttributeValue> item = new HashMap<>(key(team, taskId));
        item.put(TITLE, s(title));
        if (description != null) {
            item.put(DESCRIPTION, s(description));
        }
        item.put(STATUS, s(TaskStatus.PENDING.wire()));
        item.put(CREATED_AT, ms(now));
        try {
            StoreFailures.call("create the task", () -> dynamo.putItem(r -> r.tableName(table).item(item)
                    .conditionExpression("attribute_not_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK))));
        } catch (ConditionalCheckFailedException e) {
            throw new LifelineException(LifelineException.Kind.CONFLICT, "TASK_EXISTS",
                    "Task '" + taskId + "' already exists");
        }
        return toTask(item);
    }

    public List<Task> list(String team, TaskStatus status) {
        return Partitions.withPrefix(dynamo, table, Keys.team(team), Keys.TASK_PREFIX,
                status == null ? null : status.wire(), "list tasks").stream().map(TaskStore::toTask).toList();
    }

    /**
     * A page of at most {@code limit} of the team's tasks in id order from {@code cursor} (null: the first), only
     * those in {@code status} when it is not null (a filter on the page's items: a page may hold fewer than
     * {@code limit} while more follow).
     */
    public Page<Task> page(String team, TaskStatus status, int limit, String cursor) {
        Page<Map<String, AttributeValue>> p = Partitions.page(dynamo, table, team, Keys.TASK_PREFIX, "tasks",
                status == null ? null : status.wire(), limit, cursor, "list tasks");
        return new Page<>(p.items().stream().map(TaskStore::toTask).toList(), p.cursor());
    }

    /**
     * Task pending -> in_progress and agent ready -> working, together. Liveness is left to heartbeats: the
     * deadline a schedule sets is not this transaction's to move.
     */
    public Change claim(String team, String taskId, String agentId, Instant now) {
        Update task = new Update(table, key(team, taskId));
        task.condition(task.name(STATUS) + " = " + task.value(s(TaskStatus.PENDING.wire())));
        task.set(STATUS, s(TaskStatus.IN_PROGRESS.wire())).set(ASSIGNEE, s(agentId)).set(CLAIMED_AT, ms(now))
                .remove(REASSIGNED_FROM).remove(REASSIGNED_AT);

        Function<Instant, Update> agent = at -> {
            Update a = new Update(live, AgentItems.key(team, agentId));
            a.condition(a.name(STATUS) + " = " + a.value(s(AgentStatus.READY.wire())));
            AgentItems.stampTransition(a, Trigger.CLAIM_TASK, AgentStatus.WORKING, "claimed task " + taskId, at);
            a.set(AgentItems.TASK, s(taskId)).set(AgentItems.HOLD, AttributeValue.fromBool(true));
            return a;
        };

        write("claim the task", task, agent, now, taskId, agentId, Trigger.CLAIM_TASK);
        return new Change(new Task(team, taskId, null, null, TaskStatus.IN_PROGRESS, agentId, null, now, null, null),
                AgentStatus.WORKING);
    }

    /**
     * Task in_progress -> done and agent working -> ready, together; only the assignee may complete, and only
     * from the life that claimed the task: the agent item must still hold it ({@code hold}), which every write
     * that ends or starts a life removes. A task whose claiming life ended is refused {@code TASK_LOST} whether
     * or not the outbox has handed it back yet.
     */
    public Change complete(String team, String taskId, String agentId, String result, Instant now) {
        Update task = new Update(table, key(team, taskId));
        task.condition(task.name(STATUS) + " = " + task.value(s(TaskStatus.IN_PROGRESS.wire())));
        task.condition(task.name(ASSIGNEE) + " = " + task.value(s(agentId)));
        task.set(STATUS, s(TaskStatus.DONE.wire())).set(COMPLETED_AT, ms(now))
                .remove(Keys.GSI1_PK).remove(Keys.GSI1_SK);
        if (result != null) {
            task.set(RESULT, s(result));
        }

        Function<Instant, Update> agent = at -> {
            Update a = new Update(live, AgentItems.key(team, agentId));
            a.condition(a.name(STATUS) + " = " + a.value(s(AgentStatus.WORKING.wire())));
            a.condition("attribute_exists(" + a.name(AgentItems.HOLD) + ")");
            a.condition(a.name(AgentItems.TASK) + " = " + a.value(s(taskId)));
            AgentItems.stampTransition(a, Trigger.TASK_COMPLETE, AgentStatus.READY, "completed task " + taskId, at);
            a.remove(AgentItems.TASK).remove(AgentItems.HOLD);
            return a;
        };

        write("complete the task", task, agent, now, taskId, agentId, Trigger.TASK_COMPLETE);
        return new Change(new Task(team, taskId, null, null, TaskStatus.DONE, agentId, null, null, now, result),
                AgentStatus.READY);
    }

    /**
     * Returns an in-progress task of {@code agentId} to pending with no assignee, stamped with the stop it is for
     * ({@code now}: the time of the transition that ended the life); true when the task is handed back for that
     * stop, by this call or by an earlier one (a replay), so the outbox tells it on the bus either way.
     * Conditional on the task still being that agent's, so it happens exactly once, and on the agent's current
     * life not holding that very task: if it does, it took the task again after the stop this hand-back is for
     * (a replayed death record after a rejoin and a new claim), and that claim is live.
     */
    public boolean handBack(String team, String taskId, String agentId, Instant now) {
        Update u = new Update(table, key(team, taskId));
        u.set(REASSIGNED_FROM, s(agentId)).set(REASSIGNED_AT, ms(now));
        u.condition(u.name(STATUS) + " = " + u.value(s(TaskStatus.IN_PROGRESS.wire())));
        u.condition(u.name(ASSIGNEE) + " = " + u.value(s(agentId)));
        u.set(STATUS, s(TaskStatus.PENDING.wire())).remove(ASSIGNEE).remove(CLAIMED_AT)
                .remove(Keys.GSI1_PK).remove(Keys.GSI1_SK);
        TransactWriteItem agentNotOnIt = TransactWriteItem.builder().conditionCheck(c -> c.tableName(live)
                .key(AgentItems.key(team, agentId))
                .conditionExpression("attribute_not_exists(#hold) OR #task <> :task")
                .expressionAttributeNames(Map.of("#hold", AgentItems.HOLD, "#task", AgentItems.TASK))
                .expressionAttributeValues(Map.of(":task", s(taskId))))
                .build();
        try {
            StoreFailures.call("hand the task back", () -> dynamo.transactWriteItems(t -> t.transactItems(
                    u.transactItem(), agentNotOnIt)));
            return true;
        } catch (TransactionCanceledException e) {
            if (e.cancellationReasons().stream().anyMatch(Transactions::failedCondition)) {
                Map<String, AttributeValue> task = e.cancellationReasons().get(0).item();
                return task != null && TaskStatus.PENDING.wire().equals(Items.str(task, STATUS))
                        && agentId.equals(Items.str(task, REASSIGNED_FROM))
                        && now.equals(Items.instant(task, REASSIGNED_AT));
            }
            throw Transactions.failure("hand the task back", e);
        }
    }

    /**
     * One transaction of the task's and the agent's update (the agent's stamped at {@code now}, or at the
     * agent's previous transition time if that is later); a refused condition says which and why.
     */
    private void write(String what, Update task, Function<Instant, Update> agentAt, Instant now, String taskId,
                       String agentId, Trigger trigger) {
        Instant at = now;
        for (int attempt = 1; ; attempt++) {
            Update agent = agentAt.apply(at);
            try {
                StoreFailures.call(what, () -> dynamo.transactWriteItems(t -> t.transactItems(
                        task.transactItem(), agent.transactItem())));
                return;
            } catch (TransactionCanceledException e) {
                List<CancellationReason> reasons = e.cancellationReasons();
                CancellationReason taskReason = reasons.get(0);
                CancellationReason agentReason = reasons.get(1);
                if (Transactions.failedCondition(taskReason)) {
                    throw taskRefused(taskReason.item(), taskId, agentId, trigger);
                }
                if (Transactions.failedCondition(agentReason)) {
                    Instant later = AgentItems.laterStamp(agentReason.item(), at);
                    if (later == null || attempt >= CONTENTION_ATTEMPTS) {
                        throw agentRefused(agentReason.item(), taskId, agentId, trigger);
                    }
                    at = later; // stamped not earlier than the agent's previous transition
                    continue;
                }
                if (attempt >= CONTENTION_ATTEMPTS) {
                    throw Transactions.failure(what, e);
                }
            }
        }
    }

    private static LifelineException taskRefused(Map<String, AttributeValue> item, String taskId, String agentId,
                                                 Trigger trigger) {
        if (item == null || item.isEmpty()) {
            return LifelineException.taskNotFound(taskId);
        }
        String status = Items.str(item, STATUS);
        String assignee = Items.str(item, ASSIGNEE);
        if (trigger == Trigger.TASK_COMPLETE && TaskStatus.PENDING.wire().equals(status)
                && agentId.equals(Items.str(item, REASSIGNED_FROM))) {
            return taskLost(taskId, agentId);
        }
        String message = trigger == Trigger.CLAIM_TASK
                ? "Task '" + taskId + "' is " + status + (assignee == null ? "" : " (assigned to " + assignee + ")")
                        + "; only a pending task can be claimed"
                : "Task '" + taskId + "' is " + status + (assignee == null ? "" : " and assigned to " + assignee)
                        + "; only its assignee can complete it while it is in_progress";
        return new LifelineException(LifelineException.Kind.CONFLICT, "TASK_NOT_AVAILABLE", message);
    }

    private static LifelineException agentRefused(Map<String, AttributeValue> item, String taskId, String agentId,
                                                  Trigger trigger) {
        if (item == null || item.isEmpty()) {
            return LifelineException.agentNotFound(agentId);
        }
        if (trigger == Trigger.TASK_COMPLETE && !AgentItems.holds(item, taskId)) {
            // The task passed its own condition (in progress, assigned to this agent), so a claim of this agent
            // took it; the agent no longer holding it means the life that claimed it ended.
            return taskLost(taskId, agentId);
        }
        AgentStatus current = AgentStatus.fromWire(Items.str(item, STATUS)).orElseThrow();
        return LifelineException.notAllowed(trigger, current);
    }

    /** A complete of a task whose claiming life (join) of the agent ended: a death or a leave took the task. */
    private static LifelineException taskLost(String taskId, String agentId) {
        return new LifelineException(LifelineException.Kind.CONFLICT, "TASK_LOST", "Task '" + taskId
                + "' was claimed by an earlier life of agent '" + agentId + "', which ended (it died or left); the "
                + "task is handed back to pending. Claim it again to work on it.");
    }

    static Task toTask(Map<String, AttributeValue> item) {
        return new Task(Keys.idAfter("TEAM#", Items.str(item, Keys.PK)), Keys.idAfter(Keys.TASK_PREFIX,
                Items.str(item, Keys.SK)), Items.str(item, TITLE), Items.str(item, DESCRIPTION),
                TaskStatus.fromWire(Items.str(item, STATUS)).orElseThrow(), Items.str(item, ASSIGNEE),
                Items.instant(item, CREATED_AT), Items.instant(item, CLAIMED_AT), Items.instant(item, COMPLETED_AT),
                Items.str(item, RESULT));
    }
}
