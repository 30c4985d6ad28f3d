package io.lifeline.client.daemon;

import io.lifeline.client.model.BatchEntry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Everything a {@link HostDaemon} knows of one of its agents, in one place: its place in the daemon's list (which
 * fixes its host lease), its restart policy, the server's advice, its exits, crashes and restarts, the reports not
 * yet taken, the give-up, and what its runtime's hooks said. The daemon's rounds, its exit passes and its hooks'
 * consequences change a slot under the daemon's lock; the fields read without it (the advice, the restart due, the
 * give-up, the session, the exit's time) are volatile or atomic. A slot judges nothing: the crash loop, the beat
 * round, the command inbox and the hook sessions do, each with the slot in hand.
 */
final class AgentSlot {
    private final String id;
    private final int index;
    private final RestartPolicy restartPolicy;
    /** The server's latest advice, in seconds, or null until it answered. */
    private volatile Long advised;
    /** When its process was last (re)started. */
    private volatile Instant startedAt;
    /** Whether its current exit has been counted (cleared when it runs again). */
    private volatile boolean exitCounted;
    /** When its not yet reported exit was seen ({@link System#nanoTime()}), or null. */
    private final AtomicReference<Long> exitSeen = new AtomicReference<>();
    /** Its crash report not yet accepted by the server: the reason, or null. */
    private volatile String failPending;
    /** Its leave not yet accepted by the server, after its command finished (exit status 0): the reason, or null. */
    private volatile String leavePending;
    /** Its crashes within the crash window, oldest first. */
    private final Deque<Instant> crashes = new ArrayDeque<>();
    /** Its exits within the crash window, crashes and finishes alike (the restart backoff's count). */
    private final Deque<Instant> ends = new ArrayDeque<>();
    /** Its restarts of the daemon's own accord within the last hour, oldest first. */
    private final Deque<Instant> restarts = new ArrayDeque<>();
    /** When it is to be restarted after its crash backoff, or null. */
    private volatile Instant restartDue;
    /** The give-up's reason when the daemon gave it up (crash loop), else null. */
    private volatile String givenUp;
    /** Whether the server has the give-up (or refused it for good). */
    private volatile boolean giveUpReported;
    /** The restarts-in-the-last-hour count the server last took, or null (sent again only when it changes). */
    private volatile Long restartsSent;
    /** Whether its runtime session ended (SESSION_ENDED): it left, gets no beat, and its exit is no crash. */
    private volatile boolean sessionLeft;
    /** The runtime session its hooks last named, or null. */
    private final AtomicReference<String> session = new AtomicReference<>();
    /** What the hooks said that the server last took (status, waiting, inTurn, source), or null. */
    private volatile List<Object> hookSent;
    /** Why the daemon judged it stalled ({@link ProgressWatch}), until it runs again or progress resumes; or null. */
    private volatile String stall;
    /** The age (ms) of its last progress at the latest sample while in a turn, or null when not judged. */
    private volatile Long progressAgeMs;
    /** Its running subagents (a runtime's SubagentStart not yet stopped), oldest first; guarded by this slot. */
    private final List<BatchEntry.Running> subagents = new ArrayList<>();
    /** The stall its pending crash report is the death of (its reason), or null: a crash. */
    private volatile String failStall;
    /** Until when it is parked at its provider's usage limit (its runtime's hook said so), or null. */
    private volatile Instant parkedUntil;
    /** Its Codex session's rollout file, as its hooks named it this life, or null ({@link CodexLimit}). */
    private volatile Path rollout;
    /** What the server has not taken yet: the stall change, a park or its end, the subagents ({@link ParkedAgents}). */
    private final AtomicReference<PendingChanges> pending = new AtomicReference<>(PendingChanges.NONE);

    /** The most subagents sent by id (the server's bound); the rest are counted. */
    static final int SUBAGENTS_SENT = 8;

    AgentSlot(String id, int index, RestartPolicy restartPolicy, Instant startedAt) {
        this.id = id;
        this.index = index;
        this.restartPolicy = restartPolicy;
        this.startedAt = startedAt;
    }

