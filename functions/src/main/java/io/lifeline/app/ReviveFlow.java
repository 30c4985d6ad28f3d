package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.ErrorClassifier;
import io.lifeline.agent.Trigger;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.store.ledger.RevivalStore;
import io.lifeline.store.agent.ReviveTransitions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The revive flow's steps (infra/statemachine/revive.asl.json), the use case behind its Lambda adapter
 * ({@code io.lifeline.revive.ReviveHandler}), one action per call:
 * <ul>
 *   <li>{@code initiate}: dead (or dead_failed_revive, for a manual revive) -> restarting, conditional on the
 *   transition seq the execution was started for and on no standing restart claim of the host daemon that reported
 *   the death (while one stands the step answers {@code host_restarting} and the flow waits it out), and the first
 *   restart command to the agent's host;</li>
 *   <li>{@code check}: after a wait, is the agent back? If not and attempts are left, ask the host again;</li>
 *   <li>{@code giveUp}: restarting -> dead_failed_revive, conditional on the flow's own restarting seq, so a
 *   join that raced it wins;</li>
 *   <li>{@code recordError}: an unexpected error ended the flow; it is recorded on the agent.</li>
 * </ul>
 * Every answer has an {@code outcome} the state machine's Choice states branch on ({@link ReviveOutcome}). Each
 * step is also recorded for {@code GET .../revivals}, in the same word and with the attempt its log line names.
 */
public final class ReviveFlow {
    /** The deployment's revive settings: attempts, and the wait before checking attempt n (base x rate^(n-1)). */
    public record Settings(int maxAttempts, Duration baseWait, double backoffRate) {
    }

    /** What a step answers the state machine, and the attempt it was about (for its line). */
    public record Answer(Map<String, Object> out, int stepAttempt) {
    }

    private final AgentStore agents;
    private final ReviveTransitions transitions;
    private final AgentDataStore data;
    private final HostCommandStore commands;
    private final RevivalStore revivals;
    private final Settings settings;
    private final Clock clock;

    public ReviveFlow(AgentStore agents, ReviveTransitions transitions, AgentDataStore data,
                      HostCommandStore commands, RevivalStore revivals, Settings settings, Clock clock) {
        this.agents = agents;
        this.transitions = transitions;
        this.data = data;
        this.commands = commands;
        this.revivals = revivals;
        this.settings = settings;
        this.clock = clock;
    }

    /** Runs one step of the flow; a store throttled or out of reach is the store's LifelineException. */
    public Answer run(ReviveStep step) {
        return switch (step.action()) {
            case "initiate" -> initiate(step);
            case "check" -> check(step);
            case "giveUp" -> giveUp(step);
            case "recordError" -> recordError(step);
            default -> throw new IllegalArgumentException("Unknown revive action '" + step.action() + "'");
        };
    }

    private Answer initiate(ReviveStep s) {
        Instant now = clock.instant();
        Agent agent = agents.require(s.team(), s.agentId());
        if (agent.hostId() == null) {
            return answer(s, ReviveOutcome.NO_HOST, 0, 0, 0, agent.lastTransition() == null ? 0
                    : agent.lastTransition().seq());
        }
        if (!revivals.claim(s.team(), s.agentId(), s.startSeq(), s.executionId(), now)) {
            // Another execution took this death: not ours to act on, nor to record.
            return new Answer(result(ReviveOutcome.SUPERSEDED, 0, 0, 0), 0);
        }
        ReviveTransitions.Initiation initiation = transitions.restartInitiated(s.team(), s.agentId(), s.startSeq(),
                "restart requested from host " + agent.hostId() + " (attempt 1 of " + settings.maxAttempts() + ")",
                commands.expiry(now), agent.hostId(), "agent is dead", now);
        if (initiation.hostRestartUntil() != null) {
            // Its host daemon reported this death and restarts the agent itself: the flow stands down until the
            // daemon's claim lapses, then tries again (by then the agent's join has usually ended this death).
            long wait = Math.max(1, (Duration.between(now, initiation.hostRestartUntil()).toMillis() + 999) / 1000);
            return answer(s, ReviveOutcome.HOST_RESTARTING, 0, 0, wait, s.startSeq());
        }
        Optional<Agent> restarting = initiation.written();
        long seq;
        if (restarting.isPresent()) {
            seq = restarting.get().lastTransition().seq();
        } else {
            Agent current = agents.require(s.team(), s.agentId());
            if (!wrote(current, AgentStatus.RESTARTING, Trigger.RESTART_INITIATED, s.startSeq())) {
                // The agent changed since: not ours to act on.
                return answer(s, current.status().isAlive() ? ReviveOutcome.REVIVED : ReviveOutcome.SUPERSEDED,
                        0, 0, 0, 0);
            }
            // This step is being retried after its own restarting write (only the claim's holder makes it).
            seq = current.lastTransition().seq();
        }
        // The restarting write stamped the command (one stream record for both); this puts the command itself.
        commands.issueRestart(s.team(), agent.hostId(), s.agentId(), s.startSeq(), seq, 1, "agent is dead", now,
                true);
        return answer(s, ReviveOutcome.RESTART_REQUESTED, 1, 1, waitSeconds(1), seq);
    }

