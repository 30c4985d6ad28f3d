package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.Transition;
import io.lifeline.agent.TransitionTable;
import io.lifeline.agent.Trigger;
import io.lifeline.store.sweep.SweepStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Every status x every trigger, at the store: an agent is put in the status by the store's own calls, the trigger
 * is applied by the store call that makes it in production (AgentStore, TaskStore, the sweep's SweepStore, the
 * revive flow's conditional steps), and the outcome is checked against {@link TransitionTable} itself, read here,
 * not copied. Allowed: one accepted write, no read, the agent's transition seq one higher with the rule's from, to
 * and trigger, and only the agent's item changed (and the task's, for claim and complete). Refused: the documented
 * refusal and no change anywhere in either table. A report of the status the agent is already in is a plain
 * heartbeat: accepted, no transition. Lifeline Local's version through the API and the outbox is
 * TransitionWalkTest, in infra/local.
 */
@Tag("store")
class AgentStoreWalkTest {
    private static final String AGENT = "walker";
    /** What {@link #apply} answers for a store call that wrote and returns no agent (tasks, the sweep). */
    private static final String WRITTEN = "written";
    /** One table pair for the class, closed after its last test. */
    @AutoClose
    static final StoreFixture f = new StoreFixture();

    static Stream<Arguments> pairs() {
        List<Arguments> out = new ArrayList<>();
        for (AgentStatus status : AgentStatus.values()) {
            for (Trigger trigger : Trigger.values()) {
                out.add(Arguments.of(status, trigger));
            }
        }
        return out.stream();
    }

    private static boolean isReport(Trigger t) {
        return t == Trigger.REPORT_WORKING || t == Trigger.REPORT_READY;
    }

    @ParameterizedTest(name = "{0} x {1}")
    @MethodSource("pairs")
    void trigger_fromEachStatus_writesOnceWhereTheTableAllowsAndNothingWhereItRefuses(AgentStatus status,
                                                                                       Trigger trigger) {
        String team = StoreFixture.team(status.wire() + "-" + trigger.wire());
        String task = "task-1";
        into(team, status, trigger, task);
        Agent before = f.agents.require(team, AGENT);
        assertEquals(status, before.status(), "setup");
        long seqBefore = before.lastTransition() == null ? 0 : before.lastTransition().seq();
        Map<String, Map<String, AttributeValue>> tablesBefore = f.everything();
        f.dynamo.reset();

        Object outcome = apply(team, trigger, task, before);

        List<MeteredDynamo.Call> reads = f.reads();
        List<MeteredDynamo.Call> accepted = f.accepted();
        f.dynamo.reset();
        Agent after = f.agents.require(team, AGENT);
        Set<String> changed = StoreFixture.changed(tablesBefore, f.everything());
        TransitionTable.Rule rule = TransitionTable.rule(trigger);
        assertEquals(List.of(), reads, "the store never reads before it writes");

        if (isReport(trigger) && status.isAlive() && status == rule.to()) {
            assertTrue(outcome instanceof Agent, () -> "a report of the current status is a heartbeat: " + outcome);
            assertEquals(status, after.status());
            assertEquals(seqBefore, seq(after), "no transition stamped");
            assertEquals(before.beats() + 1, after.beats(), "the heartbeat counted once");
            assertEquals(1, accepted.size(), accepted::toString);
            assertEquals(Set.of(f.agentKey(team, AGENT)), changed);
        } else if (rule.allows(status)) {
            assertTrue(outcome instanceof Agent || WRITTEN.equals(outcome),
                    () -> trigger.wire() + " from " + status.wire() + ": " + outcome);
            if (outcome instanceof Agent answered) {
                assertEquals(after, answered, "the store answers the agent as written");
            }
            assertEquals(rule.to(), after.status());
            Transition t = after.lastTransition();
            assertNotNull(t);
            assertEquals(seqBefore + 1, t.seq(), "tseq bumped once");
            assertEquals(status, t.from());
            assertEquals(rule.to(), t.to());
            assertEquals(trigger, t.trigger());
            assertEquals(f.clock.instant(), t.at(), "stamped at the call's now");
            assertEquals(1, accepted.size(), () -> "one write: " + accepted);
            boolean taskToo = trigger == Trigger.CLAIM_TASK || trigger == Trigger.TASK_COMPLETE;
            assertEquals(taskToo ? 2 : 1, changed.size(), changed::toString);
            assertTrue(changed.contains(f.agentKey(team, AGENT)), changed::toString);
        } else {
            assertEquals(expectedRefusal(status, trigger), outcome, "the documented refusal");
            assertEquals(List.of(), accepted, "a refused change writes nothing");
            assertEquals(Set.of(), changed, "no item of either table changed");
            assertEquals(before, after);
        }
    }

    /** What a refused attempt answers: the exception's code, or the sweep's and revive flow's refusal values. */
    private static Object expectedRefusal(AgentStatus status, Trigger trigger) {
        return switch (trigger) {
            case REPORT_READY, REPORT_WORKING -> "REJOIN_REQUIRED"; // refused only when not alive
            case TASK_COMPLETE -> "TASK_LOST"; // the life that claimed the task ended (see into)
            case HEARTBEAT_EXPIRED, RESTART_EXHAUSTED -> SweepStore.Write.RACE_LOST;
            case RESTART_INITIATED -> "empty";
            case STALLED -> "NOT_STALLED"; // the raise's condition: working, with the progress it read
            default -> "INVALID_TRANSITION";
        };
    }

