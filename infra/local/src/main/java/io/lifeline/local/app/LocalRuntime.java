package io.lifeline.local.app;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.config.Wiring;
import io.lifeline.local.aws.LocalEventBus;
import io.lifeline.local.aws.LocalQueues;
import io.lifeline.local.aws.LocalStepFunctions;
import io.lifeline.local.aws.StreamPump;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.runtime.LateSweepGate;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.sweep.SweepHandler;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.sfn.SfnClient;

/**
 * The template's functions wired the way Lifeline Local runs them, over a table that already exists: the
 * EventBridge stand-in with the template's rules, the function host, the Step Functions stand-in (the bus starts
 * its machines), the gateway in front of the host and, given a streams client, the stream pump feeding the
 * outbox, and the SQS stand-in with the template's queues and their event sources. One assembly for
 * {@link LifelineLocal}, the integration tests' stack and the bench's metered stack;
 * each adds only what is its own (front door, scheduler, test clock, capacity meter). The DynamoDB and streams
 * clients stay the caller's: {@link #close} ends only what it started.
 */
public final class LocalRuntime implements AutoCloseable {
    public final SamTemplate template;
    /** The template parameters as Local runs them ({@link LifelineLocal#localParameters}). */
    public final Map<String, String> parameters;
    /** Local names of the template's resources ({@link LifelineLocal#resourceNames}). */
    public final Map<String, String> names;
    /**
     * The template's generated secrets (logical id to value) as Local made them: what the webhooks' connections
     * send in their X-Lifeline-Token header.
     */
    public final Map<String, String> secrets;
    public final LocalEventBus bus;
    public final FunctionHost host;
    /** Null when built {@link Builder#withoutStepFunctions()}. */
    public final LocalStepFunctions stepFunctions;
    public final LocalGateway gateway;
    /** Null when built without a streams client. */
    public final StreamPump pump;
    /** The template's SQS queues and their event sources (the sweep's clock). */
    public final LocalQueues queues;

    private final DynamoDbClient dynamo;
    private final Clock clock;
    private final Function<LocalEventBus, EventBridgeClient> busClient;
    private final Supplier<SfnClient> stepFunctionsClient;
    /** Whether the sweep function gets Local's late-sweep rule ({@link LateSweepGate}). */
    private final boolean skipLateSweeps;

