package io.lifeline.store.outbox;

import io.lifeline.agent.HostIncidents;
import io.lifeline.agent.TeamHold;
import io.lifeline.agent.Transition;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.agent.TransitionLog;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.team.FleetStore;
import io.lifeline.store.team.TeamItems;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What a change to the live table means, read from a stream record's old and new images. The live table holds
 * agent and team items only; every fact for the bus is stamped on one of them by the write that makes it (a
 * transition, a restart command, a session rotation on the agent item; the mass-stale flag and a minted admin
 * key on the team item). What follows a status change (its transition record, the hand-back, the leader's
 * notice) is the publisher's own work in the same pass, so {@link TaskReassigned} and {@link LeaderNotice} come
 * from the publisher, never from a record.
 */
public final class StreamChanges {

    public sealed interface Change permits StatusChanged, TaskReassigned, LeaderNotice, MassStale, SessionRotation,
            RestartRequested, AdminKeyMinted, HostLeaseExpired, HostLeaseRestored, FleetMassStale, AwaitingInput,
            Stall, Park {
        String team();

        /** This change told to {@code v}: each kind has its own method, so no kind can be left out. */
        <R> R accept(Visitor<R> v);
    }

    /** What to make of each kind of change (the event catalogue's events): one method per kind, none optional. */
    public interface Visitor<R> {
        R statusChanged(StatusChanged c);

        R taskReassigned(TaskReassigned c);

        R leaderNotice(LeaderNotice c);

        R massStale(MassStale c);

        R sessionRotation(SessionRotation c);

        R restartRequested(RestartRequested c);

        R adminKeyMinted(AdminKeyMinted c);

        R hostLeaseExpired(HostLeaseExpired c);

        R hostLeaseRestored(HostLeaseRestored c);

        R fleetMassStale(FleetMassStale c);

        R awaitingInput(AwaitingInput c);

        R stall(Stall c);

        R park(Park c);
    }

