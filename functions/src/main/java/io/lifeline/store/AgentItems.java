package io.lifeline.store;

import static io.lifeline.store.Items.instant;
import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.n;
import static io.lifeline.store.Items.num;
import static io.lifeline.store.Items.s;
import static io.lifeline.store.Items.str;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Limits;
import io.lifeline.agent.Transition;
import io.lifeline.agent.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The agent item: attribute names and the mapping to {@link Agent}. Names are short because every byte of
 * the item is paid on every heartbeat (a write unit covers 1 KB). Times are epoch milliseconds.
 */
final class AgentItems {
    static final String STATUS = "status";
    static final String NAME = "name";
    static final String ROLE = "role";
    static final String HOST = "hostId";
    static final String HEARTBEAT_AT = "hbAt";
    static final String DEADLINE = "deadline";
    static final String MISSES = "misses";
    /** When the sweep last counted a miss (ms); only read while misses > 0, since a beat resets misses to 0. */
    static final String LAST_MISS_AT = "lastMissAt";
    static final String BEATS = "beats";
    static final String STALE_AFTER_MS = "staleMs";
    static final String GRACE = "grace";
    /** The task the agent is on, or held when its life ended (until the hand-back clears it); shown to people. */
    static final String TASK = "taskId";
    /**
     * The fence: the task the agent's current life holds. Set by the claim, removed by the complete and by every
     * write that ends a life (any transition to a status that is not alive) or starts one (join), so it exists
     * only in the life that claimed the task. A complete is accepted only while it names the task.
     */
    static final String HOLD = "hold";
    static final String MESSAGES = "msgs";
    static final String TOOL_CALLS = "tools";
    static final String ERRORS = "errs";
    static final String UPTIME_S = "upS";
    /** Restarts in the last hour, as the agent's host last reported them (stats.restartsLastHour). */
    static final String RESTARTS_LAST_HOUR = "rsH";
    static final String REGISTERED_AT = "regAt";
    static final String PAUSED_UNTIL = "pausedUntil";
    static final String SCHEDULE = "schedule";
    static final String TIME_ZONE = "tz";
    /** The newest transition, stamped by the write that made it; the outbox turns each new seq into a record. */
    static final String T_SEQ = "tseq";
    static final String T_FROM = "tFrom";
    static final String T_TRIGGER = "tTrigger";
    static final String T_REASON = "tReason";
    static final String T_AT = "tAt";
    /**
     * The outbox mark: set by every write that carries a fact for the bus (a transition, a restart command, a
     * session rotation), removed by every other write. The stream mapping's FilterCriteria passes only records
     * whose new image carries it, so heartbeats and misses never invoke the publisher (DESIGN.md section 9).
     */
    static final String OUTBOX = "ob";
    /** The newest restart command issued for the agent (a map), stamped by the write that issues it. */
    static final String RESTART_COMMAND = "rc";
    /** Session rotations requested for the agent (a context-limit error), and the newest one's time. */
    static final String ROTATIONS = "rot";
    static final String ROTATED_AT = "rotAt";
    /**
     * The newest transition seq the outbox has fully published (its record, hand-back, notice and events), and the
     * replay stamp the outbox repair sets on a transition that stayed unpublished (seq and when), which the stream
     * carries to the publisher again.
     */
    static final String PUBLISHED_SEQ = "ps";
    static final String REPLAY_SEQ = "rp";
    static final String REPLAY_AT = "rpAt";

    private AgentItems() {
    }

    /** The agent item's key on the live table: a partition of its own (DESIGN.md section 9). */
    static Map<String, AttributeValue> key(String team, String agentId) {
        return Map.of(Keys.PK, s(Keys.agentScope(team, agentId)), Keys.SK, s(Keys.AGENT_SK));
    }

    static boolean isAgent(Map<String, AttributeValue> item) {
        String pk = str(item, Keys.PK);
        return Keys.AGENT_SK.equals(str(item, Keys.SK)) && pk != null && pk.contains("#AGENT#");
    }

    static String team(Map<String, AttributeValue> item) {
        return Keys.teamOfAgentPk(str(item, Keys.PK));
    }

    static String agentId(Map<String, AttributeValue> item) {
        return Keys.agentOfAgentPk(str(item, Keys.PK));
    }

