package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.instant;
import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.num;
import static io.lifeline.store.dynamo.Items.s;
import static io.lifeline.store.dynamo.Items.str;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.Limits;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.Transition;
import io.lifeline.agent.Trigger;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.Update;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The agent item: attribute names and the mapping to {@link Agent}. Names are short because every byte of
 * the item is paid on every heartbeat (a write unit covers 1 KB). Times are epoch milliseconds.
 */
public final class AgentItems {
    public static final String STATUS = "status";
    public static final String NAME = "name";
    static final String ROLE = "role";
    public static final String HOST = "hostId";
    public static final String HEARTBEAT_AT = "hbAt";
    public static final String DEADLINE = "deadline";
    /**
     * Consecutive misses; absent means 0 (a sign of life removes it, and {@link #LAST_MISS_AT} with it, so a healthy
     * agent's item carries neither: the sweep pays for every byte of it, four times a minute).
     */
    public static final String MISSES = "misses";
    /** When the sweep last counted a miss (ms); only read while misses > 0, removed by a sign of life. */
    public static final String LAST_MISS_AT = "lastMissAt";
    public static final String BEATS = "beats";
    public static final String STALE_AFTER_MS = "staleMs";
    public static final String GRACE = "grace";
    /** The task the agent is on, or held when its life ended (until the hand-back clears it); shown to people. */
    public static final String TASK = "taskId";
    /**
     * The fence: present while the agent's current life holds the task named by {@link #TASK}. Set by the claim,
     * removed by the complete and by every write that ends a life (any transition to a status that is not alive) or
     * starts one (join), so it exists only in the life that claimed the task. A complete is accepted only while it
     * is present and {@link #TASK} names the task. A boolean mark: it never names a task other than {@link #TASK}
     * (items written before 2026-11-25 carry the task id here, the same value, and read the same).
     */
    public static final String HOLD = "hold";
    static final String MESSAGES = "msgs";
    static final String TOOL_CALLS = "tools";
    static final String ERRORS = "errs";
    static final String UPTIME_S = "upS";
    /** Restarts in the last hour, as the agent's host last reported them (stats.restartsLastHour). */
    public static final String RESTARTS_LAST_HOUR = "rsH";
    public static final String REGISTERED_AT = "regAt";
    public static final String PAUSED_UNTIL = "pausedUntil";
    public static final String SCHEDULE = "schedule";
    static final String TIME_ZONE = "tz";
    /**
     * The newest transition, stamped by the write that made it; the outbox turns each new seq into a record. Its seq
     * and time stay on the item; its from, trigger and reason ({@link #PUBLISHED_DETAILS}) stay only until the
     * outbox has recorded and published it, and are then read from its record on the ledger.
     */
    public static final String T_SEQ = "tseq";
    static final String T_FROM = "tFrom";
    static final String T_TRIGGER = "tTrigger";
    static final String T_REASON = "tReason";
    public static final String T_AT = "tAt";
    /**
     * The outbox mark: set by every write that carries a fact for the bus (a transition, a restart command, a
     * session rotation), removed by every other write. The stream mapping's FilterCriteria passes only records
     * whose new image carries it, so heartbeats and misses never invoke the publisher.
     */
    public static final String OUTBOX = "ob";
    /**
     * The host lease the agent beats through (its host id as the daemon's batch named it), set by the first beat
     * through it that is written to the item; the sweep then judges the agent from that lease too.
     * Kept when the agent beats directly: it is then judged from the later of the two.
     */
    public static final String LEASE = "lease";
    /**
     * The host silence the agent's death followed from (docs/alerts-noise.md): a map {@code h} (the lease) and
     * {@code x} (its flag's time, ms), set by the sweep's death of an agent whose lease is silent and removed by
     * every change that makes the agent alive again, whose record still reads it from the old image.
     */
    static final String HOST_CAUSE = "hc";
    /**
     * The source address of the agent's newest beat sent directly (its request's {@code sourceIp}), as its 4 or 16
     * bytes: its failure domain when self-preservation weighs a mass silence ({@code io.lifeline.agent.FailureDomain}).
     * Set by the beat's own conditional write (no extra write unit: 6 or 18 bytes on an item well under 1 KB), and
     * binary because the sweep scans every byte of the item (LiveItemSizeTest: 6 bytes for IPv4, 12 less than text).
     */
    public static final String SOURCE = "ip";
    /**
     * Until when (ms) the agent's host daemon holds the restart of its death (docs/revive.md): set by a crash report
     * that says the daemon restarts the agent itself ({@code restartInSeconds}), kept by the revive flow's own
     * restarting, removed by every other change (the daemon's join, its give-up, a death it did not claim), whose
     * record reads it from the old image when it makes the agent alive again. The revive flow's first write is
     * conditional on its absence or lapse; the alert rules leave the changes that carry it (docs/alerts-noise.md).
     */
    public static final String HOST_RESTART = "hr";
    /**
     * When the agent's dead spell began (ms): set by the first change into dead or dead_failed_revive, kept through
     * the changes while not alive, removed by the change that makes it alive or offline (whose record reads it from
     * the old image). The alert window its death counted in (docs/alerts-noise.md).
     */
    static final String DIED_AT = "dAt";
    /**
     * Since when (ms) the agent is flagged flapping (docs/alerts-noise.md), as the outbox decided for its newest
     * published change: set by that change's finishing write, removed by the finishing write of a change that is
     * not held, and by the flapping resolve ({@link io.lifeline.store.outbox.OutboxMarks#clearFlapping}).
     */
    public static final String FLAPPING = "fp";
    /** The newest restart command issued for the agent (a map), stamped by the write that issues it. */
    static final String RESTART_COMMAND = "rc";
    /** Session rotations requested for the agent (a context-limit error), and the newest one's time. */
    public static final String ROTATIONS = "rot";
    public static final String ROTATED_AT = "rotAt";
    /**
     * The newest transition seq the outbox has fully published (its record, hand-back, notice and events), and the
     * replay stamp the outbox repair sets on a transition that stayed unpublished (seq and when), which the stream
     * carries to the publisher again.
     */
    public static final String PUBLISHED_SEQ = "ps";
    /**
     * Since when (ms) the alive agent waits for its next prompt ({@link #WAIT_INPUT}) or for a person
     * ({@link #WAIT_PERSON}): set by the first beat of the wait ({@code if_not_exists}), removed by any beat that is not
     * that wait and by every transition out of alive. At most one of the two is present.
     */
    public static final String WAIT_INPUT = "wIn";
    public static final String WAIT_PERSON = "wPs";
    /**
     * The person-wait that raised its {@code AgentAwaitingInput} (its {@link #WAIT_PERSON} value), set by the sweep;
     * removed by the sweep once that wait is over, which is the {@code AgentInputResumed}.
     */
    public static final String WAIT_ALERTED = "wAl";
    /** When the sweep raised that alert (ms); present with {@link #WAIT_ALERTED} only. */
    public static final String WAIT_ALERTED_AT = "wAlAt";
    /** The agent's own allowances (ms), present only when it was registered with them (see Liveness). */
    public static final String ALLOW_WORKING = "alWk";
    public static final String ALLOW_INPUT = "alIn";
    public static final String ALLOW_PERSON = "alPs";
    /**
     * The agent's last sign of progress (ms; docs/liveness.md, "Progress and stalls"): set by a beat that reports
     * progress (the beat's time less the age it reports; every hook event) in the beat's own write, removed by every
     * transition out of alive. Absent: the agent never reported progress and is never judged stalled.
     */
    public static final String PROGRESS_AT = "pr";
    /**
     * A tool call is in flight (a boolean: a hook's tool start), removed by the next beat reporting progress. Names
     * are short and values small: every attribute here can sit on the largest item, within its one write unit.
     */
    public static final String TOOL_IN_FLIGHT = "tl";
    /**
     * The reason the newest progress report gave for a silence ({@code model stream silent}), when it gave one; kept
     * by a death (a stall still raised names it), removed by the next join.
     */
    public static final String PROGRESS_WHY = "prW";
    /** The agent's own stall threshold (ms) and what it does on a stall, when registered with them. */
    public static final String STALL_AFTER_MS = "stM";
    public static final String ON_STALL = "onS";
    /**
     * When the agent's stall was raised (ms; {@code AgentStalled}): set by the sweep's one conditional write, or, for
     * an agent a daemon hosts, by the daemon's word in a beat's write ({@link #stampStall}) or its stall's death
     * ({@code AgentWrites.fail}); removed once the agent is no longer stalled ({@code AgentProgressResumed}: by the
     * sweep, by the daemon's word, or by the next life's join). Its reason is the progress report's
     * ({@link #PROGRESS_WHY}), else {@code no progress reported}.
     */
    public static final String STALLED_SINCE = "st";
    /**
     * Parked at a provider's usage limit ({@link ParkStore}): until its reset (ms), why (a short phrase) and since
     * when (ms); set by the park's one conditional write and removed by the resume's, each with the outbox mark
     * ({@code AgentParked}, {@code AgentResumed}).
     */
    public static final String PARKED_UNTIL = "pkU";
    public static final String PARK_REASON = "pkW";
    public static final String PARKED_AT = "pkAt";
    /** When the last park ended (ms): set by the resume's write, the {@code AgentResumed}'s time. */
    public static final String RESUMED_AT = "pkEnd";
    public static final String REPLAY_SEQ = "rp";
    public static final String REPLAY_AT = "rpAt";

