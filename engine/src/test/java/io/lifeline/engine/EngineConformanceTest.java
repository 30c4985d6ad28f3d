package io.lifeline.engine;

import java.time.Clock;
import org.junit.jupiter.api.Tag;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/** The conformance suite against the engine, in process. */
@Tag("store")
class EngineConformanceTest implements Suite {
    private final Engine engine = new Engine(Clock.systemUTC());
    private final DynamoDbClient client = engine.client();

    @Override
    public DynamoDbClient db() {
        return client;
    }

    @Override
    public DynamoDbStreamsClient streams() {
        return engine.streamsClient();
    }

    @Override
    public String target() {
        return "engine";
    }
}
