package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.Liveness;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Progress on the agent item: a beat's report is written by its own one UpdateItem (the server's time less the age
 * it reports), a tool start marks the tool in flight and the next report clears it; the sweep's raise of a stall is
 * conditional on what it read (a beat with newer progress, or a tool start, wins), raised once, and resolved once.
 */
@Tag("store")
class StallStoreTest {
    @AutoClose
    static final StoreFixture f = new StoreFixture();

    private static Agent beat(String team, String id, Heartbeat.Reported progress) {
        return f.writes.heartbeat(new Heartbeat(team, id, AgentStatus.WORKING, null, null, null, null, null)
                .withProgress(progress), f.tick());
    }

    private static Liveness.ProgressSeen seen(String team, String id) {
        return f.sweepPages().stream().flatMap(p -> p.progress().stream()).filter(p -> p.team().equals(team) && p.agentId().equals(id))
                .findFirst().orElseThrow();
    }

    @Test
    void aBeatsProgressAge_isWrittenByItsOneUpdateItem_asTheServersTimeLessTheAge() {
        String team = StoreFixture.team("age");
        f.ready(team, "a");
        f.report(team, "a", AgentStatus.WORKING);
        f.dynamo.reset();
        Agent after = beat(team, "a", new Heartbeat.Reported(Duration.ofSeconds(40), false, "model stream silent"));
        assertEquals(1, f.accepted().size(), "one write");
        assertEquals(List.of(), f.reads(), "no read");
        assertEquals(f.clock.instant().minusSeconds(40), after.progress().lastProgressAt());
        assertEquals("model stream silent", after.progress().reason());
        Agent plain = f.report(team, "a", AgentStatus.WORKING);
        assertEquals(after.progress(), plain.progress(), "a beat that says nothing of progress leaves it");
    }

    @Test
    void aToolInFlight_refusesTheRaise_andTheNextReportClearsIt() {
        String team = StoreFixture.team("tool");
        f.ready(team, "a");
        beat(team, "a", Heartbeat.Reported.TOOL_STARTED);
        Liveness.ProgressSeen s = seen(team, "a");
        assertTrue(s.progress().toolInFlight());
        f.clock.advance(Duration.ofMinutes(10));
        assertFalse(Liveness.stalls(List.of(s), Duration.ofSeconds(120), f.clock.instant()).raise().contains(s),
                "a tool in flight is not a stall");
        // A raise as an older read would ask it: refused while the tool runs.
        Liveness.ProgressSeen stale = new Liveness.ProgressSeen(team, "a", AgentStatus.WORKING,
                new Liveness.Progress(s.progress().lastProgressAt(), false, null), false, false, null, null, null);
        assertFalse(f.sweeps.raiseStall(stale, Liveness.NO_PROGRESS_REPORTED, false, f.tick()));
        beat(team, "a", Heartbeat.Reported.NOW);
        assertFalse(seen(team, "a").progress().toolInFlight(), "the tool ended");
    }

    @Test
    void theRaise_isConditionalOnTheProgressItRead_raisedOnce_andResolvedOnce() {
        String team = StoreFixture.team("raise");
        f.ready(team, "a");
        beat(team, "a", Heartbeat.Reported.NOW);
        Liveness.ProgressSeen read = seen(team, "a");
        beat(team, "a", Heartbeat.Reported.NOW); // progress lands between the sweep's read and its write
        assertFalse(f.sweeps.raiseStall(read, Liveness.NO_PROGRESS_REPORTED, false, f.tick()), "the beat wins");

        Liveness.ProgressSeen now = seen(team, "a");
        Instant at = f.tick();
        assertTrue(f.sweeps.raiseStall(now, Liveness.NO_PROGRESS_REPORTED, false, at));
        assertFalse(f.sweeps.raiseStall(now, Liveness.NO_PROGRESS_REPORTED, false, f.tick()), "raised once");
        Agent stalled = f.agents.require(team, "a");
        assertEquals(AgentStatus.WORKING, stalled.status(), "alert: it stays working");
        assertNotNull(stalled.stall());
        assertEquals(at, stalled.stall().since());
        assertEquals(Liveness.NO_PROGRESS_REPORTED, stalled.stall().reason());

        beat(team, "a", Heartbeat.Reported.NOW);
        Liveness.ProgressSeen resumed = seen(team, "a");
        assertEquals(List.of(resumed), Liveness.stalls(List.of(resumed), Duration.ofSeconds(120),
                f.clock.instant()).resolve());
        assertTrue(f.sweeps.resolveStall(resumed));
        assertFalse(f.sweeps.resolveStall(resumed), "resolved once");
        assertNull(f.agents.require(team, "a").stall());
    }
}
