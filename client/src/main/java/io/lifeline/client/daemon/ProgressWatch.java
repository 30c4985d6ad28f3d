package io.lifeline.client.daemon;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The daemon's judgement of progress (docs/daemon.md, "Progress and stalls"): every few seconds, for each running
 * agent its runtime's hooks say is in a turn, the age of its last progress, which is the least of the time since its
 * model connections last received data ({@link StreamSilence}), since its last hook event, and since its process
 * started. A tool call in flight (a tool's start with no end yet) and a wait for input or a person are legitimate
 * silence, never a stall. An agent in a turn with no progress past {@code stallAfter} is stalled ("model stream
 * silent"); with restart on stall, abort-first: its process group is stopped (TERM, then KILL after a grace), its
 * exit is reported dead as a stall and counted by the crash loop like any crash, and it is started again on its
 * session. While a subagent runs (a SubagentStart not yet stopped: the parent waits in its Task tool call, but the
 * SubagentStart after that call's start is an ordinary hook event, so the subagent's own silence is judged) the reason
 * is "subagent silent". Without restart it stays running, flagged, until progress resumes. The age goes with the agent's batched
 * beat; nothing here writes to Lifeline.
 */
final class ProgressWatch {
    /** The reason a stall seen on the model connection carries. */
    static final String MODEL_STREAM_SILENT = "model stream silent";
    /** The reason while a subagent runs (its stream is a connection of the same process tree). */
    static final String SUBAGENT_SILENT = "subagent silent";
    /** A hook's source while a tool call is in flight (its start seen, its end not yet). */
    private static final String TOOL_IN_FLIGHT = "sdk_tool_execute";

    private final AgentProcesses processes;
    private final LocalBeats localBeats;
    private final Clock clock;
    private final Duration stallAfter;
    private final boolean restart;
    /** Session leader pid to the least time (ms) since its established TCP connections received data. */
    private final Function<Collection<Long>, Map<Long, Long>> sampler;

    ProgressWatch(AgentProcesses processes, LocalBeats localBeats, Clock clock, Duration stallAfter, boolean restart,
            Function<Collection<Long>, Map<Long, Long>> sampler) {
        this.processes = processes;
        this.localBeats = localBeats;
        this.clock = clock;
        this.stallAfter = stallAfter;
        this.restart = restart;
        this.sampler = sampler;
    }

    /** One sample of every slot, under the daemon's lock: ages updated, stalls seen and acted on, told in the log. */
    void pass(Collection<AgentSlot> slots, RoundLog log) {
        Instant now = clock.instant();
        List<AgentSlot> judged = new ArrayList<>();
        List<Long> sessions = new ArrayList<>();
        for (AgentSlot s : slots) {
            LocalBeats.HookState st = localBeats.hookState(s.id());
            if (s.stall() != null && restart || !processes.isRunning(s.id()) || !st.inTurn() || st.waiting() != null) {
                resumed(s, log, "its turn ended or it waits");
                s.progressAgeMs(null); // not in a turn (or being stopped): not judged, and no age is sent
                continue;
            }
            long sid = processes.sessionId(s.id());
            if (sid <= 0) {
                s.progressAgeMs(null); // its connections cannot be told apart: hooks alone would call a long stream a stall
                continue;
            }
            judged.add(s);
            sessions.add(sid);
        }
        Map<Long, Long> silence = judged.isEmpty() ? Map.of() : sampler.apply(sessions);
        for (AgentSlot s : judged) {
            LocalBeats.HookState st = localBeats.hookState(s.id());
            long age = age(now, s.startedAt());
            if (st.at() != null) {
                age = Math.min(age, age(now, st.at()));
            }
            Long socket = silence.get(processes.sessionId(s.id()));
            if (socket != null) {
                age = Math.min(age, socket);
            }
            s.progressAgeMs(age);
            if (TOOL_IN_FLIGHT.equals(st.source()) || age <= stallAfter.toMillis()) {
                resumed(s, log, "progress resumed");
            } else if (s.stall() == null) {
                stalled(s, age, log);
            }
        }
    }

    private void stalled(AgentSlot s, long age, RoundLog log) {
        List<Instant> subagents = s.subagents();
        String reason = reason(s);
        s.stall(reason);
        log.hooks.add(s.id() + ": stalled: " + reason + " for " + age + " ms (stall after " + stallAfter.toSeconds()
                + " s)" + (subagents.isEmpty() ? "" : "; " + subagents.size() + " subagent(s) running since "
                + subagents.get(0)) + (restart ? "; stopping its process group (TERM, then KILL)" : ""));
        if (restart) {
            processes.abort(s.id());
        }
    }

    /** Why a silence of {@code s} now would be a stall: a subagent's stream while one runs, else its own. */
    static String reason(AgentSlot s) {
        return s.subagents().isEmpty() ? MODEL_STREAM_SILENT : SUBAGENT_SILENT;
    }

    /**
     * Without restart, the running agents whose stall (or its end) the server has not taken yet
     * ({@link AgentSlot#stallChange}): beaten at once, not at the next round, so {@code AgentStalled} follows the
     * judgement by a request. With restart a stall is told by its death's report.
     */
    List<AgentSlot> toTell(Collection<AgentSlot> slots) {
        if (restart) {
            return List.of();
        }
        return slots.stream().filter(s -> processes.isRunning(s.id()) && s.stallChange() != null).toList();
    }

    /** A stall flagged without restart ends when progress resumes (or the turn ends). */
    private void resumed(AgentSlot s, RoundLog log, String why) {
        if (s.stall() != null && !restart) {
            s.stall(null);
            log.hooks.add(s.id() + ": no longer stalled: " + why);
        }
    }

    private static long age(Instant now, Instant since) {
        return since == null ? Long.MAX_VALUE : Math.max(0, Duration.between(since, now).toMillis());
    }
}
