package io.lifeline.config;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.sfn.SfnClient;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * What a handler needs from outside: configuration, the clock and the DynamoDB client. Built once per
 * Lambda container (in the handler's constructor, so SnapStart captures it), or handed in by Lifeline Local
 * and tests.
 */
public record Wiring(Config config, Clock clock, DynamoDbClient dynamo, Supplier<EventBridgeClient> eventBridge,
                     Supplier<SfnClient> stepFunctions, Supplier<SqsClient> sqs) {
    /** CRaC holds its resources weakly: keep the priming hooks of this container reachable. */
    private static final List<Priming> PRIMING = new CopyOnWriteArrayList<>();

    /**
     * Every time a handler reads is in whole milliseconds, the precision the store keeps, so an answer's time
     * (a task's {@code completedAt}, a transition's {@code at}) is the stored one to the digit.
     */
    public Wiring {
        clock = Clock.tick(clock, Duration.ofMillis(1));
    }

    /** Wiring for functions that send no SQS message (every function but the sweep). */
    public Wiring(Config config, Clock clock, DynamoDbClient dynamo, Supplier<EventBridgeClient> eventBridge,
                  Supplier<SfnClient> stepFunctions) {
        this(config, clock, dynamo, eventBridge, stepFunctions, () -> {
            throw new IllegalStateException("this function has no SQS client");
        });
    }

    /** Wiring for functions that use neither EventBridge nor Step Functions. */
    public Wiring(Config config, Clock clock, DynamoDbClient dynamo) {
        this(config, clock, dynamo, () -> {
            throw new IllegalStateException("this function has no EventBridge client");
        }, () -> {
            throw new IllegalStateException("this function has no Step Functions client");
        });
    }

    /** The Lambda runtime's wiring: lean URL-connection HTTP client, region from the environment, credentials
     * from the default chain (SnapStart functions get theirs from the container endpoint, not env vars). */
    /** One variable of the function's environment, or null: the one place outside {@link Config} that reads it. */
    public static String environment(String name) {
        return System.getenv(name);
    }

    public static Wiring fromEnvironment() {
        Config config = Config.fromEnvironment(System.getenv());
        Config.CallTimeouts timeouts = Config.CallTimeouts.fromEnvironment(System.getenv());
        DynamoDbClient dynamo = dynamoDb(timeouts, DynamoDbClient.builder()
                .httpClient(UrlConnectionHttpClient.create())
                .region(Region.of(System.getenv("AWS_REGION")))
                .credentialsProvider(DefaultCredentialsProvider.builder().build()));
        // Only the publisher uses EventBridge, only a manual revive Step Functions and only the sweep SQS: build
        // those clients on first use, so other functions start leaner.
        Supplier<EventBridgeClient> eventBridge = memoize(() -> EventBridgeClient.builder()
                .overrideConfiguration(c -> c.apiCallTimeout(timeouts.call()).apiCallAttemptTimeout(timeouts.attempt()))
                .httpClient(UrlConnectionHttpClient.create())
                .region(Region.of(System.getenv("AWS_REGION")))
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .build());
        Supplier<SfnClient> stepFunctions = memoize(() -> SfnClient.builder()
                .overrideConfiguration(c -> c.apiCallTimeout(timeouts.call()).apiCallAttemptTimeout(timeouts.attempt()))
                .httpClient(UrlConnectionHttpClient.create())
                .region(Region.of(System.getenv("AWS_REGION")))
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .build());
        Supplier<SqsClient> sqs = memoize(() -> SqsClient.builder()
                .overrideConfiguration(c -> c.apiCallTimeout(timeouts.call()).apiCallAttemptTimeout(timeouts.attempt()))
                .httpClient(UrlConnectionHttpClient.create())
                .region(Region.of(System.getenv("AWS_REGION")))
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .build());
        Wiring wiring = new Wiring(config, Clock.systemUTC(), dynamo, eventBridge, stepFunctions, sqs);
        PRIMING.add(Priming.register(wiring));
        return wiring;
    }

    /**
     * A DynamoDB client from {@code builder} whose every call ends within {@code timeouts.call()} and every attempt
     * within {@code timeouts.attempt()} (the SDK's retries happen inside the call's time).
     */
    public static DynamoDbClient dynamoDb(Config.CallTimeouts timeouts,
                                          DynamoDbClientBuilder builder) {
        return builder.overrideConfiguration(c -> c.apiCallTimeout(timeouts.call())
                .apiCallAttemptTimeout(timeouts.attempt())).build();
    }

    public static <T> Supplier<T> memoize(Supplier<T> supplier) {
        return new Supplier<>() {
            private T value;

            @Override
            public synchronized T get() {
                if (value == null) {
                    value = supplier.get();
                }
                return value;
            }
        };
    }
}