    /**
     * Puts {@link #AGENT} in {@code status}. For task_complete it first claims {@code task}, so the status is
     * reached by (or after) the life that holds it; for claim_task the task is created pending.
     */
    private static void into(String team, AgentStatus status, Trigger trigger, String task) {
        boolean claimFirst = trigger == Trigger.TASK_COMPLETE;
        if (claimFirst || trigger == Trigger.CLAIM_TASK) {
            f.tasks.create(team, task, "walk", null, f.tick());
        }
        f.registered(team, AGENT);
        if (status == AgentStatus.OFFLINE && !claimFirst) {
            return;
        }
        f.writes.join(team, AGENT, f.tick());
        if (claimFirst) {
            f.tasks.claim(team, task, AGENT, f.tick());
        }
        switch (status) {
            case OFFLINE -> f.writes.leave(team, AGENT, "walk", f.tick());
            case READY -> {
                if (claimFirst) { // a new life: left holding it, joined again
                    f.writes.leave(team, AGENT, "walk", f.tick());
                    f.writes.join(team, AGENT, f.tick());
                }
            }
            case WORKING -> {
                if (!claimFirst) {
                    f.report(team, AGENT, AgentStatus.WORKING);
                }
                if (trigger == Trigger.STALLED) {
                    // A stall is judged only of an agent that reported progress: a beat that reports it.
                    f.writes.heartbeat(new Heartbeat(team, AGENT, null, "walk", null, null, null, null)
                            .withProgress(Heartbeat.Reported.NOW), f.tick());
                }
            }
            case DEAD -> f.writes.fail(team, AGENT, "walk", f.tick());
            case RESTARTING -> {
                long death = f.writes.fail(team, AGENT, "walk", f.tick()).lastTransition().seq();
                assertTrue(f.revives.restartInitiated(team, AGENT, death, "walk", null, null, null, f.tick())
                        .written().isPresent());
            }
            case DEAD_FAILED_REVIVE -> f.writes.giveUp(team, AGENT, "walk", f.tick());
        }
    }

    /**
     * The trigger, by the store call that makes it: the Agent it answered, {@link #WRITTEN}, or what the refusal
     * answered. It reads nothing itself, so every read the meter sees is the store's.
     */
    private static Object apply(String team, Trigger trigger, String task, Agent before) {
        try {
            return switch (trigger) {
                case JOIN -> f.writes.join(team, AGENT, f.tick());
                case LEAVE -> f.writes.leave(team, AGENT, "walk", f.tick());
                case CLEANUP -> f.writes.cleanup(team, AGENT, "walk", f.tick());
                case REPORTED_FAILURE -> f.writes.fail(team, AGENT, "walk", f.tick());
                case HOST_GAVE_UP -> f.writes.giveUp(team, AGENT, "walk", f.tick());
                case REPORT_WORKING -> f.report(team, AGENT, AgentStatus.WORKING);
                case REPORT_READY -> f.report(team, AGENT, AgentStatus.READY);
                case CLAIM_TASK -> {
                    f.tasks.claim(team, task, AGENT, f.tick());
                    yield WRITTEN;
                }
                case TASK_COMPLETE -> {
                    f.tasks.complete(team, task, AGENT, "ok", f.tick());
                    yield WRITTEN;
                }
                case HEARTBEAT_EXPIRED -> {
                    // As the sweep read it; the scan returns only alive agents, so the read model stands in.
                    SweepPlan.Observed seen = new SweepPlan.Observed(team, AGENT, before.status(),
                            before.heartbeatAt(), before.deadline(), before.consecutiveMisses(), before.graceMisses(),
                            before.beats(), before.pausedUntil());
                    SweepStore.Write w = f.sweepKills(seen);
                    yield w == SweepStore.Write.DONE ? WRITTEN : w;
                }
                case STALLED -> {
                    // As the sweep read it: the item's last progress (none: the condition refuses the write).
                    Liveness.Progress p = before.progress() != null ? before.progress()
                            : new Liveness.Progress(Instant.EPOCH, false, null);
                    Liveness.ProgressSeen seen = new Liveness.ProgressSeen(team, AGENT, before.status(), p, false,
                            false, null, Liveness.OnStall.RESTART, null);
                    yield f.sweeps.raiseStall(seen, "walk", true, f.tick()) ? WRITTEN : "NOT_STALLED";
                }
                case RESTART_EXHAUSTED -> {
                    Transition last = before.lastTransition();
                    SweepStore.Write w = f.sweeps.endRevive(new SweepPlan.EndRevive(new SweepPlan.Restarting(team,
                            AGENT, last == null ? 0 : last.seq(), last == null ? null : last.at()), "walk"), f.tick());
                    yield w == SweepStore.Write.DONE ? WRITTEN : w;
                }
                case RESTART_INITIATED -> {
                    long seq = before.lastTransition() == null ? 0 : before.lastTransition().seq();
                    Object o = f.revives.restartInitiated(team, AGENT, seq, "walk", null, null, null, f.tick())
                            .written().map(a -> (Object) a).orElse("empty");
                    yield o;
                }
            };
        } catch (LifelineException e) {
            assertEquals(LifelineException.Kind.CONFLICT, e.kind(), e::toString);
            if (e.code().equals("INVALID_TRANSITION") || e.code().equals("REJOIN_REQUIRED")) {
                assertEquals(before.status(), e.currentStatus(), "the refusal names the status, with no second read");
            }
            return e.code();
        }
    }

    private static long seq(Agent a) {
        return a.lastTransition() == null ? 0 : a.lastTransition().seq();
    }
}
