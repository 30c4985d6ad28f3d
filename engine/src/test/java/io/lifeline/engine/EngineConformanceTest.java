package io.lifeline.engine;

import java.time.Clock;
import org.junit.jupiter.api.Tag;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The conformance suite against the engine, in process. */
@Tag("store")
class EngineConformanceTest implements Suite {
    private final DynamoDbClient client = new Engine(Clock.systemUTC()).client();

    @Override
    public DynamoDbClient db() {
        return client;
    }

    @Override
    public String target() {
        return "engine";
    }
}
