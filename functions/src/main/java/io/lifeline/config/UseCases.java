package io.lifeline.config;

import io.lifeline.app.AgentChanges;
import io.lifeline.app.AgentQueries;
import io.lifeline.app.AgentRecords;
import io.lifeline.app.Heartbeats;
import io.lifeline.app.HookIngest;
import io.lifeline.app.HostCommands;
import io.lifeline.app.ManualRevive;
import io.lifeline.app.Parking;
import io.lifeline.app.ReviveFlow;
import io.lifeline.app.Sweeper;
import io.lifeline.app.TeamKeys;
import io.lifeline.app.Teams;
import io.lifeline.app.Tasks;
import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.aws.StepFunctionsReviveStarts;
import io.lifeline.store.AgentDataStore;
import io.lifeline.store.AgentStore;
import io.lifeline.store.EventLog;
import io.lifeline.store.HostCommandStore;
import io.lifeline.store.HostLeaseStore;
import io.lifeline.store.InboxStore;
import io.lifeline.store.KeyStore;
import io.lifeline.store.ParkStore;
import io.lifeline.store.RevivalStore;
import io.lifeline.store.SweepStore;
import io.lifeline.store.Tables;
import io.lifeline.store.TaskStore;
import io.lifeline.store.TeamStore;
import io.lifeline.store.TransitionLog;
import java.util.function.Supplier;

/**
 * The composition root of the functions: every use case of {@code io.lifeline.app} over the stores and ports of
 * one container, built once from its {@link Wiring} (in the handler's constructor, so SnapStart captures it; one
 * handler per container), and the handlers take what they need from it. Each store and use case is built once here
 * and shared, so two use cases see one store (one {@link HookIngest} memory per container, as before). Building
 * them reads and sends nothing: the stores hold the client and the table names, and the Step Functions client is
 * built on the first revive ({@link Wiring#stepFunctions}).
 */
public final class UseCases {
    private final Wiring wiring;
    private final AgentChanges agentChanges;
    private final AgentQueries agentQueries;
    private final AgentRecords agentRecords;
    private final Heartbeats heartbeats;
    private final HookIngest hooks;
    private final ManualRevive revive;
    private final Tasks tasks;
    private final Teams teams;
    private final TeamKeys keys;
    private final HostCommands hostCommands;
    private final Parking parking;
    private final ReviveFlow reviveFlow;
    /** Built on first ask: its store's scan runs on a thread pool that only the sweep's function needs. */
    private final Supplier<Sweeper> sweeper;

    public UseCases(Wiring wiring) {
        this.wiring = wiring;
        Config config = wiring.config();
        Tables table = config.tables();
        AgentStore agents = new AgentStore(wiring.dynamo(), table);
        AgentDataStore data = new AgentDataStore(wiring.dynamo(), table);
        TaskStore taskStore = new TaskStore(wiring.dynamo(), table);
        TeamStore teamStore = new TeamStore(wiring.dynamo(), table);
        this.agentChanges = new AgentChanges(agents, data, taskStore, teamStore);
        this.agentQueries = new AgentQueries(agents);
        this.agentRecords = new AgentRecords(agents, data,
                new TransitionLog(wiring.dynamo(), table, config.transitionRetention()),
                new InboxStore(wiring.dynamo(), table, config.eventRetention()),
                new RevivalStore(wiring.dynamo(), table, config.transitionRetention()));
        this.heartbeats = new Heartbeats(agents, data, new HostLeaseStore(wiring.dynamo(), table),
                config.allowances());
        this.parking = new Parking(agents, new ParkStore(wiring.dynamo(), table), Liveness.DEFAULT_PARK);
        this.hooks = new HookIngest(agents, data, heartbeats, agentChanges, config.allowances(),
                config.hookCoalesceWindow(), parking);
        this.revive = new ManualRevive(agents, new StepFunctionsReviveStarts(wiring.stepFunctions(),
                config.reviveStateMachineArn()));
        this.tasks = new Tasks(taskStore);
        this.teams = new Teams(teamStore, new EventLog(wiring.dynamo(), table, config.eventRetention()));
        this.keys = new TeamKeys(new KeyStore(wiring.dynamo(), table));
        HostCommandStore commands = new HostCommandStore(wiring.dynamo(), table, config.commandTtl());
        this.hostCommands = new HostCommands(commands);
        this.reviveFlow = new ReviveFlow(agents, data, commands,
                new RevivalStore(wiring.dynamo(), table, config.transitionRetention()),
                new ReviveFlow.Settings(config.reviveMaxAttempts(), config.reviveBaseWait(), config.reviveBackoffRate()),
                wiring.clock());
        this.sweeper = Wiring.memoize(() -> new Sweeper(
                new SweepStore(wiring.dynamo(), table, config.sweepSegments()), teamStore,
                new SweepPlan.Policy(config.selfPreservationThreshold(), config.selfPreservationMinAlive(),
                        config.fleetSelfPreservationThreshold(), config.fleetSelfPreservationMinAlive()),
                new Sweeper.Timing(config.missSpacing(), config.reviveLongestRun(), config.allowances()), wiring.clock(),
                config.sweepGraceFrom()));
    }

    /** The configuration and clock the handlers answer with. */
    public Wiring wiring() {
        return wiring;
    }

    public AgentChanges agentChanges() {
        return agentChanges;
    }

    public AgentQueries agentQueries() {
        return agentQueries;
    }

    public AgentRecords agentRecords() {
        return agentRecords;
    }

    public Heartbeats heartbeats() {
        return heartbeats;
    }

    public HookIngest hooks() {
        return hooks;
    }

    public Parking parking() {
        return parking;
    }

    public ManualRevive revive() {
        return revive;
    }

    public Tasks tasks() {
        return tasks;
    }

    public Teams teams() {
        return teams;
    }

    public TeamKeys keys() {
        return keys;
    }

    public HostCommands hostCommands() {
        return hostCommands;
    }

    /** The sweep, for its Lambda adapter ({@code SweepHandler}); the same one on every ask. */
    public Sweeper sweeper() {
        return sweeper.get();
    }

    /** The revive flow's steps, for its Lambda adapter ({@code ReviveHandler}). */
    public ReviveFlow reviveFlow() {
        return reviveFlow;
    }
}
