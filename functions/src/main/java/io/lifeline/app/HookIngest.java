package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.ErrorClassifier;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HeartbeatSource;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.Subagents;
import io.lifeline.hooks.HookEvent;
import io.lifeline.hooks.HookSignal;
import io.lifeline.hooks.UsageLimit;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A runtime's hook event, applied to its agent: the use case behind the hook routes. {@link HookSignal} (from the
 * runtime's mapping) decides what the event means; this class turns it into the store's writes:
 * <ol>
 *   <li>{@code SubagentStart}, {@code SubagentStop} (signal {@code ACTIVE}): their beat, and the agent's running
 *       subagents changed ({@link RunningSubagents}: id, type and since only; a new session or life, a leave and
 *       an exit clear them);</li>
 *   <li>{@code SESSION_STARTED}, {@code TURN_ENDED}: a beat reporting {@code ready}, waiting for input;</li>
 *   <li>{@code ACTIVE}, {@code TOOL}: a beat reporting {@code working}, in a turn (the working allowance);</li>
 *   <li>{@code WAITING_FOR_PERSON}: a beat in its current status, waiting for a person;</li>
 *   <li>{@code COMPACTED}: a beat in its current status, in a turn (the compaction is activity);</li>
 *   <li>{@code FAILED} (and {@code TOOL_FAILED} with a context limit or an API error): the errors route's
 *       classification and record, then the beat its event implies;</li>
 *   <li>{@code SESSION_ENDED}: leave (offline), its task handed back;</li>
 *   <li>{@code RUNTIME_EXITED}: the process is gone without its session's end: a reported failure (dead at once),
 *       as a host reports a crash; nothing when the agent already left or died;</li>
 *   <li>{@code IGNORED}: nothing.</li>
 * </ol>
 * An agent that is not alive and shows activity (a crashed session that was revived, an agent that left and
 * started a new session) joins first: the hook is proof of life, as a 409 {@code rejoinRequired} is for the SDK.
 *
 * <p>Repeated events coalesce: an event that would write what was already written for the agent less than the
 * coalescing window ago writes nothing (a busy session's tool calls cost a write per window, not per call). Twice:
 * this instance skips, without a call, what it knows it (or another instance, by its refused write) wrote; and the
 * write itself is conditional on the item's last hook write ({@code AgentWrites.hookBeat}), so the many execution
 * environments an agent's events land on write its item once a window between them, not once each. The window is
 * far inside every allowance it could shorten ({@link #window}), so a coalesced beat never brings a deadline closer
 * than one window. Nothing of the event's content is written: the transition reason
 * names the runtime and event, the error record the runtime, event and category.
 */
public final class HookIngest {
    /** Agents whose last write this instance remembers (the oldest forgotten first). */
    static final int REMEMBERED = 10_000;

    /** What one event did, for the request's log line and the tests. */
    public enum Outcome { WRITTEN, COALESCED, IGNORED, JOINED, LEFT, DIED, ALREADY_GONE }

    /**
     * What was written last for an agent: the status it was left in, the state the event reported, when, and whether
     * that event parked it at a usage limit (its next activity resumes it).
     */
    private record Written(AgentStatus status, AgentStatus reported, Liveness.Activity activity, Instant at,
                           boolean parked) {
    }

    private final AgentStore agents;
    private final AgentDataStore data;
    private final Heartbeats heartbeats;
    private final AgentChanges changes;
    private final Liveness.Allowances allowances;
    private final Duration coalesce;
    /** Parks an agent whose runtime reported a usage limit, and resumes it; null: no parking. */
    private final Parking parking;
    /** The running subagents a subagent's start or stop changes, and a life's end clears. */
    private final RunningSubagents running;
    private final Map<String, Written> last = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
            return size() > REMEMBERED;
        }
    };

    /**
     * {@code agents} and {@code data}: the reads of the agent's status before a leave or an exit, and the errors
     * route's record; every beat goes through {@code heartbeats}, every leave, join and failure through
     * {@code changes}.
     */
    public HookIngest(AgentStore agents, AgentDataStore data, Heartbeats heartbeats, AgentChanges changes,
                      Liveness.Allowances allowances, Duration coalesce) {
        this(agents, data, heartbeats, changes, allowances, coalesce, null);
    }

    /** As above, a runtime's usage limit parking the agent through {@code parking}. */
    public HookIngest(AgentStore agents, AgentDataStore data, Heartbeats heartbeats, AgentChanges changes,
                      Liveness.Allowances allowances, Duration coalesce, Parking parking) {
        this.parking = parking;
        this.running = new RunningSubagents(data);
        this.agents = agents;
        this.data = data;
        this.heartbeats = heartbeats;
        this.changes = changes;
        this.allowances = allowances;
        this.coalesce = coalesce;
    }

    /** Applies {@code e} to the agent at {@code now}; refused as an unknown agent, or the store's failures. */
    public Outcome apply(String team, String agentId, HookEvent e, Instant now) {
        return apply(team, agentId, e, now, null, new Heartbeats.Tally());
    }

    /**
     * As above, the hook sent from {@code address} (its beat records it: the agent's failure domain); a status change
     * its beat makes is noted in {@code tally}, as a heartbeat's is.
     */
    public Outcome apply(String team, String agentId, HookEvent e, Instant now, String address,
                         Heartbeats.Tally tally) {
        HookSignal signal = e.signal();
        String why = "hook " + e.runtime().wire() + " " + e.event();
        switch (signal) {
            case IGNORED:
                return Outcome.IGNORED; // nothing to write, so nothing is read either
            case SESSION_ENDED:
                return leave(team, agentId, why, now);
            case RUNTIME_EXITED:
                return exited(team, agentId, now);
            case FAILED:
                report(team, agentId, e, now);
                break;
            case TOOL_FAILED:
                if (e.errorText() != null
                        && ErrorClassifier.classify(e.errorText()).category() != ErrorClassifier.Category.UNKNOWN) {
                    report(team, agentId, e, now);
                }
                break;
            default:
                break;
        }
        Heartbeat hb = beat(team, agentId, signal, why).from(address);
        String key = team + "/" + agentId;
        Duration window = window(hb);
        if (window != null && knownRepeat(hb, key, now, window)) {
            subagents(team, agentId, e, false, now);
            return Outcome.COALESCED;
        }
        Outcome outcome = Outcome.WRITTEN;
        AgentWrites.Hooked done;
        try {
            done = heartbeats.hooked(hb, now, likely(key), window, tally);
        } catch (LifelineException ex) {
            if (!"REJOIN_REQUIRED".equals(ex.code())) {
                throw ex;
            }
            changes.rejoin(team, agentId, now);
            done = heartbeats.hooked(hb, now, AgentStatus.READY, null, tally);
            outcome = Outcome.JOINED;
        }
        remember(key, new Written(done.agent().status(), hb.reported(), hb.activity(), done.hookAt(),
                park(team, agentId, e, key, now)));
        subagents(team, agentId, e, outcome == Outcome.JOINED || signal == HookSignal.SESSION_STARTED, now);
        return done.written() ? outcome : Outcome.COALESCED;
    }

    /**
     * The running subagents this event changes (after its beat proved the agent exists): a new life or session
     * starts with none, a subagent's start and stop add and remove it. Only its id, type and the time are kept.
     */
    private void subagents(String team, String agentId, HookEvent e, boolean newLife, Instant now) {
        if (newLife) {
            running.clear(team, agentId);
        }
        if (HookEvent.SUBAGENT_START.equals(e.event())) {
            running.started(team, agentId, new Subagents.Entry(e.subagentId(), e.subagentType(), now));
        } else if (HookEvent.SUBAGENT_STOP.equals(e.event())) {
            running.stopped(team, agentId, e.subagentId());
        }
    }

    /**
     * A failure that reports a usage limit parks the agent until the reset its text names (else the default); the
     * next activity after a park this instance made resumes it. Answers whether the agent is now parked.
     */
    private boolean park(String team, String agentId, HookEvent e, String key, Instant now) {
        if (parking == null) {
            return false;
        }
        if (e.signal() == HookSignal.FAILED && UsageLimit.reported(e.errorText())) {
            parking.park(team, agentId, UsageLimit.reset(e.errorText(), now).orElse(null), Parking.USAGE_LIMIT, now);
            return true;
        }
        Written w = lastWritten(key);
        if (w != null && w.parked() && (e.signal() == HookSignal.ACTIVE || e.signal() == HookSignal.TOOL)) {
            parking.resume(team, agentId, now);
            return false;
        }
        return w != null && w.parked();
    }

    private synchronized Written lastWritten(String key) {
        return last.get(key);
    }

    /** The beat a signal gives: its reported status, its source (for the transition's reason) and its activity. */
    private Heartbeat beat(String team, String agentId, HookSignal signal, String why) {
        AgentStatus reported;
        HeartbeatSource source;
        Liveness.Activity activity;
        switch (signal) {
            case SESSION_STARTED, TURN_ENDED, FAILED -> {
                reported = AgentStatus.READY;
                source = HeartbeatSource.SDK_SESSION_IDLE;
                activity = Liveness.Activity.WAITING_FOR_INPUT;
            }
            case TOOL -> {
                reported = AgentStatus.WORKING;
                source = HeartbeatSource.SDK_TOOL_EXECUTE;
                activity = Liveness.Activity.IN_TURN;
            }
            case ACTIVE, TOOL_FAILED -> {
                reported = AgentStatus.WORKING;
                source = HeartbeatSource.SDK_SESSION_UPDATED;
                activity = Liveness.Activity.IN_TURN;
            }
            case WAITING_FOR_PERSON -> {
                reported = null;
                source = HeartbeatSource.TOOL;
                activity = Liveness.Activity.WAITING_FOR_PERSON;
            }
            case COMPACTED -> {
                reported = null;
                source = HeartbeatSource.TOOL;
                activity = Liveness.Activity.IN_TURN;
            }
            default -> throw new IllegalStateException("no beat for " + signal);
        }
        String sourceText = reported == null ? why : source.wire() + ", " + why;
        // Every hook event is progress; a tool's start is also legitimate silence until its end (not a stall).
        return new Heartbeat(team, agentId, reported, sourceText, null, null, null, null)
                .with(activity, Liveness.carried(activity, allowances, false))
                .withProgress(signal == HookSignal.TOOL ? Heartbeat.Reported.TOOL_STARTED : Heartbeat.Reported.NOW);
    }

    /**
     * The coalescing window for {@code hb}, or null when it may not be coalesced: the window must be at most a quarter
     * of the allowance the beat would renew (so skipping it moves no deadline meaningfully). A coalesced event's
     * progress is not written: its agent's last progress lags by up to the window, so the window stays within half
     * the stall threshold too (the default 60 s of 120 s: a busy turn still costs at most five writes, HookCostTest;
     * a silent stretch is judged stalled after at least half the threshold).
     */
    private Duration window(Heartbeat hb) {
        Duration allowance = hb.allowance();
        if (coalesce.isZero() || allowance == null || coalesce.multipliedBy(4).compareTo(allowance) > 0) {
            return null;
        }
        return min(coalesce, allowances.stallAfter().dividedBy(2));
    }

    /** True when this instance knows the same state was written for the agent less than {@code window} ago. */
    private synchronized boolean knownRepeat(Heartbeat hb, String key, Instant now, Duration window) {
        Written w = last.get(key);
        if (w == null || w.reported() != hb.reported() || w.activity() != hb.activity()) {
            return false;
        }
        return Duration.between(w.at(), now).compareTo(window) < 0 && !now.isBefore(w.at());
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** The status this instance last left the agent in (its first write's guess), or null. */
    private synchronized AgentStatus likely(String key) {
        Written w = last.get(key);
        return w == null ? null : w.status();
    }

    private synchronized void remember(String key, Written w) {
        last.put(key, w);
    }

    private synchronized void forget(String key) {
        last.remove(key);
    }

    private Outcome leave(String team, String agentId, String why, Instant now) {
        forget(team + "/" + agentId);
        Agent current = agents.requireCurrent(team, agentId);
        if (!current.status().isAlive()) {
            return Outcome.ALREADY_GONE;
        }
        try {
            changes.leave(team, agentId, why, now);
            running.clear(team, agentId);
            return Outcome.LEFT;
        } catch (LifelineException e) {
            if ("INVALID_TRANSITION".equals(e.code())) {
                return Outcome.ALREADY_GONE; // died or left meanwhile
            }
            throw e;
        }
    }

    /**
     * The watcher saw the runtime's process gone: an agent still alive (its session never ended) is dead at once,
     * with the reason a person reads; one that left (its {@code SessionEnd} came first, the usual order of a clean
     * exit) or is already dead is left as it is. The write is the one a host's failure report makes.
     */
    private Outcome exited(String team, String agentId, Instant now) {
        forget(team + "/" + agentId);
        Agent current = agents.requireCurrent(team, agentId);
        if (!current.status().isAlive()) {
            return Outcome.ALREADY_GONE;
        }
        try {
            changes.fail(team, agentId, "failure reported: the runtime's process exited without ending its session "
                    + "(seen by the hooks' watcher)", now);
            running.clear(team, agentId);
            return Outcome.DIED;
        } catch (LifelineException e) {
            if ("INVALID_TRANSITION".equals(e.code())) {
                return Outcome.ALREADY_GONE; // left or died meanwhile
            }
            throw e;
        }
    }

    /** The errors route's record of a failure event: its category, never its text (it can hold a tool's output). */
    private void report(String team, String agentId, HookEvent e, Instant now) {
        ErrorClassifier.Category category = e.errorText() == null ? ErrorClassifier.Category.UNKNOWN
                : ErrorClassifier.classify(e.errorText()).category();
        String message = e.runtime().wire() + " " + e.event() + ": " + category.name().toLowerCase(Locale.ROOT)
                + " (reported by the runtime's hook; its text is not kept)";
        data.recordError(team, agentId, message, category, now);
    }
}
