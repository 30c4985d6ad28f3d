package io.lifeline.agent;

import io.lifeline.hooks.UsageLimit;
import io.lifeline.schedule.Deadlines;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The liveness rule in one place: when an agent's next sign of life is due, and what a sign of life changes.
 *
 * <p>A sign of life at {@code at} makes the agent due again at {@code at} plus a window, the first that applies:
 * <ul>
 *   <li>{@code nextHeartbeatWithinSeconds} the beat itself sent;</li>
 *   <li>the agent's schedule: its next slot plus its stale-after ({@link #scheduled}; the application layer has
 *       the store write it after the beat's write, which cannot read the schedule);</li>
 *   <li>waiting for a person (a permission prompt): the waiting-for-a-person allowance;</li>
 *   <li>waiting for its next prompt (its turn ended): the waiting-for-input allowance;</li>
 *   <li>in a turn (a tool call or a model turn in progress): the working allowance;</li>
 *   <li>else its stale-after.</li>
 * </ul>
 * An allowance is the agent's own when it was registered with one (or its team's at registration), else the
 * deployment's. The store's heartbeat write stores what {@link #due} says, computing the allowance's deadline in its
 * update expression so a beat costs no read; {@code LivenessExpressionTest} pins the two together.
 *
 * <p>An agent is stale once {@code now} is after its deadline (at the deadline itself it is not): the sweep, the
 * sweep's lease condition ({@link #staleBefore}), a host lease's silence and the crash-recovery answer
 * ({@link #sessionActive}) all draw that line there. An agent hosted
 * by a daemon is judged from the later of its item and its host lease ({@link #throughLease}): by the sweep
 * ({@link #judged}) and as the API shows it ({@link #shown}); a beat its lease answers alone is due again at
 * {@link #viaLease}. The store judges nothing: it reads and writes what this class returns, and the application
 * layer and the sweep ask this class. It is also the one caller of the schedule arithmetic ({@link Deadlines}).
 */
public final class Liveness {

    /** What an alive agent is waiting for, if anything; both are alive, neither expects a beat for a while. */
    public enum Waiting {
        /** Its turn ended: it waits for its next prompt. */
        INPUT("input"),
        /** A permission prompt or question: it waits for a person. */
        PERSON("person");

        private final String wire;

        Waiting(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }

        public static Optional<Waiting> fromWire(String text) {
            for (Waiting w : values()) {
                if (w.wire.equals(text)) {
                    return Optional.of(w);
                }
            }
            return Optional.empty();
        }
    }

    /** What the sign of life says beyond its time: plain, in a turn, or waiting. */
    public enum Activity {
        PLAIN,
        IN_TURN,
        WAITING_FOR_INPUT,
        WAITING_FOR_PERSON;

        /** The wait this activity is, or null. */
        public Waiting waiting() {
            return this == WAITING_FOR_INPUT ? Waiting.INPUT : this == WAITING_FOR_PERSON ? Waiting.PERSON : null;
        }

        public static Activity of(Waiting w) {
            return w == null ? PLAIN : w == Waiting.INPUT ? WAITING_FOR_INPUT : WAITING_FOR_PERSON;
        }
    }

    /** An agent's current wait and since when (its first sign of life in this wait). */
    public record Wait(Waiting waiting, Instant since) {
    }

    /**
     * The allowances: {@code working} covers a tool call or model turn in progress, {@code waitingForInput} an
     * agent between turns, {@code waitingForPerson} one at a permission prompt. {@code awaitingAlertAfter}: a wait
     * for a person this long raises one {@code AgentAwaitingInput}. {@code stallAfter}: the deployment's stall
     * threshold, an agent in a turn with no progress this long is stalled ({@link #stalled}).
     */
    public record Allowances(Duration working, Duration waitingForInput, Duration waitingForPerson,
                             Duration awaitingAlertAfter, Duration stallAfter) {
        /**
         * The documented defaults: 15 minutes working, 8 hours waiting either way, an alert after 5 minutes, a stall
         * after 2 minutes without progress.
         */
        public static final Allowances DEFAULTS = new Allowances(Duration.ofMinutes(15), Duration.ofHours(8),
                Duration.ofHours(8), Duration.ofMinutes(5));

        /** The allowances under the default stall threshold ({@link #DEFAULT_STALL_AFTER}). */
        public Allowances(Duration working, Duration waitingForInput, Duration waitingForPerson,
                          Duration awaitingAlertAfter) {
            this(working, waitingForInput, waitingForPerson, awaitingAlertAfter, DEFAULT_STALL_AFTER);
        }

        /** The allowance for {@code activity}, or null for a plain beat (the agent's stale-after applies). */
        public Duration of(Activity activity) {
            return switch (activity) {
                case PLAIN -> null;
                case IN_TURN -> working;
                case WAITING_FOR_INPUT -> waitingForInput;
                case WAITING_FOR_PERSON -> waitingForPerson;
            };
        }
    }

    private Liveness() {
    }

    /**
     * The window a sign of life grants, as the heartbeat write computes it: {@code nextWithin} when sent; else
     * the agent's own allowance for {@code activity} ({@code agentAllowance}, null when it has none), else the
     * deployment's; else its stale-after. (A scheduled agent's deadline is then set from its schedule.)
     */
    public static Duration window(Duration nextWithin, Activity activity, Duration agentAllowance,
                                  Allowances deployment, Duration staleAfter) {
        return window(nextWithin, activity, agentAllowance, carried(activity, deployment, false), staleAfter);
    }

    /**
     * The window a sign of life grants, given the deployment's allowance the beat carries ({@code carried}, from
     * {@link #carried}; null when none applies): {@code nextWithin} when sent; else, for a beat in a turn or waiting
     * that carries an allowance, the agent's own ({@code agentAllowance}, null when it has none) or the carried one;
     * else its stale-after. This is the rule the heartbeat write's update expression computes without a read
     * ({@code LivenessExpressionTest} holds the two to the same answers).
     */
    public static Duration window(Duration nextWithin, Activity activity, Duration agentAllowance, Duration carried,
                                  Duration staleAfter) {
        if (nextWithin != null) {
            return nextWithin;
        }
        if (activity != null && activity != Activity.PLAIN && carried != null) {
            return agentAllowance != null ? agentAllowance : carried;
        }
        return staleAfter;
    }

    /**
     * The deployment's allowance a beat carries for {@code activity}: its allowance for a direct beat (a plain one
     * carries none); none for an entry of a host's batch ({@code throughHost}) or one that states no activity
     * ({@code activity} null), as the daemon beats for a waiting agent while its process lives: its stale-after
     * applies.
     */
    public static Duration carried(Activity activity, Allowances deployment, boolean throughHost) {
        return activity == null || throughHost ? null : deployment.of(activity);
    }

    /**
     * What the heartbeat write stores as the deadline of a sign of life at {@code at} ({@link #window}'s rule, in the
     * form a write without a read can store): a fixed instant when the beat sent {@code nextWithin}; else, for a beat
     * in a turn or waiting that carries an allowance ({@code carried}, from {@link #carried}), {@code at} plus the
     * agent's own allowance for {@code activity} when its item has one, else plus {@code carried}; else {@code at}
     * plus the agent's stale-after. The store turns the last two into its update expression.
     */
    public static Due due(Instant at, Duration nextWithin, Activity activity, Duration carried) {
        if (nextWithin != null) {
            return new Due.At(deadline(at, nextWithin));
        }
        if (activity != null && activity != Activity.PLAIN && carried != null) {
            return new Due.AfterAllowance(at, activity, carried);
        }
        return new Due.AfterStaleAfter(at);
    }

    /** A plain sign of life at {@code at} (a join's): due its stale-after later. */
    public static Due due(Instant at) {
        return due(at, null, Activity.PLAIN, null);
    }

    /** The deadline a sign of life stores, as {@link #due} answers it. */
    public sealed interface Due {
        /** Due at {@code deadline}. */
        record At(Instant deadline) implements Due {
        }

        /** Due at {@code from} plus the agent's own allowance for {@code activity}, else plus {@code carried}. */
        record AfterAllowance(Instant from, Activity activity, Duration carried) implements Due {
        }

        /** Due at {@code from} plus the agent's stale-after. */
        record AfterStaleAfter(Instant from) implements Due {
        }
    }

    /**
     * The deadline of an agent on a schedule whose last sign of life is {@code signOfLife}: its next slot plus its
     * {@code staleAfter} as grace, an early beat counting for the coming slot ({@link Deadlines#next}); null when no
     * further beat is expected (an {@code at:} schedule served).
     */
    public static Instant scheduled(String schedule, String timeZone, Instant signOfLife, Duration staleAfter) {
        return Deadlines.next(ScheduleCache.parse(schedule, timeZone), signOfLife, staleAfter);
    }

    /**
     * Whether {@code written} (an agent as a sign of life was just written: its deadline its stale-after's, as the
     * write cannot read the schedule) is on a schedule that gives it another deadline; then {@link #scheduled} of it
     * is what to store. A beat that sent {@code nextWithin} keeps its own.
     */
    public static boolean followsSchedule(Agent written, Duration nextWithin) {
        return nextWithin == null && written.schedule() != null && written.heartbeatAt() != null;
    }

    /** {@link #scheduled} for an agent as written. */
    public static Instant scheduled(Agent written) {
        return scheduled(written.schedule(), written.timeZone(), written.heartbeatAt(), written.staleAfter());
    }

    /**
     * The deadline a host lease's beat gives an agent judged through it: the beat plus the agent's stale-after.
     * The lease's own answer to a hosted beat and {@link #throughLease} both use it.
     */
    public static Instant viaLease(Instant leaseBeat, Duration staleAfter) {
        return deadline(leaseBeat, staleAfter);
    }

    /**
     * An agent as it is shown (GET, lists): through its host lease's beat of it ({@code leaseBeat}, the lease's
     * entry for it, or null) as {@link #throughLease} judges it, when it is alive, not on a schedule and has such a
     * beat; else as its item says. {@code lastMissAt}: when the sweep last counted a miss of it, or null.
     */
    public static Agent shown(Agent item, Instant leaseBeat, Instant lastMissAt) {
        if (leaseBeat == null || item.status() == null || !item.status().isAlive() || item.schedule() != null) {
            return item;
        }
        SweepPlan.Observed direct = new SweepPlan.Observed(item.team(), item.agentId(), item.status(),
                item.heartbeatAt(), item.deadline(), item.consecutiveMisses(), item.graceMisses(), item.beats(),
                item.pausedUntil());
        SweepPlan.Observed judged = throughLease(direct, item.staleAfter(), null, leaseBeat, lastMissAt);
        return item.withSignOfLife(judged.heartbeatAt(), judged.deadline(), judged.misses());
    }

    /**
     * How long a host daemon's claim on a restart outlives the restart it announced: the daemon restarts the command
     * when its backoff ends, then joins the agent; a join the SDK retries (about 14 s at most) lands well inside it.
     */
    public static final Duration HOST_RESTART_GRACE = Duration.ofSeconds(30);

    /**
     * Until when a host daemon that reported its agent's crash and said it restarts it within {@code restartIn}
     * (its crash backoff) holds the restart: the revive flow stands down until then, and takes over after it if the
     * agent has not joined (docs/revive.md).
     */
    public static Instant hostRestartClaim(Instant now, Duration restartIn) {
        return now.plus(restartIn).plus(HOST_RESTART_GRACE);
    }

    /** Whether {@code agent} is alive and overdue at {@code now}: past its deadline ({@link #stale}). */
    public static boolean overdue(Agent agent, Instant now) {
        return agent.status() != null && agent.status().isAlive() && stale(agent.deadline(), now);
    }

    /** The deadline of a sign of life at {@code at} with {@code window}; null when no further beat is due. */
    public static Instant deadline(Instant at, Duration window) {
        return at == null || window == null ? null : at.plus(window);
    }

    /** Whether an agent with {@code deadline} is stale at {@code now}: strictly after it; never without one. */
    public static boolean stale(Instant deadline, Instant now) {
        return deadline != null && now.isAfter(deadline);
    }

    /**
     * The sweep's lease condition, as the store writes it: a hosted agent is still stale at {@code now} through its
     * lease when its lease beat is strictly before this instant (none at all counts too), as
     * {@code stale(viaLease(beat, staleAfter), now)} holds exactly then ({@code LivenessExpressionTest} checks the two
     * at the boundary).
     */
    public static Instant staleBefore(Instant now, Duration staleAfter) {
        return now.minus(staleAfter);
    }

    /**
     * Whether the session of {@code agent} is still active at {@code now}, for the crash-recovery answer: alive with
     * a deadline that is not yet stale ({@link #stale}: at the deadline itself it is still active). An alive agent
     * with no deadline (an {@code at:} schedule served) expects no further beat: its session is over.
     */
    public static boolean sessionActive(Agent agent, Instant now) {
        return agent.status() != null && agent.status().isAlive() && agent.deadline() != null
                && !stale(agent.deadline(), now);
    }

    /** Whether a pause until {@code pausedUntil} (an agent's or a team's; null: none) holds at {@code now}. */
    public static boolean paused(Instant pausedUntil, Instant now) {
        return pausedUntil != null && now.isBefore(pausedUntil);
    }

    /**
     * Whether a host lease renewed at {@code renewedAt} is silent at {@code now} for agents whose shortest stale-after
     * is {@code shortest}: the deadline a renewal at that time gives ({@link #viaLease}) is stale.
     */
    public static boolean leaseSilent(Instant renewedAt, Duration shortest, Instant now) {
        return stale(viaLease(renewedAt, shortest), now);
    }

    /**
     * The restart rule (after a start of Lifeline Local at {@code startedAt}): an agent is judged against at least
     * {@code startedAt} plus the window it had at its last sign of life (its deadline less that sign: its stale-after,
     * an allowance, or its schedule's gap), so an agent whose client kept beating while the host was down gets one
     * full window from the start to be heard again. An agent with no sign of life, no deadline, or no window is left
     * as it is; so is one whose own deadline is later.
     */
    public static SweepPlan.Observed afterStart(SweepPlan.Observed a, Instant startedAt) {
        if (startedAt == null || a.heartbeatAt() == null || a.deadline() == null
                || !a.deadline().isAfter(a.heartbeatAt())) {
            return a;
        }
        Instant fromStart = deadline(startedAt, Duration.between(a.heartbeatAt(), a.deadline()));
        return fromStart.isAfter(a.deadline()) ? a.judgedAt(a.heartbeatAt(), fromStart, a.misses()) : a;
    }

    /**
     * An agent as the sweep read its wait for a person: {@code since} (null when it no longer waits for one) and
     * {@code alerted}, the wait whose alert was raised (null when none was).
     */
    public record PersonWait(String team, String agentId, AgentStatus status, Instant since, Instant alerted) {
    }

    /** What the sweep does about waits for a person: raise an alert for these, resolve those. */
    public record AwaitingDecisions(List<PersonWait> raise, List<PersonWait> resolve) {
    }

    /**
     * The sweep's decisions about waits for a person: an alive agent waiting for one at least
     * {@link Allowances#awaitingAlertAfter} with no alert raised for this wait gets one; an alert whose wait is over
     * (the agent went on, left or died, or waits anew) is resolved, once, before a new wait's alert is raised.
     */
    public static AwaitingDecisions awaiting(List<PersonWait> waits, Allowances allowances, Instant now) {
        List<PersonWait> raise = new ArrayList<>();
        List<PersonWait> resolve = new ArrayList<>();
        for (PersonWait w : waits) {
            boolean waiting = w.status() != null && w.status().isAlive() && w.since() != null;
            if (w.alerted() != null) {
                if (!waiting || !w.alerted().equals(w.since())) {
                    resolve.add(w);
                }
            } else if (waiting && awaitingAlertDue(new Wait(Waiting.PERSON, w.since()), allowances, now)) {
                raise.add(w);
            }
        }
        return new AwaitingDecisions(raise, resolve);
    }

    /** Whether a wait for a person that began at {@code since} is due its one alert at {@code now}. */
    public static boolean awaitingAlertDue(Wait wait, Allowances allowances, Instant now) {
        return wait != null && wait.waiting() == Waiting.PERSON && wait.since() != null
                && !now.isBefore(wait.since().plus(allowances.awaitingAlertAfter()));
    }

    /**
     * What the agent does when it stalls: {@code ALERT} (it stays {@code working}, flagged {@code stalled}) or
     * {@code RESTART} (abort-first: without a daemon the sweep marks it dead with trigger {@code stalled}, and the
     * revive flow asks its host, as for any death; an agent a daemon hosts is judged by its daemon, which stops it,
     * reports it dead with trigger {@code stalled} and restarts it, or under {@code alert} reports the stall and its
     * end in a beat).
     */
    public enum OnStall {
        ALERT("alert"),
        RESTART("restart");

        private final String wire;

        OnStall(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }

        public static Optional<OnStall> fromWire(String text) {
            for (OnStall o : values()) {
                if (o.wire.equals(text)) {
                    return Optional.of(o);
                }
            }
            return Optional.empty();
        }

        /** The default where none is set: {@code restart} where a daemon runs the agent, {@code alert} otherwise. */
        public static OnStall defaultFor(boolean hosted) {
            return hosted ? RESTART : ALERT;
        }
    }

    /** The reason a stall carries when the last beat named none: an SDK or CLI work loop that stopped calling it. */
    public static final String NO_PROGRESS_REPORTED = "no progress reported";

    /** The documented default stall threshold ({@code StallAfterSeconds}). */
    public static final Duration DEFAULT_STALL_AFTER = Duration.ofSeconds(120);

    /**
     * An agent's progress as a sign of life leaves it: {@code lastProgressAt} (null: it never reported any, so it is
     * never judged stalled), whether a tool call is in flight ({@code toolInFlight}: a hook's tool start with no end
     * yet, legitimate silence), and the reason its source gives for a silence ({@code reason}, null: none).
     */
    public record Progress(Instant lastProgressAt, boolean toolInFlight, String reason) {
    }

    /** A stall the sweep raised: since when (its {@code AgentStalled}) and why. */
    public record Stall(Instant since, String reason) {
    }

    /**
     * An agent as the sweep read its progress: its status, {@code progress}, whether it waits ({@code waiting}: for
     * input or a person), whether a daemon hosts it ({@code hosted}), its own {@code stallAfter} and {@code onStall}
     * (null: the deployment's, the default), and the stall already raised ({@code stalledSince}, null: none).
     */
    public record ProgressSeen(String team, String agentId, AgentStatus status, Progress progress, boolean waiting,
                               boolean hosted, Duration stallAfter, OnStall onStall, Instant stalledSince) {
    }

    /**
     * The sweep's decisions about stalls: raise one {@code AgentStalled} for these (and restart those among them
     * whose {@code onStall} is {@code restart} and no daemon hosts), resolve with one {@code AgentProgressResumed}
     * those no longer stalled.
     */
    public record StallDecisions(List<ProgressSeen> raise, List<ProgressSeen> restart, List<ProgressSeen> resolve) {
    }

    /**
     * Whether an agent is stalled at {@code now}: {@code working} (in a turn), with a last progress, no tool call in
     * flight, not waiting, and no progress for strictly longer than {@code stallAfter} (at {@code lastProgressAt +
     * stallAfter} itself it is not, as a deadline is not stale at itself). The working allowance still bounds a
     * silent agent: its deadline is this class's other rule.
     */
    public static boolean stalled(AgentStatus status, Progress progress, boolean waiting, Duration stallAfter,
                                  Instant now) {
        return status == AgentStatus.WORKING && progress != null && progress.lastProgressAt() != null
                && !progress.toolInFlight() && !waiting && stallAfter != null
                && stale(progress.lastProgressAt().plus(stallAfter), now);
    }

    /** The stall threshold of {@code seen}: its own, else the deployment's. */
    public static Duration stallAfter(ProgressSeen seen, Duration deployment) {
        return seen.stallAfter() != null ? seen.stallAfter() : deployment;
    }

    /** What {@code seen} does when it stalls: its own (or its team's at registration), else the default. */
    public static OnStall onStall(ProgressSeen seen) {
        return seen.onStall() != null ? seen.onStall() : OnStall.defaultFor(seen.hosted());
    }

    /**
     * The sweep's decisions about progress at {@code now}: an agent {@link #stalled} with no stall raised gets one
     * (and, when its {@code onStall} is {@code restart} and no daemon hosts it, the restart: dead, trigger
     * {@code stalled}); a raised stall whose agent is no longer stalled (progress came, the turn ended, a tool
     * started, it left or died) is resolved, once.
     */
    public static StallDecisions stalls(List<ProgressSeen> seen, Duration deploymentStallAfter, Instant now) {
        List<ProgressSeen> raise = new ArrayList<>();
        List<ProgressSeen> restart = new ArrayList<>();
        List<ProgressSeen> resolve = new ArrayList<>();
        for (ProgressSeen s : seen) {
            if (s.hosted()) {
                // A hosted agent's progress comes with its daemon's beats, which its lease answers: its item's last
                // progress is not the newest, so the sweep does not judge it from there. Its daemon raises and ends
                // its stall; the sweep ends only one whose agent is no longer in a turn (it died, left or rejoined
                // while its daemon could not say so).
                if (s.stalledSince() != null && s.status() != AgentStatus.WORKING) {
                    resolve.add(s);
                }
                continue;
            }
            boolean stalled = stalled(s.status(), s.progress(), s.waiting(), stallAfter(s, deploymentStallAfter), now);
            if (s.stalledSince() == null && stalled) {
                raise.add(s);
                if (onStall(s) == OnStall.RESTART && !s.hosted()) {
                    restart.add(s);
                }
            } else if (s.stalledSince() != null && !stalled) {
                resolve.add(s);
            }
        }
        return new StallDecisions(raise, restart, resolve);
    }

    /**
     * The last progress a beat reports: the beat's time less the age of its last progress ({@code progressAge}, never
     * before the epoch, never after the beat), or null when it reports none.
     */
    public static Instant lastProgress(Instant beatAt, Duration progressAge) {
        if (progressAge == null) {
            return null;
        }
        Instant at = beatAt.minus(progressAge.isNegative() ? Duration.ZERO : progressAge);
        return at.isBefore(Instant.EPOCH) ? Instant.EPOCH : at;
    }

    /**
     * A parked agent (docs/liveness.md, "Parked at a usage limit"): its runtime reported a provider's rate or usage
     * limit at {@code since}, which resets at {@code until}; {@code reason} says which limit, in a short phrase.
     */
    public record Parked(Instant until, String reason, Instant since) {
    }

    /** The reset a limit is given when its answer names none ({@code ParkDefaultSeconds}). */
    public static final Duration DEFAULT_PARK = UsageLimit.DEFAULT_RESET;

    /**
     * Until when a limit reported at {@code now} parks: its {@code reset} when the answer gave one (one already past
     * is now: the park ends at its first resume), else the default from now.
     */
    public static Instant parkUntil(Instant reset, Instant now, Duration defaultPark) {
        return reset == null ? now.plus(defaultPark) : reset.isBefore(now) ? now : reset;
    }

    /**
     * The deadline a park gives: its reset plus the agent's stale-after (the window of a plain beat), so a parked
     * agent is neither stale nor dead before then, and is judged as any silent agent after it if it never resumes.
     */
    public static Instant parkedDeadline(Instant until, Duration staleAfter) {
        return deadline(until, staleAfter);
    }

    /** The deadline a park writes over {@code current} (null: none): the later of the two, never a shorter one. */
    public static Instant parkedDeadline(Instant until, Duration staleAfter, Instant current) {
        Instant parked = parkedDeadline(until, staleAfter);
        return current != null && current.isAfter(parked) ? current : parked;
    }

    /**
     * An alive agent as the sweep judges it: through its host lease when it has a link to one ({@code hosted}),
     * else as its item says.
     */
    public static SweepPlan.Observed judged(SweepPlan.Observed a) {
        SweepPlan.Hosted h = a.hosted();
        if (h == null) {
            return a;
        }
        return throughLease(a, h.staleAfter(), null, h.leaseBeatMs() == null ? null
                : Instant.ofEpochMilli(h.leaseBeatMs()), h.lastMissAt());
    }

    /**
     * The agent as judged through its host lease: its newest sign of life is the later of its item's heartbeat and
     * its lease beat ({@code leaseBeat}, the daemon's last local beat of it), and its deadline the later of its
     * item's and the lease beat plus its stale-after; misses the sweep counted before the lease beat
     * ({@code lastMissAt} earlier than it: the agent was heard since) no longer count, as a beat written to the
     * item resets them. An agent on a schedule is judged from its item alone (each of its beats is written there).
     */
    public static SweepPlan.Observed throughLease(SweepPlan.Observed item, Duration staleAfter, String schedule,
                                                  Instant leaseBeat, Instant lastMissAt) {
        Instant heartbeatAt = item.heartbeatAt();
        Instant deadline = item.deadline();
        if (schedule == null && leaseBeat != null) {
            if (heartbeatAt == null || leaseBeat.isAfter(heartbeatAt)) {
                heartbeatAt = leaseBeat;
            }
            Instant viaLease = viaLease(leaseBeat, staleAfter);
            if (deadline == null || viaLease.isAfter(deadline)) {
                deadline = viaLease;
            }
        }
        int misses = item.misses();
        if (schedule == null && leaseBeat != null && lastMissAt != null && leaseBeat.isAfter(lastMissAt)) {
            misses = 0;
        }
        return item.judgedAt(heartbeatAt, deadline, misses);
    }
}
