package io.lifeline;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The store's rooms, enforced on the compiled main classes (tests excluded), as Local's RoomsTest holds Local's:
 * dynamo (the DynamoDB helpers: items, keys, update expressions, failures, batches, transactions, table names) &lt;-
 * agent (the live agent item, its roster and reads, its writes, its side data, host lease and commands, tasks, its
 * transition record) &lt;- ledger (the team's event log, inbox, revivals) and team (team items, settings, keys, the
 * fleet) &lt;- outbox (the stream's changes, what the outbox marks, parks and repairs, alert windows, flaps) and
 * sweep (the sweep's scan and writes). No cycle between rooms, and no class in the store outside one.
 */
@Tag("unit")
class StoreRoomsTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.lifeline.store");
    }

    @Test
    void rooms_haveNoCycleBetweenThem() {
        slices().matching("io.lifeline.store.(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void rooms_everyDependency_pointsDown() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("Dynamo").definedBy("io.lifeline.store.dynamo..")
                .layer("Agent").definedBy("io.lifeline.store.agent..")
                .layer("Ledger").definedBy("io.lifeline.store.ledger..")
                .layer("Team").definedBy("io.lifeline.store.team..")
                .layer("Outbox").definedBy("io.lifeline.store.outbox..")
                .layer("Sweep").definedBy("io.lifeline.store.sweep..")
                .whereLayer("Sweep").mayNotBeAccessedByAnyLayer()
                .whereLayer("Outbox").mayNotBeAccessedByAnyLayer()
                .whereLayer("Ledger").mayOnlyBeAccessedByLayers("Outbox")
                .whereLayer("Team").mayOnlyBeAccessedByLayers("Outbox", "Sweep")
                .whereLayer("Agent").mayOnlyBeAccessedByLayers("Ledger", "Team", "Outbox", "Sweep")
                .whereLayer("Dynamo").mayOnlyBeAccessedByLayers("Agent", "Ledger", "Team", "Outbox", "Sweep")
                .check(classes);
    }

    @Test
    void everyClassOfTheStore_livesInARoom() {
        classes().that().resideInAPackage("io.lifeline.store..")
                .should().resideInAnyPackage("io.lifeline.store.dynamo..", "io.lifeline.store.agent..",
                        "io.lifeline.store.ledger..", "io.lifeline.store.team..", "io.lifeline.store.outbox..",
                        "io.lifeline.store.sweep..")
                .because("a class in io.lifeline.store itself would sit outside every room's rule")
                .check(classes);
    }
}