    private LocalRuntime(Builder b) throws Exception {
        this.template = Objects.requireNonNull(b.template, "template");
        this.dynamo = Objects.requireNonNull(b.dynamo, "dynamo");
        this.clock = Objects.requireNonNull(b.clock, "clock");
        Objects.requireNonNull(b.tables, "tables");
        if (b.streams != null) {
            Objects.requireNonNull(b.streamArn, "streamArn");
        }
        this.busClient = b.busClient;
        this.skipLateSweeps = b.skipLateSweeps;
        this.parameters = LifelineLocal.localParameters(b.parameters);
        this.names = LifelineLocal.resourceNames(template, b.tables, b.busName);
        Map<String, String> secrets = new LinkedHashMap<>();
        for (String id : template.generatedSecrets()) {
            secrets.put(id, b.secrets.containsKey(id) ? b.secrets.get(id) : newSecret());
        }
        this.secrets = Collections.unmodifiableMap(secrets);
        this.queues = new LocalQueues(template, clock);
        try {
            this.bus = new LocalEventBus(template.rules(parameters, secrets), clock);
        } catch (IOException | RuntimeException e) {
            queues.close();
            throw e;
        }
        AtomicReference<LocalStepFunctions> sfn = new AtomicReference<>();
        this.stepFunctionsClient = b.stepFunctions ? () -> sfn.get().client() : () -> {
            throw new IllegalStateException("no Step Functions in this runtime");
        };
        try {
            this.host = newHost();
            queues.deliverTo(host);
            if (b.stepFunctions) {
                this.stepFunctions = new LocalStepFunctions(template.stateMachines(parameters, names), host, clock,
                        b.timeScale, b.tick);
                sfn.set(stepFunctions);
                bus.startStateMachinesWith((machine, input) -> stepFunctions.start(LocalStepFunctions.arn(machine),
                        null, input));
            } else {
                this.stepFunctions = null;
            }
            this.gateway = new LocalGateway(template, host, clock, template.functionUrls(parameters).keySet());
            if (b.streams != null) {
                this.pump = new StreamPump(b.streams, b.streamArn, StreamPump.consumers(host), b.checkpoints);
            } else {
                this.pump = null;
            }
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A secret as the template's GenerateSecretString makes one: 48 letters and digits. */
    static String newSecret() {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder out = new StringBuilder(48);
        for (int i = 0; i < 48; i++) {
            out.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return out.toString();
    }

    /**
     * The template's functions instantiated afresh over the same table, bus and Step Functions, as a new Lambda
     * container would be: nothing remembered from earlier invocations.
     */
    public FunctionHost newHost() {
        // Heartbeats and the sweep share Local's one process: a late sweep means beats queued behind the stall.
        Map<String, Function<Wiring, RequestHandler<?, ?>>> builders = skipLateSweeps
                ? Map.of(SweepHandler.class.getName(),
                        w -> new SweepHandler(w, new LateSweepGate(w.config().sweepInterval())))
                : Map.of();
        return new FunctionHost(template, parameters, names, dynamo, Wiring.memoize(() -> busClient.apply(bus)),
                Wiring.memoize(stepFunctionsClient), Wiring.memoize(queues::client), clock, builders);
    }

    @Override
    public void close() {
        if (stepFunctions != null) {
            stepFunctions.close();
        }
        if (bus != null) {
            bus.close();
        }
        queues.close();
    }

    public static final class Builder {
        private SamTemplate template;
        private DynamoDbClient dynamo;
        private LocalTables tables;
        private String busName;
        private Clock clock;
        private Map<String, String> parameters = Map.of();
        private double timeScale = 1.0;
        private boolean tick = true;
        private boolean stepFunctions = true;
        private DynamoDbStreamsClient streams;
        private String streamArn;
        private Path checkpoints;
        private Function<LocalEventBus, EventBridgeClient> busClient = LocalEventBus::client;
        private Map<String, String> secrets = Map.of();
        private boolean skipLateSweeps = true;

        private Builder() {
        }

        /**
         * Whether a sweep more than half an interval late judges nobody, nor any sweep within an interval after it
         * ({@link LateSweepGate}): Local's rule, on by default; false runs the sweep as the Lambda runtime does, where
         * every sweep judges however late (a test of the AWS behaviour, the bench).
         */
        public Builder skipLateSweeps(boolean skipLateSweeps) {
            this.skipLateSweeps = skipLateSweeps;
            return this;
        }

        /** Values for the template's generated secrets (a data dir's, kept across starts); the rest are made anew. */
        public Builder secrets(Map<String, String> secrets) {
            this.secrets = Map.copyOf(secrets);
            return this;
        }

        public Builder template(SamTemplate template) {
            this.template = template;
            return this;
        }

        /** The functions' DynamoDB client and the tables they use (they must exist, the live one with its stream). */
        public Builder tables(DynamoDbClient dynamo, LocalTables tables) {
            this.dynamo = dynamo;
            this.tables = tables;
            return this;
        }

        public Builder busName(String busName) {
            this.busName = busName;
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Template parameter overrides; Local's own ({@link LifelineLocal#localParameters}) are added. */
        public Builder parameters(Map<String, String> parameters) {
            this.parameters = new HashMap<>(parameters);
            return this;
        }

        /**
         * State machine waits are multiplied by {@code timeScale}; with {@code tick} false nothing runs due
         * executions in the background (a test moves its clock and calls {@link LocalStepFunctions#runDue()}).
         */
        public Builder stepFunctions(double timeScale, boolean tick) {
            this.timeScale = timeScale;
            this.tick = tick;
            return this;
        }

        /** No state machines: a function that starts one fails (the bench's store-cost stack). */
        public Builder withoutStepFunctions() {
            this.stepFunctions = false;
            return this;
        }

        /** A stream pump over the table's stream; {@code checkpoints} null keeps its positions in memory. */
        public Builder streams(DynamoDbStreamsClient streams, String streamArn, Path checkpoints) {
            this.streams = streams;
            this.streamArn = streamArn;
            this.checkpoints = checkpoints;
            return this;
        }

        /** How the functions reach the bus (a test adds SDK interceptors to the PutEvents client). */
        public Builder busClient(Function<LocalEventBus, EventBridgeClient> busClient) {
            this.busClient = busClient;
            return this;
        }

        public LocalRuntime build() throws Exception {
            return new LocalRuntime(this);
        }
    }
}
