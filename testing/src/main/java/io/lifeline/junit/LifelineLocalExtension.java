package io.lifeline.junit;

import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.template.SamTemplate;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Starts Lifeline Local in the test's JVM once per test class, in memory on a free port of 127.0.0.1, on a
 * {@link TestClock}, and stops it after the class. Tests take a {@link LocalLifeline} as a parameter.
 *
 * <pre>{@code
 * @ExtendWith(LifelineLocalExtension.class)                 // the defaults: stale after 60 s, 2 grace misses
 * class MyAgentTest {
 *     @Test void diesWhenSilent(LocalLifeline lifeline) { ... }
 * }
 *
 * @RegisterExtension                                          // or tuned, with the template's parameters
 * static LifelineLocalExtension lifeline = LifelineLocalExtension.builder().staleAfter(Duration.ofSeconds(30)).build();
 * }</pre>
 */
public final class LifelineLocalExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
    /** Where the clock starts unless told: a fixed instant, so a test's times are the same on every run. */
    public static final Instant DEFAULT_START = Instant.parse("2030-01-01T00:00:00Z");

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(
            LifelineLocalExtension.class);

    /** The sweep interval {@link LocalLifeline#elapse} steps by unless told: the deployment's default. */
    public static final Duration DEFAULT_SWEEP_EVERY = Duration.ofSeconds(15);

    private final Map<String, String> parameters;
    private final Instant start;
    private final Duration sweepEvery;

    /** The defaults (for {@code @ExtendWith}): the template's own parameters, the clock at {@link #DEFAULT_START}. */
    public LifelineLocalExtension() {
        this(new HashMap<>(), DEFAULT_START, DEFAULT_SWEEP_EVERY);
    }

    private LifelineLocalExtension(Map<String, String> parameters, Instant start, Duration sweepEvery) {
        this.parameters = Map.copyOf(parameters);
        this.start = start;
        this.sweepEvery = sweepEvery;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        TestClock clock = new TestClock(start);
        Map<String, String> p = new HashMap<>(parameters);
        // Local's own schedule fires once a minute of real time (a test's sweeps are its own, through sweep()).
        p.putIfAbsent("SweepIntervalMillis", "60000");
        p.putIfAbsent("SweepsPerInvocation", "1");
        LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.bundled(), p, clock));
        context.getStore(NAMESPACE).put(LocalLifeline.class, new Running(new LocalLifeline(local, clock, sweepEvery)));
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        Running running = context.getStore(NAMESPACE).remove(LocalLifeline.class, Running.class);
        if (running != null) {
            running.close();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == LocalLifeline.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Running running = null;
        for (ExtensionContext c = context; c != null && running == null; c = c.getParent().orElse(null)) {
            running = c.getStore(NAMESPACE).get(LocalLifeline.class, Running.class);
        }
        if (running == null) {
            throw new ParameterResolutionException("Lifeline Local is not running: register LifelineLocalExtension "
                    + "on the test class (@ExtendWith or a static @RegisterExtension field)");
        }
        return running.lifeline();
    }

    /** The running Local, closed by the extension after the class. */
    private record Running(LocalLifeline lifeline) {
        void close() throws Exception {
            lifeline.local().close();
        }
    }

    /** Tunes the Local a test class gets. */
    public static final class Builder {
        private final Map<String, String> parameters = new HashMap<>();
        private Instant start = DEFAULT_START;
        private Duration sweepEvery = DEFAULT_SWEEP_EVERY;

        private Builder() {
        }

        /** The step {@link LocalLifeline#elapse} moves the clock by, sweeping after each. */
        public Builder sweepEvery(Duration d) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("a sweep interval is positive, not " + d);
            }
            this.sweepEvery = d;
            return this;
        }

        /** The team's default seconds without a beat before an agent is stale (template parameter StaleAfterSeconds). */
        public Builder staleAfter(Duration d) {
            return parameter("StaleAfterSeconds", Long.toString(d.toSeconds()));
        }

        /** Any of template.yaml's parameters, by name, as Local would take it. */
        public Builder parameter(String name, String value) {
            parameters.put(name, value);
            return this;
        }

        /** Where the test clock starts. */
        public Builder startingAt(Instant instant) {
            this.start = instant;
            return this;
        }

        public LifelineLocalExtension build() {
            return new LifelineLocalExtension(parameters, start, sweepEvery);
        }
    }
}