    /**
     * What the outbox's finishing write for the item's newest transition removes (conditional on that transition
     * still being the newest): its details, now on its ledger record, and the stamps that only carried facts to the
     * bus (a replay, a restart command, a session rotation's time), whose stream records carry their own images.
     * The sweep reads every byte of the live item four times a minute; none of these is read by the sweep or by a
     * heartbeat (docs/design/storage/decisions.md, 2026-11-25).
     */
    public static final List<String> PUBLISHED_DETAILS = List.of(T_FROM, T_TRIGGER, T_REASON, REPLAY_SEQ,
            REPLAY_AT, RESTART_COMMAND, ROTATED_AT);

    private static final Pattern IPV4 = Pattern.compile("^(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})$");
    private static final Pattern IPV6 = Pattern.compile("^[0-9A-Fa-f:.]{2,45}$");

    private AgentItems() {
    }

    /**
     * An address literal as its bytes (4 for IPv4, 16 for IPv6), or null when {@code text} is not one. Never a name
     * lookup: a dotted quad is parsed here, and a text with ':' is an IPv6 literal to {@link InetAddress#getByName}.
     */
    static AttributeValue address(String text) {
        if (text == null) {
            return null;
        }
        try {
            Matcher quad = IPV4.matcher(text);
            if (quad.matches()) {
                byte[] b = new byte[4];
                for (int i = 0; i < 4; i++) {
                    int v = Integer.parseInt(quad.group(i + 1));
                    if (v > 255) {
                        return null;
                    }
                    b[i] = (byte) v;
                }
                return AttributeValue.fromB(SdkBytes.fromByteArray(b));
            }
            if (text.indexOf(':') >= 0 && IPV6.matcher(text).matches()) {
                return AttributeValue.fromB(SdkBytes.fromByteArray(InetAddress.getByName(text).getAddress()));
            }
        } catch (UnknownHostException | NumberFormatException e) {
            return null;
        }
        return null;
    }