    String id() {
        return id;
    }

    /** Its place in the daemon's list of agents: its host lease is {@code index / 25}. */
    int index() {
        return index;
    }

    RestartPolicy restartPolicy() {
        return restartPolicy;
    }

    Long advised() {
        return advised;
    }

    /** Takes the server's advice; none, or less than a second, leaves the last one. */
    void advise(Long seconds) {
        if (seconds != null && seconds >= 1) {
            advised = seconds;
        }
    }

    Instant startedAt() {
        return startedAt;
    }

    /** Its process was (re)started at {@code now}: counted as the daemon's own restart when {@code own}. */
    void started(Instant now, boolean own) {
        startedAt = now;
        if (own) {
            restarts.addLast(now);
        }
        exitCounted = false;
        stall = null;
        progressAgeMs = null;
        subagentsCleared();
        rollout = null;
        pending.updateAndGet(PendingChanges::newLife);
    }

    /** Its Codex session's rollout file this life, or null. */
    Path rollout() {
        return rollout;
    }

    /** Its Codex hooks named {@code file} as the session's rollout (null: forget it, once read at an exit). */
    void rollout(Path file) {
        rollout = file;
    }

    boolean exitCounted() {
        return exitCounted;
    }

    /** Its process runs: the next exit is a new one. */
    void running() {
        exitCounted = false;
    }

    /** Counts the current exit: true the first time only. */
    boolean countExit() {
        if (exitCounted) {
            return false;
        }
        exitCounted = true;
        return true;
    }

    /** An exit was seen at {@code nanos}, unless an earlier one is still unreported. */
    void exitSeen(long nanos) {
        exitSeen.compareAndSet(null, nanos);
    }

    /** The unreported exit's time, now reported (or dropped), or null. */
    Long takeExitSeen() {
        return exitSeen.getAndSet(null);
    }

    String failPending() {
        return failPending;
    }

    void failPending(String reason) {
        failPending = reason;
    }

    String leavePending() {
        return leavePending;
    }

    void leavePending(String reason) {
        leavePending = reason;
    }

    /** Counts an exit at {@code now}: answers the exits in the window, this one included. */
    int ended(Instant now, Duration window) {
        ends.addLast(now);
        return inWindow(ends, now, window);
    }

    /** Counts a crash at {@code now}: answers the crashes in the window, this one included. */
    int crashed(Instant now, Duration window) {
        crashes.addLast(now);
        return crashesInWindow(now, window);
    }

    int crashesInWindow(Instant now, Duration window) {
        return inWindow(crashes, now, window);
    }

    Instant restartDue() {
        return restartDue;
    }

    void restartDue(Instant due) {
        restartDue = due;
    }

    String givenUp() {
        return givenUp;
    }

    /** The daemon gives it up: no restart due, no crash report, the give-up's reason instead. */
    void giveUp(String reason) {
        restartDue = null;
        failPending = null;
        failStall = null;
        givenUp = reason;
    }

    /** A new revive (an operator's) after the give-up: the crash loop starts afresh. */
    void forgetGiveUp() {
        givenUp = null;
        giveUpReported = false;
        crashes.clear();
        exitCounted = false;
    }

    boolean giveUpReported() {
        return giveUpReported;
    }

    void giveUpReported(boolean reported) {
        giveUpReported = reported;
    }

    Long restartsSent() {
        return restartsSent;
    }

    void restartsSent(long n) {
        restartsSent = n;
    }

    /** How often the daemon restarted it of its own accord in the hour before {@code now}. */
    int restartsLastHour(Instant now) {
        return inWindow(restarts, now, Duration.ofHours(1));
    }

    boolean sessionLeft() {
        return sessionLeft;
    }

    void sessionLeft(boolean left) {
        sessionLeft = left;
    }

    /** Takes the session a hook named: true when it differs from the one named before. */
    boolean namedSession(String named) {
        return !named.equals(session.getAndSet(named));
    }

