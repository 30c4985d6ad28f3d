package io.lifeline.local.runtime;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.config.Config;
import io.lifeline.config.Priming;
import io.lifeline.config.Wiring;
import io.lifeline.local.template.PolicyGuard;
import io.lifeline.local.template.SamTemplate;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.Supplier;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.sfn.SfnClient;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The template's functions, each instantiated once (as a Lambda container would be) from the handler class
 * the template names, with the environment the template gives it and Local's clients and clock.
 */
public final class FunctionHost {
    private final Map<String, SamTemplate.Function> functions = new LinkedHashMap<>();
    private final Map<String, RequestHandler<?, ?>> handlers = new HashMap<>();
    private final Map<String, Wiring> wirings = new HashMap<>();
    private final Pause pause = new Pause();
    private final PolicyGuard guard;
    /** Each function's reserved concurrency as permits (none: unlimited), and the invocations it throttled. */
    private final Map<String, Semaphore> concurrency = new HashMap<>();
    private final Map<String, AtomicInteger> throttled = new ConcurrentHashMap<>();

    /** {@code resourceNames}: the local name of each template resource a function's environment refers to. */
    public FunctionHost(SamTemplate template, Map<String, String> parameters, Map<String, String> resourceNames,
                        DynamoDbClient dynamo, Supplier<EventBridgeClient> eventBridge,
                        Supplier<SfnClient> stepFunctions, Supplier<SqsClient> sqs, Clock clock) {
        this(template, parameters, resourceNames, dynamo, eventBridge, stepFunctions, sqs, clock, Map.of());
    }

    /**
     * {@code builders}: by handler class name, how Local builds that handler from its wiring instead of its
     * {@code (Wiring)} constructor, for what Local hands a handler besides (the sweep's {@link LateSweepGate}).
     */
    public FunctionHost(SamTemplate template, Map<String, String> parameters, Map<String, String> resourceNames,
                        DynamoDbClient dynamo, Supplier<EventBridgeClient> eventBridge,
                        Supplier<SfnClient> stepFunctions, Supplier<SqsClient> sqs, Clock clock,
                        Map<String, Function<Wiring, RequestHandler<?, ?>>> builders) {
        Clock pausable = new PausableClock(clock, pause);
        this.guard = new PolicyGuard(resourceNames);
        for (SamTemplate.Function f : template.functions(parameters, resourceNames)) {
            functions.put(f.logicalId(), f);
            // Each function's clients answer only what its policy in the template allows, as IAM would.
            Wiring wiring = new Wiring(Config.fromEnvironment(f.environment()), pausable,
                    guard.dynamo(f.policy(), dynamo), guard.eventBridge(f.policy(), eventBridge),
                    guard.stepFunctions(f.policy(), stepFunctions), guard.sqs(f.policy(), sqs));
            wirings.put(f.logicalId(), wiring);
            var builder = builders.get(f.handlerClass());
            handlers.put(f.logicalId(), builder != null ? builder.apply(wiring) : instantiate(f, wiring));
            template.reservedConcurrency(f.logicalId(), parameters).ifPresent(n ->
                    concurrency.put(f.logicalId(), new Semaphore(n)));
        }
    }

    /** Lambda's answer to an invocation past the function's reserved concurrency (TooManyRequestsException). */
    public static final class ThrottledException extends RuntimeException {
        ThrottledException(String logicalId) {
            super("Rate Exceeded: " + logicalId + " is at its reserved concurrency (TooManyRequestsException)");
        }
    }

    /**
     * Runs {@code invocation} as one invocation of {@code logicalId} under its reserved concurrency: past it, Lambda
     * throttles ({@link ThrottledException}, counted in {@link #throttles}) instead of running it.
     */
    public <T> T invoke(String logicalId, Supplier<T> invocation) {
        Semaphore permits = concurrency.get(logicalId);
        if (permits == null) {
            return invocation.get();
        }
        if (!permits.tryAcquire()) {
            throttled.computeIfAbsent(logicalId, k -> new AtomicInteger()).incrementAndGet();
            throw new ThrottledException(logicalId);
        }
        try {
            return invocation.get();
        } finally {
            permits.release();
        }
    }

    /** Invocations of {@code logicalId} throttled so far (Lambda's Throttles metric). */
    public int throttles(String logicalId) {
        AtomicInteger n = throttled.get(logicalId);
        return n == null ? 0 : n.get();
    }

    /** The IAM check of every function's calls: what each asked for, and what its policy refused. */
    public PolicyGuard policies() {
        return guard;
    }

