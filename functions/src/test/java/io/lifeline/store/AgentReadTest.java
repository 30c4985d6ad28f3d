package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.agent.Agent;
import io.lifeline.agent.Liveness;
import io.lifeline.app.AgentQueries;
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

        List<Agent> listed = new AgentQueries(f.agents).list(team, null);
        assertEquals(List.of(shown.heartbeatAt()), listed.stream().map(Agent::heartbeatAt).toList());
        assertEquals(List.of(shown.deadline()), listed.stream().map(Agent::deadline).toList());
        assertEquals(item.heartbeatAt(), f.agents.list(team, null).get(0).agent().heartbeatAt(),
                "the store's list does not judge either");
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
