package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.NewAgent;
import io.lifeline.agent.SweepPlan;
import io.lifeline.store.sweep.SweepStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The heartbeat write computes an agent's deadline inside its DynamoDB update expression (so a beat costs no read):
 * for every kind of beat, with and without the agent's own allowances, the deadline the table stores is the
 * one {@link Liveness} computes, and the wait it stores is the beat's. The sweep's lease condition, the other copy of
 * the rule in an expression, lets a miss or a death through exactly when {@link Liveness#stale} says so.
 */
@Tag("store")
class LivenessExpressionTest {
    @AutoClose
    static final StoreFixture f = new StoreFixture();
    private static final Liveness.Allowances DEPLOYMENT = Liveness.Allowances.DEFAULTS;

    private static Agent beat(String team, String agentId, Duration nextWithin, Liveness.Activity activity, Instant at) {
        Heartbeat hb = new Heartbeat(team, agentId, null, "test", nextWithin, null, null, null)
                .with(activity, activity == null ? null : DEPLOYMENT.of(activity));
        return f.writes.heartbeat(hb, at);
    }

    @Test
    void storedDeadline_isLivenesss_forEveryKindOfBeat_underTheDeploymentsAllowances() {
        String team = StoreFixture.team("pin");
        f.ready(team, "a");
        for (Liveness.Activity activity : Liveness.Activity.values()) {
            Instant at = f.tick();
            Agent after = beat(team, "a", null, activity, at);
            assertEquals(Liveness.deadline(at, Liveness.window(null, activity, null, DEPLOYMENT, StoreFixture.STALE_AFTER)),
                    after.deadline(), activity.name());
            Liveness.Waiting waiting = activity.waiting();
            assertEquals(waiting, after.waiting() == null ? null : after.waiting().waiting(), activity.name());
        }
        Instant at = f.tick();
        Agent within = beat(team, "a", Duration.ofSeconds(7), Liveness.Activity.IN_TURN, at);
        assertEquals(Liveness.deadline(at, Liveness.window(Duration.ofSeconds(7), Liveness.Activity.IN_TURN, null,
                DEPLOYMENT, StoreFixture.STALE_AFTER)), within.deadline(), "nextWithin wins");
    }

    @Test
    void storedDeadline_usesTheAgentsOwnAllowances_whenItWasRegisteredWithThem() {
        String team = StoreFixture.team("own");
        Duration working = Duration.ofSeconds(120);
        Duration input = Duration.ofSeconds(3_600);
        Duration person = Duration.ofSeconds(7_200);
        f.agents.register(new NewAgent(team, "b", "B", "worker", null, StoreFixture.STALE_AFTER, StoreFixture.GRACE,
                null, null, working, input, person), f.tick());
        f.writes.join(team, "b", f.tick());
        for (var e : Map.of(Liveness.Activity.IN_TURN, working, Liveness.Activity.WAITING_FOR_INPUT, input,
                Liveness.Activity.WAITING_FOR_PERSON, person).entrySet()) {
            Instant at = f.tick();
            Agent after = beat(team, "b", null, e.getKey(), at);
            assertEquals(Liveness.deadline(at, Liveness.window(null, e.getKey(), e.getValue(), DEPLOYMENT,
                    StoreFixture.STALE_AFTER)), after.deadline(), e.getKey().name());
        }
    }

    @Test
    void waitSince_isTheFirstBeatOfTheWait_andABeatThatStatesNothingLeavesIt() {
        String team = StoreFixture.team("since");
        f.ready(team, "c");
        Instant first = f.tick();
        beat(team, "c", null, Liveness.Activity.WAITING_FOR_PERSON, first);
        Agent again = beat(team, "c", null, Liveness.Activity.WAITING_FOR_PERSON, f.tick());
        assertEquals(first, again.waiting().since());
        Agent unstated = beat(team, "c", null, null, f.tick());
        assertEquals(first, unstated.waiting().since(), "a daemon's entry without 'waiting' leaves the wait");
        Instant input = f.tick();
        Agent switched = beat(team, "c", null, Liveness.Activity.WAITING_FOR_INPUT, input);
        assertEquals(new Liveness.Wait(Liveness.Waiting.INPUT, input), switched.waiting(), "a new wait starts anew");
        assertNull(beat(team, "c", null, Liveness.Activity.IN_TURN, f.tick()).waiting());
    }
    /**
     * The table: every activity a beat can state (or none, as a host's entry may), direct or through a host, with and
     * without nextHeartbeatWithinSeconds, for an agent with and without its own allowances. For each row the deadline
     * the table stores is {@link Liveness#window}'s with the allowance {@link Liveness#carried} gives the beat.
     */
    @Test
    void storedDeadline_isLivenesssWindow_onEveryRowOfTheTable() {
        String team = StoreFixture.team("table");
        Duration working = Duration.ofSeconds(120);
        Duration input = Duration.ofSeconds(3_600);
        Duration person = Duration.ofSeconds(7_200);
        f.agents.register(new NewAgent(team, "own", "Own", "worker", null, StoreFixture.STALE_AFTER, StoreFixture.GRACE,
                null, null, working, input, person), f.tick());
        f.writes.join(team, "own", f.tick());
        f.ready(team, "plain");
        Map<Liveness.Activity, Duration> ownAllowance = Map.of(Liveness.Activity.IN_TURN, working,
                Liveness.Activity.WAITING_FOR_INPUT, input, Liveness.Activity.WAITING_FOR_PERSON, person);
        List<Liveness.Activity> activities = new ArrayList<>(Arrays.asList(
                Liveness.Activity.values()));
        activities.add(null);
        int rows = 0;
        for (String agentId : List.of("own", "plain")) {
            for (Liveness.Activity activity : activities) {
                for (boolean throughHost : new boolean[] {false, true}) {
                    if (activity == null && !throughHost) {
                        continue; // a direct beat always states its activity (plain when it says nothing)
                    }
                    for (Duration nextWithin : Arrays.asList(null, Duration.ofSeconds(7))) {
                        Duration carried = Liveness.carried(activity, DEPLOYMENT, throughHost);
                        Heartbeat hb = new Heartbeat(team, agentId, null, "test", nextWithin, null, null, null)
                                .with(activity, carried);
                        Instant now = f.tick();
                        Instant beatAt = throughHost ? now.minusMillis(500) : now; // after the previous beat (a tick is 1 s)
                        Agent after = throughHost ? f.writes.hostedBeat(hb, now, beatAt, "host-1")
                                : f.writes.heartbeat(hb, now);
                        Duration own = agentId.equals("own") && activity != null ? ownAllowance.get(activity) : null;
                        String row = agentId + " " + activity + (throughHost ? " through a host" : " direct")
                                + " nextWithin=" + nextWithin;
                        assertEquals(Liveness.deadline(beatAt, Liveness.window(nextWithin, activity, own, carried,
                                StoreFixture.STALE_AFTER)), after.deadline(), row);
                        rows++;
                    }
                }
            }
        }
        assertEquals(2 * (4 * 2 + 1) * 2, rows, "every row ran");
    }

    /**
     * The sweep's lease condition (a hosted agent's miss or death insists that its lease beat still leaves it stale)
     * is built from {@link Liveness#staleBefore}; here it is held to {@link Liveness#stale} of the deadline the lease
     * beat gives ({@link Liveness#viaLease}) one millisecond before, at and after that deadline: the table lets
     * the write through exactly when Liveness says the agent is stale.
     */
    @Test
    void sweepsLeaseCondition_isLivenesssStale_atTheLeaseDeadline() {
        String team = StoreFixture.team("lease");
        f.ready(team, "h");
        f.beatsThrough(team, "h", "host-1");
        SweepPlan.Observed seen = f.sweepRead(team, "h");
        Instant leaseBeat = Instant.ofEpochMilli(seen.hosted().leaseBeatMs());
        Instant deadline = Liveness.viaLease(leaseBeat, seen.hosted().staleAfter());
        for (long offsetMs : new long[] {-1, 0}) {
            Instant now = deadline.plusMillis(offsetMs);
            assertFalse(Liveness.stale(deadline, now));
            assertEquals(SweepStore.Write.RACE_LOST, f.sweeps.recordMiss(seen, seen.misses() + 1, now,
                    StoreFixture.SPACING), "a miss " + offsetMs + " ms from the lease deadline");
            assertEquals(SweepStore.Write.RACE_LOST, f.sweeps.markDead(seen, seen.misses() + 1, "silent", now,
                    StoreFixture.SPACING), "a death " + offsetMs + " ms from the lease deadline");
        }
        Instant past = deadline.plusMillis(1);
        assertTrue(Liveness.stale(deadline, past));
        assertEquals(SweepStore.Write.DONE, f.sweeps.recordMiss(seen, seen.misses() + 1, past, StoreFixture.SPACING),
                "a miss 1 ms past the lease deadline");
        String other = "h2";
        f.ready(team, other);
        f.beatsThrough(team, other, "host-2");
        SweepPlan.Observed second = f.sweepRead(team, other);
        Instant secondPast = Liveness.viaLease(Instant.ofEpochMilli(second.hosted().leaseBeatMs()),
                second.hosted().staleAfter()).plusMillis(1);
        assertEquals(SweepStore.Write.DONE, f.sweeps.markDead(second, second.graceMisses(), "silent", secondPast,
                StoreFixture.SPACING), "a death 1 ms past the lease deadline");
    }
}
