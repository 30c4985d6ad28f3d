package io.lifeline;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructorCall;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;
import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.Heartbeat;
import io.lifeline.agent.HostLease;
import io.lifeline.agent.Liveness;
import io.lifeline.config.Config;
import io.lifeline.schedule.Deadlines;
import io.lifeline.schedule.Schedule;
import io.lifeline.store.agent.AgentStore;
import io.lifeline.store.agent.AgentWrites;
import io.lifeline.store.agent.HostLeaseStore;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The dependency direction of the functions module, enforced on the compiled main classes (tests excluded):
 * support &lt;- agent (the domain; with auth and core's schedule) &lt;- store &lt;- app (the application layer: every
 * use case, the sweep and the revive flow among them) &lt;- adapters (api's HTTP handlers and authorizer, the sweep's,
 * outbox's and revive's Lambda handlers, config's wiring and composition root, aws's adapters of app's ports). The
 * store judges nothing: no call of Liveness's or HostLease's judgements, which the application layer asks for; only
 * Liveness reaches the schedule arithmetic (when a scheduled agent is due). Handlers reach the store only through
 * app. A rule over a package with no classes fails rather than passes vacuously (ArchUnit's default
 * {@code archunit.fail_on_empty_should=true}), so a renamed package cannot silently switch a rule off.
 */
@Tag("unit")
class LayeringTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.lifeline");
    }

    @Test
    void domain_anyClass_dependsOnNoAwsTypeAndNoUpperLayer() {
        noClasses().that().resideInAPackage("io.lifeline.agent..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "software.amazon..", "com.amazonaws..",
                        "io.lifeline.store..", "io.lifeline.api..", "io.lifeline.sweep..", "io.lifeline.app..",
                        "io.lifeline.events..", "io.lifeline.revive..", "io.lifeline.config..", "io.lifeline.aws..")
                .because("the domain is plain Java: decisions over values, no AWS types, no I/O")
                .check(classes);
    }

    @Test
    void store_anyClass_dependsOnNoLayerAboveIt() {
        noClasses().that().resideInAPackage("io.lifeline.store..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "io.lifeline.api..", "io.lifeline.sweep..", "io.lifeline.events..", "io.lifeline.app..",
                        "io.lifeline.revive..", "io.lifeline.config..", "io.lifeline.aws..")
                .because("the store answers the layers above it and never calls up into them")
                .check(classes);
    }

    @Test
    void support_anyClass_dependsOnNoOtherLifelinePackage() {
        noClasses().that().resideInAPackage("io.lifeline.support..")
                .should().dependOnClassesThat(resideInAPackage("io.lifeline..")
                        .and(not(resideInAPackage("io.lifeline.support.."))))
                .because("Json, Log and Metrics sit beneath everything")
                .check(classes);
    }

    @Test
    void layers_everyDependency_pointsDown() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("Support").definedBy("io.lifeline.support..")
                .layer("Domain").definedBy("io.lifeline.agent..", "io.lifeline.auth..", "io.lifeline.schedule..",
                        "io.lifeline.hooks..")
                .layer("Store").definedBy("io.lifeline.store..")
                .layer("Application").definedBy("io.lifeline.app..")
                .layer("Adapters").definedBy("io.lifeline.api..", "io.lifeline.sweep..", "io.lifeline.events..",
                        "io.lifeline.revive..", "io.lifeline.config..", "io.lifeline.aws..")
                .whereLayer("Adapters").mayNotBeAccessedByAnyLayer()
                .whereLayer("Application").mayOnlyBeAccessedByLayers("Adapters")
                .whereLayer("Store").mayOnlyBeAccessedByLayers("Application", "Adapters")
                .whereLayer("Domain").mayOnlyBeAccessedByLayers("Store", "Application", "Adapters")
                .check(classes);
    }

    @Test
    void application_anyClass_dependsOnNoAdapter() {
        noClasses().that().resideInAPackage("io.lifeline.app..")
                .should().dependOnClassesThat().resideInAnyPackage("io.lifeline.api..", "io.lifeline.sweep..",
                        "io.lifeline.events..", "io.lifeline.revive..", "io.lifeline.config..", "io.lifeline.aws..",
                        "software.amazon.awssdk.services.sfn..", "software.amazon.awssdk.services.eventbridge..",
                        "software.amazon.awssdk.services.sqs..", "com.amazonaws.services.lambda..")
                .because("a use case is asked by its adapters and reaches AWS beyond the store only through a port "
                        + "of its own (ReviveStarts, EventBus), whose adapter (io.lifeline.aws) the composition root "
                        + "hands it")
                .check(classes);
    }

    @Test
    void services_anyClass_dependOnNoHandler() {
        noClasses().that(resideInAnyPackage("io.lifeline.app..", "io.lifeline.sweep..", "io.lifeline.events..",
                        "io.lifeline.revive..", "io.lifeline.config..", "io.lifeline.aws.."))
                .should().dependOnClassesThat().resideInAPackage("io.lifeline.api..")
                .because("handlers are thin adapters over the services, never the other way round")
                .check(classes);
    }

    /** A store class itself (not one of the records it answers with): its constructor or one of its methods. */
    private static final DescribedPredicate<JavaCall<?>> STORE_CLASS_CALL = new DescribedPredicate<>(
            "a constructor of a store type, or a method of a top-level store class") {
        @Override
        public boolean test(JavaCall<?> call) {
            JavaClass owner = call.getTargetOwner();
            if (!owner.getPackageName().startsWith("io.lifeline.store")) {
                return false;
            }
            return call instanceof JavaConstructorCall || owner.isTopLevelClass();
        }
    };

    /**
     * What the handlers may still name of the store: the records its reads answer with, nested in the store classes
     * (KeyStore.KeyInfo, NewKey and KeyRef, AgentDataStore.AgentData, TransitionLog.Page, InboxStore.Notice,
     * RevivalStore.Revival and Step, TaskStore.Change, HostCommandStore.Command, EventLog.Entry and Page), and their accessors:
     * they are the use cases' answers, which a handler renders; copying each into an app type would be a second
     * definition of the same fields. Nothing else: no store is built, and no read or write is called, in a handler.
     */
    @Test
    void handlers_anyClass_reachTheStoreOnlyThroughTheApplicationLayer() {
        noClasses().that().resideInAnyPackage("io.lifeline.api..", "io.lifeline.sweep..", "io.lifeline.revive..")
                .should().callCodeUnitWhere(STORE_CLASS_CALL)
                .because("every route's and the sweep's and revive flow's work is a use case of io.lifeline.app, "
                        + "built by config.UseCases; the handlers parse, call it, and render its answer")
                .check(classes);
    }

    @Test
    void outboxAndAlertFlowHandlers_reachTheStoreOnlyThroughTheApplicationLayer() {
        noClasses().that().haveFullyQualifiedName("io.lifeline.events.PublisherHandler")
                .or().haveFullyQualifiedName("io.lifeline.events.OutboxRepairHandler")
                .or().haveFullyQualifiedName("io.lifeline.events.DigestHandler")
                .or().haveFullyQualifiedName("io.lifeline.events.FlapCheckHandler")
                .should().callCodeUnitWhere(STORE_CLASS_CALL)
                .because("the outbox's pass and its repair, the burst digest's steps and the flap check are "
                        + "io.lifeline.app's use cases (Outbox, OutboxRepairs, BurstDigest, FlapCheck), built by "
                        + "config.UseCases; their Lambda handlers parse the event, call them, and log")
                .check(classes);
    }

    @Test
    void eventsAdapters_sendToTheBusOnlyThroughTheApplicationLayer() {
        noClasses().that().resideInAPackage("io.lifeline.events..")
                .should().callCodeUnitWhere(BUS_CALL)
                .because("the events go out through app's port EventBus, sent by the use cases; the adapter "
                        + "EventBridgePublisher is built by config.UseCases")
                .check(classes);
    }

    /** A constructor or method of the bus's AWS adapter, or a send through app's port to it. */
    private static final DescribedPredicate<JavaCall<?>> BUS_CALL = new DescribedPredicate<>(
            "a call of EventBridgePublisher, or EventBus.send") {
        @Override
        public boolean test(JavaCall<?> call) {
            String owner = call.getTargetOwner().getName();
            return owner.equals("io.lifeline.aws.EventBridgePublisher")
                    || owner.equals("io.lifeline.app.EventBus") && call.getName().equals("send");
        }
    };

    /** Liveness's and HostLease's judgements: what a deadline is, whether an agent is alive, what a lease decides. */
    private static final DescribedPredicate<JavaMethodCall> JUDGING = new DescribedPredicate<>(
            "a judgement of Liveness or HostLease") {
        @Override
        public boolean test(JavaMethodCall call) {
            String owner = call.getTargetOwner().getName();
            String name = call.getName();
            return (owner.equals(Liveness.class.getName()) && Set.of("judged", "throughLease", "shown", "overdue",
                    "stale", "window", "deadline", "viaLease", "carried", "awaiting", "awaitingAlertDue", "scheduled",
                    "followsSchedule", "sessionActive", "paused", "leaseSilent", "afterStart").contains(name))
                    || (owner.equals(HostLease.class.getName()) && Set.of("expired", "restored", "staleAnswers")
                    .contains(name))
                    || (owner.equals(HostLease.Cached.class.getName()) && name.equals("of"));
        }
    };

    @Test
    void store_anyClass_callsNoLivenessOrLeaseJudgement() {
        noClasses().that().resideInAPackage("io.lifeline.store..")
                .should().callMethodWhere(JUDGING)
                .because("the store reads and writes what it is told (Liveness.due, Liveness.staleBefore); Liveness "
                        + "judges (the heartbeat expression and the sweep's lease condition are pinned to Liveness by "
                        + "LivenessExpressionTest)")
                .check(classes);
    }

    /** The schedule arithmetic: a schedule's next slot and the deadline it gives (core's, and cron-utils' beneath). */
    private static final DescribedPredicate<JavaMethodCall> SCHEDULE_ARITHMETIC = new DescribedPredicate<>(
            "the schedule arithmetic (Deadlines, Schedule.nextAfter, cron-utils' ExecutionTime)") {
        @Override
        public boolean test(JavaMethodCall call) {
            String owner = call.getTargetOwner().getName();
            return owner.equals(Deadlines.class.getName())
                    || call.getTargetOwner().isAssignableTo(Schedule.class) && call.getName().equals("nextAfter")
                    || owner.startsWith("com.cronutils.model.time.");
        }
    };

    @Test
    void scheduleArithmetic_isReachedOnlyByLiveness() {
        noClasses().that().resideOutsideOfPackage("io.lifeline.schedule..")
                .and().doNotHaveFullyQualifiedName(Liveness.class.getName())
                .should().callMethodWhere(SCHEDULE_ARITHMETIC)
                .because("when a scheduled agent is due is Liveness's answer (Liveness.scheduled): the store writes it, "
                        + "nothing else computes it")
                .check(classes);
    }

    @Test
    void scheduleArithmetic_isReallyReachedByLiveness() {
        // The rule above must not pass vacuously: Liveness does call it (and the schedule package is imported).
        Assertions.assertTrue(classes.get(Liveness.class).getMethodCallsFromSelf().stream()
                .anyMatch(SCHEDULE_ARITHMETIC), "Liveness calls Deadlines.next");
    }

    @Test
    void handlers_anyClass_callNoLivenessOrLeaseJudgement() {
        noClasses().that().resideInAPackage("io.lifeline.api..")
                .should().callMethodWhere(JUDGING)
                .because("handlers are adapters: an agent's judgement is the application layer's, through Liveness")
                .check(classes);
    }

    @Test
    void heartbeatAndViews_useCases_liveInTheApplicationLayer() {
        noClasses().that().resideInAPackage("io.lifeline.api..")
                .should().callMethod(AgentWrites.class, "hostedBeat", Heartbeat.class,
                        Instant.class, Instant.class, String.class)
                .orShould().callMethod(AgentStore.class, "read", String.class, String.class)
                .orShould().callMethod(AgentStore.class, "list", String.class, AgentStatus.class)
                .orShould().callMethod(HostLeaseStore.class, "renew", String.class, String.class, List.class,
                        Instant.class)
                .orShould().callMethod(AgentWrites.class, "join", String.class, String.class, Instant.class)
                .orShould().callMethod(AgentWrites.class, "joinAndRead", String.class, String.class, Instant.class)
                .orShould().callMethod(AgentWrites.class, "pause", String.class, String.class, Instant.class)
                .orShould().callMethod(AgentWrites.class, "resume", String.class, String.class)
                .because("a host's batch, a beat, a join, a pause and the agent views are io.lifeline.app's use cases "
                        + "(Heartbeats, AgentChanges, AgentQueries), so every answer that shows an agent is judged as "
                        + "GET judges it; handlers call them")
                .check(classes);
    }

    @Test
    void functions_dependOnNothingOfLifelineLocal_andCarryNoSwitchOfItsOwn() {
        noClasses().should().dependOnClassesThat().resideInAPackage("io.lifeline.local..")
                .because("the functions run in AWS as they run in Local")
                .check(classes);
        // Local's late-sweep rule is a SweepGate Local hands SweepHandler; no member of the functions switches it.
        ArchRuleDefinition.noMembers()
                .should().haveNameMatching("(?i).*(skipsLate|lifelineLocal|localOnly).*")
                .check(classes);
    }

    @Test
    void config_readsNoVariableOfLocalsLateSweepRule() {
        Set<String> read = new TreeSet<>();
        Map<String, String> env = new HashMap<>(Map.of("LIVE_TABLE", "live",
                "LEDGER_TABLE", "ledger")) {
            @Override
            public String get(Object name) {
                read.add((String) name);
                return super.get(name);
            }
        };
        Config.fromEnvironment(env);
        Assertions.assertTrue(read.contains("SWEEP_INTERVAL_MS"), read.toString());
        Assertions.assertTrue(read.stream().noneMatch(n -> n.contains("SKIPS_LATE")
                || n.contains("LOCAL")), read.toString());
    }
}
