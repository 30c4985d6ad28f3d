package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class HostIncidentsTest {
    static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

    static HostLease.Seen lease(String id, Instant renewed, Instant expired) {
        return new HostLease.Seen("acme", id, renewed, expired, Map.of(), Map.of());
    }

    static HostLease.Expired expired(HostLease.Seen lease, String... agents) {
        return new HostLease.Expired(lease, List.of(agents), Duration.ofSeconds(60));
    }

    @Test
    void furtherLeases_belongToTheirHost_onlyWhenTheHostsOwnLeaseExists() {
        Set<String> leases = Set.of("h", "h.2", "h.13", "10.0.0.5", "10.0.0.6", "db.2");
        assertEquals("h", HostIncidents.physicalHost("h.2", leases));
        assertEquals("h", HostIncidents.physicalHost("h.13", leases));
        assertEquals("h", HostIncidents.physicalHost("h", leases));
        assertEquals("10.0.0.5", HostIncidents.physicalHost("10.0.0.5", leases), "an address stays itself");
        assertEquals("db.2", HostIncidents.physicalHost("db.2", leases), "no lease db: its own host");
        assertEquals("h.1", HostIncidents.physicalHost("h.1", Set.of("h", "h.1")), "the daemon's numbers start at 2");
    }

    @Test
    void newlySilentLeasesOfOneHost_areOneGroup_theHostsOwnLeaseLeads_andNamesEveryAgent() {
        HostLease.Seen h = lease("h", NOW.minusSeconds(90), null);
        HostLease.Seen h2 = lease("h.2", NOW.minusSeconds(90), null);
        HostLease.Seen h3 = lease("h.3", NOW.minusSeconds(90), null);
        HostLease.Seen other = lease("other", NOW.minusSeconds(90), null);
        List<HostIncidents.Group> groups = HostIncidents.groups(List.of(h3, other, h2, h),
                List.of(expired(h3, "c"), expired(other, "x"), expired(h2, "b"), expired(h, "a", "a2")));
        assertEquals(2, groups.size());
        HostIncidents.Group g = groups.stream().filter(x -> x.physicalHost().equals("h")).findFirst().orElseThrow();
        assertNull(g.existingLead());
        assertEquals(List.of("h", "h.2", "h.3"), g.members().stream().map(e -> e.lease().hostId()).toList());
        HostIncidents.Flag lead = g.flag(g.members().get(0), null);
        assertNull(lead.partOf());
        assertEquals(List.of("a", "a2", "b", "c"), lead.agents());
        assertEquals(3, lead.leases());
        HostIncidents.Flag part = g.flag(g.members().get(1), "h");
        assertEquals("h", part.partOf());
        assertEquals(List.of("b"), part.agents());
    }

    @Test
    void aLeaseGoingSilentAfterItsHost_joinsTheIncidentStillOpen_notOneRestoredSince() {
        HostLease.Seen h = lease("h", NOW.minusSeconds(120), NOW.minusSeconds(30));
        HostLease.Seen h2 = lease("h.2", NOW.minusSeconds(80), null);
        assertEquals("h", HostIncidents.groups(List.of(h, h2), List.of(expired(h2, "b"))).get(0).existingLead());
        HostLease.Seen back = lease("h", NOW.minusSeconds(10), NOW.minusSeconds(30));
        assertNull(HostIncidents.groups(List.of(back, h2), List.of(expired(h2, "b"))).get(0).existingLead());
        assertEquals(Map.of("acme/h", NOW.minusSeconds(30)), HostIncidents.silences(List.of(h, h2)));
    }
}
