package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.lifeline.client.model.TeamSettings;
import java.time.Instant;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The team's hold as {@code lifeline status} and {@code settings show} print it: how many agents, since when and why
 * while held, with the release; once released, that; nothing without a flag or for a flag one failure domain
 * explained (its agents die: no hold); a fleet-wide hold first, as the team's own share of it.
 */
@Tag("unit")
class HoldLinesTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:05:00Z");
    private static final Instant SINCE = Instant.parse("2026-03-01T12:01:45Z");

    @Test
    void held_saysHowManySinceWhenWhy_andHowToRelease() {
        TeamSettings.Hold h = new TeamSettings.Hold(true, 10, 8, SINCE,
                "the silence spans 8 failure domains: Lifeline's own trouble could explain it", null);
        assertEquals("self-preservation hold: 8 of 10 agents silent since 2026-03-01T12:01:45Z (3m ago)\n"
                + "  why: the silence spans 8 failure domains: Lifeline's own trouble could explain it\n"
                + "  none of them is marked dead while it holds; release it: lifeline settings release-hold",
                TeamCommands.holdLines(h, NOW));
    }

    @Test
    void released_saysSo() {
        TeamSettings.Hold h = new TeamSettings.Hold(false, 10, 8, SINCE, "spans", NOW.minusSeconds(20));
        assertEquals("self-preservation hold released at 2026-03-01T12:04:40Z: the 8 agents silent since "
                + "2026-03-01T12:01:45Z are marked dead as judged", TeamCommands.holdLines(h, NOW));
    }

    @Test
    void noFlag_orOneDomainExplained_nothing() {
        assertEquals("", TeamCommands.holdLines(null, NOW));
        assertEquals("", TeamCommands.holdLines(new TeamSettings.Hold(false, 11, 10, SINCE,
                "one source 203.0.113.7 went silent", null), NOW));
    }

    @Test
    void fleetWide_saysLifelineMayBeDeaf_theTeamsOwnCount_andHowToRelease_beforeTheTeamsOwnFlag() {
        TeamSettings.Hold share = new TeamSettings.Hold(true, 3, 2, SINCE, "too many agents across the whole fleet"
                + " fell silent at once", null);
        TeamSettings t = new TeamSettings("t", null, null, null, null, null, "source",
                new TeamSettings.Hold(true, 10, 8, SINCE, "spans", null), share);
        assertEquals("fleet-wide self-preservation hold: Lifeline may be unable to hear agents across the fleet; 2 of "
                + "this team's 3 agents are held, since 2026-03-01T12:01:45Z (3m ago)\n"
                + "  why: too many agents across the whole fleet fell silent at once\n"
                + "  release this team from it (its silent agents are then marked dead as judged): "
                + "lifeline settings release-hold", TeamCommands.holdsOf(t, NOW));
    }

    @Test
    void fleetWideReleased_saysSo_andTheTeamsOwnHoldStillShows() {
        TeamSettings.Hold released = new TeamSettings.Hold(false, 3, 2, SINCE, "fleet", NOW.minusSeconds(20));
        assertEquals("released from the fleet-wide hold at 2026-03-01T12:04:40Z: this team's 2 silent agents are "
                + "marked dead as judged, while the hold (since 2026-03-01T12:01:45Z) stands for the rest of the fleet",
                TeamCommands.holdsOf(new TeamSettings("t", null, null, null, null, null, "source", null, released),
                        NOW));
        TeamSettings.Hold own = new TeamSettings.Hold(true, 10, 8, SINCE, "spans", null);
        assertEquals(TeamCommands.holdLines(own, NOW), TeamCommands.holdsOf(new TeamSettings("t", null, null, null,
                null, null, "source", own, released), NOW), "a held flag of its own comes before a released share");
        assertEquals("", TeamCommands.holdsOf(new TeamSettings("t", null, null, null, null, null, "source", null,
                null), NOW));
    }

    @Test
    void theSettingsAnswer_readsItsFleetShare() throws Exception {
        ObjectMapper sdk = new ObjectMapper().registerModule(new JavaTimeModule())
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        TeamSettings t = sdk.readValue("{\"team\":\"t\",\"failureDomains\":\"source\",\"fleetHold\":{\"held\":true,"
                + "\"aliveAgents\":3,\"staleAgents\":2,\"since\":\"2026-03-01T12:01:45Z\",\"why\":\"fleet\"}}",
                TeamSettings.class);
        assertEquals(new TeamSettings.Hold(true, 3, 2, SINCE, "fleet", null), t.fleetHold());
        assertNull(t.hold(), "no flag of its own");
    }
}
