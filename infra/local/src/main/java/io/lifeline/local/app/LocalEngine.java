package io.lifeline.local.app;

import io.lifeline.engine.Engine;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * Lifeline Local's store: the project's own engine ({@code io.lifeline.engine}, docs/engine.md), in process with no
 * port, its streams feeding the outbox and its time to live run at Local's clock. See docs/design/local/decisions.md,
 * "Lifeline Local runs on its own engine".
 *
 * <p>In memory it is the engine alone. A data dir is, until the engine keeps one of its own, still DynamoDB Local's
 * store in {@code <data-dir>/dynamodb/} ({@link LocalDynamo}), under the data dir's lock.
 */
public final class LocalEngine implements AutoCloseable {
    /** Under the data dir: the stream pump's checkpoints (StreamPump). */
    public static final String STREAM_CHECKPOINTS_FILE = LocalDynamo.STREAM_CHECKPOINTS_FILE;
    /**
     * How often expired items are deleted. AWS deletes them within a few days of their time; Local, at its own
     * clock, within a minute of it, so a demo or a test that moves time sees them go.
     */
    static final Duration TTL_PASS = Duration.ofMinutes(1);

    private final Engine engine;
    private final Engine.Schedule expiry;
    private final LocalDynamo onDisk;
    private final DynamoDbClient client;
    private final DynamoDbStreamsClient streams;

    private LocalEngine(Engine engine, LocalDynamo onDisk) {
        this.engine = engine;
        this.onDisk = onDisk;
        this.expiry = engine == null ? null : engine.expireEvery(TTL_PASS);
        this.client = engine != null ? engine.client() : onDisk.client();
        this.streams = engine != null ? engine.streamsClient() : onDisk.streamsClient();
    }

    /**
     * Local's store at {@code clock}: {@code dataDir} null keeps it in memory, in the engine; otherwise it takes the
     * data dir's lock (refusing, in one line, a data dir another process holds) and opens the store there.
     */
    public static LocalEngine open(Path dataDir, Clock clock) throws IOException {
        if (dataDir == null) {
            return new LocalEngine(new Engine(clock), null);
        }
        return new LocalEngine(null, LocalDynamo.open(dataDir));
    }

    /** The store's client, shared by every caller: closing it does nothing, {@link #close} closes the store. */
    public DynamoDbClient client() {
        return client;
    }

    /** The store's streams client, shared like {@link #client()}. */
    public DynamoDbStreamsClient streamsClient() {
        return streams;
    }

    @Override
    public void close() throws Exception {
        if (expiry != null) {
            expiry.close();
        }
        if (onDisk != null) {
            onDisk.close();
        }
    }
}
