package io.lifeline.agent;

import static io.lifeline.agent.AgentStatus.DEAD;
import static io.lifeline.agent.AgentStatus.DEAD_FAILED_REVIVE;
import static io.lifeline.agent.AgentStatus.OFFLINE;
import static io.lifeline.agent.AgentStatus.READY;
import static io.lifeline.agent.AgentStatus.RESTARTING;
import static io.lifeline.agent.AgentStatus.WORKING;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The agent status FSM (docs/state-machine.md), as data, in exactly one place. Every status write in the
 * store is a conditional write whose condition is "status is one of {@link Rule#from()}".
 */
public final class TransitionTable {

    /** One row: from any of {@code from}, {@code trigger} moves the agent to {@code to}. */
    public record Rule(Trigger trigger, Set<AgentStatus> from, AgentStatus to, String actor) {
        public boolean allows(AgentStatus current) {
            return from.contains(current);
        }
    }

    private static final Map<Trigger, Rule> RULES = new EnumMap<>(Trigger.class);

    static {
        add(Trigger.JOIN, EnumSet.of(OFFLINE, DEAD, RESTARTING, DEAD_FAILED_REVIVE), READY, "agent");
        add(Trigger.CLAIM_TASK, EnumSet.of(READY), WORKING, "agent");
        add(Trigger.REPORT_WORKING, EnumSet.of(READY), WORKING, "agent");
        add(Trigger.TASK_COMPLETE, EnumSet.of(WORKING), READY, "agent");
        add(Trigger.REPORT_READY, EnumSet.of(WORKING), READY, "agent");
        add(Trigger.HEARTBEAT_EXPIRED, EnumSet.of(READY, WORKING), DEAD, "sweep");
        add(Trigger.STALLED, EnumSet.of(WORKING), DEAD, "sweep, or host");
        add(Trigger.REPORTED_FAILURE, EnumSet.of(READY, WORKING), DEAD, "host");
        add(Trigger.LEAVE, EnumSet.of(READY, WORKING), OFFLINE, "agent");
        // A host's daemon gave up restarting a crash-looping agent: whatever the agent's death and
        // revive had reached, it ends unrecoverable until someone decides (join, revive or cleanup).
        add(Trigger.HOST_GAVE_UP, EnumSet.of(READY, WORKING, DEAD, RESTARTING), DEAD_FAILED_REVIVE, "host");
        // dead_failed_revive -> restarting: an operator's manual revive starts the flow again.
        add(Trigger.RESTART_INITIATED, EnumSet.of(DEAD, DEAD_FAILED_REVIVE), RESTARTING, "revive flow");
        // The sweep ends a restart no flow is left to end (restarting past the flow's longest possible run).
        add(Trigger.RESTART_EXHAUSTED, EnumSet.of(RESTARTING), DEAD_FAILED_REVIVE, "revive flow, or the sweep");
        add(Trigger.CLEANUP, EnumSet.of(DEAD, DEAD_FAILED_REVIVE), OFFLINE, "operator");
    }

    private static void add(Trigger trigger, Set<AgentStatus> from, AgentStatus to, String actor) {
        RULES.put(trigger, new Rule(trigger, Collections.unmodifiableSet(from), to, actor));
    }

    private TransitionTable() {
    }

    public static Rule rule(Trigger trigger) {
        return RULES.get(trigger);
    }

    public static List<Rule> rules() {
        return List.copyOf(RULES.values());
    }

    /** True when the table has a row taking {@code from} to {@code to} by {@code trigger}. */
    public static boolean allows(AgentStatus from, Trigger trigger, AgentStatus to) {
        Rule rule = RULES.get(trigger);
        return rule != null && rule.allows(from) && rule.to() == to;
    }

    /** The trigger by which an agent reporting {@code reported} changes from {@code current}, if any. */
    public static Trigger reportTrigger(AgentStatus reported) {
        return reported == WORKING ? Trigger.REPORT_WORKING : Trigger.REPORT_READY;
    }
}