    /** The address {@link #address(String)} stored, as text (no lookup), or null. */
    public static String addressOf(Map<String, AttributeValue> item) {
        AttributeValue v = item.get(SOURCE);
        if (v == null || v.b() == null) {
            return null;
        }
        try {
            return InetAddress.getByAddress(v.b().asByteArray()).getHostAddress();
        } catch (UnknownHostException e) {
            return null; // neither 4 nor 16 bytes: not ours
        }
    }

    /** Stamps the host silence a death follows from (with the death's own transition stamp). */
    public static void stampHostCause(Update u, HostIncidents.Cause cause) {
        u.set(HOST_CAUSE, AttributeValue.fromM(cause.source() != null
                ? Map.of("s", s(cause.source()), "x", ms(cause.expiredAt()))
                : Map.of("h", s(cause.hostId()), "x", ms(cause.expiredAt()))));
    }

    /**
     * The host silence a change carries: the one on the new image (a death of it, or a change while still dead of
     * it), or for a change back to alive, the one it removed.
     */
    public static HostIncidents.Cause hostCause(Map<String, AttributeValue> before,
                                                          Map<String, AttributeValue> after,
                                                          Transition t) {
        HostIncidents.Cause now = hostCause(after);
        if (now != null) {
            return now;
        }
        return t.to().isAlive() && t.from() != null && !t.from().isAlive() ? hostCause(before) : null;
    }

    /**
     * The host daemon's restart claim a change carries: the one on the new image (the crash report that made it, the
     * revive flow's restarting while it stands), or for a change back to alive, the one it removed.
     */
    public static Instant hostRestart(Map<String, AttributeValue> before, Map<String, AttributeValue> after, Transition t) {
        Instant now = instant(after, HOST_RESTART);
        if (now != null) {
            return now;
        }
        return t.to().isAlive() && t.from() != null && !t.from().isAlive() && before != null
                ? instant(before, HOST_RESTART) : null;
    }

