package io.lifeline.client.daemon;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The processes' side of a round (and the whole of an exit pass): an exited process is counted and reported (a crash
 * report, or a leave when its command finished), restarted as its {@link RestartPolicy} says after a backoff that
 * doubles with each exit in the crash window, and given up at {@code maxCrashes} crashes in the window. Runs under
 * the daemon's lock.
 */
final class CrashLoop {
    /** A restart due this close to a round's start is made in that round (the round was scheduled for it). */
    private static final Duration DUE_TOLERANCE = Duration.ofMillis(100);

    private final LifelineClient client;
    private final AgentProcesses processes;
    private final AgentActions actions;
    private final Clock clock;
    private final int maxCrashes;
    private final Duration crashWindow;
    private final Duration restartBackoff;
    private final Duration maxRestartBackoff;
    private final ParkedAgents parked;

    CrashLoop(LifelineClient client, AgentProcesses processes, AgentActions actions, Clock clock, int maxCrashes,
            Duration crashWindow, Duration restartBackoff, Duration maxRestartBackoff) {
        this.client = client;
        this.processes = processes;
        this.actions = actions;
        this.clock = clock;
        this.maxCrashes = maxCrashes;
        this.crashWindow = crashWindow;
        this.restartBackoff = restartBackoff;
        this.maxRestartBackoff = maxRestartBackoff;
        this.parked = new ParkedAgents(actions, processes);
    }

    /**
     * Looks at every agent's process: an exit is counted and reported (or given up), and restarted when its backoff
     * allows; {@code running} gets the agents whose process runs.
     */
    void pass(Collection<AgentSlot> slots, Instant now, RoundLog log, List<AgentSlot> running) {
        for (AgentSlot s : slots) {
            if (s.givenUp() != null) {
                reportGiveUp(s, log);
                continue;
            }
            if (parked.pass(s, now, log, running)) {
                continue; // parked at a usage limit: alive, resumed at the reset
            }
            if (s.sessionLeft()) {
                s.takeExitSeen(); // its session ended and it left: no beat, and its exit is the end, not a crash
                continue;
            }
            if (processes.isRunning(s.id())) {
                s.running();
                running.add(s);
                continue;
            }
            if (s.countExit()) {
                onExit(s, now);
            }
            if (s.givenUp() != null) {
                reportGiveUp(s, log);
                continue;
            }
            reportFinished(s, log);
            reportCrash(s, now, log);
            restartWhenDue(s, now, log, running);
        }
    }

    /**
     * An exit seen for the first time: counted; a command that finished (exit status 0) leaves, and is started again
     * only under {@link RestartPolicy#ALWAYS}; a crash is either a crash report and a restart due, or the give-up.
     */
    private void onExit(AgentSlot s, Instant now) {
        String agentId = s.id();
        Integer code = processes.exitCode(agentId);
        String stall = s.stall();
        // Stopped for a stall: a death whatever its exit status (a runtime may exit 0 on TERM).
        boolean finished = stall == null && code != null && code == 0;
        RestartPolicy policy = s.restartPolicy();
        String how = processes.exitDescription(agentId);
        String ended = how != null ? how : finished ? "exited with status 0" : "process exited";
        if (stall != null) {
            ended = "stalled (" + stall + "), stopped: " + ended;
        }
        Duration wait = backoff(s.ended(now, crashWindow));
        if (finished) {
            s.leavePending(reason("its command finished: " + ended));
            if (policy.restarts(true)) {
                s.restartDue(now.plus(wait));
            }
            return;
        }
        int k = s.crashed(now, crashWindow);
        // Short, the essentials first: the server keeps the first 100 bytes of a reason on the agent.
        if (policy != RestartPolicy.NO && k >= maxCrashes) {
            s.giveUp(reason(k + " crashes in " + span(crashWindow) + "; " + ended));
            return;
        }
        s.failPending(reason((k > 1 ? "crash " + k + " of " + maxCrashes + " in " + span(crashWindow) + ": "
                : "") + ended));
        s.failStall(stall); // a stall's death is reported as one (trigger stalled)
        if (policy.restarts(false)) {
            s.restartDue(now.plus(wait));
        }
    }

