package io.lifeline.local.stack;

import io.lifeline.engine.Engine;
import java.time.Clock;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * One engine for the whole test JVM, in process and in memory (docs/engine.md); each test class gets its own tables,
 * created from template.yaml, so classes never see each other's items. Its clock is the real one: it stamps tables
 * and ages stream iterators and transaction tokens, while the tests' own clocks drive the functions. It deletes
 * expired items only when asked, which no test does, so a test's clock may be anywhere.
 */
public final class SharedDynamo {
    private static Engine engine;

    private SharedDynamo() {
    }

    private static synchronized Engine engine() {
        if (engine == null) {
            engine = new Engine(Clock.systemUTC());
        }
        return engine;
    }

    /** The engine's client; closing it does nothing. */
    public static DynamoDbClient client() {
        return engine().client();
    }

    /** The engine's streams client; closing it does nothing. */
    public static DynamoDbStreamsClient streams() {
        return engine().streamsClient();
    }
}