    /** When the dead spell this change belongs to began: on the new image, or for its end, on the old one. */
    public static Instant diedAt(Map<String, AttributeValue> before, Map<String, AttributeValue> after) {
        Instant now = instant(after, DIED_AT);
        return now != null ? now : before == null ? null : instant(before, DIED_AT);
    }

    private static HostIncidents.Cause hostCause(Map<String, AttributeValue> item) {
        AttributeValue v = item == null ? null : item.get(HOST_CAUSE);
        if (v == null || !v.hasM() || v.m().get("x") == null) {
            return null;
        }
        Instant at = Instant.ofEpochMilli(Long.parseLong(v.m().get("x").n()));
        if (v.m().get("s") != null) {
            return HostIncidents.Cause.ofSource(v.m().get("s").s(), at);
        }
        return v.m().get("h") == null ? null : new HostIncidents.Cause(v.m().get("h").s(), at);
    }

    /** The agent item's key on the live table: a partition of its own. */
    public static Map<String, AttributeValue> key(String team, String agentId) {
        return Map.of(Keys.PK, s(Keys.agentScope(team, agentId)), Keys.SK, s(Keys.AGENT_SK));
    }

    public static boolean isAgent(Map<String, AttributeValue> item) {
        String pk = str(item, Keys.PK);
        return Keys.AGENT_SK.equals(str(item, Keys.SK)) && pk != null && pk.contains("#AGENT#");
    }

    public static String team(Map<String, AttributeValue> item) {
        return Keys.teamOfAgentPk(str(item, Keys.PK));
    }

    public static String agentId(Map<String, AttributeValue> item) {
        return Keys.agentOfAgentPk(str(item, Keys.PK));
    }

