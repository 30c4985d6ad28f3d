package io.lifeline.local;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lifeline Local's rooms, enforced on its compiled main classes (tests excluded): template (SamTemplate, the
 * functions' policies, the tables) &lt;- runtime (the function host, its context, metrics and schedules, the
 * owner-only files) &lt;- aws (the stand-ins, the stream, the state machine interpreter) and http (the front door
 * and the gateway) &lt;- app (the command line, the assembly, the data dir). No cycle between rooms, no class
 * outside one, and nothing of Local in the functions (they cannot see it, and carry no Local-only switch:
 * functions' LayeringTest).
 */
@Tag("unit")
class RoomsTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.lifeline");
    }

    @Test
    void rooms_haveNoCycleBetweenThem() {
        slices().matching("io.lifeline.local.(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void rooms_everyDependency_pointsDown() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("Template").definedBy("io.lifeline.local.template..")
                .layer("Runtime").definedBy("io.lifeline.local.runtime..")
                .layer("Aws").definedBy("io.lifeline.local.aws..")
                .layer("Http").definedBy("io.lifeline.local.http..")
                .layer("App").definedBy("io.lifeline.local.app..")
                .whereLayer("App").mayNotBeAccessedByAnyLayer()
                .whereLayer("Http").mayOnlyBeAccessedByLayers("App")
                .whereLayer("Aws").mayOnlyBeAccessedByLayers("App")
                .whereLayer("Runtime").mayOnlyBeAccessedByLayers("Aws", "Http", "App")
                .whereLayer("Template").mayOnlyBeAccessedByLayers("Runtime", "Aws", "Http", "App")
                .check(classes);
    }

    @Test
    void everyClassOfLocal_livesInARoom() {
        classes().that().resideInAPackage("io.lifeline.local..")
                .should().resideInAnyPackage("io.lifeline.local.template..", "io.lifeline.local.runtime..",
                        "io.lifeline.local.aws..", "io.lifeline.local.http..", "io.lifeline.local.app..")
                .because("a class in io.lifeline.local itself would sit outside every room's rule")
                .check(classes);
    }

    @Test
    void functions_dependOnNothingOfLocal() {
        noClasses().that().resideInAPackage("io.lifeline..").and().resideOutsideOfPackage("io.lifeline.local..")
                .should().dependOnClassesThat().resideInAPackage("io.lifeline.local..")
                .because("the functions run in AWS as they run in Local; Local hands them what it decides (SweepGate)")
                .check(classes);
    }
}
