package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The last hook write on an agent's item, {@code hk}: the state it wrote (the status it reported, or {@code -}, and
 * its activity) and its time, as {@code <state>#<13-digit epoch ms>}, set in the hook beat's own write (no extra
 * write unit). A hook beat of the same state within the coalescing window is refused by its condition, whichever
 * execution environment sends it, so an agent's item takes one hook write per window and state however many
 * environments its events land on. The state and the time are one string so one {@code begins_with} and one
 * comparison judge both: for one state, the text orders as the time does.
 */
final class HookStamp {
    static final String HOOK = "hk";

    private HookStamp() {
    }

    /** The state part of the stamp, with its separator: {@code working/IN_TURN#}. */
    static String state(Heartbeat hb) {
        return (hb.reported() == null ? "-" : hb.reported().wire()) + "/" + hb.activity() + "#";
    }

    private static String stamp(Heartbeat hb, Instant at) {
        return state(hb) + String.format("%013d", Math.max(0, at.toEpochMilli()));
    }

    /**
     * Adds to {@code u} the stamp of this hook write at {@code now}, and the condition that it is not a repeat: no
     * stamp, another state's, one at least {@code window} old, or (for a beat that reports a status) the agent in
     * another status, so a change is never coalesced.
     */
    static void coalesce(Update u, Heartbeat hb, Instant now, Duration window) {
        String hk = u.name(HOOK);
        StringBuilder notARepeat = new StringBuilder("attribute_not_exists(" + hk + ") OR NOT begins_with(" + hk
                + ", " + u.value(s(state(hb))) + ") OR " + hk + " <= " + u.value(s(stamp(hb, now.minus(window)))));
        if (hb.reported() != null) {
            notARepeat.append(" OR ").append(u.name(AgentItems.STATUS)).append(" <> ")
                    .append(u.value(s(hb.reported().wire())));
        }
        u.condition(notARepeat.toString());
        u.set(HOOK, s(stamp(hb, now)));
    }

    /**
     * When the refused write's image {@code old} holds a hook write of {@code hb}'s state less than {@code window}
     * before {@code now}, on an alive agent in the status {@code hb} reports: that write's time (the beat is a repeat:
     * coalesced); else null (refused for another reason).
     */
    static Instant repeatOf(Map<String, AttributeValue> old, Heartbeat hb, Instant now, Duration window) {
        String stamp = old == null ? null : Items.str(old, HOOK);
        String status = old == null ? null : Items.str(old, AgentItems.STATUS);
        if (stamp == null || status == null || !stamp.startsWith(state(hb))) {
            return null;
        }
        AgentStatus current = AgentStatus.fromWire(status).orElse(null);
        if (current == null || !current.isAlive() || hb.reported() != null && current != hb.reported()) {
            return null;
        }
        Instant at = Instant.ofEpochMilli(Long.parseLong(stamp.substring(state(hb).length())));
        return at.isAfter(now.minus(window)) ? at : null;
    }
}