    public static Agent toAgent(Map<String, AttributeValue> item) {
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
                instant(item, PAUSED_UNTIL), str(item, SCHEDULE), str(item, TIME_ZONE), waiting(item),
                instant(item, FLAPPING), progress(item), stall(item), parked(item));
    }

    /** The usage limit the agent is parked at, as its item holds it ({@link ParkStore}), or null. */
    static Liveness.Parked parked(Map<String, AttributeValue> item) {
        Instant until = instant(item, PARKED_UNTIL);
        return until == null ? null : new Liveness.Parked(until, str(item, PARK_REASON), instant(item, PARKED_AT));
    }

    /** The item's wait, or null. */
    static Liveness.Wait waiting(Map<String, AttributeValue> item) {
        Instant person = instant(item, WAIT_PERSON);
        if (person != null) {
            return new Liveness.Wait(Liveness.Waiting.PERSON, person);
        }
        Instant input = instant(item, WAIT_INPUT);
        return input == null ? null : new Liveness.Wait(Liveness.Waiting.INPUT, input);
    }

    /** The item attribute of the agent's own allowance for {@code activity}, or null for a plain beat. */
    static String allowanceAttribute(Liveness.Activity activity) {
        return switch (activity) {
            case PLAIN -> null;
            case IN_TURN -> ALLOW_WORKING;
            case WAITING_FOR_INPUT -> ALLOW_INPUT;
            case WAITING_FOR_PERSON -> ALLOW_PERSON;
        };
    }

    /**
     * The stamped transition of an agent image, or null when it never changed status. Once the outbox has published
     * it, the item keeps only its seq, status and time: {@code from}, {@code trigger} and {@code reason} are then null
     * ({@link #isComplete}) and its ledger record has them.
     */
    public static Transition lastTransition(Map<String, AttributeValue> item) {
        long seq = num(item, T_SEQ, 0);
        if (seq == 0) {
            return null;
        }
        AgentStatus to = AgentStatus.fromWire(str(item, STATUS)).orElseThrow();
        if (!item.containsKey(T_TRIGGER)) {
            return new Transition(seq, null, to, null, null, instant(item, T_AT));
        }
        return new Transition(seq, AgentStatus.fromWire(str(item, T_FROM)).orElseThrow(), to,
                Trigger.fromWire(str(item, T_TRIGGER)).orElseThrow(), str(item, T_REASON), instant(item, T_AT));
    }

    /** True when {@code t} carries its from and trigger (the item's stamp before publishing, or its record). */
    public static boolean isComplete(Transition t) {
        return t != null && t.from() != null && t.trigger() != null;
    }

    /** True when the item's current life holds {@code taskId} (the fence; see {@link #HOLD}). */
    static boolean holds(Map<String, AttributeValue> item, String taskId) {
        return item.containsKey(HOLD) && taskId.equals(str(item, TASK));
    }

    /**
     * Adds to {@code u} the writes that record a change to {@code to} by {@code trigger} at {@code now}, on the
     * condition that the previous transition's time is not later: a transition's {@code at} never runs backwards
     * against its seq. A write refused by that condition alone is retried at {@link #laterStamp} (the
     * previous time), which is how each writer keeps {@code at} monotonic per agent without a read.
     */
    public static void stampTransition(Update u, Trigger trigger, AgentStatus to, String reason, Instant now) {
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
        if (to.isAlive()) {
            u.remove(HOST_CAUSE);
        }
        if (trigger != Trigger.REPORTED_FAILURE && trigger != Trigger.RESTART_INITIATED) {
            u.remove(HOST_RESTART); // the crash report sets or removes it itself; the flow's restarting keeps it
        }

        if (to.isAlive() || to == AgentStatus.OFFLINE) {
            u.remove(DIED_AT);
        } else if (to == AgentStatus.DEAD || to == AgentStatus.DEAD_FAILED_REVIVE) {
            u.setExpression(DIED_AT, "if_not_exists(" + u.name(DIED_AT) + ", " + u.value(ms(now)) + ")");
        }
        if (!to.isAlive()) {
            // A life ends here: its hold on a task ends in the same write, and so does any wait or park. The reason of
            // its last progress report stays with a stall still raised (its AgentProgressResumed names it); the next
            // life's join removes both.
            u.remove(HOLD).remove(WAIT_INPUT).remove(WAIT_PERSON).remove(PROGRESS_AT).remove(TOOL_IN_FLIGHT)
                    .remove(PARKED_UNTIL).remove(PARK_REASON).remove(PARKED_AT);
        }
    }

    /** A write that carries no fact for the bus: its stream record is filtered out before the publisher. */
    public static void quiet(Update u) {
        u.remove(OUTBOX);
    }

    /**
     * The previous transition's time on a refused write's image, when it is later than {@code at} (so the
     * refusal may be the stamp's order condition, and a retry at this time keeps {@code at} monotonic); else null.
     */
    public static Instant laterStamp(Map<String, AttributeValue> old, Instant at) {
        Instant previous = old == null ? null : instant(old, T_AT);
        return previous != null && previous.isAfter(at) ? previous : null;
    }

    /**
     * Adds the writes of a sign of life at {@code now}: heartbeat time, the deadline {@code due} says
     * ({@link Liveness#due}), misses reset (removed), beats + 1. An allowance's or the stale-after's deadline is
     * computed inside the update from the agent's own attributes, so no read is needed: {@code now} plus the agent's
     * own allowance for the activity ({@code if_not_exists}) or the one the beat carries, or {@code now} plus its
     * stale-after ({@code LivenessExpressionTest} holds it to {@link Liveness#window}). A beat that states its
     * activity also sets or clears the wait; a beat that states none ({@code activity} null: a daemon's batch entry)
     * leaves the wait as it is.
     */
    static void stampLiveness(Update u, Instant now, Liveness.Due due, Liveness.Activity activity) {
        u.set(HEARTBEAT_AT, ms(now));
        if (due instanceof Liveness.Due.At at) {
            u.set(DEADLINE, ms(at.deadline()));
        } else if (due instanceof Liveness.Due.AfterAllowance a) {
            u.setExpression(DEADLINE, "if_not_exists(" + u.name(allowanceAttribute(a.activity())) + ", "
                    + u.value(n(a.carried().toMillis())) + ") + " + u.value(ms(a.from())));
        } else {
            u.setExpression(DEADLINE, u.name(STALE_AFTER_MS) + " + " + u.value(ms(((Liveness.Due.AfterStaleAfter) due)
                    .from())));
        }
        if (activity != null) {
            Liveness.Waiting waiting = activity.waiting();
            if (waiting == null) {
                u.remove(WAIT_INPUT).remove(WAIT_PERSON);
            } else {
                String keep = waiting == Liveness.Waiting.INPUT ? WAIT_INPUT : WAIT_PERSON;
                u.setExpression(keep, "if_not_exists(" + u.name(keep) + ", " + u.value(ms(now)) + ")");
                u.remove(keep.equals(WAIT_INPUT) ? WAIT_PERSON : WAIT_INPUT);
            }
        }
        u.remove(MISSES).remove(LAST_MISS_AT);
        u.setExpression(BEATS, u.name(BEATS) + " + " + u.value(n(1)));
    }

    /**
     * Adds a beat's report of progress to its own write (no extra write unit): the last progress at {@code now} less
     * the age it reports ({@link Liveness#lastProgress}), the tool call in flight set or removed, and the reason it
     * gives, or none. A beat that reports nothing of progress leaves all
     * three as they are.
     */
    static void stampProgress(Update u, Instant now, Heartbeat.Reported progress) {
        if (progress == null) {
            return;
        }
        u.set(PROGRESS_AT, ms(Liveness.lastProgress(now, progress.age())));
        if (progress.toolInFlight()) {
            u.set(TOOL_IN_FLIGHT, AttributeValue.fromBool(true));
        } else {
            u.remove(TOOL_IN_FLIGHT);
        }
        if (progress.reason() == null) {
            u.remove(PROGRESS_WHY);
        } else {
            u.set(PROGRESS_WHY, s(progress.reason()));
        }
    }

    /**
     * Adds a host daemon's stall judgement to its beat's write ({@code stalled}, null: none sent, as when it did not
     * change): true raises the stall (since {@code now}, unless one is raised already), false ends it; either with
     * the outbox mark, so its stream record is the one {@code AgentStalled} or {@code AgentProgressResumed}.
     */
    static void stampStall(Update u, Instant now, Boolean stalled) {
        if (stalled == null) {
            return;
        }
        if (stalled) {
            raiseStall(u, now);
        } else {
            u.remove(STALLED_SINCE);
        }
        u.set(OUTBOX, AttributeValue.fromBool(true));
    }

    /** Raises the stall since {@code now}, unless one is raised already (a write with its own outbox mark). */
    static void raiseStall(Update u, Instant now) {
        u.setExpression(STALLED_SINCE, "if_not_exists(" + u.name(STALLED_SINCE) + ", " + u.value(ms(now)) + ")");
    }

    /** A new life (a join) has no stall and no reason of an earlier life's progress report. */
    static void endStall(Update u) {
        u.remove(STALLED_SINCE).remove(PROGRESS_WHY);
    }

    /** The agent's progress as its item holds it, or null when it never reported any. */
    static Liveness.Progress progress(Map<String, AttributeValue> item) {
        Instant at = instant(item, PROGRESS_AT);
        return at == null ? null : new Liveness.Progress(at, item.containsKey(TOOL_IN_FLIGHT), str(item, PROGRESS_WHY));
    }

    /** The stall the sweep raised on the item, or null. */
    static Liveness.Stall stall(Map<String, AttributeValue> item) {
        Instant since = instant(item, STALLED_SINCE);
        return since == null ? null : new Liveness.Stall(since, stallReason(item, null));
    }

    /** A stall's reason: the progress report's on {@code item} (else on {@code before}), else no progress reported. */
    public static String stallReason(Map<String, AttributeValue> item, Map<String, AttributeValue> before) {
        String why = str(item, PROGRESS_WHY);
        if (why == null && before != null) {
            why = str(before, PROGRESS_WHY);
        }
        return why != null ? why : Liveness.NO_PROGRESS_REPORTED;
    }

    /** A plain sign of life (a join's): the agent's stale-after, and no wait. */
    static void stampLiveness(Update u, Instant now) {
        stampLiveness(u, now, Liveness.due(now), Liveness.Activity.PLAIN);
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

    /** The agent's progress as read, when it reported any or its stall is still raised; else null. */
    public static Liveness.ProgressSeen progressSeen(Map<String, AttributeValue> item, AgentStatus status) {
        Liveness.Progress p = progress(item);
        Instant stalledSince = Items.instant(item, STALLED_SINCE);
        if (p == null && stalledSince == null) {
            return null;
        }
        long stallMs = Items.num(item, STALL_AFTER_MS, 0);
        return new Liveness.ProgressSeen(team(item), agentId(item), status, p,
                item.containsKey(WAIT_INPUT) || item.containsKey(WAIT_PERSON) || item.containsKey(PARKED_UNTIL),
                item.containsKey(LEASE), stallMs > 0 ? Duration.ofMillis(stallMs) : null,
                Liveness.OnStall.fromWire(Items.str(item, ON_STALL)).orElse(null), stalledSince);
    }
}
