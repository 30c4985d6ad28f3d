package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.NewAgent;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.store.agent.ReviveTransitions;
import io.lifeline.store.ledger.RevivalStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link RevivalStore#pending()}, the store's answer to "which revive flows are agents still waiting on", which
 * Lifeline Local asks on start to resume the flows a crash ended (it used to hand-write the Scan). Each agent is put
 * where a revive flow leaves it by the store calls the flow's first step makes ({@code ReviveHandler}'s initiate:
 * claim the revive of the death, then {@code restart_initiated}), over the engine's tables made from
 * template.yaml; each test works on a team of its own. Lifeline Local's resuming of real flows after a crash is
 * {@code CrashRestartReviveTest}'s, in infra/local.
 */
@Tag("store")
class RevivalStoreTest {
    private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
    private static final String HOST = "host-1";

    static StoreTables store;
    static AgentStore agents;
    static AgentWrites writes;
    static ReviveTransitions revives;
    static RevivalStore revivals;
    static HostCommandStore commands;

    @BeforeAll
    static void start() {
        store = StoreTables.create();
        agents = new AgentStore(store.dynamo, store.tables);
        writes = new AgentWrites(store.dynamo, store.tables);
        revives = new ReviveTransitions(store.dynamo, store.tables);
        revivals = new RevivalStore(store.dynamo, store.tables, Duration.ofDays(30));
        commands = new HostCommandStore(store.dynamo, store.tables, Duration.ofMinutes(10));
    }

    @AfterAll
    static void stop() {
        store.close();
    }

    /** A team name no other test uses (pending() reads every team). */
    private static String team(String name) {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Registered on {@link #HOST} and joined: ready. */
    private static void ready(String team, String agentId) {
        agents.register(new NewAgent(team, agentId, "Agent " + agentId, "worker", HOST, Duration.ofSeconds(60), 2,
                null, null), T0);
        writes.join(team, agentId, T0);
    }

    /** A reported crash: the agent is dead; answers the seq of that death (the revive's startSeq). */
    private static long crashed(String team, String agentId) {
        Agent dead = writes.fail(team, agentId, "oom", T0.plusSeconds(1));
        assertEquals(AgentStatus.DEAD, dead.status());
        return dead.lastTransition().seq();
    }

    /** What the revive flow's first step writes: the execution claims the revive, then the agent is restarting. */
    private static void restartingUnder(String team, String agentId, long startSeq, String executionId) {
        Instant now = T0.plusSeconds(2);
        assertTrue(revivals.claim(team, agentId, startSeq, executionId, now));
        assertTrue(revives.restartInitiated(team, agentId, startSeq, "restart requested from host " + HOST,
                commands.expiry(now), HOST, "agent is dead", now).written().isPresent());
    }

    /** The pending revives of {@code team}, by agent id. */
    private static List<RevivalStore.Pending> pendingOf(String team) {
        return revivals.pending().stream().filter(p -> p.team().equals(team))
                .sorted(Comparator.comparing(RevivalStore.Pending::agentId)).toList();
    }

    private static String execution(String name) {
        return "arn:aws:states:us-east-1:123456789012:execution:Revive:" + name;
    }

    @Test
    void pending_agentsLeftRestarting_listsEachWithTheExecutionThatClaimedItsRevive() {
        String team = team("left");
        ready(team, "r1");
        ready(team, "r2");
        ready(team, "fine");
        long firstDeath = crashed(team, "r1");
        long secondDeath = crashed(team, "r2");
        restartingUnder(team, "r1", firstDeath, execution("first"));
        restartingUnder(team, "r2", secondDeath, execution("second"));

        List<RevivalStore.Pending> pending = pendingOf(team);

        assertEquals(List.of(
                new RevivalStore.Pending(team, "r1", firstDeath, HOST, execution("first")),
                new RevivalStore.Pending(team, "r2", secondDeath, HOST, execution("second"))), pending);
    }

    @Test
    void pending_agentThatLeftRestarting_isNoLongerListed() {
        String team = team("back");
        ready(team, "back");
        restartingUnder(team, "back", crashed(team, "back"), execution("back"));
        assertEquals(1, pendingOf(team).size());

        writes.join(team, "back", T0.plusSeconds(3));

        assertEquals(AgentStatus.READY, agents.require(team, "back").status());
        assertEquals(List.of(), pendingOf(team));
    }

    @Test
    void pending_agentDeadWhoseFlowHasNotStarted_isNotListed() {
        String team = team("dead");
        ready(team, "a");
        crashed(team, "a");

        assertEquals(List.of(), pendingOf(team));
    }

    @Test
    void pending_agentRestartingWithNoClaimedRevive_isNotListed() {
        String team = team("unclaimed");
        ready(team, "a");
        long death = crashed(team, "a");
        // restart_initiated without a claim: no execution to resume it under.
        assertTrue(revives.restartInitiated(team, "a", death, "restart requested", commands.expiry(T0.plusSeconds(2)),
                HOST, "agent is dead", T0.plusSeconds(2)).written().isPresent());

        assertEquals(AgentStatus.RESTARTING, agents.require(team, "a").status());
        assertEquals(List.of(), pendingOf(team));
    }

    @Test
    void claim_secondExecutionForTheSameDeath_isRefused_andPendingNamesTheFirst() {
        String team = team("twice");
        ready(team, "a");
        long death = crashed(team, "a");
        restartingUnder(team, "a", death, execution("first"));

        assertFalse(revivals.claim(team, "a", death, execution("second"), T0.plusSeconds(3)));
        assertTrue(revivals.claim(team, "a", death, execution("first"), T0.plusSeconds(3)), "its own retry");

        assertEquals(List.of(new RevivalStore.Pending(team, "a", death, HOST, execution("first"))), pendingOf(team));
    }
}