    /**
     * The crash report, while the server has not taken it: the daemon restarts the agent itself (when its backoff
     * ends), so the report claims that restart and the revive flow stands down meanwhile; it carries the daemon's
     * own restarts of it. A throttle or a failure keeps it for the next round; another refusal drops it.
     */
    private void reportCrash(AgentSlot s, Instant now, RoundLog log) {
        String a = s.id();
        String reason = s.failPending();
        if (reason == null) {
            return;
        }
        try {
            Instant due = s.restartDue();
            Duration restartIn = due == null ? null : due.isBefore(now) ? Duration.ZERO : Duration.between(now, due);
            Long own = ownRestarts(s, now);
            client.fail(a, reason, restartIn, own, s.failStall());
            if (own != null) {
                s.restartsSent(own);
            }
            log.crashesReported.add(a);
            s.failPending(null);
            s.failStall(null);
            Long seen = s.takeExitSeen();
            log.exits.add(a + ": " + reason + (seen == null ? "" : "; reported dead "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - seen) + " ms after the exit"));
        } catch (LifelineApiException e) {
            if (e.isTransient()) {
                // Throttled past the client's own retries: kept, and sent again next round.
                log.problems.add(a + ": crash report throttled (" + e.status() + "), sent again next round");
            } else {
                s.failPending(null); // already dead or offline: nothing to report
                s.failStall(null);
                s.takeExitSeen();
                log.problems.add(a + ": crash report refused: " + e.code());
            }
        } catch (LifelineException e) {
            log.problems.add(a + ": crash report failed: " + e.getMessage()); // tried again next round
        }
    }

    /** A restart due: made when its backoff has ended (and the agent joined), else told as waiting. */
    private void restartWhenDue(AgentSlot s, Instant now, RoundLog log, List<AgentSlot> running) {
        Instant due = s.restartDue();
        if (due == null) {
            return;
        }
        if (due.isAfter(now.plus(DUE_TOLERANCE))) {
            Duration left = Duration.between(now, due);
            log.backingOff.add(s.id() + " restarts in " + (left.toSeconds() > 0 ? left.toSeconds() + " s"
                    : left.toMillis() + " ms") + " (crash " + s.crashesInWindow(now, crashWindow) + " of " + maxCrashes
                    + " in " + span(crashWindow) + ")");
            return;
        }
        if (actions.restart(s, "process exited", log.problems, true)) {
            s.restartDue(null);
            log.restarted.add(s.id());
            if (actions.join(s, log.problems)) {
                log.rejoined.add(s.id());
            }
            running.add(s);
        }
    }

    /**
     * A command that finished (exit status 0): its agent leaves ({@code offline}), once, which is no death and starts
     * no revive flow. A refusal other than a throttle (it was not alive) drops the leave; the rest are sent again.
     */
    private void reportFinished(AgentSlot s, RoundLog log) {
        String agentId = s.id();
        String reason = s.leavePending();
        if (reason == null) {
            return;
        }
        try {
            client.leave(agentId, reason);
            s.leavePending(null);
            s.takeExitSeen();
            log.exits.add(agentId + ": " + reason + "; it left (offline)" + (s.restartDue() != null
                    ? ", and starts again (--restart always)" : ""));
        } catch (LifelineApiException e) {
            if (e.isTransient()) {
                log.problems.add(agentId + ": leave throttled (" + e.status() + "), sent again next round");
                return;
            }
            s.leavePending(null);
            s.takeExitSeen();
            log.problems.add(agentId + ": leave after its command finished refused: " + e.code());
        } catch (LifelineException e) {
            log.problems.add(agentId + ": leave after its command finished failed: " + e.getMessage());
        }
    }

    private void reportGiveUp(AgentSlot s, RoundLog log) {
        if (s.giveUpReported()) {
            return;
        }
        String agentId = s.id();
        try {
            Long own = ownRestarts(s, clock.instant());
            client.giveUp(agentId, s.givenUp(), own);
            if (own != null) {
                s.restartsSent(own);
            }
            s.giveUpReported(true);
            log.gaveUp.add(agentId);
        } catch (LifelineApiException e) {
            if (e.isTransient()) {
                log.problems.add(agentId + ": give-up throttled (" + e.status() + "), sent again next round");
                return;
            }
            s.giveUpReported(true); // offline or unknown: nothing to end
            log.problems.add(agentId + ": give-up refused: " + e.code());
        } catch (LifelineException e) {
            log.problems.add(agentId + ": give-up report failed: " + e.getMessage()); // tried again next round
        }
    }

    /** The daemon's own restarts of the agent in the last hour, to report: null while it never restarted it. */
    private static Long ownRestarts(AgentSlot s, Instant now) {
        long n = s.restartsLastHour(now);
        return n > 0 || s.restartsSent() != null ? n : null;
    }

    /** The wait before restarting after the k-th exit in the window: none, then the backoff, doubling. */
    Duration backoff(int k) {
        if (k <= 1) {
            return Duration.ZERO;
        }
        Duration d = restartBackoff;
        for (int i = 2; i < k && d.compareTo(maxRestartBackoff) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(maxRestartBackoff) > 0 ? maxRestartBackoff : d;
    }

    /** "10 min", "90 s". */
    static String span(Duration d) {
        return d.toSeconds() % 60 == 0 && d.toMinutes() > 0 ? d.toMinutes() + " min" : d.toSeconds() + " s";
    }

    /** The server takes reasons of at most 160 characters. */
    private static String reason(String text) {
        return text.length() <= 160 ? text : text.substring(0, 157) + "...";
    }
}
