package io.lifeline.app;

import io.lifeline.agent.Agent;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.NewAgent;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.StoreTables;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.store.team.TeamStore;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * The application layer's use cases over the real store: fresh live and ledger tables from template.yaml
 * ({@link StoreTables}), the stores on them, and the use cases built as {@code config.UseCases} builds them.
 */
final class AppFixture implements AutoCloseable {
    static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
    static final Duration STALE_AFTER = Duration.ofSeconds(60);

    final StoreTables tables = StoreTables.create();
    final AgentStore agents = new AgentStore(tables.dynamo, tables.tables);
    final AgentWrites writes = new AgentWrites(tables.dynamo, tables.tables);
    final AgentDataStore data = new AgentDataStore(tables.dynamo, tables.tables);
    final TaskStore tasks = new TaskStore(tables.dynamo, tables.tables);
    final TeamStore teams = new TeamStore(tables.dynamo, tables.tables);
    final AgentChanges changes = new AgentChanges(agents, writes, data, tasks, teams);
    final Heartbeats heartbeats = new Heartbeats(writes, data, new HostLeaseStore(tables.dynamo, tables.tables),
            Liveness.Allowances.DEFAULTS);
    final HookIngest hooks = new HookIngest(agents, data, heartbeats, changes, Liveness.Allowances.DEFAULTS,
            Duration.ZERO);
    private Instant now = T0;

    /** A team name no other test of the class uses. */
    static String team(String name) {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The clock, one second on: every call of a test happens later than the one before. */
    Instant tick() {
        now = now.plusSeconds(1);
        return now;
    }

    /** The clock, {@code d} on (a quiet spell). */
    void skip(Duration d) {
        now = now.plus(d);
    }

    /** Registered (with every allowance and the stall rule given, so no team is read) and joined: ready. */
    Agent ready(String team, String agentId) {
        changes.register(new NewAgent(team, agentId, "Agent " + agentId, "worker", null, STALE_AFTER, 2, null, null,
                Duration.ofMinutes(15), Duration.ofHours(8), Duration.ofHours(8), Duration.ofMinutes(2),
                Liveness.OnStall.ALERT), tick());
        return changes.join(team, agentId, tick());
    }

    @Override
    public void close() {
        tables.close();
    }
}
