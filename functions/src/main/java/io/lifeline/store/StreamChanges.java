package io.lifeline.store;

import io.lifeline.agent.Transition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What a change to the table means, read from a stream record's old and new images. Only these changes
 * become events; every other write (heartbeats that change nothing but liveness, history records, the
 * event log itself) means nothing here.
 */
public final class StreamChanges {

    public sealed interface Change permits StatusChanged, TaskReassigned, LeaderNotice, MassStale, SessionRotation,
            RestartRequested, AdminKeyMinted {
        String team();
    }

    /** An agent changed status; {@code currentTaskId} is the task it held at that moment, if any. */
    public record StatusChanged(String team, String agentId, String name, String hostId, Transition transition,
                                String currentTaskId) implements Change {
    }

    public record TaskReassigned(String team, String taskId, String fromAgentId, Instant at) implements Change {
    }

    public record LeaderNotice(String team, String leaderAgentId, InboxStore.Notice notice) implements Change {
    }

    public record MassStale(String team, int aliveAgents, int staleAgents, double threshold, Instant since)
            implements Change {
    }

    public record SessionRotation(String team, String agentId, long rotation, Instant at) implements Change {
    }

    /** A restart command was issued to a host (the restart channel's push side). */
    public record RestartRequested(String team, HostCommandStore.Command command) implements Change {
    }

    /** An operator minted an admin key for the team ({@code operatorKeyId}: the operator key that did). */
    public record AdminKeyMinted(String team, String keyId, String operatorKeyId, Instant at) implements Change {
    }

    private StreamChanges() {
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
            TransitionLog.carriedBy(before, newImage).ifPresent(c -> changes.add(new StatusChanged(c.team(),
                    c.agentId(), Items.str(newImage, AgentItems.NAME), Items.str(newImage, AgentItems.HOST),
                    c.transition(), Items.str(newImage, AgentItems.TASK))));
        } else if (sk.startsWith(Keys.TASK_PREFIX) && !pk.contains("#AGENT#")) {
            Instant at = Items.instant(newImage, TaskStore.REASSIGNED_AT);
            if (at != null && !at.equals(Items.instant(before, TaskStore.REASSIGNED_AT))) {
                changes.add(new TaskReassigned(Keys.idAfter("TEAM#", pk), Keys.idAfter(Keys.TASK_PREFIX, sk),
                        Items.str(newImage, TaskStore.REASSIGNED_FROM), at));
            }
        } else if (InboxStore.isNotice(newImage) && before.isEmpty()) {
            String[] scope = pk.split("#");
            changes.add(new LeaderNotice(scope[1], scope[3], InboxStore.toNotice(newImage)));
        } else if (TeamItems.isTeam(newImage)) {
            Instant since = Items.instant(newImage, TeamItems.MASS_STALE_SINCE);
            if (since != null && !since.equals(Items.instant(before, TeamItems.MASS_STALE_SINCE))) {
                changes.add(new MassStale(Keys.idAfter("TEAM#", pk),
                        (int) Items.num(newImage, TeamItems.MASS_STALE_ALIVE, 0),
                        (int) Items.num(newImage, TeamItems.MASS_STALE_STALE, 0),
                        Double.parseDouble(newImage.get(TeamItems.MASS_STALE_THRESHOLD).n()), since));
            }
        } else if (HostCommandStore.isCommand(newImage) && before.isEmpty()) {
            changes.add(new RestartRequested(pk.split("#")[1], HostCommandStore.toCommand(newImage)));
        } else if (sk.startsWith(Keys.KEY_REF_PREFIX) && pk.startsWith("TEAM#") && before.isEmpty()
                && Items.str(newImage, KeyStore.MINTED_BY) != null) {
            changes.add(new AdminKeyMinted(Keys.idAfter("TEAM#", pk), Keys.idAfter(Keys.KEY_REF_PREFIX, sk),
                    Items.str(newImage, KeyStore.MINTED_BY), Items.instant(newImage, "createdAt")));
        } else if (Keys.DATA_SK.equals(sk)) {
            long rotations = Items.num(newImage, AgentDataStore.SESSION_ROTATIONS, 0);
            if (rotations > Items.num(before, AgentDataStore.SESSION_ROTATIONS, 0)) {
                String[] scope = pk.split("#");
                changes.add(new SessionRotation(scope[1], scope[3], rotations,
                        Items.instant(newImage, AgentDataStore.LAST_ERROR_AT)));
            }
        }
        return changes;
    }
}
