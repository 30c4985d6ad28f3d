package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.agent.Trigger;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.agent.ReviveTransitions;
import io.lifeline.store.sweep.SweepStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Races the store decides by its conditions, not by timing: each test interleaves the two writers by hand (one reads,
 * the other writes, then the first's conditional write), so the losing write always meets the winner's item. No
 * threads, no sleeps. The sweep's read is a real scan of the live table; its write carries the basis it read.
 */
@Tag("store")
class AgentStoreRaceTest {
    /** One table pair for the class, closed after its last test. */
    @AutoClose
    static final StoreFixture f = new StoreFixture();

    /** A ready agent the sweep finds past its deadline: read by the sweep's scan. */
    private static SweepPlan.Observed staleAndRead(String team, String agentId) {
        f.ready(team, agentId);
        f.clock.advance(StoreFixture.STALE_AFTER.multipliedBy(3));
        return f.sweepRead(team, agentId);
    }

    @Test
    void markDead_withNothingSinceTheSweepsRead_killsOnceAndStampsHeartbeatExpired() {
        String team = StoreFixture.team("quiet");
        SweepPlan.Observed seen = staleAndRead(team, "a");
        long seq = f.seq(team, "a");

        assertEquals(SweepStore.Write.DONE, f.sweepKills(seen));
        assertEquals(SweepStore.Write.RACE_LOST, f.sweepKills(seen), "the same read cannot kill twice");

        Agent dead = f.agents.require(team, "a");
        assertEquals(AgentStatus.DEAD, dead.status());
        assertEquals(seq + 1, dead.lastTransition().seq());
        assertEquals(Trigger.HEARTBEAT_EXPIRED, dead.lastTransition().trigger());
    }

    @Test
    void markDead_afterAHeartbeatLandedSinceTheSweepsRead_isRefusedAndTheAgentStaysAlive() {
        String team = StoreFixture.team("beat");
        SweepPlan.Observed seen = staleAndRead(team, "a");
        long seq = f.seq(team, "a");
        Agent beaten = f.beat(team, "a");
        assertEquals(seen.beats() + 1, beaten.beats());

        assertEquals(SweepStore.Write.RACE_LOST, f.sweepKills(seen));

        Agent after = f.agents.require(team, "a");
        assertEquals(AgentStatus.READY, after.status());
        assertEquals(seq, f.seq(team, "a"), "no transition stamped");
        assertEquals(beaten, after, "the heartbeat's item stands as it wrote it");
    }

    @Test
    void recordMiss_afterAHeartbeatLandedSinceTheSweepsRead_isRefusedAndCountsNoMiss() {
        String team = StoreFixture.team("miss");
        SweepPlan.Observed seen = staleAndRead(team, "a");
        Agent beaten = f.beat(team, "a");

        assertEquals(SweepStore.Write.RACE_LOST, f.sweeps.recordMiss(seen, seen.misses() + 1, f.tick(),
                StoreFixture.SPACING));

        assertEquals(beaten, f.agents.require(team, "a"));
        assertEquals(0, beaten.consecutiveMisses());
    }

    @Test
    void heartbeat_afterTheSweepsDeath_answersRejoinRequiredAndWritesNothing() {
        String team = StoreFixture.team("late");
        SweepPlan.Observed seen = staleAndRead(team, "a");
        assertEquals(SweepStore.Write.DONE, f.sweepKills(seen));
        Agent dead = f.agents.require(team, "a");

        LifelineException e = assertThrows(LifelineException.class, () -> f.beat(team, "a"));

        assertEquals("REJOIN_REQUIRED", e.code());
        assertEquals(AgentStatus.DEAD, e.currentStatus());
        assertEquals(dead, f.agents.require(team, "a"));
    }

    @Test
    void markDead_afterAHostLeaseRenewalSinceTheSweepsRead_isRefusedAndTheAgentStaysAlive() {
        String team = StoreFixture.team("hosted");
        String host = "host-1";
        f.ready(team, "a");
        f.beatsThrough(team, "a", host);
        f.clock.advance(StoreFixture.STALE_AFTER.multipliedBy(3));
        SweepPlan.Observed seen = f.sweepRead(team, "a");
        assertEquals(HostLease.key("a"), seen.hosted().key(), "the sweep judges it through its lease");
        long seq = f.seq(team, "a");

        // The daemon renews the lease with a fresh local beat: one write of the lease item, not of the agent's.
        f.leases.renew(team, host, List.of(new HostLeaseStore.Beat("a", f.tick())), f.clock.instant());

        assertEquals(SweepStore.Write.RACE_LOST, f.sweepKills(seen));
        assertEquals(AgentStatus.READY, f.agents.require(team, "a").status());
        assertEquals(seq, f.seq(team, "a"));
    }

    @Test
    void markDead_ofAHostedAgentWhoseLeaseStayedSilent_kills() {
        String team = StoreFixture.team("silent");
        String host = "host-1";
        f.ready(team, "a");
        f.beatsThrough(team, "a", host);
        f.clock.advance(StoreFixture.STALE_AFTER.multipliedBy(3));
        SweepPlan.Observed seen = f.sweepRead(team, "a");

        assertEquals(SweepStore.Write.DONE, f.sweepKills(seen));
        assertEquals(AgentStatus.DEAD, f.agents.require(team, "a").status());
    }

    @Test
    void markDead_afterTheAgentLeftSinceTheSweepsRead_isRefusedAndTheLeaveStands() {
        String team = StoreFixture.team("left");
        SweepPlan.Observed seen = staleAndRead(team, "a");
        Agent left = f.writes.leave(team, "a", "done for today", f.tick());

        assertEquals(SweepStore.Write.RACE_LOST, f.sweepKills(seen));

        Agent after = f.agents.require(team, "a");
        assertEquals(left, after);
        assertEquals(AgentStatus.OFFLINE, after.status());
        assertEquals(Trigger.LEAVE, after.lastTransition().trigger());
    }

    @Test
    void leave_afterTheSweepsDeath_isRefusedAndTheDeathStands() {
        String team = StoreFixture.team("died");
        SweepPlan.Observed seen = staleAndRead(team, "a");
        long seq = f.seq(team, "a");
        assertEquals(SweepStore.Write.DONE, f.sweepKills(seen));

        LifelineException e = assertThrows(LifelineException.class,
                () -> f.writes.leave(team, "a", "done for today", f.tick()));

        assertEquals("INVALID_TRANSITION", e.code());
        assertEquals(AgentStatus.DEAD, e.currentStatus());
        Agent after = f.agents.require(team, "a");
        assertEquals(seq + 1, after.lastTransition().seq(), "one transition: the death");
        assertEquals(Trigger.HEARTBEAT_EXPIRED, after.lastTransition().trigger());
    }

    @Test
    void join_twiceAfterTheSameDeath_secondIsRefusedAndTseqMovesOnce() {
        String team = StoreFixture.team("joins");
        f.ready(team, "a");
        long death = f.writes.fail(team, "a", "crash", f.tick()).lastTransition().seq();
        // Both joins were sent for the same death; the store decides which lands first, by its condition.
        Agent first = f.writes.join(team, "a", f.tick());

        LifelineException e = assertThrows(LifelineException.class, () -> f.writes.join(team, "a", f.tick()));

        assertEquals("INVALID_TRANSITION", e.code());
        assertEquals(AgentStatus.READY, e.currentStatus());
        assertEquals(death + 1, first.lastTransition().seq());
        assertEquals(first, f.agents.require(team, "a"), "the second join changed nothing");
    }

    @Test
    void restartInitiated_forADeathAJoinAlreadyEnded_writesNothing() {
        String team = StoreFixture.team("revive");
        f.ready(team, "a");
        long death = f.writes.fail(team, "a", "crash", f.tick()).lastTransition().seq();
        Agent joined = f.writes.join(team, "a", f.tick());
        f.writes.fail(team, "a", "crash again", f.tick()); // dead again: the status alone would allow the restart

        assertFalse(f.revives.restartInitiated(team, "a", death, "revive", null, null, null, f.tick())
                .written().isPresent(), "the flow of the first death acts on no later death");

        Agent after = f.agents.require(team, "a");
        assertEquals(AgentStatus.DEAD, after.status());
        assertEquals(joined.lastTransition().seq() + 1, after.lastTransition().seq());
    }

    @Test
    void restartInitiated_whileTheHostDaemonsClaimStands_writesNothingAndAnswersTheClaim_thenActsOnceItLapses() {
        String team = StoreFixture.team("claim");
        f.ready(team, "a");
        Instant reported = f.tick();
        Instant until = Liveness.hostRestartClaim(reported, Duration.ofSeconds(4));
        Agent dead = f.writes.fail(team, "a", "crash 2 of 5", reported, null, until, 1L);
        long death = dead.lastTransition().seq();
        assertEquals(1L, dead.stats().restartsLastHour(), "the daemon's own restarts ride on the death's write");

        ReviveTransitions.Initiation held = f.revives.restartInitiated(team, "a", death, "revive", null, null, null,
                f.tick());
        assertFalse(held.written().isPresent(), "the flow does not race the daemon");
        assertEquals(until, held.hostRestartUntil());
        assertEquals(dead.lastTransition().seq(), f.agents.require(team, "a").lastTransition().seq(), "nothing written");

        // The daemon never restarted it (it died with its host, say): once the claim lapses the flow takes over.
        f.clock.advance(Duration.ofSeconds(35));
        ReviveTransitions.Initiation after = f.revives.restartInitiated(team, "a", death, "revive", null, null, null,
                f.tick());
        assertEquals(AgentStatus.RESTARTING, after.written().orElseThrow().status());
        assertEquals(null, after.hostRestartUntil());
    }

    @Test
    void aJoin_endsTheHostDaemonsClaim_soALaterDeathItDidNotClaimIsTheFlowsAtOnce() {
        String team = StoreFixture.team("claim-end");
        f.ready(team, "a");
        Instant reported = f.tick();
        f.writes.fail(team, "a", "crash", reported, null, Liveness.hostRestartClaim(reported, Duration.ZERO), null);
        f.writes.join(team, "a", f.tick());
        long death = f.writes.fail(team, "a", "crash, no restart", f.tick()).lastTransition().seq();

        ReviveTransitions.Initiation i = f.revives.restartInitiated(team, "a", death, "revive", null, null, null,
                f.tick());
        assertTrue(i.written().isPresent(), "the join removed the earlier claim: " + i);
    }

    @Test
    void endRevive_afterTheAgentRejoinedAndRestartsAgainSinceTheSweepsRead_isRefusedAndTheNewReviveStands() {
        String team = StoreFixture.team("orphan");
        f.ready(team, "a");
        long death = f.writes.fail(team, "a", "crash", f.tick()).lastTransition().seq();
        assertTrue(f.revives.restartInitiated(team, "a", death, "revive", null, null, null, f.tick())
                .written().isPresent());
        f.clock.advance(Duration.ofHours(2));
        SweepPlan.Restarting seen = f.sweepPages().stream().flatMap(p -> p.restarting().stream())
                .filter(r -> r.team().equals(team)).findFirst().orElseThrow();
        // Meanwhile it came back, died again and a new revive started: restarting again, as the sweep read it.
        f.writes.join(team, "a", f.tick());
        long again = f.writes.fail(team, "a", "crash again", f.tick()).lastTransition().seq();
        Agent restarting = f.revives.restartInitiated(team, "a", again, "revive", null, null, null, f.tick())
                .written().orElseThrow();

        assertEquals(SweepStore.Write.RACE_LOST, f.sweeps.endRevive(new SweepPlan.EndRevive(seen, "orphaned"),
                f.tick()));
        assertEquals(restarting, f.agents.require(team, "a"));
        assertEquals(AgentStatus.RESTARTING, restarting.status());
    }
}
