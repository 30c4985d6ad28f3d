package io.lifeline.config;

import io.lifeline.agent.Liveness;
import io.lifeline.agent.SweepPlan;
import io.lifeline.app.AgentChanges;
import io.lifeline.app.AgentFlaps;
import io.lifeline.app.AgentPages;
import io.lifeline.app.AgentQueries;
import io.lifeline.app.AgentRecords;
import io.lifeline.app.AlertBursts;
import io.lifeline.app.BurstDigest;
import io.lifeline.app.DeathFollowUp;
import io.lifeline.app.EventBus;
import io.lifeline.app.FlapCheck;
import io.lifeline.app.Heartbeats;
import io.lifeline.app.HookIngest;
import io.lifeline.app.RunningSubagents;
import io.lifeline.app.HostCommands;
import io.lifeline.app.ManualRevive;
import io.lifeline.app.Outbox;
import io.lifeline.app.OutboxRepairs;
import io.lifeline.app.Parking;
import io.lifeline.app.ReviveFlow;
import io.lifeline.app.StallDigest;
import io.lifeline.app.SweepRound;
import io.lifeline.app.Sweeper;
import io.lifeline.app.Tasks;
import io.lifeline.app.TeamKeys;
import io.lifeline.app.Teams;
import io.lifeline.aws.EventBridgePublisher;
import io.lifeline.aws.StepFunctionsReviveStarts;
import io.lifeline.store.agent.AgentDataStore;
import io.lifeline.store.agent.AgentRoster;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import io.lifeline.store.agent.HostCommandStore;
import io.lifeline.store.agent.HostLeaseStore;
import io.lifeline.store.agent.ParkStore;
import io.lifeline.store.agent.ReviveTransitions;
import io.lifeline.store.agent.TaskStore;
import io.lifeline.store.agent.TransitionLog;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.ledger.EventLog;
import io.lifeline.store.ledger.InboxStore;
import io.lifeline.store.ledger.RevivalStore;
import io.lifeline.store.outbox.AlertWindowStore;
import io.lifeline.store.outbox.FlapStore;
import io.lifeline.store.outbox.OutboxMarks;
import io.lifeline.store.outbox.OutboxParking;
import io.lifeline.store.outbox.OutboxRepair;
import io.lifeline.store.sweep.SweepRounds;
import io.lifeline.store.sweep.SweepStore;
import io.lifeline.store.team.KeyStore;
import io.lifeline.store.team.TeamStore;
import java.time.Duration;
import java.util.List;
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
    /** In-invocation retries of entries PutEvents refused, before the outbox hands the record back to the stream. */
    public static final List<Duration> PUT_EVENTS_BACKOFF = List.of(Duration.ofMillis(100), Duration.ofMillis(200),
            Duration.ofMillis(400), Duration.ofMillis(800), Duration.ofMillis(1600));

    private final Wiring wiring;
    private final AgentChanges agentChanges;
    private final AgentQueries agentQueries;
    private final AgentPages agentPages;
    private final AgentRecords agentRecords;
    private final Heartbeats heartbeats;
    private final HookIngest hooks;
    private final RunningSubagents subagents;
    private final ManualRevive revive;
    private final Tasks tasks;
    private final Teams teams;
    private final TeamKeys keys;
    private final HostCommands hostCommands;
    private final Parking parking;
    private final ReviveFlow reviveFlow;
    /** Built on first ask: its store's scan runs on a thread pool that only the sweep's function needs. */
    private final Supplier<Sweeper> sweeper;
    private final Supplier<SweepRound> sweepRound;
    /** Built on first ask: its pass runs on a thread pool that only the outbox's functions need. */
    private final Supplier<Outbox> outbox;
    private final Supplier<OutboxRepairs> outboxRepairs;

    public UseCases(Wiring wiring) {
        this.wiring = wiring;
        Config config = wiring.config();
        Tables table = config.tables();
        AgentStore agents = new AgentStore(wiring.dynamo(), table);
        AgentWrites writes = new AgentWrites(wiring.dynamo(), table);
        AgentDataStore data = new AgentDataStore(wiring.dynamo(), table);
        TaskStore taskStore = new TaskStore(wiring.dynamo(), table);
        TeamStore teamStore = new TeamStore(wiring.dynamo(), table);
        this.agentChanges = new AgentChanges(agents, writes, data, taskStore, teamStore);
        this.agentQueries = new AgentQueries(agents);
        this.agentPages = new AgentPages(new AgentRoster(wiring.dynamo(), table));
        this.agentRecords = new AgentRecords(agents, data,
                new TransitionLog(wiring.dynamo(), table, config.transitionRetention()),
                new InboxStore(wiring.dynamo(), table, config.eventRetention()),
                new RevivalStore(wiring.dynamo(), table, config.transitionRetention()));
        this.heartbeats = new Heartbeats(writes, data, new HostLeaseStore(wiring.dynamo(), table),
                config.allowances());
        this.parking = new Parking(agents, new ParkStore(wiring.dynamo(), table), Liveness.DEFAULT_PARK);
        this.subagents = new RunningSubagents(data);
        this.hooks = new HookIngest(agents, data, heartbeats, agentChanges, config.allowances(),
                config.hookCoalesceWindow(), parking);
        this.revive = new ManualRevive(agents, new StepFunctionsReviveStarts(wiring.stepFunctions(),
                config.reviveStateMachineArn()));
        this.tasks = new Tasks(taskStore);
        this.teams = new Teams(teamStore, new EventLog(wiring.dynamo(), table, config.eventRetention()));
        this.keys = new TeamKeys(new KeyStore(wiring.dynamo(), table));
        HostCommandStore commands = new HostCommandStore(wiring.dynamo(), table, config.commandTtl());
        this.hostCommands = new HostCommands(commands);
        this.reviveFlow = new ReviveFlow(agents, new ReviveTransitions(wiring.dynamo(), table), data, commands,
                new RevivalStore(wiring.dynamo(), table, config.transitionRetention()),
                new ReviveFlow.Settings(config.reviveMaxAttempts(), config.reviveBaseWait(), config.reviveBackoffRate()),
                wiring.clock());
        this.sweeper = Wiring.memoize(() -> new Sweeper(
                new SweepStore(wiring.dynamo(), table, config.sweepSegments()), teamStore,
                new SweepPlan.Policy(config.selfPreservationThreshold(), config.selfPreservationMinAlive(),
                        config.fleetSelfPreservationThreshold(), config.fleetSelfPreservationMinAlive()),
                new Sweeper.Timing(config.missSpacing(), config.reviveLongestRun(), config.allowances()), wiring.clock(),
                config.sweepGraceFrom()));
        this.sweepRound = Wiring.memoize(() -> new SweepRound(sweeper.get(),
                new SweepRounds(wiring.dynamo(), table), config.sweepSegments()));
        this.outbox = Wiring.memoize(() -> new Outbox(
                new TransitionLog(wiring.dynamo(), table, config.transitionRetention()),
                new DeathFollowUp(taskStore, teamStore, new InboxStore(wiring.dynamo(), table, config.eventRetention())),
                new EventLog(wiring.dynamo(), table, config.eventRetention()), new OutboxMarks(wiring.dynamo(), table),
                new OutboxParking(wiring.dynamo(), table, config.transitionRetention()),
                new AlertBursts(new AlertWindowStore(wiring.dynamo(), table, config.eventRetention()),
                        config.alertBursts(), wiring.clock()),
                new AgentFlaps(new FlapStore(wiring.dynamo(), table, config.eventRetention()), config.flapping()),
                config.eventBusName() == null ? null : new EventBridgePublisher(wiring.eventBridge().get(),
                        config.eventBusName(), PUT_EVENTS_BACKOFF),
                wiring.clock()));
        this.outboxRepairs = Wiring.memoize(() -> new OutboxRepairs(outbox(),
                new OutboxRepair(wiring.dynamo(), table), agents, config.offlineRetention(), config.eventRetention(),
                wiring.clock()));
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

    /** The team's agents a page at a time, and those changed since a time. */
    public AgentPages agentPages() {
        return agentPages;
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

    public RunningSubagents subagents() {
        return subagents;
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

    /** A sweep fanned out over the sweep queue's invocations ({@code SWEEP_PARTS}), with the same sweeper. */
    public SweepRound sweepRound() {
        return sweepRound.get();
    }

    /** The outbox's pass, for its Lambda adapter ({@code PublisherHandler}); the same one on every ask. */
    public Outbox outbox() {
        return outbox.get();
    }

    /** The outbox's repair, for its Lambda adapter ({@code OutboxRepairHandler}); the same one on every ask. */
    public OutboxRepairs outboxRepairs() {
        return outboxRepairs.get();
    }

    /** The digest flow's step, for its Lambda adapter ({@code DigestHandler}); its digest links {@code dashboardUrl}. */
    public BurstDigest burstDigest(String dashboardUrl) {
        Config config = wiring.config();
        return new BurstDigest(new AlertWindowStore(wiring.dynamo(), config.tables(), config.eventRetention()),
                new EventLog(wiring.dynamo(), config.tables(), config.eventRetention()), eventBus(),
                config.alertBursts(), dashboardUrl, wiring.clock());
    }

    /** The digest of a burst of stalls, for the digest flow's Lambda adapter ({@code DigestHandler}). */
    public StallDigest stallDigest(String dashboardUrl) {
        Config config = wiring.config();
        return new StallDigest(new AlertWindowStore(wiring.dynamo(), config.tables(), config.eventRetention()),
                new EventLog(wiring.dynamo(), config.tables(), config.eventRetention()), eventBus(),
                config.alertBursts(), dashboardUrl, wiring.clock());
    }

    /** The flap-check flow's step, for its Lambda adapter ({@code FlapCheckHandler}). */
    public FlapCheck flapCheck() {
        Config config = wiring.config();
        return new FlapCheck(new EventLog(wiring.dynamo(), config.tables(), config.eventRetention()), eventBus(),
                new FlapStore(wiring.dynamo(), config.tables(), config.eventRetention()),
                new OutboxMarks(wiring.dynamo(), config.tables()), config.flapping(), wiring.clock());
    }

    /** The bus the alert-noise flows send to, or null when none is configured. */
    private EventBus eventBus() {
        Config config = wiring.config();
        return config.eventBusName() == null ? null
                : new EventBridgePublisher(wiring.eventBridge().get(), config.eventBusName(), PUT_EVENTS_BACKOFF);
    }

    /** The revive flow's steps, for its Lambda adapter ({@code ReviveHandler}). */
    public ReviveFlow reviveFlow() {
        return reviveFlow;
    }
}
