package io.lifeline.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.store.HostCommandStore;
import io.lifeline.store.InboxStore;
import io.lifeline.store.StreamChanges;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which agent an event is about: the one whose page lists it (the event log's per-agent copy). */
class LifelineEventTest {
    private static final Instant AT = Instant.parse("2026-03-01T12:00:00Z");

    @Test
    void agentId_ofEachKindOfEvent_isTheAgentItIsAbout_orNoneForTheTeam() {
        assertEquals("a-1", EventCatalogue.of(new StreamChanges.SessionRotation("acme", "a-1", 2, AT)).agentId());
        assertEquals("a-2", EventCatalogue.of(new StreamChanges.TaskReassigned("acme", "t-1", "a-2", AT)).agentId());
        assertEquals("a-3", EventCatalogue.of(new StreamChanges.LeaderNotice("acme", "lead",
                new InboxStore.Notice("n-1", "a-3", "a-3 died", List.of("t-1"), AT))).agentId(),
                "a notice tells of the dead agent, not of the leader it is sent to");
        assertEquals("a-4", EventCatalogue.of(new StreamChanges.RestartRequested("acme", new HostCommandStore.Command(
                "c-1", "host-1", "restart", "a-4", 1, "dead", "pending", AT, AT.plusSeconds(300), null))).agentId());
        assertNull(EventCatalogue.of(new StreamChanges.MassStale("acme", 10, 6, 0.5, AT)).agentId());
    }
}