    List<Object> hookSent() {
        return hookSent;
    }

    /** What the server took of the hooks; null: it takes what they say anew (after a join or a restart). */
    void hookSent(List<Object> signature) {
        hookSent = signature;
    }

    String stall() {
        return stall;
    }

    /** Judged stalled for {@code reason}; null: no longer. */
    void stall(String reason) {
        stall = reason;
    }

    /** The subagent {@code id} (of type {@code type}, may be null) started at {@code at}; a repeated start is one. */
    synchronized void subagentStarted(Instant at, String id, String type) {
        if (id != null && subagents.stream().anyMatch(r -> id.equals(r.id()))) {
            return;
        }
        subagents.add(new BatchEntry.Running(id, type, at));
        subagentsChanged();
    }

    /** The subagent {@code id} stopped (without an id, the oldest running one). */
    synchronized void subagentStopped(String id) {
        boolean removed = id == null ? !subagents.isEmpty() && subagents.remove(0) != null
                : subagents.removeIf(r -> id.equals(r.id()));
        if (removed) {
            subagentsChanged();
        }
    }

    /** A new life: none runs (sent when some ran). */
    private synchronized void subagentsCleared() {
        if (!subagents.isEmpty()) {
            subagents.clear();
            subagentsChanged();
        }
    }

    /** The set as the server keeps it: the first {@link #SUBAGENTS_SENT} with an id, the rest counted. */
    private void subagentsChanged() {
        List<BatchEntry.Running> named = subagents.stream().filter(r -> r.id() != null).limit(SUBAGENTS_SENT)
                .toList();
        BatchEntry.Subagents next = new BatchEntry.Subagents(named, subagents.size() - named.size());
        pending.updateAndGet(p -> p.withSubagents(next));
    }

    /** Since when each running subagent runs, oldest first. */
    synchronized List<Instant> subagents() {
        return subagents.stream().map(BatchEntry.Running::since).toList();
    }

    String failStall() {
        return failStall;
    }

    /** The pending crash report is the death of a stall for {@code reason} (null: a crash). */
    void failStall(String reason) {
        failStall = reason;
    }

    Long progressAgeMs() {
        return progressAgeMs;
    }

    void progressAgeMs(Long ms) {
        progressAgeMs = ms;
    }

    Instant parkedUntil() {
        return parkedUntil;
    }

    /** Parked until {@code until} (its runtime reported a usage limit): sent with its next beat. */
    void park(Instant until) {
        parkedUntil = until;
        BatchEntry.Park park = new BatchEntry.Park(true, until, "usage limit");
        pending.updateAndGet(p -> p.withPark(park));
    }

    /** The park ends (resumed): true when it was parked; its end is sent with its next beat. */
    boolean unpark() {
        if (parkedUntil == null) {
            return false;
        }
        parkedUntil = null;
        pending.updateAndGet(p -> p.withPark(BatchEntry.Park.RESUMED));
        return true;
    }

    /**
     * What its next entry carries of what the server has not taken: all of it through a host lease ({@code hosted}),
     * else only a park (a batch without a host takes no stall or subagents).
     */
    PendingChanges.Sent toSend(boolean hosted) {
        PendingChanges p = pending.get();
        return new PendingChanges.Sent(hosted ? stallChange() : null, p.park(), hosted ? p.subagents() : null);
    }

    /** The stall change the server has not taken yet ({@link PendingChanges#stallChange}), or null. */
    Boolean stallChange() {
        return pending.get().stallChange(stall != null, progressAgeMs != null);
    }

    /** The server accepted an entry carrying {@code sent}: taken, but for what changed since. */
    void taken(PendingChanges.Sent sent) {
        pending.updateAndGet(p -> p.taken(sent));
    }

    /** How many of {@code times} fall in the window before {@code now}; the older ones are dropped. */
    private static int inWindow(Deque<Instant> times, Instant now, Duration window) {
        while (!times.isEmpty() && !times.peekFirst().isAfter(now.minus(window))) {
            times.pollFirst();
        }
        return times.size();
    }
}
