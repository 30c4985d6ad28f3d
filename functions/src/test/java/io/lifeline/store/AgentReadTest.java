package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.app.AgentChanges;
import io.lifeline.app.AgentPages;
import io.lifeline.app.AgentQueries;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentRoster;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.agent.TransitionLog;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.TeamStore;
import io.lifeline.support.Page;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The store reads a hosted agent and its lease's beat of it and judges nothing ({@link AgentStore.Read}); the
 * application layer's {@link AgentQueries} shows it as {@link Liveness#shown} judges it, as GET and the list did
 * before the judgement left the store, with the same reads.
 */
@Tag("store")
class AgentReadTest {
    @AutoClose
    static final StoreFixture f = new StoreFixture();

    @Test
    void read_givesTheItemAndTheLeaseBeatUnjudged_andAgentQueriesShowsItThroughLiveness() {
        String team = StoreFixture.team("read");
        f.ready(team, "a");
        f.beatsThrough(team, "a", "host-1");
        Agent item = f.agents.require(team, "a");
        Instant later = f.tick();
        f.leases.renew(team, "host-1", List.of(new HostLeaseStore.Beat("a", later)), later);

        f.dynamo.reset();
        AgentStore.Read read = f.agents.read(team, "a").orElseThrow();
        assertEquals(2, f.dynamo.calls().size(), "the item, then its lease: " + f.dynamo.calls());
        assertEquals(item.heartbeatAt(), read.agent().heartbeatAt(), "the store does not judge");
        assertEquals(item.deadline(), read.agent().deadline());
        assertEquals(later, read.leaseBeat());
        assertNull(read.lastMissAt());

        Agent shown = new AgentQueries(f.agents).require(team, "a");
        assertEquals(Liveness.shown(read.agent(), read.leaseBeat(), read.lastMissAt()), shown);
        assertEquals(later, shown.heartbeatAt(), "shown from the later sign of life: the lease beat");
        assertEquals(Liveness.viaLease(later, StoreFixture.STALE_AFTER), shown.deadline());

        AgentRoster roster = new AgentRoster(f.dynamo, f.tables.tables);
        List<Agent> listed = new AgentPages(roster).page(team, null, Page.DEFAULT_LIMIT, null).items();
        assertEquals(List.of(shown.heartbeatAt()), listed.stream().map(Agent::heartbeatAt).toList());
        assertEquals(List.of(shown.deadline()), listed.stream().map(Agent::deadline).toList());
        // The outbox records the join, which moves the roster entry to ready.
        new TransitionLog(f.dynamo, f.tables.tables, Duration.ofDays(1)).record(
                new TransitionLog.Change(team, "a", f.agents.require(team, "a").lastTransition()));
        assertEquals(List.of(shown), new AgentPages(roster).page(team, AgentStatus.READY, 10, null).items(),
                "the status's page shows it as GET does");
        assertEquals(item.heartbeatAt(), roster.page(team, null, 10, null).items().get(0).agent().heartbeatAt(),
                "the store's list does not judge either");
    }

    /**
     * Join, pause and resume answer the agent as GET shows it: a hosted agent whose item holds a miss the sweep
     * counted before its lease beat, and an older deadline, is answered through its lease (no miss, the lease's
     * deadline), exactly as the GET that follows.
     */
    @Test
    void pauseResumeAndJoin_answerTheAgentAsGetShowsIt() {
        String team = StoreFixture.team("answers");
        f.ready(team, "p");
        f.beatsThrough(team, "p", "host-3");
        SweepPlan.Observed seen = f.sweepRead(team, "p");
        Instant past = Liveness.viaLease(Instant.ofEpochMilli(seen.hosted().leaseBeatMs()), StoreFixture.STALE_AFTER)
                .plusMillis(1);
        assertEquals(SweepStore.Write.DONE, f.sweeps.recordMiss(seen, 1, past, StoreFixture.SPACING));
        Instant later = past.plusSeconds(1);
        f.leases.renew(team, "host-3", List.of(new HostLeaseStore.Beat("p", later)), later);
        AgentChanges changes = new AgentChanges(f.agents, f.writes, new AgentDataStore(f.dynamo, f.tables.tables), f.tasks,
                new TeamStore(f.dynamo, f.tables.tables));
        AgentQueries queries = new AgentQueries(f.agents);

        Agent paused = changes.pause(team, "p", later.plusSeconds(3_600));
        assertEquals(1, f.agents.require(team, "p").consecutiveMisses(), "the item holds the miss");
        assertEquals(0, paused.consecutiveMisses(), "the lease beat came after it");
        assertEquals(later, paused.heartbeatAt());
        assertEquals(Liveness.viaLease(later, StoreFixture.STALE_AFTER), paused.deadline());
        assertEquals(queries.require(team, "p"), paused, "pause answers as GET shows");

        Agent resumed = changes.resume(team, "p");
        assertNull(resumed.pausedUntil());
        assertEquals(later, resumed.heartbeatAt());
        assertEquals(queries.require(team, "p"), resumed, "resume answers as GET shows");

        f.writes.leave(team, "p", null, f.tick());
        Agent joined = changes.join(team, "p", f.tick());
        assertEquals(queries.require(team, "p"), joined, "join answers as GET shows");
    }

    @Test
    void get_andRequireCurrent_readTheItemAlone() {
        String team = StoreFixture.team("alone");
        f.ready(team, "b");
        f.beatsThrough(team, "b", "host-2");
        f.dynamo.reset();
        f.agents.requireCurrent(team, "b");
        assertEquals(1, f.dynamo.calls().size(), "no lease read for a caller that does not show the agent");
    }
}
