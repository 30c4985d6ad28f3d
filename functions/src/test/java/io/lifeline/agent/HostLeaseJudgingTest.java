package io.lifeline.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link HostLease} over hand-built values: the lease key and cached answer encodings, how a hosted agent is
 * judged from its item and its lease beat, which cached answers no longer hold, and when a lease has expired.
 * Pure: no store, no clock.
 */
@Tag("unit")
class HostLeaseJudgingTest {
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final Duration MINUTE = Duration.ofSeconds(60);

    private static SweepPlan.Observed item(Instant heartbeat, Instant deadline, int misses) {
        return new SweepPlan.Observed("t", "a1", AgentStatus.READY, heartbeat, deadline, misses, 2, 7, null,
                new SweepPlan.Hosted("h1", HostLease.key("a1"), null, MINUTE, null));
    }

    @Test
    void key_isSixUrlSafeCharacters_stablePerId_differentForAnother() {
        String k = HostLease.key("agent-1");
        assertEquals(HostLease.KEY_CHARS, k.length());
        assertTrue(k.matches("[A-Za-z0-9_-]{6}"), k);
        assertEquals(k, HostLease.key("agent-1"));
        assertNotEquals(k, HostLease.key("agent-2"));
    }

    @Test
    void cached_roundTripsThroughItsWire_andRefusesWhatItCannotCache() {
        HostLease.Cached c = new HostLease.Cached(AgentStatus.WORKING, Duration.ofSeconds(604_800));
        assertEquals("PXC1", c.wire(), "1,209,601 in base 36: the longest answer is 4 characters");
        assertEquals(Optional.of(c), HostLease.Cached.parse("PXC1"));
        assertEquals(Optional.of(c), HostLease.Cached.parse("w604800"), "the older form is still read");
        assertEquals(Optional.of(new HostLease.Cached(AgentStatus.READY, MINUTE)), HostLease.Cached.parse("r60"));
        assertEquals(Optional.empty(), HostLease.Cached.parse("x60"));
        assertEquals(Optional.empty(), HostLease.Cached.parse("r"));
        assertEquals(Optional.empty(), HostLease.Cached.parse("r0"));
        assertEquals(Optional.empty(), HostLease.Cached.parse("1"), "0 s, working");
        assertEquals(Optional.empty(), HostLease.Cached.parse("3c"), "lower case is the older form's letters only");
        assertEquals(Optional.empty(), HostLease.Cached.parse(""));
        for (AgentStatus st : List.of(AgentStatus.READY, AgentStatus.WORKING)) {
            for (long sec : new long[] {2, 59, 60, 61, 3_600, 86_400, 604_800}) {
                HostLease.Cached x = new HostLease.Cached(st, Duration.ofSeconds(sec));
                assertEquals(Optional.of(x), HostLease.Cached.parse(x.wire()), x::toString);
                assertTrue(x.wire().length() <= 4, x::wire);
            }
        }
        assertEquals(Optional.empty(), HostLease.Cached.of(AgentStatus.DEAD, MINUTE, null), "not alive");
        assertEquals(Optional.empty(), HostLease.Cached.of(AgentStatus.READY, MINUTE, "every:5m"), "scheduled");
        assertEquals(Optional.empty(), HostLease.Cached.of(AgentStatus.READY, Duration.ofMillis(1500), null));
        assertEquals("3C", HostLease.Cached.of(AgentStatus.READY, MINUTE, null).orElseThrow().wire());
    }

    @Test
    void judged_leaseBeatLaterThanItem_movesHeartbeatAndDeadline() {
        SweepPlan.Observed j = Liveness.throughLease(item(NOW.minusSeconds(300), NOW.minusSeconds(240), 0), MINUTE, null,
                NOW.minusSeconds(10), null);
        assertEquals(NOW.minusSeconds(10), j.heartbeatAt());
        assertEquals(NOW.plusSeconds(50), j.deadline());
    }

    @Test
    void judged_itemLaterThanLeaseBeat_keepsTheItemsSignOfLifeAndLaterDeadline() {
        // A direct beat with nextHeartbeatWithinSeconds: its deadline is later than lease beat + stale-after.
        SweepPlan.Observed j = Liveness.throughLease(item(NOW.minusSeconds(5), NOW.plusSeconds(600), 0), MINUTE, null,
                NOW.minusSeconds(20), null);
        assertEquals(NOW.minusSeconds(5), j.heartbeatAt());
        assertEquals(NOW.plusSeconds(600), j.deadline());
    }

    @Test
    void judged_missesCountedBeforeTheLeaseBeat_areVoided_afterIt_stand() {
        Instant beat = NOW.minusSeconds(80);
        assertEquals(0, Liveness.throughLease(item(null, null, 1), MINUTE, null, beat, beat.minusSeconds(30)).misses(),
                "heard after the miss");
        assertEquals(1, Liveness.throughLease(item(null, null, 1), MINUTE, null, beat, beat.plusSeconds(75)).misses(),
                "a hung agent's lease beat, re-reported after the miss");
        assertEquals(1, Liveness.throughLease(item(null, null, 1), MINUTE, null, beat, null).misses(), "no miss time");
    }

