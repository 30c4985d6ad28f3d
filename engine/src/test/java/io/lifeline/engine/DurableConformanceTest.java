package io.lifeline.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The conformance suite against the engine over a data dir: the tables in the store on disk, every write logged. */
@Tag("store")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DurableConformanceTest implements Suite {
    private Engine engine;
    private DynamoDbClient client;

    @BeforeAll
    void open() throws IOException {
        engine = Engine.open(Files.createTempDirectory("engine-conformance"), Clock.systemUTC());
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
    public String target() {
        return "engine";
    }
}
