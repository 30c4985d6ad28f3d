package io.lifeline.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.AccessTarget;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.lang.annotation.Annotation;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Tags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Every test class of Lifeline Local carries one kind, the one its package names, and a unit test starts nothing
 * (docs/contributing.md, "Test kinds"). Read from the compiled test classes with ArchUnit rather than from the source:
 * a call is seen where the bytecode makes it (not where a comment or a string names a class), through the test
 * helpers a class calls (a unit class that calls a helper which forks a JVM starts a JVM), and the tags are the
 * annotations JUnit reads, {@code @Tags} and {@code @Nested} classes included.
 *
 * <p>The rules:
 * <ol>
 *   <li>A test class carries exactly one kind ({@link #KINDS}) on the class; a {@code @Nested} class or a test method
 *       carries none, except a method's profile tag ({@code soak}, {@code localstack}: the long run of a class whose
 *       kind runs in every build). A class without tests (a fixture) carries no kind.</li>
 *   <li>The package names the kind: {@code io.lifeline.local} (this module's checks) unit; {@code .contract.<route
 *       family>} contract; {@code .e2e}, {@code .browser}, {@code .soak}, {@code .localstack} their kind;
 *       {@code .stack} holds fixtures only. A test beside a room's code ({@code template}, {@code runtime},
 *       {@code aws}, {@code http}, {@code app}: it reaches the room's package-private parts) takes the kind of what
 *       it starts, by the next two rules. Any other package is refused.</li>
 *   <li>A unit class starts nothing: no store (the engine, Local's data dir), no process, no server, no browser,
 *       no Lifeline Local, through any code of its own, of the test helpers it calls or of the JUnit extensions it
 *       registers.</li>
 *   <li>A class of any other kind starts one of them: one that starts nothing is a unit test under another name
 *       (as the template checks were, tagged contract).</li>
 * </ol>
 */
@Tag("unit")
class TestKindsTest {
    static final String ROOT = "io.lifeline.local";
    static final Set<String> KINDS = Set.of("unit", "store", "contract", "e2e", "browser", "real-third-party", "soak",
            "localstack");
    /** Tags a test method may carry besides its class's kind: the Maven profiles that run it. */
    static final Set<String> PROFILES = Set.of("soak", "localstack");
    /** What makes a method a test: JUnit's own, and Jazzer's. */
    static final List<Class<? extends Annotation>> TEST_ANNOTATIONS = List.of(Test.class, ParameterizedTest.class,
            RepeatedTest.class, TestFactory.class, TestTemplate.class, FuzzTest.class);
    static final Set<String> ROOMS = Set.of("template", "runtime", "aws", "http", "app");

    /** A call that starts something: the owner's class name, the member's name ("&lt;init&gt;" a constructor). */
    record Starter(String owner, String member, String what) {
        boolean matches(AccessTarget target) {
            return target.getOwner().getName().equals(owner) && (member.equals("*") || target.getName().equals(member));
        }
    }

    static final List<Starter> STARTERS = List.of(
            new Starter("java.lang.ProcessBuilder", "start", "a process"),
            new Starter("java.lang.ProcessBuilder", "startPipeline", "a process"),
            new Starter("java.lang.Runtime", "exec", "a process"),
            new Starter("java.net.ServerSocket", "<init>", "a server"),
            new Starter("java.nio.channels.ServerSocketChannel", "open", "a server"),
            new Starter("com.sun.net.httpserver.HttpServer", "create", "a server"),
            new Starter("io.lifeline.engine.endpoint.Endpoint", "start", "a server"),
            new Starter("org.openqa.selenium.chrome.ChromeDriver", "<init>", "a browser"),
            new Starter("io.lifeline.engine.Engine", "<init>", "a store"),
            new Starter("io.lifeline.engine.Engine", "open", "a store"),
            new Starter("io.lifeline.local.app.LocalEngine", "open", "a store"),
            new Starter("io.lifeline.local.app.LifelineLocal", "start", "Lifeline Local"),
            new Starter("io.lifeline.local.app.LocalMain", "*", "Lifeline Local's command line"));

    private static JavaClasses classes;
    /** What each code unit of the test classes starts, itself or through the test code it calls. */
    private static Map<JavaCodeUnit, String> starts;

    @BeforeAll
    static void importTestClasses() {
        // This module's compiled tests only; what they call is named, not imported (the names are all a rule needs),
        // which keeps the import to seconds.
        ArchConfiguration config = ArchConfiguration.get();
        boolean resolve = config.resolveMissingDependenciesFromClassPath();
        config.setResolveMissingDependenciesFromClassPath(false);
        try {
            classes = new ClassFileImporter().importPath(testClasses());
        } finally {
            config.setResolveMissingDependenciesFromClassPath(resolve);
        }
        starts = startingCodeUnits(classes);
    }

    @Test
    void everyTestClass_carriesOneKind_andNoOtherTagButAProfile() {
        List<String> wrong = new ArrayList<>();
        for (JavaClass c : classes) {
            Set<String> tags = tags(c);
            if (isTopLevelTestClass(c)) {
                Set<String> kinds = new TreeSet<>(tags);
                kinds.retainAll(KINDS);
                if (kinds.size() != 1 || !KINDS.containsAll(tags)) {
                    wrong.add(c.getName() + ": a test class carries one kind of " + new TreeSet<>(KINDS) + ", not "
                            + new TreeSet<>(tags));
                }
            } else if (!tags.isEmpty()) {
                wrong.add(c.getName() + ": " + (c.isAnnotatedWith(Nested.class)
                        ? "a @Nested class takes its enclosing class's kind" : "a class without tests has no kind")
                        + ", not " + new TreeSet<>(tags));
            }
            c.getMethods().forEach(m -> {
                Set<String> methodTags = tags(m.tryGetAnnotationOfType(Tag.class), m.tryGetAnnotationOfType(Tags.class));
                if (!PROFILES.containsAll(methodTags)) {
                    wrong.add(m.getFullName() + ": a method carries a profile " + PROFILES + " or nothing, not "
                            + methodTags);
                }
            });
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void everyTestClass_livesInItsKindsPackage() {
        List<String> wrong = new ArrayList<>();
        for (JavaClass c : topLevelTestClasses()) {
            String kind = kind(c);
            String pkg = c.getPackageName();
            String sub = pkg.equals(ROOT) ? "" : pkg.substring(ROOT.length() + 1);
            String first = sub.split("\\.")[0];
            if (ROOMS.contains(first)) {
                continue;
            }
            Optional<String> expected = packageKind(sub);
            if (expected.isEmpty()) {
                wrong.add(c.getName() + ": " + pkg + " is neither a kind's package nor a room's");
            } else if (!expected.get().equals(kind)) {
                wrong.add(c.getName() + ": tagged " + kind + " in " + pkg + ", which holds " + expected.get());
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void unitClasses_startNothing_andOtherKinds_startSomething() {
        List<String> wrong = new ArrayList<>();
        for (JavaClass c : topLevelTestClasses()) {
            String kind = kind(c);
            Optional<String> started = started(c);
            if (kind.equals("unit") && started.isPresent()) {
                wrong.add(c.getName() + ": tagged unit, starts " + started.get());
            } else if (!kind.equals("unit") && KINDS.contains(kind) && started.isEmpty()) {
                wrong.add(c.getName() + ": tagged " + kind + ", starts nothing (a unit test)");
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void theRules_seeWhatTheyJudge() {
        // The starters are found through helpers: CrashRestartReviveTest forks its JVMs through CrashRestartTest's.
        assertTrue(started(classes.get(ROOT + ".e2e.ChildLocal")).isPresent(), "ChildLocal forks Local's JVM");
        assertTrue(started(classes.get(ROOT + ".e2e.CrashRestartReviveTest")).isPresent());
        assertEquals(Optional.of("a store"), started(classes.get(ROOT + ".stack.TestStack")));
        // ... and through the JUnit extensions a class registers: ReviveFlowTest's stack is its ReviveFixture's.
        assertEquals(Optional.of("a store"), started(classes.get(ROOT + ".contract.revive.ReviveFlowTest")));
        assertEquals(Optional.empty(), started(classes.get(ROOT + ".template.AlertRulesTest")));
        assertEquals(Optional.empty(), started(getClass().getName()));
        assertTrue(topLevelTestClasses().size() > 100, "the test classes were imported");
    }

    private static Path testClasses() {
        try {
            return Path.of(TestKindsTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The kind a package holds, empty where the package is a room's (any kind) or names none. */
    static Optional<String> packageKind(String sub) {
        if (sub.isEmpty()) {
            return Optional.of("unit");
        }
        if (sub.startsWith("contract.") && sub.indexOf('.', "contract.".length()) < 0) {
            return Optional.of("contract");
        }
        return Set.of("e2e", "browser", "soak", "localstack").contains(sub) ? Optional.of(sub) : Optional.empty();
    }

    private static List<JavaClass> topLevelTestClasses() {
        return classes.stream().filter(TestKindsTest::isTopLevelTestClass).toList();
    }

    private static boolean isTopLevelTestClass(JavaClass c) {
        return c.isTopLevelClass() && hasTests(c);
    }

    private static boolean hasTests(JavaClass c) {
        return c.getMethods().stream().anyMatch(m -> TEST_ANNOTATIONS.stream().anyMatch(m::isAnnotatedWith))
                || classes.stream().anyMatch(n -> n.isAnnotatedWith(Nested.class)
                        && n.getEnclosingClass().map(c::equals).orElse(false) && hasTests(n));
    }

    private static String kind(JavaClass c) {
        Set<String> kinds = new TreeSet<>(tags(c));
        kinds.retainAll(KINDS);
        return kinds.size() == 1 ? kinds.iterator().next() : "(none)";
    }

    private static Set<String> tags(JavaClass c) {
        return tags(c.tryGetAnnotationOfType(Tag.class), c.tryGetAnnotationOfType(Tags.class));
    }

    private static Set<String> tags(Optional<Tag> one, Optional<Tags> many) {
        Set<String> tags = new TreeSet<>();
        one.ifPresent(t -> tags.add(t.value()));
        many.ifPresent(ts -> List.of(ts.value()).forEach(t -> tags.add(t.value())));
        return tags;
    }

    private static Optional<String> started(String className) {
        return started(classes.get(className));
    }

    /** What a class starts: through any code unit of it or of the classes it encloses (lambdas' included). */
    private static Optional<String> started(JavaClass c) {
        return classes.stream().filter(k -> k.equals(c) || enclosedBy(k, c))
                .flatMap(k -> codeUnits(k).stream())
                .map(starts::get).filter(s -> s != null).findFirst();
    }

    private static boolean enclosedBy(JavaClass inner, JavaClass outer) {
        Optional<JavaClass> e = inner.getEnclosingClass();
        while (e.isPresent()) {
            if (e.get().equals(outer)) {
                return true;
            }
            e = e.get().getEnclosingClass();
        }
        return false;
    }

    private static Set<JavaCodeUnit> codeUnits(JavaClass c) {
        Set<JavaCodeUnit> units = new LinkedHashSet<>(c.getCodeUnits());
        c.getStaticInitializer().ifPresent(units::add);
        return units;
    }

    /**
     * Marks every code unit that calls a starter, then, until nothing changes, every code unit that calls a marked
     * one, and every code unit that touches a class whose static initializer is marked (SharedDynamo's engine).
     */
    static Map<JavaCodeUnit, String> startingCodeUnits(JavaClasses imported) {
        Map<JavaCodeUnit, String> marked = new HashMap<>();
        Set<JavaCodeUnit> all = new HashSet<>();
        imported.forEach(c -> all.addAll(codeUnits(c)));
        boolean changed = true;
        while (changed) {
            changed = false;
            for (JavaCodeUnit u : all) {
                if (marked.containsKey(u)) {
                    continue;
                }
                for (JavaAccess<?> a : u.getAccessesFromSelf()) {
                    Optional<String> what = starts(a.getTarget(), marked);
                    if (what.isPresent()) {
                        marked.put(u, what.get());
                        changed = true;
                        break;
                    }
                }
            }
        }
        return marked;
    }

    private static boolean isExtension(JavaClass c) {
        return c.getRawInterfaces().stream().anyMatch(i -> i.getPackageName().equals(Extension.class.getPackageName()));
    }

    private static Optional<String> starts(AccessTarget target, Map<JavaCodeUnit, String> marked) {
        for (Starter s : STARTERS) {
            if (s.matches(target)) {
                return Optional.of(s.what());
            }
        }
        if (target.getName().equals("<init>") && isExtension(target.getOwner())) {
            // A JUnit extension a class registers runs its callbacks for it: constructing one starts what they start.
            Optional<String> callbacks = codeUnits(target.getOwner()).stream().map(marked::get)
                    .filter(s -> s != null).findFirst();
            if (callbacks.isPresent()) {
                return callbacks;
            }
        }
        Optional<? extends JavaMember> member = target.resolveMember();
        if (member.isPresent() && member.get() instanceof JavaCodeUnit unit && marked.containsKey(unit)) {
            return Optional.of(marked.get(unit));
        }
        return target.getOwner().getStaticInitializer().map(marked::get);
    }
}
