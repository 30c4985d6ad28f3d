package io.lifeline.local.contract.sweep;

import static io.lifeline.local.stack.Team.team;
import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.stack.Team;
import io.lifeline.local.stack.TestStack;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The deployment-wide guard through the template's SweepFunction and the outbox, on the engine, with the
 * template's defaults (fleet threshold 0.5, at least 20 alive; per team 0.5 from 4 alive) and the test clock: a
 * brownout that silences 30 teams of 2 while a team of 10 still beats marks nobody dead and raises one
 * FleetMassStaleSuspected, resolved once when the beats return; one team of 2 silent alone still dies.
 */
@Timeout(120)
@Tag("contract")
class FleetSelfPreservationTest {
    private static final Instant T0 = TestStack.START;
    private static final TestStack.Opened STACKS = new TestStack.Opened();
    private static final String BIG = "big";

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    private static void beat(TestStack s, Team t) {
        for (String id : t.agents()) {
            ok(s.send("heartbeat", t.key(), Map.of("team", t.name(), "agentId", id), null, "{}"));
        }
    }

    private static String status(TestStack s, Team t, String id) {
        return s.agentItem(t.name(), id).get("status").s();
    }

    private static List<JsonNode> onBus(TestStack s, String type) {
        return s.bus.delivered().stream().filter(d -> d.detailType().equals(type))
                .map(d -> d.event().path("detail")).toList();
    }

    /** A team of 10 and 30 teams of 2, all joined at T0. */
    private static List<Team> fleet(TestStack s, Team[] big) {
        big[0] = team(s, BIG, 10);
        List<Team> small = new ArrayList<>();
        for (int t = 0; t < 30; t++) {
            small.add(team(s, String.format("small%02d", t), 2));
        }
        return small;
    }

    @Test
    void brownout_thirtyTeamsOfTwoSilent_marksNoneDead_raisesOneFleetEvent_resolvesOnce() throws Exception {
        TestStack s = STACKS.open();
        Team[] big = new Team[1];
        List<Team> small = fleet(s, big);

        // Only the big team's beats arrive from here on; sweeps well past every small agent's deadline and grace.
        for (int sec = 75; sec <= 180; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, big[0]);
            assertEquals(List.of(), s.sweep(), "held at " + sec + " s");
        }
        for (Team t : small) {
            for (String id : t.agents()) {
                assertEquals("ready", status(s, t, id), t.name() + "/" + id);
            }
        }
        assertNotNull(s.item("FLEET", "FLEET").get("since"), "the fleet's flag stands while it holds");
        s.pump.drain();
        List<JsonNode> raised = onBus(s, "FleetMassStaleSuspected");
        assertEquals(1, raised.size(), "one event for the hold, however many sweeps it lasts");
        JsonNode d = raised.get(0);
        assertEquals("*", d.get("team").asText());
        assertEquals("held", d.get("state").asText());
        assertEquals(70, d.get("aliveAgents").asInt());
        assertEquals(60, d.get("staleAgents").asInt());
        assertEquals(30, d.get("teamCount").asInt());
        assertEquals(25, d.get("teams").size(), "the item names at most 25 teams");
        assertEquals(List.of(), onBus(s, "MassStaleSuspected"), "no team raises its own flag under the fleet's");
        assertEquals(0, onBus(s, "AgentStatusChanged").stream().filter(e -> e.path("to").asText().equals("dead"))
                .count());
        // A named team's events route shows why its agents were not marked dead.
        Team first = small.get(0);
        JsonNode log = ok(s.send("events", first.key(), Map.of("team", first.name()),
                Map.of("type", "FleetMassStaleSuspected"), null)).body();
        assertEquals(1, log.get("count").asInt());

