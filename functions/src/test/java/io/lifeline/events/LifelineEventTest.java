package io.lifeline.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Transition;
import io.lifeline.agent.Trigger;
import io.lifeline.app.AgentFlaps;
import io.lifeline.app.AlertBursts;
import io.lifeline.app.EventCatalogue;
import io.lifeline.app.LifelineEvent;
import io.lifeline.app.StallBursts;
import io.lifeline.app.StallDigest;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.StallWindowStore;
import io.lifeline.store.outbox.StreamChanges;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Which agent an event is about: the one whose page lists it (the event log's per-agent copy), for every type. */
@Tag("unit")
class LifelineEventTest {
    private static final Instant AT = Instant.parse("2026-03-01T12:00:00Z");

    /** One change of every kind the stream decodes, each type of the catalogue at least once. */
    private static final List<StreamChanges.Change> EVERY_KIND = List.of(
            new StreamChanges.StatusChanged("acme", "a-0", "A", "host-1",
                    new Transition(3, AgentStatus.READY, AgentStatus.DEAD, Trigger.HEARTBEAT_EXPIRED, "silent", AT),
                    null),
            new StreamChanges.SessionRotation("acme", "a-1", 2, AT),
            new StreamChanges.TaskReassigned("acme", "t-1", "a-2", AT),
            new StreamChanges.LeaderNotice("acme", "lead", new InboxStore.Notice("n-1", "a-3", "a-3 died",
                    List.of("t-1"), AT)),
            new StreamChanges.RestartRequested("acme", new HostCommandStore.Command("c-1", "host-1", "restart", "a-4",
                    1, "dead", "pending", AT, AT.plusSeconds(300), null)),
            new StreamChanges.MassStale("acme", 10, 6, 0.5, AT),
            new StreamChanges.AdminKeyMinted("acme", "k-1", "op-1", AT),
            new StreamChanges.HostLeaseExpired("acme", "host-1", List.of("a-5"), 1, AT.minusSeconds(90), AT),
            new StreamChanges.HostLeaseRestored("acme", "host-1", AT, AT.plusSeconds(30), AT.plusSeconds(31)),
            new StreamChanges.FleetMassStale(70, 60, 0.5, List.of("t1"), 30, AT, null),
            new StreamChanges.FleetMassStale(70, 60, 0.5, List.of("t1"), 30, AT, AT.plusSeconds(60)),
            new StreamChanges.AwaitingInput("acme", "a-6", "A6", null, AT, AT.plusSeconds(300), null),
            new StreamChanges.AwaitingInput("acme", "a-6", "A6", null, AT, AT.plusSeconds(300), AT.plusSeconds(400)),
            new StreamChanges.Stall("acme", "a-7", "A7", null, AT, "no progress reported", AT.minusSeconds(121), null,
                    false),
            new StreamChanges.Stall("acme", "a-7", "A7", null, AT, "no progress reported", AT.minusSeconds(121),
                    AT.plusSeconds(30), false),
            new StreamChanges.Park("acme", "a-8", "A8", null, AT, AT.plusSeconds(1800), "usage limit", null, false),
            new StreamChanges.Park("acme", "a-8", "A8", null, AT, AT.plusSeconds(1800), "usage limit",
                    AT.plusSeconds(1810), false));

    @Test
    void agentId_ofEachKindOfEvent_isTheAgentItIsAbout_orNoneForTheTeam() {
        List<String> about = EVERY_KIND.stream().map(c -> String.valueOf(EventCatalogue.of(c).agentId())).toList();
        assertEquals(List.of("a-0", "a-1", "a-2", "a-3", "a-4", "null", "null", "null", "null", "null", "null", "a-6",
                "a-6", "a-7", "a-7", "a-8", "a-8"), about, "a notice tells of the dead agent (a-3), not of the leader it is sent to");
        assertNull(EventCatalogue.of(new StreamChanges.MassStale("acme", 10, 6, 0.5, AT)).agentId());
    }

    @Test
    void everyKind_coversEveryTypeOfTheCatalogue() throws IllegalAccessException {
        Set<String> catalogue = new TreeSet<>();
        for (Field f : EventCatalogue.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                catalogue.add((String) f.get(null));
            }
        }
        Set<String> produced = EVERY_KIND.stream().map(c -> EventCatalogue.of(c).type())
                .collect(Collectors.toCollection(TreeSet::new));
        // The burst's events come from the outbox's window counts and the digest flow, not from a stream change.
        AlertBursts.Settings bursts = new AlertBursts.Settings(1,
                Duration.ofSeconds(60), 20);
        AlertWindowStore.Window w = new AlertWindowStore.Window(AT, 2, 2, "k",
                true, Map.of("acme", 2), Map.of("-", 2), Map.of("heartbeat_expired", 2),
                List.of("acme/a-0"));
        // A burst of stalls' own three, counted beside the deaths.
        StallDigest.Counts stalls = new StallDigest.Counts(2, 1, 1, Map.of("acme", 2), 1, Map.of("-", 2), 1,
                List.of("acme/a-0"));
        for (LifelineEvent e : List.of(AlertBursts.started("acme", AT, bursts, AT), AlertBursts.digest(w, bursts, null, AT),
                AlertBursts.resolved(w, AT), StallBursts.started("acme", AT, bursts, AT),
                StallDigest.digest(AT, stalls, bursts, null, AT),
                StallBursts.resolved(AT, new StallWindowStore.Totals(2, 2, 1), AT))) {
            produced.add(e.type());
            assertNull(e.agentId(), e.type() + " is about no one agent");
            assertEquals("*", e.team());
        }
        // Flapping's: the outbox's flag (about the agent, in its team) and the digest flow's resolve.
        AgentFlaps.Settings flapping = new AgentFlaps.Settings(4,
                Duration.ofSeconds(600), Duration.ofSeconds(600), Duration.ofSeconds(15));
        StreamChanges.StatusChanged death = (StreamChanges.StatusChanged) EVERY_KIND.get(0);
        for (LifelineEvent e : List.of(AgentFlaps.flapping(death, AT, 5, flapping),
                AgentFlaps.resolved("acme", "a-0", AT, AT.plusSeconds(60), "ready", flapping, AT.plusSeconds(660)))) {
            produced.add(e.type());
            assertEquals("a-0", e.agentId(), e.type());
            assertEquals("acme", e.team());
        }
        assertEquals(catalogue, produced);
    }
}