    /**
     * SnapStart's priming of a function ({@link io.lifeline.config.Priming}, which Lambda runs before it takes
     * the snapshot), through the function's own clients, so its policy applies.
     */
    public boolean prime(String logicalId) {
        Wiring wiring = wirings.get(logicalId);
        if (wiring == null) {
            throw new IllegalArgumentException("No function " + logicalId + " in the template");
        }
        return new Priming(wiring).prime();
    }

    /** The local ARN Local gives a function, as a state machine's Task resource names it. */
    public static String functionArn(String logicalId) {
        return "arn:aws:lambda:us-east-1:000000000000:function:" + logicalId;
    }

    private static RequestHandler<?, ?> instantiate(SamTemplate.Function f, Wiring wiring) {
        try {
            Class<?> type = Class.forName(f.handlerClass());
            return (RequestHandler<?, ?>) type.getConstructor(Wiring.class).newInstance(wiring);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Cannot start " + f.logicalId() + " (" + f.handlerClass() + ")", e);
        }
    }

    public List<SamTemplate.Function> functions() {
        return List.copyOf(functions.values());
    }

    @SuppressWarnings("unchecked")
    public <I, O> RequestHandler<I, O> handler(String logicalId) {
        RequestHandler<?, ?> h = handlers.get(logicalId);
        if (h == null) {
            throw new IllegalArgumentException("No function " + logicalId + " in the template");
        }
        return (RequestHandler<I, O>) h;
    }

    /**
     * Invokes a function with an event as JSON, through the handler method the template names, which must take
     * {@code (InputStream, OutputStream, Context)}: the way Lambda's runtime calls it (the queues' event sources
     * do, so a function that reads more than one kind of event reads them as it does in AWS). Answers the output.
     */
    public String invokeJson(String logicalId, String event, Context context) {
        SamTemplate.Function f = functions.get(logicalId);
        if (f == null) {
            throw new IllegalArgumentException("No function " + logicalId + " in the template");
        }
        Object handler = handlers.get(logicalId);
        Method method;
        try {
            method = handler.getClass().getMethod(String.valueOf(f.handlerMethod()), InputStream.class,
                    OutputStream.class, Context.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(logicalId + ": Local invokes it with JSON through its Handler method, "
                    + "which must take (InputStream, OutputStream, Context); " + f.handlerClass() + "::"
                    + f.handlerMethod() + " does not", e);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            method.invoke(handler, new ByteArrayInputStream(
                    event.getBytes(StandardCharsets.UTF_8)), out, context);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Where an invocation arrives (the gateway, the schedule): waits out a stopped world, see {@link #stopTheWorld}. */
    public void awaitRunning() {
        pause.await();
    }

    /**
     * Fault injection: a stop-the-world pause of every function for {@code duration}, as a long GC pause of the
     * JVM that hosts them all. Invocations that arrive wait at the door (requests queue, then arrive late), and
     * those in flight stop at their next read of the clock (a sweep between its scan and its decisions, a
     * heartbeat before it stamps its time). Returns when the pause is over.
     */
    public void stopTheWorld(Duration duration) throws InterruptedException {
        pause.hold(duration);
    }

    /** A gate every invocation and every clock read passes; closed while the world is stopped. */
    private static final class Pause {
        private final ReentrantReadWriteLock lock =
                new ReentrantReadWriteLock();

        void await() {
            if (lock.isWriteLocked() && !lock.isWriteLockedByCurrentThread()) {
                lock.readLock().lock();
                lock.readLock().unlock();
            }
        }

        void hold(Duration d) throws InterruptedException {
            lock.writeLock().lock();
            try {
                Thread.sleep(d.toMillis());
            } finally {
                lock.writeLock().unlock();
            }
        }
    }

    /** The functions' clock: reading it waits out a stopped world, so work in flight pauses mid-way. */
    private static final class PausableClock extends Clock {
        private final Clock clock;
        private final Pause pause;

        PausableClock(Clock clock, Pause pause) {
            this.clock = clock;
            this.pause = pause;
        }

        @Override
        public ZoneId getZone() {
            return clock.getZone();
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return new PausableClock(clock.withZone(zone), pause);
        }

        @Override
        public Instant instant() {
            pause.await();
            return clock.instant();
        }
    }

    public SamTemplate.Function function(String logicalId) {
        return functions.get(logicalId);
    }

    /** The functions fed by the table's stream, in template order. */
    public List<String> streamConsumers() {
        List<String> ids = new ArrayList<>();
        functions.values().forEach(f -> {
            if (f.readsTableStream()) {
                ids.add(f.logicalId());
            }
        });
        return ids;
    }
}