        // The beats come back: the next sweep does not hold, and the flag comes down with one resolve.
        s.clock.set(T0.plusSeconds(190));
        beat(s, big[0]);
        small.forEach(t -> beat(s, t));
        assertEquals(List.of(), s.sweep());
        assertNull(s.item("FLEET", "FLEET").get("since"));
        s.pump.drain();
        List<JsonNode> resolved = onBus(s, "FleetMassStaleResolved");
        assertEquals(1, resolved.size());
        assertEquals(d.get("since").asText(), resolved.get(0).get("since").asText(), "the resolve names its hold");
        assertEquals("resolved", resolved.get(0).get("state").asText());
        s.clock.set(T0.plusSeconds(205));
        beat(s, big[0]);
        small.forEach(t -> beat(s, t));
        s.sweep();
        s.pump.drain();
        assertEquals(1, onBus(s, "FleetMassStaleResolved").size(), "one resolve per hold");
    }

    private static JsonNode settings(TestStack s, Team t, String key) {
        return ok(s.send("get-settings", key, Map.of("team", t.name()), null, null)).body();
    }

    /**
     * The fleet-wide hold as each team reads it, and a team's release of it: each held team's settings carry the
     * hold with its own counts alone (the steady team, none held, carries none); the first small team's admin releases
     * it, and its two silent agents die over the next sweeps while every other team stays held; when the beats come
     * back the hold clears and so do the shares.
     */
    @Test
    void fleetHold_eachTeamReadsItsOwnShare_aTeamsReleaseFreesItAlone_thenTheHoldClears() throws Exception {
        TestStack s = STACKS.open();
        Team[] big = new Team[1];
        List<Team> small = fleet(s, big);
        for (int sec = 75; sec <= 120; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, big[0]);
            assertEquals(List.of(), s.sweep(), "held at " + sec + " s");
        }
        String since = s.item("FLEET", "FLEET").get("since").n();
        Team freed = small.get(0);
        Team held = small.get(1);
        JsonNode share = settings(s, held, s.key(held.name(), Scope.READ)).get("fleetHold");
        assertNotNull(share, "a held team reads the fleet-wide hold on its settings");
        assertTrue(share.get("held").asBoolean());
        assertEquals(2, share.get("aliveAgents").asInt(), "its own agents, not the fleet's 70");
        assertEquals(2, share.get("staleAgents").asInt(), "its own silent agents, not the fleet's 60");
        assertEquals(Instant.ofEpochMilli(Long.parseLong(since)).toString(), share.get("since").asText());
        assertTrue(share.get("why").asText().contains("across the whole fleet"), share.toString());
        assertNull(settings(s, big[0], big[0].key()).get("fleetHold"), "a team with nobody held has no share");

        // A read key may not release; the first small team's admin does: 200, and the answer says so.
        assertEquals(403, s.send("release-hold", s.key(freed.name(), Scope.READ), Map.of("team", freed.name()), null,
                null).status());
        JsonNode released = ok(s.send("release-hold", freed.key(), Map.of("team", freed.name()), null, null)).body();
        assertEquals(false, released.get("fleetHold").get("held").asBoolean(), released.toString());
        assertNotNull(released.get("fleetHold").get("releasedAt"), released.toString());
        assertEquals("NO_HOLD", s.send("release-hold", freed.key(), Map.of("team", freed.name()), null, null).code(),
                "released already: nothing left to release");

        // The next sweeps judge the freed team's silent agents as if no fleet hold stood; every other team stays held.
        Set<String> dead = new HashSet<>();
        for (int sec = 135; sec <= 180; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, big[0]);
            dead.addAll(s.sweep());
        }
        assertEquals(Set.of(freed.name() + "/" + freed.agents().get(0), freed.name() + "/" + freed.agents().get(1)),
                dead, "the released team's agents die; nobody else does");
        assertEquals(since, s.item("FLEET", "FLEET").get("since").n(), "the fleet-wide hold still stands");
        assertTrue(settings(s, held, held.key()).get("fleetHold").get("held").asBoolean(), "the others stay held");
        assertEquals("ready", status(s, held, held.agents().get(0)));

        // The beats come back: the hold clears, and so does every team's share of it.
        s.clock.set(T0.plusSeconds(190));
        beat(s, big[0]);
        small.stream().filter(t -> t != freed).forEach(t -> beat(s, t));
        assertEquals(List.of(), s.sweep());
        assertNull(s.item("FLEET", "FLEET").get("since"));
        assertNull(settings(s, held, held.key()).get("fleetHold"), "the share goes with the hold");
        assertNull(settings(s, freed, freed.key()).get("fleetHold"));
        assertEquals("NO_HOLD", s.send("release-hold", held.key(), Map.of("team", held.name()), null, null).code());
    }

    /**
     * The operator's release of the fleet-wide hold itself: a team's key may not; the operator's may, once. From the
     * next sweep every team is judged by its own guard (teams of 2, under its minimum, die as judged), the shares go,
     * and the flag stays up until the silence ends: one resolve, no second raise.
     */
    @Test
    void operatorReleasesTheFleetHold_everyTeamJudgedByItsOwnGuard_oneResolveWhenTheSilenceEnds() throws Exception {
        TestStack s = STACKS.open();
        Team[] big = new Team[1];
        List<Team> small = fleet(s, big);
        for (int sec = 75; sec <= 120; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, big[0]);
            assertEquals(List.of(), s.sweep(), "held at " + sec + " s");
        }
        assertEquals("INSUFFICIENT_SCOPE", s.send("release-fleet-hold", big[0].key(), Map.of(), null, null).code());
        JsonNode released = ok(s.send("release-fleet-hold", s.operatorKey, Map.of(), null, null)).body()
                .get("fleetHold");
        assertEquals(false, released.get("held").asBoolean());
        assertEquals(60, released.get("staleAgents").asInt(), "the operator's view: the whole fleet");
        assertEquals(30, released.get("teamCount").asInt());
        assertEquals("NO_HOLD", s.send("release-fleet-hold", s.operatorKey, Map.of(), null, null).code());

        Set<String> dead = new HashSet<>();
        s.clock.set(T0.plusSeconds(135));
        beat(s, big[0]);
        dead.addAll(s.sweep());
        assertNotNull(s.item("FLEET", "FLEET").get("since"), "the flag stays up while the silence lasts");
        assertNull(settings(s, small.get(3), small.get(3).key()).get("fleetHold"), "no team is held by it any more");
        for (int sec = 150; sec <= 195; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, big[0]);
            dead.addAll(s.sweep());
        }
        assertEquals(60, dead.size(), "every silent agent of the small teams, judged by its own team's guard");
        assertNull(s.item("FLEET", "FLEET").get("since"), "the silence is over: the flag comes down");
        s.pump.drain();
        assertEquals(1, onBus(s, "FleetMassStaleSuspected").size(), "no second raise");
        assertEquals(1, onBus(s, "FleetMassStaleResolved").size());
    }

    @Test
    void oneTeamOfTwoSilentAlone_bothDead() throws Exception {
        TestStack s = STACKS.open();
        Team[] big = new Team[1];
        List<Team> small = fleet(s, big);
        Team silent = small.get(7);
        Set<String> dead = new HashSet<>();
        for (int sec = 75; sec <= 120; sec += 15) {
            s.clock.set(T0.plusSeconds(sec));
            beat(s, big[0]);
            small.stream().filter(t -> t != silent).forEach(t -> beat(s, t));
            dead.addAll(s.sweep());
        }
        assertEquals(Set.of(silent.name() + "/" + silent.agents().get(0), silent.name() + "/" + silent.agents().get(1)),
                dead);
        s.pump.drain();
        assertEquals(List.of(), onBus(s, "FleetMassStaleSuspected"));
        assertTrue(s.item("FLEET", "FLEET").isEmpty(), "no hold, no fleet item");
    }
}
