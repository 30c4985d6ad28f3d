package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.Trigger;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.outbox.StreamChanges;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A stall judged by a host daemon, on the agent item: its word in a beat's write raises the stall once (its since
 * kept while it stands) and ends it, each in that beat's one write with the outbox mark; its stall's death is the
 * {@code stalled} trigger, the stall raised in the same write with the daemon's restart claim; and the next life's join
 * ends it. Each change's stream record decodes to the one stall event it stands for.
 */
@Tag("store")
class HostedStallStoreTest {
    @AutoClose
    static final StoreFixture f = new StoreFixture();

    private static final String SILENT = "model stream silent";

    private static Heartbeat working(String team, String id, Duration age) {
        return new Heartbeat(team, id, AgentStatus.WORKING, null, null, null, null, null)
                .withProgress(new Heartbeat.Reported(age, false, SILENT));
    }

    private static Map<String, AttributeValue> item(String team, String id) {
        return f.everything().get(f.agentKey(team, id));
    }

    /** The stall events the change from {@code before} to the item now stands for. */
    private static List<StreamChanges.Stall> stallEvents(Map<String, AttributeValue> before, String team, String id) {
        return StreamChanges.decode(before, item(team, id)).stream().filter(c -> c instanceof StreamChanges.Stall)
                .map(c -> (StreamChanges.Stall) c).toList();
    }

    @Test
    void theDaemonsWord_raisesTheStallOnce_inItsBeatsOneWrite_andEndsIt() {
        String team = StoreFixture.team("hosted");
        f.ready(team, "a");
        f.beatsThrough(team, "a", "box");
        f.writes.hostedBeat(working(team, "a", Duration.ZERO), f.tick(), f.clock.instant(), "box", null);

        Map<String, AttributeValue> before = item(team, "a");
        f.dynamo.reset();
        Instant at = f.tick();
        Agent stalled = f.writes.hostedBeat(working(team, "a", Duration.ofSeconds(25)), at, at, "box", true);
        assertEquals(1, f.accepted().size(), "the beat's one write");
        assertEquals(List.of(), f.reads(), "no read");
        assertNotNull(stalled.stall());
        assertEquals(at, stalled.stall().since());
        assertEquals(SILENT, stalled.stall().reason());
        assertEquals(at.minusSeconds(25), stalled.progress().lastProgressAt(), "the progress it was judged from");
        assertTrue(item(team, "a").get(AgentItems.OUTBOX).bool(), "its stream record reaches the outbox");
        List<StreamChanges.Stall> raised = stallEvents(before, team, "a");
        assertEquals(1, raised.size(), raised::toString);
        assertEquals(at, raised.get(0).since());
        assertNull(raised.get(0).resumedAt(), "AgentStalled");
        assertEquals(at.minusSeconds(25), raised.get(0).lastProgressAt());

        before = item(team, "a");
        Instant again = f.tick();
        Agent same = f.writes.hostedBeat(working(team, "a", Duration.ofSeconds(30)), again, again, "box", true);
        assertEquals(at, same.stall().since(), "a stall standing keeps its since");
        assertEquals(List.of(), stallEvents(before, team, "a"), "no second AgentStalled");

        before = item(team, "a");
        Instant back = f.tick();
        Agent resumed = f.writes.hostedBeat(working(team, "a", Duration.ZERO), back, back, "box", false);
        assertNull(resumed.stall());
        List<StreamChanges.Stall> ended = stallEvents(before, team, "a");
        assertEquals(1, ended.size(), ended::toString);
        assertEquals(at, ended.get(0).since(), "the pair's id");
        assertEquals(back, ended.get(0).resumedAt());
        assertFalse(ended.get(0).ended(), "resumed, not ended");
    }

    @Test
    void aStallsDeath_isTriggerStalled_raisingTheStallWithTheRestartClaim_andTheJoinEndsIt() {
        String team = StoreFixture.team("death");
        f.ready(team, "a");
        f.beatsThrough(team, "a", "box");
        f.writes.hostedBeat(working(team, "a", Duration.ZERO), f.tick(), f.clock.instant(), "box", null);
        Map<String, AttributeValue> before = item(team, "a");
        f.dynamo.reset();
        Instant at = f.tick();
        Instant claim = at.plusSeconds(31);
        Agent dead = f.writes.fail(team, "a", "stalled (" + SILENT + "), stopped", at, null, claim, 1L, SILENT);
        assertEquals(1, f.accepted().size(), "one write");
        assertEquals(AgentStatus.DEAD, dead.status());
        assertEquals(Trigger.STALLED, dead.lastTransition().trigger());
        assertEquals(claim, Items.instant(item(team, "a"), AgentItems.HOST_RESTART), "the daemon's restart claim");
        List<StreamChanges.Stall> raised = stallEvents(before, team, "a");
        assertEquals(1, raised.size(), raised::toString);
        assertEquals(SILENT, raised.get(0).reason());
        assertEquals(at, raised.get(0).since());

        before = item(team, "a");
        Agent joined = f.writes.join(team, "a", f.tick());
        assertNull(joined.stall(), "a new life has no stall");
        assertNull(item(team, "a").get(AgentItems.PROGRESS_WHY), "nor the last life's reason");
        List<StreamChanges.Stall> ended = stallEvents(before, team, "a");
        assertEquals(1, ended.size(), ended::toString);
        assertTrue(ended.get(0).ended(), "ended with its life");
        assertEquals(SILENT, ended.get(0).reason());
    }

    @Test
    void aStallsDeath_ofAnAgentStillReadyOnTheServer_isAReportedFailure_withTheStallRaised() {
        String team = StoreFixture.team("ready");
        f.ready(team, "a");
        Agent dead = f.writes.fail(team, "a", "stalled", f.tick(), null, null, null, SILENT);
        assertEquals(AgentStatus.DEAD, dead.status());
        assertEquals(Trigger.REPORTED_FAILURE, dead.lastTransition().trigger(), "the table takes stalled from working");
        assertNotNull(Items.instant(item(team, "a"), AgentItems.STALLED_SINCE));
    }
}
