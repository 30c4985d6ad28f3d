package io.lifeline.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.TaskStatus;
import io.lifeline.agent.Trigger;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The agent lifecycle's use case over the real store: a leave hands the agent's task back (the hand-back is the use
 * case's, the task store and the agent store each writing their own item), and a leave with no task hands back none.
 */
@Tag("store")
class AgentChangesTest {
    @AutoClose
    final AppFixture f = new AppFixture();

    @Test
    void leave_ofAnAgentOnATask_handsTheTaskBackAndClearsItFromTheAgent() {
        String team = AppFixture.team("leave");
        f.ready(team, "a");
        f.tasks.create(team, "t-1", "Write the report", null, f.tick());
        f.tasks.claim(team, "t-1", "a", f.tick());

        AgentChanges.Left left = f.changes.leave(team, "a", "done for the day", f.tick());

        assertEquals(AgentStatus.OFFLINE, left.agent().status());
        assertEquals(Trigger.LEAVE, left.agent().lastTransition().trigger());
        assertEquals(List.of("t-1"), left.tasksHandedBack());
        assertEquals(TaskStatus.PENDING, f.tasks.list(team, null).get(0).status());
        assertNull(f.tasks.list(team, null).get(0).assignee(), "pending with no assignee");
        assertNull(f.agents.require(team, "a").currentTaskId(), "the task is cleared from the agent");
    }

    @Test
    void leave_ofAnAgentWithNoTask_handsBackNothing() {
        String team = AppFixture.team("idle");
        f.ready(team, "b");

        AgentChanges.Left left = f.changes.leave(team, "b", null, f.tick());

        assertEquals(AgentStatus.OFFLINE, left.agent().status());
        assertEquals(List.of(), left.tasksHandedBack());
    }

    @Test
    void handBack_twiceForOneStop_handsItBackOnce() {
        String team = AppFixture.team("twice");
        f.ready(team, "c");
        f.tasks.create(team, "t-2", "Review", null, f.tick());
        f.tasks.claim(team, "t-2", "c", f.tick());
        AgentChanges.Left left = f.changes.leave(team, "c", null, f.tick());

        // The outbox's hand-back of the same stop comes second: the task is already back for it.
        assertEquals(List.of("t-2"), left.tasksHandedBack());
        assertEquals(List.of(), f.changes.handBack(f.agents.require(team, "c"), f.tick()),
                "the agent no longer holds the task, so nothing is handed back again");
        assertEquals(TaskStatus.PENDING, f.tasks.list(team, null).get(0).status());
    }
}
