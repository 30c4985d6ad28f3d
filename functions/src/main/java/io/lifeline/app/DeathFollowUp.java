package io.lifeline.app;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.TeamSettings;
import io.lifeline.agent.Transition;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.outbox.StreamChanges;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.store.team.TeamStore;
import java.util.ArrayList;
import java.util.List;

/**
 * What follows an agent's death, done by the outbox so that it happens even if the writer
 * that killed the agent stopped right after: its in-progress task goes back to pending with no assignee,
 * and the team's leader gets an inbox notice. Both writes are conditional and keyed by the death, so a
 * replay changes nothing. A leave ends a life too: its task is handed back here as well (the leave route
 * does it at once; this is the same conditional write, so whichever runs second changes nothing, and a
 * leave whose caller stopped before its hand-back still gets one). The write that ended the life already
 * ended its hold, so no answer depends on when this runs: a complete from that life is refused either way.
 * The outbox's use case for a life's end ({@code io.lifeline.events.PublisherHandler} runs it for each status change).
 * It answers what it did as changes for the bus ({@code TasksReassigned}, {@code LeaderNotified}), the same on a
 * replay, so the publisher sends them in the same PutEvents as the status change: one pass per change.
 */
public final class DeathFollowUp {
    private final TaskStore tasks;
    private final TeamStore teams;
    private final InboxStore inbox;

    public DeathFollowUp(TaskStore tasks, TeamStore teams, InboxStore inbox) {
        this.tasks = tasks;
        this.teams = teams;
        this.inbox = inbox;
    }

    /**
     * What a change led to: the changes to tell on the bus, and the task to clear from the stopped agent's item once
     * they are told (null: none), which the publisher does in the same write that records the change as published.
     */
    public record FollowUp(List<StreamChanges.Change> told, String taskToClear) {
    }

    public FollowUp handle(StreamChanges.StatusChanged c) {
        Transition t = c.transition();
        List<StreamChanges.Change> told = new ArrayList<>();
        boolean stopped = t.from().isAlive() && c.currentTaskId() != null && !t.to().isAlive();
        if (t.to() == AgentStatus.OFFLINE && stopped) {
            handBack(c, told);
            return new FollowUp(told, c.currentTaskId());
        }
        // A host's give-up (host_gave_up) may end a life straight from alive: it is a death like the others.
        boolean death = t.to() == AgentStatus.DEAD || t.to() == AgentStatus.DEAD_FAILED_REVIVE;
        if (!death || !t.from().isAlive()) {
            return new FollowUp(told, null);
        }
        List<String> handedBack = c.currentTaskId() != null && handBack(c, told) ? List.of(c.currentTaskId())
                : List.of();
        TeamSettings team = teams.get(c.team());
        String leader = team.leaderAgentId();
        if (leader != null && !leader.equals(c.agentId())) {
            told.add(new StreamChanges.LeaderNotice(c.team(), leader, inbox.notify(c.team(), leader, c.agentId(),
                    t.seq(), message(c, handedBack), handedBack, t.at())));
        }
        return new FollowUp(told, stopped ? c.currentTaskId() : null);
    }

    /** Hands back the task the stopped life held; true (and told) when it went back for this stop. */
    private boolean handBack(StreamChanges.StatusChanged c, List<StreamChanges.Change> told) {
        Transition t = c.transition();
        boolean handed = tasks.handBack(c.team(), c.currentTaskId(), c.agentId(), t.at());
        if (handed) {
            told.add(new StreamChanges.TaskReassigned(c.team(), c.currentTaskId(), c.agentId(), t.at()));
        }
        return handed;
    }

    static String message(StreamChanges.StatusChanged c, List<String> handedBack) {
        Transition t = c.transition();
        String who = c.name() == null ? c.agentId() : c.name() + " (" + c.agentId() + ")";
        return "Agent " + who + " became inactive (" + t.trigger().wire() + ")"
                + (t.reason() == null ? "" : ": " + t.reason()) + ". "
                + (handedBack.isEmpty() ? "No tasks were handed back." : "Tasks handed back: "
                        + String.join(", ", handedBack) + ".");
    }
}