    @Test
    void judged_scheduledAgent_isJudgedFromItsItemAlone() {
        SweepPlan.Observed j = Liveness.throughLease(item(NOW.minusSeconds(100), null, 0), MINUTE, "every:5m",
                NOW.minusSeconds(1), null);
        assertEquals(NOW.minusSeconds(100), j.heartbeatAt());
        assertEquals(null, j.deadline(), "an at: agent past its slot keeps having no deadline");
    }

    private static HostLease.Linked linked(String id, String host, AgentStatus status) {
        return new HostLease.Linked("t", id, host, status, MINUTE, null);
    }

    private static HostLease.Seen lease(String host, Instant renewed, Map<String, String> answers) {
        return new HostLease.Seen("t", host, renewed, null, Map.of(HostLease.key("a1"), renewed.toEpochMilli(),
                HostLease.key("a2"), renewed.toEpochMilli()), answers);
    }

    @Test
    void staleAnswers_dropsAnswersOfAgentsNotAliveElsewhereOrInAnotherStatus_keepsTrueOnes() {
        String k1 = HostLease.key("a1");
        String k2 = HostLease.key("a2");
        String k3 = HostLease.key("a3");
        String k4 = HostLease.key("a4");
        HostLease.Seen seen = lease("h1", NOW, Map.of(k1, "r60", k2, "r60", k3, "r60", k4, "r60"));
        // A true answer in either wire form is kept: no churn of exact writes when the form changed.
        HostLease.Seen newer = lease("h9", NOW, Map.of(k1, "3C"));
        assertEquals(List.of(), HostLease.staleAnswers(List.of(newer), List.of(linked("a1", "h9", AgentStatus.READY))));
        assertEquals(1, HostLease.staleAnswers(List.of(newer), List.of(linked("a1", "h9", AgentStatus.WORKING))).size());
        List<HostLease.StaleAnswer> stale = HostLease.staleAnswers(List.of(seen), List.of(
                linked("a1", "h1", AgentStatus.READY), // holds
                linked("a2", "h1", AgentStatus.DEAD), // died elsewhere (a fail report)
                linked("a3", "h2", AgentStatus.READY), // moved to another host
                linked("a4", "h1", AgentStatus.WORKING))); // claimed a task
        assertEquals(List.of(k2, k3, k4), stale.stream().map(HostLease.StaleAnswer::key).sorted(
                (a, b) -> List.of(k2, k3, k4).indexOf(a) - List.of(k2, k3, k4).indexOf(b)).toList());
        stale.forEach(s -> assertEquals("r60", s.seen()));
    }

    @Test
    void expired_onlyStrictlyAfterTheShortestStaleAfter_onlyWithAliveAgents_notWhenTeamPausedOrFlagged() {
        HostLease.Seen seen = lease("h1", NOW.minusSeconds(60), Map.of());
        List<HostLease.Linked> agents = List.of(linked("a1", "h1", AgentStatus.READY),
                linked("a2", "h1", AgentStatus.READY));
        assertEquals(List.of(), HostLease.expired(List.of(seen), agents, Map.of(), NOW), "exactly at: not yet");
        List<HostLease.Expired> e = HostLease.expired(List.of(seen), agents, Map.of(), NOW.plusMillis(1));
        assertEquals(1, e.size());
        assertEquals(List.of("a1", "a2"), e.get(0).agents());
        assertEquals(List.of(), HostLease.expired(List.of(seen), List.of(linked("a1", "h1", AgentStatus.DEAD)),
                Map.of(), NOW.plusSeconds(600)), "no alive agent on it");
        assertEquals(List.of(), HostLease.expired(List.of(seen), agents, Map.of("t", new TeamSettings("t", null,
                NOW.plusSeconds(3600), "deploy", null, null)), NOW.plusSeconds(600)), "team paused");
        HostLease.Seen flagged = new HostLease.Seen("t", "h1", seen.renewedAt(), NOW, seen.beats(), Map.of());
        assertEquals(List.of(), HostLease.expired(List.of(flagged), agents, Map.of(), NOW.plusSeconds(600)));
    }

    @Test
    void restored_isAFlaggedLeaseRenewedAfterItsFlag_notAnUnflaggedOne_norOneSilentSince() {
        HostLease.Seen healthy = new HostLease.Seen("t", "h1", NOW, null, Map.of(), Map.of());
        HostLease.Seen silent = new HostLease.Seen("t", "h2", NOW.minusSeconds(90), NOW.minusSeconds(20), Map.of(),
                Map.of());
        HostLease.Seen back = new HostLease.Seen("t", "h3", NOW, NOW.minusSeconds(20), Map.of(), Map.of());
        HostLease.Seen sameInstant = new HostLease.Seen("t", "h4", NOW, NOW, Map.of(), Map.of());
        assertEquals(List.of(back), HostLease.restored(List.of(healthy, silent, back, sameInstant)));
    }
}
