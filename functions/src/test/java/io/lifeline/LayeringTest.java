package io.lifeline;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The dependency direction of the functions module, enforced on the compiled main classes (tests excluded):
 * support &lt;- agent (the domain; with auth and core's schedule) &lt;- store &lt;- sweep, events, revive, config
 * &lt;- api (the handlers). A rule over a package with no classes fails rather than passes vacuously (ArchUnit's
 * default {@code archunit.fail_on_empty_should=true}), so a renamed package cannot silently switch a rule off.
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
                        "io.lifeline.events..", "io.lifeline.revive..", "io.lifeline.config..")
                .because("the domain is plain Java: decisions over values, no AWS types, no I/O")
                .check(classes);
    }

    @Test
    void store_anyClass_dependsOnNoLayerAboveIt() {
        noClasses().that().resideInAPackage("io.lifeline.store..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "io.lifeline.api..", "io.lifeline.sweep..", "io.lifeline.events..", "io.lifeline.app..",
                        "io.lifeline.revive..", "io.lifeline.config..")
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
                .layer("Services").definedBy("io.lifeline.app..", "io.lifeline.sweep..", "io.lifeline.events..",
                        "io.lifeline.revive..", "io.lifeline.config..")
                .layer("Handlers").definedBy("io.lifeline.api..")
                .whereLayer("Handlers").mayNotBeAccessedByAnyLayer()
                .whereLayer("Services").mayOnlyBeAccessedByLayers("Handlers")
                .whereLayer("Store").mayOnlyBeAccessedByLayers("Services", "Handlers")
                .whereLayer("Domain").mayOnlyBeAccessedByLayers("Store", "Services", "Handlers")
                .check(classes);
    }

    @Test
    void services_anyClass_dependOnNoHandler() {
        noClasses().that(resideInAnyPackage("io.lifeline.app..", "io.lifeline.sweep..", "io.lifeline.events..",
                        "io.lifeline.revive..", "io.lifeline.config.."))
                .should().dependOnClassesThat().resideInAPackage("io.lifeline.api..")
                .because("handlers are thin adapters over the services, never the other way round")
                .check(classes);
    }
}
