package io.lifeline.engine;

import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/** The conformance suite against the engine over a data dir: the tables in the store on disk, every write logged. */
@Tag("store")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DurableConformanceTest implements Suite {
    @TempDir
    static Path dir;
    private Engine engine;
    private DynamoDbClient client;

    @BeforeAll
    void open() {
        engine = Engine.open(dir, Clock.systemUTC());
        client = engine.client();
    }

    @AfterAll
    void close() {
        engine.close();
    }

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