    /**
     * An agent parked at a provider's usage limit ({@code resumedAt} null: {@code AgentParked}), or that park is over
     * ({@code resumedAt} set: {@code AgentResumed}, {@code ended} when the agent left or died parked); {@code since},
     * when it was parked, is the pair's id.
     */
    public record Park(String team, String agentId, String name, String hostId, Instant since, Instant until,
                       String reason, Instant resumedAt, boolean ended) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.park(this);
        }
    }

    /**
     * The sweep judged an agent stalled ({@code resumedAt} null: {@code AgentStalled}), or that stall is over
     * ({@code resumedAt} set: {@code AgentProgressResumed}, {@code ended} when the agent is no longer alive);
     * {@code since}, when it was raised, is the pair's id. {@code lastProgressAt}: the agent's last progress.
     * {@code status}: the agent's status after the write ({@code working} for a stall raised under {@code onStall:
     * alert}, {@code dead} for one whose write was its restart's death), null where not known.
     */
    public record Stall(String team, String agentId, String name, String hostId, Instant since, String reason,
                        Instant lastProgressAt, Instant resumedAt, boolean ended, String status) implements Change {
        public Stall(String team, String agentId, String name, String hostId, Instant since, String reason,
                     Instant lastProgressAt, Instant resumedAt, boolean ended) {
            this(team, agentId, name, hostId, since, reason, lastProgressAt, resumedAt, ended, null);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.stall(this);
        }
    }

    /**
     * An agent's wait for a person ran past its threshold ({@code resumedAt} null: {@code AgentAwaitingInput}), or
     * that wait is over ({@code resumedAt} set: {@code AgentInputResumed}); {@code since}, the wait's start, is the
     * pair's id.
     */
    public record AwaitingInput(String team, String agentId, String name, String hostId, Instant since,
                                Instant raisedAt, Instant resumedAt) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.awaitingInput(this);
        }

    }

    /** The team name fleet-level changes carry: no team's, so no team key can read them as its own. */
    public static final String FLEET_TEAM = "*";

    /**
     * An agent changed status; {@code currentTaskId} is the task it held at that moment, if any; {@code cause}: the
     * host silence its death followed from (on the death, the changes after it and its return), or null; {@code diedAt}:
     * when the dead spell it belongs to began (on its changes and its end), or null.
     */
    public record StatusChanged(String team, String agentId, String name, String hostId, Transition transition,
                                String currentTaskId, HostIncidents.Cause cause, Instant diedAt,
                                Long hostRestartsLastHour, Instant hostRestart)
            implements Change {
        /**
         * {@code hostRestartsLastHour}: the agent's restarts in the last hour as its host daemon last reported them
         * (its item's {@code stats.restartsLastHour}), or null; the flapping notice names it (docs/alerts-noise.md).
         * {@code hostRestart}: the claim of the host daemon that reported this death and restarts the agent itself
         * (until when it holds the restart), on the death, the changes while it stands and the join that ends it; null
         * otherwise (docs/revive.md).
         */
        public StatusChanged(String team, String agentId, String name, String hostId, Transition transition,
                             String currentTaskId, HostIncidents.Cause cause, Instant diedAt,
                             Long hostRestartsLastHour) {
            this(team, agentId, name, hostId, transition, currentTaskId, cause, diedAt, hostRestartsLastHour, null);
        }

        public StatusChanged(String team, String agentId, String name, String hostId, Transition transition,
                             String currentTaskId, HostIncidents.Cause cause, Instant diedAt) {
            this(team, agentId, name, hostId, transition, currentTaskId, cause, diedAt, null);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.statusChanged(this);
        }

        public StatusChanged(String team, String agentId, String name, String hostId, Transition transition,
                             String currentTaskId) {
            this(team, agentId, name, hostId, transition, currentTaskId, null, null);
        }

        public StatusChanged(String team, String agentId, String name, String hostId, Transition transition,
                             String currentTaskId, HostIncidents.Cause cause) {
            this(team, agentId, name, hostId, transition, currentTaskId, cause, null);
        }
    }

    public record TaskReassigned(String team, String taskId, String fromAgentId, Instant at) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.taskReassigned(this);
        }

    }

    public record LeaderNotice(String team, String leaderAgentId, InboxStore.Notice notice) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.leaderNotice(this);
        }

    }

    /**
     * A team's mass-silence flag raised: {@code held} when self-preservation holds its dead-marking, else one failure
     * domain explained the silence and its agents die (this is the incident's page); {@code why} says which.
     */
    public record MassStale(String team, int aliveAgents, int staleAgents, double threshold, Instant since,
                            boolean held, String why) implements Change {
        public MassStale(String team, int aliveAgents, int staleAgents, double threshold, Instant since) {
            this(team, aliveAgents, staleAgents, threshold, since, true, null);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.massStale(this);
        }

    }

    public record SessionRotation(String team, String agentId, long rotation, Instant at) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.sessionRotation(this);
        }

    }

    /** A restart command was issued to a host (the restart channel's push side). */
    public record RestartRequested(String team, HostCommandStore.Command command) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.restartRequested(this);
        }

    }

    /** An operator minted an admin key for the team ({@code operatorKeyId}: the operator key that did). */
    public record AdminKeyMinted(String team, String keyId, String operatorKeyId, Instant at) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.adminKeyMinted(this);
        }

    }

    /**
     * A host's lease went silent: no renewal within the shortest stale-after of the
     * {@code agentCount} alive agents it carried ({@code agents}: up to 25 of their ids). Their deaths follow as
     * the sweep judges each of them, held back by self-preservation where it applies.
     */
    public record HostLeaseExpired(String team, String hostId, List<String> agents, int agentCount,
                                   Instant lastRenewedAt, Instant at, String partOf, int leases) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.hostLeaseExpired(this);
        }

        public HostLeaseExpired(String team, String hostId, List<String> agents, int agentCount,
                                Instant lastRenewedAt, Instant at) {
            this(team, hostId, agents, agentCount, lastRenewedAt, at, null, 1);
        }
    }

    /**
     * A host whose lease was flagged expired at {@code expiredAt} (the silence's id, its {@link HostLeaseExpired}'s
     * {@code at}) renewed it again ({@code renewedAt}); {@code at}: when the flag was removed. Once per silence.
     */
    public record HostLeaseRestored(String team, String hostId, Instant expiredAt, Instant renewedAt, Instant at,
                                    String partOf) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.hostLeaseRestored(this);
        }

        public HostLeaseRestored(String team, String hostId, Instant expiredAt, Instant renewedAt, Instant at) {
            this(team, hostId, expiredAt, renewedAt, at, null);
        }
    }

    /**
     * The deployment-wide guard held the sweep ({@code resolvedAt} null: {@code FleetMassStaleSuspected}) or stopped
     * holding it ({@code resolvedAt} set: {@code FleetMassStaleResolved}). {@code since} is the hold's id, which both
     * carry; {@code teams}: up to 25 of the {@code teamCount} teams with stale agents when it began.
     */
    public record FleetMassStale(int aliveAgents, int staleAgents, double threshold, List<String> teams,
                                 int teamCount, Instant since, Instant resolvedAt) implements Change {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.fleetMassStale(this);
        }

        @Override
        public String team() {
            return FLEET_TEAM;
        }
    }

    /**
     * The live item a stream record is about (its key, from whichever image it has): records of one item must be
     * handled in their stream order, records of different items need not (DynamoDB orders a stream by item only).
     */
    public static String itemOf(Map<String, AttributeValue> oldImage, Map<String, AttributeValue> newImage) {
        Map<String, AttributeValue> image = newImage != null && !newImage.isEmpty() ? newImage : oldImage;
        if (image == null) {
            return "";
        }
        return Items.str(image, Keys.PK) + "\n" + Items.str(image, Keys.SK);
    }

    private StreamChanges() {
    }

    /**
     * The agent's newest transition again, when the write is the outbox repair's replay stamp for it (a new
     * {@code rpAt}, with {@code rp} equal to the item's seq): the publisher handles it as if its record had come.
     */
    private static Optional<TransitionLog.Change> replayed(Map<String, AttributeValue> before,
                                                                    Map<String, AttributeValue> after) {
        Instant at = Items.instant(after, AgentItems.REPLAY_AT);
        Transition t = AgentItems.lastTransition(after);
        if (at == null || at.equals(Items.instant(before, AgentItems.REPLAY_AT)) || !AgentItems.isComplete(t)
                || Items.num(after, AgentItems.REPLAY_SEQ, -1) != t.seq()) {
            return Optional.empty();
        }
        return Optional.of(new TransitionLog.Change(AgentItems.team(after), AgentItems.agentId(after), t));
    }

    private static Map<String, AttributeValue> mintedKey(Map<String, AttributeValue> team) {
        AttributeValue v = team.get(TeamItems.MINTED);
        return v == null || !v.hasM() ? null : v.m();
    }

    private static FleetMassStale fleet(Map<String, AttributeValue> item, Instant since, Instant resolvedAt) {
        AttributeValue teams = item.get(FleetStore.TEAMS);
        AttributeValue threshold = item.get(FleetStore.THRESHOLD);
        return new FleetMassStale((int) Items.num(item, FleetStore.ALIVE, 0), (int) Items.num(item, FleetStore.STALE, 0),
                threshold == null ? 0 : Double.parseDouble(threshold.n()),
                teams == null || !teams.hasL() ? List.of() : teams.l().stream().map(AttributeValue::s).toList(),
                (int) Items.num(item, FleetStore.TEAM_COUNT, 0), since, resolvedAt);
    }

    /** A stall raised or resolved by this change, read from the item's stall mark before and after. */
    private static Optional<Change> stall(Map<String, AttributeValue> before, Map<String, AttributeValue> after) {
        Instant since = Items.instant(after, AgentItems.STALLED_SINCE);
        Instant sinceBefore = Items.instant(before, AgentItems.STALLED_SINCE);
        String team = AgentItems.team(after);
        String agentId = AgentItems.agentId(after);
        if (since != null && !since.equals(sinceBefore)) {
            // The last progress the raise judged from: its own write's (a daemon's beat stamps it), else the item's.
            Instant progressAt = Items.instant(after, AgentItems.PROGRESS_AT);
            return Optional.of(new Stall(team, agentId, Items.str(after, AgentItems.NAME),
                    Items.str(after, AgentItems.HOST), since, AgentItems.stallReason(after, before),
                    progressAt != null ? progressAt : Items.instant(before, AgentItems.PROGRESS_AT), null, false,
                    Items.str(after, AgentItems.STATUS)));
        }
        if (since == null && sinceBefore != null) {
            Instant progress = Items.instant(after, AgentItems.PROGRESS_AT);
            Instant heard = Items.instant(after, AgentItems.HEARTBEAT_AT);
            Instant resumed = progress != null && progress.isAfter(sinceBefore) ? progress
                    : heard != null && heard.isAfter(sinceBefore) ? heard : sinceBefore;
            // Ended: the agent is no longer alive, or this is a new life's join (its stall was the last life's).
            boolean ended = !alive(Items.str(after, AgentItems.STATUS)) || !alive(Items.str(before, AgentItems.STATUS));
            return Optional.of(new Stall(team, agentId, Items.str(after, AgentItems.NAME),
                    Items.str(after, AgentItems.HOST), sinceBefore, AgentItems.stallReason(before, null),
                    Items.instant(before, AgentItems.PROGRESS_AT), resumed, ended, Items.str(after, AgentItems.STATUS)));
        }
        return Optional.empty();
    }

    private static boolean alive(String status) {
        return "ready".equals(status) || "working".equals(status);
    }

    /** A park made or ended by this change, read from the item's park before and after. */
    private static Optional<Change> park(Map<String, AttributeValue> before, Map<String, AttributeValue> after) {
        Instant since = Items.instant(after, AgentItems.PARKED_AT);
        Instant sinceBefore = Items.instant(before, AgentItems.PARKED_AT);
        Map<String, AttributeValue> parked = since != null ? after : before;
        String status = Items.str(after, AgentItems.STATUS);
        boolean ended = !"ready".equals(status) && !"working".equals(status);
        Instant resumed = ended ? Items.instant(after, AgentItems.T_AT) : Items.instant(after, AgentItems.RESUMED_AT);
        if (since != null && !since.equals(sinceBefore) || since == null && sinceBefore != null) {
            return Optional.of(new Park(AgentItems.team(after), AgentItems.agentId(after),
                    Items.str(after, AgentItems.NAME), Items.str(after, AgentItems.HOST),
                    Items.instant(parked, AgentItems.PARKED_AT), Items.instant(parked, AgentItems.PARKED_UNTIL),
                    Items.str(parked, AgentItems.PARK_REASON), since != null ? null
                    : resumed != null ? resumed : sinceBefore, since == null && ended));
        }
        return Optional.empty();
    }

    public static List<Change> decode(Map<String, AttributeValue> oldImage, Map<String, AttributeValue> newImage) {
        List<Change> changes = new ArrayList<>();
        Map<String, AttributeValue> before = oldImage == null ? Map.of() : oldImage;
        if (newImage == null || newImage.isEmpty()) {
            return changes;
        }
        String pk = Items.str(newImage, Keys.PK);
        String sk = Items.str(newImage, Keys.SK);
        if (pk == null || sk == null) {
            return changes;
        }
        if (AgentItems.isAgent(newImage)) {
            agentChanges(before, newImage, changes);
        } else if (HostLeaseStore.isLease(newImage)) {
            leaseChanges(before, newImage, changes);
        } else if (FleetStore.isFleet(newImage)) {
            fleetChanges(before, newImage, changes);
        } else if (TeamItems.isTeam(newImage)) {
            teamChanges(before, newImage, pk, changes);
        }
        return changes;
    }

    /** An agent item's changes: its status change, a restart request, a wait for a person, a stall, a rotation. */
    private static void agentChanges(Map<String, AttributeValue> before, Map<String, AttributeValue> newImage,
                                     List<Change> changes) {
        TransitionLog.carriedBy(before, newImage).or(() -> replayed(before, newImage)).ifPresent(c -> changes.add(
                new StatusChanged(c.team(), c.agentId(), Items.str(newImage, AgentItems.NAME),
                        Items.str(newImage, AgentItems.HOST), c.transition(), Items.str(newImage, AgentItems.TASK),
                        AgentItems.hostCause(before, newImage, c.transition()),
                        AgentItems.diedAt(before, newImage), Items.num(newImage, AgentItems.RESTARTS_LAST_HOUR),
                        AgentItems.hostRestart(before, newImage, c.transition()))));
        HostCommandStore.Command command = HostCommandStore.stampedCommand(newImage);
        HostCommandStore.Command previous = before.isEmpty() ? null : HostCommandStore.stampedCommand(before);
        if (command != null && (previous == null || !command.commandId().equals(previous.commandId()))) {
            changes.add(new RestartRequested(AgentItems.team(newImage), command));
        }
        Instant alerted = Items.instant(newImage, AgentItems.WAIT_ALERTED);
        Instant alertedBefore = Items.instant(before, AgentItems.WAIT_ALERTED);
        if (alerted != null && !alerted.equals(alertedBefore)) {
            changes.add(new AwaitingInput(AgentItems.team(newImage), AgentItems.agentId(newImage),
                    Items.str(newImage, AgentItems.NAME), Items.str(newImage, AgentItems.HOST), alerted,
                    Items.instant(newImage, AgentItems.WAIT_ALERTED_AT), null));
        } else if (alerted == null && alertedBefore != null) {
            Instant heard = Items.instant(newImage, AgentItems.HEARTBEAT_AT);
            Instant changed = Items.instant(newImage, AgentItems.T_AT);
            Instant resumed = heard == null || changed != null && changed.isAfter(heard) ? changed : heard;
            changes.add(new AwaitingInput(AgentItems.team(newImage), AgentItems.agentId(newImage),
                    Items.str(newImage, AgentItems.NAME), Items.str(newImage, AgentItems.HOST), alertedBefore,
                    Items.instant(before, AgentItems.WAIT_ALERTED_AT), resumed == null ? alertedBefore : resumed));
        }
        stall(before, newImage).ifPresent(changes::add);
        park(before, newImage).ifPresent(changes::add);
        long rotations = Items.num(newImage, AgentItems.ROTATIONS, 0);
        if (rotations > Items.num(before, AgentItems.ROTATIONS, 0)) {
            changes.add(new SessionRotation(AgentItems.team(newImage), AgentItems.agentId(newImage), rotations,
                    Items.instant(newImage, AgentItems.ROTATED_AT)));
        }
    }

    /** A host lease's changes: flagged expired, or restored. */
    private static void leaseChanges(Map<String, AttributeValue> before, Map<String, AttributeValue> newImage,
                                     List<Change> changes) {
        HostLeaseStore.Expiry expiry = HostLeaseStore.expiry(newImage);
        HostLeaseStore.Expiry previous = before.isEmpty() ? null : HostLeaseStore.expiry(before);
        if (expiry != null && (previous == null || !expiry.at().equals(previous.at()))) {
            changes.add(new HostLeaseExpired(expiry.team(), expiry.hostId(), expiry.agents(), expiry.count(),
                    expiry.lastRenewedAt(), expiry.at(), expiry.partOf(), expiry.leases()));
        }
        HostLeaseStore.Restore restore = HostLeaseStore.restored(newImage);
        HostLeaseStore.Restore restoredBefore = before.isEmpty() ? null : HostLeaseStore.restored(before);
        if (restore != null && (restoredBefore == null || !restore.expiredAt().equals(restoredBefore.expiredAt()))) {
            changes.add(new HostLeaseRestored(restore.team(), restore.hostId(), restore.expiredAt(),
                    restore.renewedAt(), restore.at(), restore.partOf()));
        }
    }

    /** The fleet item's changes: its hold raised, or resolved. */
    private static void fleetChanges(Map<String, AttributeValue> before, Map<String, AttributeValue> newImage,
                                     List<Change> changes) {
        Instant since = Items.instant(newImage, FleetStore.SINCE);
        Instant resolvedSince = Items.instant(newImage, FleetStore.RESOLVED_SINCE);
        Instant resolvedAt = Items.instant(newImage, FleetStore.RESOLVED_AT);
        if (since != null && !since.equals(Items.instant(before, FleetStore.SINCE))) {
            changes.add(fleet(newImage, since, null));
        } else if (since == null && resolvedAt != null
                && !resolvedAt.equals(Items.instant(before, FleetStore.RESOLVED_AT))) {
            changes.add(fleet(before.isEmpty() ? newImage : before, resolvedSince, resolvedAt));
        }
    }

    /** A team item's changes: its mass-stale hold raised, an admin key minted for it. */
    private static void teamChanges(Map<String, AttributeValue> before, Map<String, AttributeValue> newImage,
                                    String pk, List<Change> changes) {
        String team = Keys.idAfter("TEAM#", pk);
        Instant since = Items.instant(newImage, TeamItems.MASS_STALE_SINCE);
        if (since != null && !since.equals(Items.instant(before, TeamItems.MASS_STALE_SINCE))) {
            TeamHold hold = TeamItems.hold(newImage);
            changes.add(new MassStale(team, hold.alive(), hold.stale(),
                    Double.parseDouble(newImage.get(TeamItems.MASS_STALE_THRESHOLD).n()), since, hold.held(),
                    hold.why()));
        }
        Map<String, AttributeValue> minted = mintedKey(newImage);
        Map<String, AttributeValue> mintedBefore = mintedKey(before);
        if (minted != null && (mintedBefore == null
                || !Items.str(minted, "key").equals(Items.str(mintedBefore, "key")))) {
            changes.add(new AdminKeyMinted(team, Items.str(minted, "key"), Items.str(minted, "by"),
                    Items.instant(minted, "at")));
        }
    }
}
