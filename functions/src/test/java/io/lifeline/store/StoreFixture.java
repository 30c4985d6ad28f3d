package io.lifeline.store;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.NewAgent;
import io.lifeline.agent.SweepPlan;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.agent.ReviveTransitions;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The stores of one test class over one pair of {@link StoreTables}, all through one {@link MeteredDynamo} (so a test
 * counts the requests a store call makes), with a {@link MutableClock} that every call's {@code now} comes from, and the
 * few steps that put an agent where a test wants it, each through the store's own API (no raw writes).
 */
final class StoreFixture implements AutoCloseable {
    static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
    static final Duration STALE_AFTER = Duration.ofSeconds(60);
    static final int GRACE = 2;
    /** The sweep's miss spacing the tests pass (a sweep every 15 s). */
    static final Duration SPACING = Duration.ofSeconds(15);

    final StoreTables tables;
    final MeteredDynamo dynamo;
    final MutableClock clock = new MutableClock(T0);
    final AgentStore agents;
    final AgentWrites writes;
    final ReviveTransitions revives;
    final TaskStore tasks;
    final SweepStore sweeps;
    final HostLeaseStore leases;
    final HostCommandStore commands;

    StoreFixture() {
        tables = StoreTables.create();
        dynamo = new MeteredDynamo(tables.dynamo);
        agents = new AgentStore(dynamo, tables.tables);
        writes = new AgentWrites(dynamo, tables.tables);
        revives = new ReviveTransitions(dynamo, tables.tables);
        tasks = new TaskStore(dynamo, tables.tables);
        sweeps = new SweepStore(dynamo, tables.tables, 1);
        leases = new HostLeaseStore(dynamo, tables.tables);
        commands = new HostCommandStore(dynamo, tables.tables, Duration.ofMinutes(10));
    }

    /** A team name no other test of the class uses. */
    static String team(String name) {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The clock, one second on: every store call in a test happens at a later time than the one before. */
    Instant tick() {
        return clock.advance(Duration.ofSeconds(1));
    }

    Agent registered(String team, String agentId) {
        return agents.register(new NewAgent(team, agentId, "Agent " + agentId, "worker", null, STALE_AFTER, GRACE,
                null, null), tick());
    }

    Agent ready(String team, String agentId) {
        registered(team, agentId);
        return writes.join(team, agentId, tick());
    }

    /** A plain heartbeat (no status reported). */
    Agent beat(String team, String agentId) {
        return writes.heartbeat(new Heartbeat(team, agentId, null, null, null, null, null, null), tick());
    }

    /** A heartbeat reporting {@code status}. */
    Agent report(String team, String agentId, AgentStatus status) {
        return writes.heartbeat(new Heartbeat(team, agentId, status, null, null, null, null, null), tick());
    }

    /**
     * The agent's first beat through {@code hostId}'s lease, as the batch route makes it: written to its item (which
     * then names the lease), then the lease renewed with it.
     */
    void beatsThrough(String team, String agentId, String hostId) {
        Instant at = tick();
        writes.hostedBeat(new Heartbeat(team, agentId, null, null, null, null, null, null), at, at, hostId);
        leases.renew(team, hostId, List.of(new HostLeaseStore.Beat(agentId, at)), at);
    }

    /** The seq of the agent's newest transition (0: none yet), from its read model. */
    long seq(String team, String agentId) {
        Agent a = agents.require(team, agentId);
        return a.lastTransition() == null ? 0 : a.lastTransition().seq();
    }

    /** The sweep's read of the agent, as it judges it, from a real scan of the live table (it must be alive). */
    SweepPlan.Observed sweepRead(String team, String agentId) {
        List<SweepStore.Page> pages = sweepPages();
        Map<String, HostLease.Seen> leases = new HashMap<>();
        pages.forEach(p -> p.leases().forEach(l -> leases.put(l.team() + "/" + l.hostId(), l)));
        return pages.stream().flatMap(p -> p.agents().stream())
                .filter(o -> o.team().equals(team) && o.agentId().equals(agentId)).findFirst()
                .map(o -> o.hosted() == null ? o
                        : o.linked(o.hosted().through(leases.get(o.team() + "/" + o.hosted().hostId()))))
                .map(Liveness::judged)
                .orElseThrow(() -> new AssertionError("the sweep's scan does not see " + team + "/" + agentId));
    }

    /** Every page of one real sweep scan of the live table, as the store hands them to the sweep. */
    List<SweepStore.Page> sweepPages() {
        List<SweepStore.Page> pages = Collections.synchronizedList(new ArrayList<>());
        sweeps.scan(pages::add);
        return pages;
    }

    /** The sweep's death of an agent it read as {@code seen}: its last miss (misses + 1), now. */
    SweepStore.Write sweepKills(SweepPlan.Observed seen) {
        return sweeps.markDead(seen, seen.misses() + 1, "no heartbeat", tick(), SPACING);
    }

    // ---- what the tables hold ---------------------------------------------------------------------------------

    /** Every item of both tables, by table and key, read around the meter (a test's look, not the store's). */
    Map<String, Map<String, AttributeValue>> everything() {
        Map<String, Map<String, AttributeValue>> out = new HashMap<>();
        for (String table : List.of(tables.tables.live(), tables.tables.ledger())) {
            tables.dynamo.scanPaginator(r -> r.tableName(table).consistentRead(true)).items()
                    .forEach(item -> out.put(table + "|" + item.get(Keys.PK).s() + "|" + item.get(Keys.SK).s(), item));
        }
        return out;
    }

    /** The keys whose items differ between two {@link #everything()} reads (changed, added or removed). */
    static Set<String> changed(Map<String, Map<String, AttributeValue>> before,
                               Map<String, Map<String, AttributeValue>> after) {
        Set<String> keys = new HashSet<>(before.keySet());
        keys.addAll(after.keySet());
        keys.removeIf(k -> Objects.equals(before.get(k), after.get(k)));
        return keys;
    }

    /** The {@link #everything()} key of an agent's item. */
    String agentKey(String team, String agentId) {
        Map<String, AttributeValue> k = AgentItems.key(team, agentId);
        return tables.tables.live() + "|" + k.get(Keys.PK).s() + "|" + k.get(Keys.SK).s();
    }

    // ---- what the store asked of DynamoDB ---------------------------------------------------------------------

    List<MeteredDynamo.Call> accepted() {
        return dynamo.calls().stream().filter(c -> c.isWrite() && !c.refused()).toList();
    }

    List<MeteredDynamo.Call> reads() {
        return dynamo.calls().stream().filter(c -> !c.isWrite()).toList();
    }

    @Override
    public void close() {
        tables.close();
    }
}