    /**
     * After the wait for attempt {@code s.attempt()}: is the agent back? The step is recorded as being about that
     * attempt; when it asks again, the answer carries the next attempt for the state machine to wait on.
     */
    private Answer check(ReviveStep s) {
        Instant now = clock.instant();
        Agent agent = agents.require(s.team(), s.agentId());
        if (agent.status().isAlive()) {
            return answer(s, ReviveOutcome.REVIVED, s.attempt(), s.attempt(), 0, s.seq());
        }
        if (agent.status() != AgentStatus.RESTARTING || agent.lastTransition() == null
                || agent.lastTransition().seq() != s.seq()) {
            return answer(s, ReviveOutcome.SUPERSEDED, s.attempt(), s.attempt(), 0, s.seq());
        }
        if (s.attempt() >= settings.maxAttempts()) {
            return answer(s, ReviveOutcome.EXHAUSTED, s.attempt(), s.attempt(), 0, s.seq());
        }
        int next = s.attempt() + 1;
        if (agent.hostId() != null) {
            commands.issueRestart(s.team(), agent.hostId(), s.agentId(), s.startSeq(), s.seq(), next,
                    "agent did not rejoin after attempt " + s.attempt(), now, false);
        }
        return answer(s, ReviveOutcome.RETRY, s.attempt(), next, waitSeconds(next), s.seq());
    }

    private Answer giveUp(ReviveStep s) {
        Instant now = clock.instant();
        Optional<Agent> failed = transitions.reviveStep(s.team(), s.agentId(), Trigger.RESTART_EXHAUSTED, s.seq(),
                "no rejoin after " + s.attempt() + " restart attempt" + (s.attempt() == 1 ? "" : "s"), now);
        if (failed.isPresent()) {
            return answer(s, ReviveOutcome.FAILED, s.attempt(), s.attempt(), 0, failed.get().lastTransition().seq());
        }
        Agent current = agents.require(s.team(), s.agentId());
        if (wrote(current, AgentStatus.DEAD_FAILED_REVIVE, Trigger.RESTART_EXHAUSTED, s.seq())) {
            // This step is being retried after its own write (only this execution holds the restarting seq).
            return answer(s, ReviveOutcome.FAILED, s.attempt(), s.attempt(), 0, current.lastTransition().seq());
        }
        return answer(s, current.status().isAlive() ? ReviveOutcome.REVIVED : ReviveOutcome.SUPERSEDED, s.attempt(),
                s.attempt(), 0, s.seq());
    }

    /** True when the agent's latest change is {@code trigger} to {@code status}, written on top of {@code seq}. */
    private static boolean wrote(Agent agent, AgentStatus status, Trigger trigger, long seq) {
        return agent.status() == status && agent.lastTransition() != null
                && agent.lastTransition().trigger() == trigger && agent.lastTransition().seq() == seq + 1;
    }

    /**
     * Records the error on the agent. If this execution had put the agent in {@code restarting} and nothing
     * changed since, the agent moves on to {@code dead_failed_revive}: no flow drives it any more, and it
     * must not stay {@code restarting} (the status model's visibility rule), while an operator can revive it again.
     */
    private Answer recordError(ReviveStep s) {
        Instant now = clock.instant();
        String message = "revive flow failed: " + s.errorName() + (s.errorCause() == null ? "" : ": " + s.errorCause());
        data.recordError(s.team(), s.agentId(), message, ErrorClassifier.Category.UNKNOWN, now);
        Agent agent = agents.require(s.team(), s.agentId());
        if (wrote(agent, AgentStatus.RESTARTING, Trigger.RESTART_INITIATED, s.startSeq())
                && revivals.claim(s.team(), s.agentId(), s.startSeq(), s.executionId(), now)) {
            transitions.reviveStep(s.team(), s.agentId(), Trigger.RESTART_EXHAUSTED, agent.lastTransition().seq(),
                    message, now);
        }
        return answer(s, ReviveOutcome.ERROR, s.attempt(), null, 0, s.seq());
    }

    /** The wait before checking attempt {@code n}: base x rate^(n-1) (30 s, 60 s, 120 s by default). */
    long waitSeconds(int attempt) {
        return Math.round(settings.baseWait().toSeconds() * Math.pow(settings.backoffRate(), attempt - 1));
    }

    /**
     * Records the step (about {@code stepAttempt}; the execution has asked for {@code attempts} restarts, null:
     * unchanged) and answers the state machine, whose {@code attempt} is the one now under way.
     */
    private Answer answer(ReviveStep s, ReviveOutcome outcome, int stepAttempt, Integer attempts, long waitSeconds,
                          long seq) {
        revivals.record(s.team(), s.agentId(), s.startSeq(), s.executionId(),
                new RevivalStore.Step(s.action(), stepAttempt, outcome.wire(), clock.instant()), attempts,
                outcome.execution().wire());
        return new Answer(result(outcome, attempts == null ? s.attempt() : attempts, waitSeconds, seq), stepAttempt);
    }

    private static Map<String, Object> result(ReviveOutcome outcome, int attempt, long waitSeconds, long seq) {
        Map<String, Object> out = new HashMap<>();
        out.put("outcome", outcome.wire());
        out.put("attempt", attempt);
        out.put("waitSeconds", waitSeconds);
        out.put("seq", seq);
        return out;
    }
}
