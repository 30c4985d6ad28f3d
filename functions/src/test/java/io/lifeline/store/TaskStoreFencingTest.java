package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.Task;
import io.lifeline.agent.TaskStatus;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.store.sweep.SweepStore;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@link TaskStore}'s fence: a task is completed only by the life of the agent that claimed it. Each write that ends a
 * life (a host's failure report, the sweep's death, a leave) ends its hold in that same write, so a complete from any
 * later moment is refused {@code TASK_LOST} before the outbox has handed the task back; a complete by another agent
 * is {@code TASK_NOT_AVAILABLE}; a refused complete writes nothing.
 */
@Tag("store")
class TaskStoreFencingTest {
    private static final String TASK = "task-1";
    /** One table pair for the class, closed after its last test. */
    @AutoClose
    static final StoreFixture f = new StoreFixture();

    /** A ready agent {@code a} that has claimed {@link #TASK}. */
    private static String claimed(String name) {
        String team = StoreFixture.team(name);
        f.tasks.create(team, TASK, "work", null, f.tick());
        f.ready(team, "a");
        TaskStore.Change c = f.tasks.claim(team, TASK, "a", f.tick());
        assertEquals(AgentStatus.WORKING, c.agentStatus());
        return team;
    }

    private static Task task(String team) {
        return f.tasks.list(team, null).stream().filter(t -> t.taskId().equals(TASK)).findFirst().orElseThrow();
    }

    /** The complete is refused with {@code code}, and neither table changes. */
    private static void completeRefused(String team, String agentId, String code) {
        Map<String, Map<String, AttributeValue>> before = f.everything();
        f.dynamo.reset();
        LifelineException e = assertThrows(LifelineException.class,
                () -> f.tasks.complete(team, TASK, agentId, "late result", f.tick()));
        assertEquals(code, e.code(), e::getMessage);
        assertEquals(LifelineException.Kind.CONFLICT, e.kind());
        assertEquals(List.of(), f.accepted(), "a refused complete writes nothing");
        assertEquals(Set.of(), StoreFixture.changed(before, f.everything()));
    }

    /** The life-ending write is one accepted write, and right after it the claiming life's complete is TASK_LOST. */
    private static void afterOneWrite(String team, Consumer<String> endLife) {
        f.dynamo.reset();
        endLife.accept(team);
        assertEquals(1, f.accepted().size(), () -> "the life ended in one write: " + f.accepted());
        assertTrue(f.agents.require(team, "a").status() != AgentStatus.WORKING);
        Task t = task(team);
        assertEquals(TaskStatus.IN_PROGRESS, t.status(), "not handed back yet: the outbox has not run");
        assertEquals("a", t.assignee());
        completeRefused(team, "a", "TASK_LOST");
    }

    @Test
    void complete_byTheLifeThatClaimed_endsTaskAndAgentTogetherInOneWrite() {
        String team = claimed("done");
        long seq = f.seq(team, "a");
        f.dynamo.reset();

        TaskStore.Change c = f.tasks.complete(team, TASK, "a", "42", f.tick());

        assertEquals(AgentStatus.READY, c.agentStatus());
        assertEquals(List.of("TransactWriteItems"), f.accepted().stream().map(MeteredDynamo.Call::operation).toList());
        Task t = task(team);
        assertEquals(TaskStatus.DONE, t.status());
        assertEquals("42", t.result());
        Agent a = f.agents.require(team, "a");
        assertEquals(AgentStatus.READY, a.status());
        assertEquals(seq + 1, a.lastTransition().seq());
        assertNull(a.currentTaskId());
        completeRefused(team, "a", "TASK_NOT_AVAILABLE"); // done is done
    }

    @Test
    void complete_afterAHostReportedTheClaimingLifeDead_isRefusedTaskLost() {
        afterOneWrite(claimed("failed"), team -> f.writes.fail(team, "a", "crash", f.tick()));
    }

    @Test
    void complete_afterTheSweepKilledTheClaimingLife_isRefusedTaskLost() {
        String team = claimed("swept");
        f.clock.advance(StoreFixture.STALE_AFTER.multipliedBy(3));
        SweepPlan.Observed seen = f.sweepRead(team, "a");
        afterOneWrite(team, t -> assertEquals(SweepStore.Write.DONE, f.sweepKills(seen)));
    }

    @Test
    void complete_afterTheClaimingLifeLeft_isRefusedTaskLost() {
        afterOneWrite(claimed("left"), team -> f.writes.leave(team, "a", "bye", f.tick()));
    }

    @Test
    void complete_fromANewWorkingLifeOfTheSameAgent_isRefusedTaskLost() {
        String team = claimed("reborn");
        f.writes.fail(team, "a", "crash", f.tick());
        f.writes.join(team, "a", f.tick());
        // The new life is working, is the assignee by name, and the task is still in progress: only the hold differs.
        assertEquals(AgentStatus.WORKING, f.report(team, "a", AgentStatus.WORKING).status());
        assertEquals(TaskStatus.IN_PROGRESS, task(team).status());

        completeRefused(team, "a", "TASK_LOST");
    }

    @Test
    void complete_ofTheEarlierLifesTaskFromANewLifeHoldingAnother_isRefusedTaskLost() {
        String team = claimed("two");
        f.writes.fail(team, "a", "crash", f.tick());
        f.writes.join(team, "a", f.tick());
        f.tasks.create(team, "task-2", "more work", null, f.tick());
        f.tasks.claim(team, "task-2", "a", f.tick());
        // The new life holds task-2; task-1 is still in progress under the agent's name, not handed back yet.
        assertEquals(TaskStatus.IN_PROGRESS, task(team).status());
        assertEquals("a", task(team).assignee());

        completeRefused(team, "a", "TASK_LOST");
        assertEquals("task-2", f.agents.require(team, "a").currentTaskId());
    }

    @Test
    void complete_afterTheHandBack_isRefusedTaskLost_andTheNewLifesOwnClaimCompletes() {
        String team = claimed("handed");
        Instant death = f.writes.fail(team, "a", "crash", f.tick()).lastTransition().at();
        assertTrue(f.tasks.handBack(team, TASK, "a", death));
        assertEquals(TaskStatus.PENDING, task(team).status());
        completeRefused(team, "a", "TASK_LOST");

        f.writes.join(team, "a", f.tick());
        f.tasks.claim(team, TASK, "a", f.tick());
        f.tasks.complete(team, TASK, "a", "second try", f.tick());

        assertEquals(TaskStatus.DONE, task(team).status());
        assertEquals(AgentStatus.READY, f.agents.require(team, "a").status());
    }

    @Test
    void complete_byAnotherAgent_isRefusedTaskNotAvailable() {
        String team = claimed("other");
        f.ready(team, "b");
        f.report(team, "b", AgentStatus.WORKING);

        completeRefused(team, "b", "TASK_NOT_AVAILABLE");
        assertEquals(AgentStatus.WORKING, f.agents.require(team, "a").status());
    }

    @Test
    void claim_ofATaskAnotherAgentHolds_isRefusedTaskNotAvailableAndWritesNothing() {
        String team = claimed("taken");
        f.ready(team, "b");
        Map<String, Map<String, AttributeValue>> before = f.everything();

        LifelineException e = assertThrows(LifelineException.class, () -> f.tasks.claim(team, TASK, "b", f.tick()));

        assertEquals("TASK_NOT_AVAILABLE", e.code());
        assertEquals(Set.of(), StoreFixture.changed(before, f.everything()));
    }
}