    static Agent toAgent(Map<String, AttributeValue> item) {
        String team = team(item);
        String agentId = agentId(item);
        AgentStats stats = new AgentStats(num(item, MESSAGES), num(item, TOOL_CALLS), num(item, ERRORS),
                num(item, UPTIME_S), num(item, RESTARTS_LAST_HOUR));
        return new Agent(team, agentId, str(item, NAME), str(item, ROLE), str(item, HOST),
                AgentStatus.fromWire(str(item, STATUS)).orElseThrow(),
                instant(item, HEARTBEAT_AT), instant(item, DEADLINE),
                (int) num(item, MISSES, 0), num(item, BEATS, 0),
                Duration.ofMillis(num(item, STALE_AFTER_MS, 0)), (int) num(item, GRACE, 0),
                str(item, TASK), stats, instant(item, REGISTERED_AT), lastTransition(item),
                instant(item, PAUSED_UNTIL), str(item, SCHEDULE), str(item, TIME_ZONE));
    }

    /** The stamped transition of an agent image, or null when it never changed status. */
    static Transition lastTransition(Map<String, AttributeValue> item) {
        long seq = num(item, T_SEQ, 0);
        if (seq == 0) {
            return null;
        }
        return new Transition(seq, AgentStatus.fromWire(str(item, T_FROM)).orElseThrow(),
                AgentStatus.fromWire(str(item, STATUS)).orElseThrow(),
                Trigger.fromWire(str(item, T_TRIGGER)).orElseThrow(), str(item, T_REASON), instant(item, T_AT));
    }

    /**
     * Adds to {@code u} the writes that record a change to {@code to} by {@code trigger} at {@code now}, on the
     * condition that the previous transition's time is not later: a transition's {@code at} never runs backwards
     * against its seq. A write refused by that condition alone is retried at {@link #laterStamp} (the
     * previous time), which is how each writer keeps {@code at} monotonic per agent without a read.
     */
    static void stampTransition(Update u, Trigger trigger, AgentStatus to, String reason, Instant now) {
        String at = u.name(T_AT);
        u.condition("attribute_not_exists(" + at + ") OR " + at + " <= " + u.value(ms(now)));
        u.setExpression(T_FROM, u.name(STATUS));
        u.set(STATUS, s(to.wire()));
        u.set(T_TRIGGER, s(trigger.wire()));
        if (reason == null || reason.isEmpty()) {
            u.remove(T_REASON);
        } else {
            u.set(T_REASON, s(Limits.cutUtf8(reason, Limits.MAX_STORED_REASON_BYTES)));
        }
        u.set(T_AT, ms(now));
        u.setExpression(T_SEQ, u.name(T_SEQ) + " + " + u.value(n(1)));
        u.set(OUTBOX, AttributeValue.fromBool(true));
        if (!to.isAlive()) {
            // A life ends here: its hold on a task ends in the same write (issue 14, item 3).
            u.remove(HOLD);
        }
    }

    /** A write that carries no fact for the bus: its stream record is filtered out before the publisher. */
    static void quiet(Update u) {
        u.remove(OUTBOX);
    }

    /**
     * The previous transition's time on a refused write's image, when it is later than {@code at} (so the
     * refusal may be the stamp's order condition, and a retry at this time keeps {@code at} monotonic); else null.
     */
    static Instant laterStamp(Map<String, AttributeValue> old, Instant at) {
        Instant previous = old == null ? null : instant(old, T_AT);
        return previous != null && previous.isAfter(at) ? previous : null;
    }

    /**
     * Adds the writes of a sign of life: heartbeat time, a new deadline ({@code now + nextWithin}, or the
     * agent's own stale-after computed inside the update, so no read is needed), misses reset, beats + 1.
     */
    static void stampLiveness(Update u, Instant now, Duration nextWithin) {
        u.set(HEARTBEAT_AT, ms(now));
        if (nextWithin != null) {
            u.set(DEADLINE, ms(now.plus(nextWithin)));
        } else {
            u.setExpression(DEADLINE, u.name(STALE_AFTER_MS) + " + " + u.value(ms(now)));
        }
        u.set(MISSES, n(0));
        u.setExpression(BEATS, u.name(BEATS) + " + " + u.value(n(1)));
    }

    static void stampStats(Update u, AgentStats stats) {
        if (stats == null) {
            return;
        }
        setIfPresent(u, MESSAGES, stats.messagesProcessed());
        setIfPresent(u, TOOL_CALLS, stats.toolCallsExecuted());
        setIfPresent(u, ERRORS, stats.errorsEncountered());
        setIfPresent(u, UPTIME_S, stats.uptimeSeconds());
        setIfPresent(u, RESTARTS_LAST_HOUR, stats.restartsLastHour());
    }

    private static void setIfPresent(Update u, String attribute, Long value) {
        if (value != null) {
            u.set(attribute, n(value));
        }
    }
}
